// Command newsurface scaffolds a surface (`make new-surface NAME=x`): a spec with the house's shared
// components (the error body, the refusals, the pagination), its generation recipe, a table and its
// queries, a domain and an HTTP edge with its refusal table and tests, an end-to-end test, the
// TypeScript SDK entry and its test, and a docs page, all from skeleton/, and the one registration
// line in cmd/server/surfaces.go. The result builds, passes its own tests and is
// served; docs/adding-a-surface.md walks through it. TestScaffold_BuildsAndPasses keeps it so.
package main

import (
	"bytes"
	"embed"
	"errors"
	"flag"
	"fmt"
	"go/format"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"text/template"

	"sigs.k8s.io/yaml"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
)

//go:embed skeleton
var skeleton embed.FS

func main() {
	name := flag.String("name", "", "the surface's name: lower-case letters and digits, starting with a letter (its paths start with /<name>)")
	tokens := flag.String("tokens", "orders", "the token source whose access tokens the surface accepts (orders, brands)")
	root := flag.String("root", ".", "the repository")
	flag.Parse()
	files, err := scaffold(*root, *name, *tokens)
	if err != nil {
		fmt.Fprintln(os.Stderr, "new-surface:", err)
		os.Exit(1)
	}
	for _, f := range files {
		fmt.Println("  " + f)
	}
	fmt.Printf("surface %s scaffolded; next: make generate (make new-surface runs it), then docs/adding-a-surface.md\n", *name)
}

// validName is a surface name: also a Go package name, a path segment and a table prefix.
var validName = regexp.MustCompile(`^[a-z][a-z0-9]{1,29}$`)

// tokenSources are the token sources a scaffolded surface may accept: those whose users its
// end-to-end and SDK tests know how to sign up (skeleton/e2e, skeleton/clients/ts/test).
var tokenSources = []string{"orders", "brands"}

// data is what the templates see.
type data struct {
	Name, Title, Tokens, Table, Migration string
	Port                                  int
	MaxText                               int
	Codes, DetailCodes                    string
	Code, Msg                             map[string]string
}

// scaffold writes the surface's files under root and registers it; it returns the paths written
// or changed. Nothing is written when the name is taken or invalid.
func scaffold(root, name, tokens string) ([]string, error) {
	if !validName.MatchString(name) {
		return nil, fmt.Errorf("name %q: use 2 to 30 lower-case letters and digits, starting with a letter", name)
	}
	if !slices.Contains(tokenSources, tokens) {
		return nil, fmt.Errorf("tokens %q: the skeleton's tests sign users up with %s", tokens, strings.Join(tokenSources, " or "))
	}
	segs, maxPort, err := existing(root)
	if err != nil {
		return nil, err
	}
	if owner, taken := segs[name]; taken {
		return nil, fmt.Errorf("name %q: api/%s.yaml already serves paths under /%s", name, owner, name)
	}
	migration, err := nextMigration(filepath.Join(root, "db", "schema"))
	if err != nil {
		return nil, err
	}
	d := data{
		Name: name, Title: strings.ToUpper(name[:1]) + name[1:], Tokens: tokens, Table: name + "_items",
		Migration: migration, Port: maxPort + 1, MaxText: 1000,
		Codes: strings.Join([]string{web.CodeValidation, web.CodeUnsupportedMediaType, web.CodeTooLarge, web.CodeUnauthorized,
			web.CodeNotFound, web.CodeMethodNotAllowed, web.CodeInternal, web.CodeDatabaseUnavailable}, ", "),
		Code: map[string]string{"Validation": web.CodeValidation, "Unauthorized": web.CodeUnauthorized,
			"UnsupportedMediaType": web.CodeUnsupportedMediaType, "TooLarge": web.CodeTooLarge,
			"Internal": web.CodeInternal, "DatabaseUnavailable": web.CodeDatabaseUnavailable},
		Msg: map[string]string{},
	}
	for k, code := range d.Code {
		d.Msg[k], _ = web.OneMessage(code)
	}
	codes := make([]string, len(invalid.Codes))
	for i, c := range invalid.Codes {
		codes[i] = string(c)
	}
	d.DetailCodes = strings.Join(codes, ", ")

	type out struct {
		path string
		body []byte
	}
	var outs []out
	err = fs.WalkDir(skeleton, "skeleton", func(p string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		src, err := skeleton.ReadFile(p)
		if err != nil {
			return err
		}
		t, err := template.New(p).Delims("[[", "]]").Option("missingkey=error").Parse(string(src))
		if err != nil {
			return err
		}
		var b bytes.Buffer
		if err := t.Execute(&b, d); err != nil {
			return err
		}
		rel := strings.TrimSuffix(strings.TrimPrefix(p, "skeleton/"), ".tmpl")
		rel = strings.ReplaceAll(strings.ReplaceAll(rel, "MIGRATION", migration), "NAME", name)
		body := b.Bytes()
		if strings.HasSuffix(rel, ".go") {
			if body, err = format.Source(body); err != nil {
				return fmt.Errorf("%s: %w", rel, err)
			}
		}
		outs = append(outs, out{rel, body})
		return nil
	})
	if err != nil {
		return nil, err
	}
	var written []string
	for _, o := range outs {
		full := filepath.Join(root, o.path)
		if _, err := os.Stat(full); err == nil {
			return nil, fmt.Errorf("%s exists already", o.path)
		}
	}
	for _, o := range outs {
		full := filepath.Join(root, o.path)
		if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
			return nil, err
		}
		if err := os.WriteFile(full, o.body, 0o644); err != nil {
			return nil, err
		}
		written = append(written, o.path)
	}
	reg, err := register(root, name)
	if err != nil {
		return nil, err
	}
	return append(written, reg), nil
}

// existing reads the specs in root/api: the first path segments each serves, and the highest mock
// port taken.
func existing(root string) (map[string]string, int, error) {
	specs, err := filepath.Glob(filepath.Join(root, "api", "*.yaml"))
	if err != nil {
		return nil, 0, err
	}
	segs, maxPort := map[string]string{}, 4009
	for _, f := range specs {
		body, err := os.ReadFile(f)
		if err != nil {
			return nil, 0, err
		}
		var doc struct {
			Info struct {
				MockPort int `json:"x-mock-port"`
			} `json:"info"`
			Paths map[string]any `json:"paths"`
		}
		if err := yaml.Unmarshal(body, &doc); err != nil {
			return nil, 0, fmt.Errorf("%s: %w", f, err)
		}
		spec := strings.TrimSuffix(filepath.Base(f), ".yaml")
		segs[spec] = spec // a surface's name is taken even before it has paths
		for p := range doc.Paths {
			seg, _, _ := strings.Cut(strings.TrimPrefix(p, "/"), "/")
			segs[seg] = spec
		}
		maxPort = max(maxPort, doc.Info.MockPort)
	}
	return segs, maxPort, nil
}

// nextMigration is the number after the highest migration's, rounded up to the next ten, as the
// migrations are numbered.
func nextMigration(dir string) (string, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sql"))
	if err != nil {
		return "", err
	}
	high := 0
	for _, f := range files {
		num, _, _ := strings.Cut(filepath.Base(f), "_")
		if n, err := strconv.Atoi(num); err == nil {
			high = max(high, n)
		}
	}
	return fmt.Sprintf("%05d", (high/10+1)*10), nil
}

// marker is the line of cmd/server/surfaces.go above which a new surface's line goes.
const marker = "\t// new surfaces: make new-surface adds its line above this one.\n"

// register adds the surface's one line (and its import) to cmd/server/surfaces.go.
func register(root, name string) (string, error) {
	rel := filepath.Join("cmd", "server", "surfaces.go")
	path := filepath.Join(root, rel)
	src, err := os.ReadFile(path)
	if err != nil {
		return "", err
	}
	s := string(src)
	if !strings.Contains(s, marker) {
		return "", errors.New(rel + " has lost the line new surfaces go above: " + strings.TrimSpace(marker))
	}
	s = strings.Replace(s, marker, fmt.Sprintf("\tkitSurface(%q, %shttpapi.Mount),\n", name, name)+marker, 1)
	imp := "\t\"github.com/triadhq/triad/impl/kit\"\n"
	if !strings.Contains(s, imp) {
		return "", errors.New(rel + " does not import impl/kit")
	}
	s = strings.Replace(s, imp, imp+fmt.Sprintf("\t%shttpapi \"github.com/triadhq/triad/impl/surfaces/%s/httpapi\"\n", name, name), 1)
	out, err := format.Source([]byte(s))
	if err != nil {
		return "", err
	}
	return rel, os.WriteFile(path, out, 0o644)
}
