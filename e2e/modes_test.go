package e2e

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestMake_ModeListsHold: the Makefile's E2E_SAME_IN_EVERY_MODE, E2E_SAME_BEHIND_A_BALANCER and
// E2E_WITHOUT_PRISM, the tests make test-replicas and make contract leave out because go test -race
// ./... has already run them as they would run there, name tests of this package, and each does
// what its list says of it: one of E2E_SAME_IN_EVERY_MODE starts no server through the harness
// (startServer, startServerArgs, newOrdersEnv), one of E2E_WITHOUT_PRISM starts its server without
// any surface's Prism proxy, one of E2E_SAME_BEHIND_A_BALANCER is no replica test (build tag
// replicas). A test that changes so as to need the other modes fails here until it leaves the list.
// And CONTRACT_REMOTE (make contract BASE_URL=) names tests that exist and start their server with
// startServer alone: against a running server the harness can pass no flags and read no database.
func TestMake_ModeListsHold(t *testing.T) {
	t.Parallel()
	makefile, err := os.ReadFile(filepath.Join(repoRoot, "Makefile"))
	if err != nil {
		t.Fatal(err)
	}
	list := func(name string) []string {
		m := regexp.MustCompile(`(?m)^` + name + ` := (.+)$`).FindSubmatch(makefile)
		if m == nil {
			t.Fatalf("the Makefile has no %s", name)
		}
		return strings.Split(strings.TrimSpace(string(m[1])), "|")
	}
	files, err := filepath.Glob(filepath.Join(repoRoot, "e2e", "*_test.go"))
	if err != nil {
		t.Fatal(err)
	}
	tests := map[string]*ast.FuncDecl{}
	fset := token.NewFileSet()
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			if fn, ok := d.(*ast.FuncDecl); ok && fn.Recv == nil && strings.HasPrefix(fn.Name.Name, "Test") {
				tests[fn.Name.Name] = fn
			}
		}
	}
	// calls returns the harness calls in fn's body: the function called and its argument count.
	calls := func(fn *ast.FuncDecl) map[string][]int {
		out := map[string][]int{}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if c, ok := n.(*ast.CallExpr); ok {
				if id, ok := c.Fun.(*ast.Ident); ok {
					out[id.Name] = append(out[id.Name], len(c.Args))
				}
			}
			return true
		})
		return out
	}
	tagged := map[string]bool{} // tests of files built with the replicas tag only
	for _, f := range files {
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		if !strings.HasPrefix(string(src), "//go:build replicas") {
			continue
		}
		for _, m := range regexp.MustCompile(`(?m)^func (Test\w+)\(`).FindAllSubmatch(src, -1) {
			tagged[string(m[1])] = true
		}
	}
	balancer := map[string]bool{}
	for _, name := range list("E2E_SAME_BEHIND_A_BALANCER") {
		if _, ok := tests[name]; !ok {
			t.Errorf("E2E_SAME_BEHIND_A_BALANCER names %s, which is no test of e2e", name)
		}
		if tagged[name] {
			t.Errorf("E2E_SAME_BEHIND_A_BALANCER names %s, a replica test: it exists for the balancer", name)
		}
		balancer[name] = true
	}
	remote := regexp.MustCompile(strings.ReplaceAll(strings.Join(list("CONTRACT_REMOTE"), "|"), "$$", "$"))
	matched := 0
	for name, fn := range tests {
		if !remote.MatchString(name) {
			continue
		}
		matched++
		for _, harness := range []string{"startServerArgs", "launch", "launchRetrying", "startCluster"} {
			if len(calls(fn)[harness]) > 0 {
				t.Errorf("CONTRACT_REMOTE runs %s against a running server, but it calls %s: take it out of CONTRACT_REMOTE", name, harness)
			}
		}
		ast.Inspect(fn.Body, func(n ast.Node) bool {
			if sel, ok := n.(*ast.SelectorExpr); ok && sel.Sel.Name == "dbURL" {
				t.Errorf("CONTRACT_REMOTE runs %s against a running server, whose database it cannot read (dbURL)", name)
			}
			return true
		})
	}
	if matched < 5 {
		t.Errorf("CONTRACT_REMOTE matches %d tests: the list and the tests' names have drifted apart", matched)
	}
	seen := map[string]bool{}
	for _, name := range list("E2E_SAME_IN_EVERY_MODE") {
		fn, ok := tests[name]
		if !ok {
			t.Errorf("E2E_SAME_IN_EVERY_MODE names %s, which is no test of e2e", name)
			continue
		}
		if balancer[name] {
			t.Errorf("%s is in E2E_SAME_BEHIND_A_BALANCER too: one list is enough", name)
		}
		seen[name] = true
		for _, harness := range []string{"startServer", "startServerArgs", "newOrdersEnv"} {
			if len(calls(fn)[harness]) > 0 {
				t.Errorf("%s calls %s, so it runs behind the balancer or Prism in the other modes: take it out of E2E_SAME_IN_EVERY_MODE", name, harness)
			}
		}
	}
	for _, name := range list("E2E_WITHOUT_PRISM") {
		fn, ok := tests[name]
		if !ok {
			t.Errorf("E2E_WITHOUT_PRISM names %s, which is no test of e2e", name)
			continue
		}
		if seen[name] {
			t.Errorf("%s is in both lists", name)
		}
		c := calls(fn)
		for _, n := range c["startServer"] {
			if n > 1 {
				t.Errorf("%s starts its server with Prism proxies in contract mode: take it out of E2E_WITHOUT_PRISM", name)
			}
		}
		for _, n := range c["startServerArgs"] {
			if n > 2 {
				t.Errorf("%s starts its server with Prism proxies in contract mode: take it out of E2E_WITHOUT_PRISM", name)
			}
		}
		if len(c["newOrdersEnv"]) > 0 {
			t.Errorf("%s talks to orders through its Prism proxy in contract mode: take it out of E2E_WITHOUT_PRISM", name)
		}
	}
}
