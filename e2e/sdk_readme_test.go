package e2e

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestSDKReadme runs clients/ts/README.md as a reader would from a fresh clone: in a copy of the
// files git tracks under clients/ts (no node_modules, nothing built, and outside this repository,
// so its root's TypeScript is out of reach), its Install block (npm pack, which installs the
// pinned TypeScript first); then the tarball installed into an empty application, its two TypeScript
// blocks compiled at tsc's strictest (strict, exactOptionalPropertyTypes, noUncheckedIndexedAccess:
// the browser block's xsrfToken() line among them), and the quick start run with Node against a
// dev-mode server, whose address replaces http://localhost:8080. Installing TypeScript may ask the
// registry the first time (after that, npm's cache answers).
func TestSDKReadme(t *testing.T) {
	t.Parallel()
	ensureNodeModules(t)
	doc, err := os.ReadFile(filepath.Join(repoRoot, "clients", "ts", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, install, ok := strings.Cut(string(doc), "## Install")
	if !ok {
		t.Fatal("clients/ts/README.md has no Install section")
	}
	blocks := fencedBlocks(install)
	var langs []string
	for _, b := range blocks {
		langs = append(langs, b.lang)
	}
	if len(blocks) < 3 || strings.Join(langs[:3], ",") != "sh,ts,ts" {
		t.Fatalf("the README's blocks from Install on are %v, want sh (install), ts (quick start), ts (browser)", langs)
	}
	srv := startServerArgs(t, []string{"-orders-client-id", "triad-orders", "-orders-client-secret", "triad-orders-secret"})
	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(5*time.Minute))
	defer cancel()

	// The fresh clone: what git tracks under clients/ts, nothing else.
	clone := t.TempDir()
	files := run(t, ctx, repoRoot, nil, "git", "ls-files", "clients/ts")
	for _, f := range strings.Fields(files) {
		b, err := os.ReadFile(filepath.Join(repoRoot, f))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(clone, f), string(b))
	}
	run(t, ctx, clone, []string{"npm_config_prefer_offline=true", "npm_config_audit=false", "npm_config_fund=false"},
		"bash", "-euo", "pipefail", "-c", blocks[0].body)
	tarballs, _ := filepath.Glob(filepath.Join(clone, "clients", "ts", "triad-sdk-*.tgz"))
	if len(tarballs) != 1 {
		t.Fatalf("the Install block left %v, want one triad-sdk tarball in clients/ts", tarballs)
	}

	app := t.TempDir()
	write(t, filepath.Join(app, "package.json"), `{"name": "readme-app", "private": true, "type": "module"}`+"\n")
	write(t, filepath.Join(app, "tsconfig.json"), `{"compilerOptions": {"target": "ES2022", "lib": ["ES2023", "DOM", "DOM.Iterable"],
  "module": "NodeNext", "moduleResolution": "NodeNext", "types": [], "strict": true, "exactOptionalPropertyTypes": true,
  "noUncheckedIndexedAccess": true, "skipLibCheck": false, "outDir": "out"}, "files": ["quickstart.ts", "browser.ts"]}`+"\n")
	write(t, filepath.Join(app, "quickstart.ts"), strings.ReplaceAll(blocks[1].body, "http://localhost:8080", srv.URL))
	write(t, filepath.Join(app, "browser.ts"), blocks[2].body)
	run(t, ctx, app, nil, "npm", "install", "--offline", "--no-audit", "--no-fund", "--loglevel=error", tarballs[0])
	run(t, ctx, app, nil, filepath.Join(repoRoot, "node_modules", ".bin", "tsc"), "-p", ".")
	cmd := exec.CommandContext(ctx, "node", filepath.Join("out", "quickstart.js"))
	cmd.Dir = app
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("the quick start failed: %v\n%s", err, out)
	}
	want := regexp.MustCompile(`^order \d+: WAITING, price 120\.5\nbrands user demo@brands\.test\nauth user demo\n$`)
	if !want.Match(out) {
		t.Fatalf("the quick start printed\n%s\nwant %s", out, want)
	}
}
