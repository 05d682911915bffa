package e2e

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// codeBlock is one fenced block of a Markdown document.
type codeBlock struct {
	lang, body string
}

// fencedBlocks returns the ``` blocks of doc in order.
func fencedBlocks(doc string) []codeBlock {
	var out []codeBlock
	var cur *codeBlock
	var body strings.Builder
	for _, line := range strings.Split(doc, "\n") {
		switch {
		case cur == nil && strings.HasPrefix(line, "```"):
			cur = &codeBlock{lang: strings.TrimPrefix(line, "```")}
			body.Reset()
		case cur != nil && line == "```":
			cur.body = body.String()
			out = append(out, *cur)
			cur = nil
		case cur != nil:
			body.WriteString(line + "\n")
		}
	}
	return out
}

// runRecipe runs a Markdown recipe as a reader would: its setup block in an empty folder, its Go
// block written as <project>/main.go (project is the folder the setup creates), and its run block
// there, each as `bash -euo pipefail` with TRIAD_URL set to base and away from this repository's
// go.work and GOFLAGS. It returns what the run block printed; a failing block fails t with its output.
func runRecipe(ctx context.Context, t *testing.T, base, project, setup, program, run string) string {
	t.Helper()
	dir := t.TempDir()
	env := []string{"TRIAD_URL=" + base, "GOWORK=off", "GOFLAGS="}
	sh := func(dir, script string) string {
		t.Helper()
		cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), env...)
		var stdout, stderr bytes.Buffer
		cmd.Stdout, cmd.Stderr = &stdout, &stderr
		if err := cmd.Run(); err != nil {
			t.Fatalf("the recipe's block\n%s\nfailed: %v\nstdout:\n%s\nstderr:\n%s", script, err, stdout.String(), stderr.String())
		}
		return stdout.String()
	}
	sh(dir, setup)
	folder := filepath.Join(dir, project)
	if err := os.WriteFile(filepath.Join(folder, "main.go"), []byte(program), 0o644); err != nil {
		t.Fatal(err)
	}
	return sh(folder, run)
}

// TestGoClientRecipe runs the Go client recipe of docs/specs.md exactly as written: its setup
// block (a new module, the spec fetched from the server, the client generated with the pinned
// oapi-codegen, the dependencies added) in an empty folder, its Go block as main.go, and its run
// block, against a dev-mode server with the dev OAuth client the recipe names. The program must
// print the order it placed, and the order must be there when Go looks through its own client.
// The versions the recipe pins must be the ones go.mod pins, so the recipe generates what gen/ holds.
func TestGoClientRecipe(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "specs.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "**Go client.**")
	section, _, ok2 := strings.Cut(section, "**Money in generated clients.**")
	if !ok || !ok2 {
		t.Fatal("docs/specs.md has no \"**Go client.**\" paragraph before \"**Money in generated clients.**\"")
	}
	blocks := fencedBlocks(section)
	var langs []string
	for _, b := range blocks {
		langs = append(langs, b.lang)
	}
	if strings.Join(langs, ",") != "sh,go,sh" {
		t.Fatalf("the Go client recipe's blocks are %v, want sh (setup), go (main.go), sh (run)", langs)
	}
	setup, program, runIt := blocks[0].body, blocks[1].body, blocks[2].body

	gomod, err := os.ReadFile(filepath.Join(repoRoot, "go.mod"))
	if err != nil {
		t.Fatal(err)
	}
	for _, mod := range []string{"github.com/oapi-codegen/oapi-codegen/v2", "github.com/oapi-codegen/runtime", "golang.org/x/oauth2"} {
		pinned := regexp.MustCompile(`(?m)^\s*` + regexp.QuoteMeta(mod) + `\s+(v\S+)`).FindStringSubmatch(string(gomod))
		used := regexp.MustCompile(regexp.QuoteMeta(mod) + `(?:/[^@\s]*)?@(v\S+)`).FindStringSubmatch(setup)
		if pinned == nil || used == nil || pinned[1] != used[1] {
			t.Errorf("%s: the recipe uses %v, go.mod pins %v", mod, used, pinned)
		}
	}

	// The server itself, not Prism in contract mode: the recipe also fetches /openapi/orders.yaml,
	// which no spec describes.
	srv := startServerArgs(t, []string{"-orders-client-id", "triad-orders", "-orders-client-secret", "triad-orders-secret"})

	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(8*time.Minute))
	defer cancel()
	out := strings.TrimSpace(runRecipe(ctx, t, srv.URL, "ordersdemo", setup, program, runIt))
	// The price is the server's literal (json.Number), not a float's rendering (120.5).
	m := regexp.MustCompile(`^order (\d+): WAITING, price 120\.50$`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("the recipe printed %q, want \"order <id>: WAITING, price 120.50\"", out)
	}
	id, _ := strconv.ParseInt(m[1], 10, 64)

	// Go's own client (responses validated against the spec) finds the order among alice's.
	hc := httpClient(t, loadSpec(t, orders))
	octx := context.WithValue(context.Background(), oauth2.HTTPClient, hc)
	conf := oauth2.Config{ClientID: "triad-orders", ClientSecret: "triad-orders-secret",
		Endpoint: oauth2.Endpoint{TokenURL: srv.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
	tok, err := conf.PasswordCredentialsToken(octx, "alice", "alice-password")
	if err != nil {
		t.Fatal(err)
	}
	api, err := ordersapi.NewClientWithResponses(srv.URL, ordersapi.WithHTTPClient(conf.Client(octx, tok)))
	if err != nil {
		t.Fatal(err)
	}
	me, err := api.GetAuthenticatedUserWithResponse(octx)
	if err != nil || me.JSON200 == nil {
		t.Fatalf("GET /authenticated as alice: %v %v", err, me)
	}
	size := ordersapi.Size(100)
	list, err := api.ListUserOrdersWithResponse(octx, me.JSON200.Id, &ordersapi.ListUserOrdersParams{Size: &size})
	if err != nil || list.JSON200 == nil {
		t.Fatalf("alice's orders: %v %v", err, list)
	}
	for _, o := range list.JSON200.Content {
		if o.Id == id {
			if o.Description != "Paint the fence" || o.Status != ordersapi.WAITING || string(o.Price) != "120.5" && string(o.Price) != "120.50" {
				t.Errorf("the recipe's order as Go sees it: %+v", o)
			}
			return
		}
	}
	t.Errorf("order %d is not among alice's orders", id)
}
