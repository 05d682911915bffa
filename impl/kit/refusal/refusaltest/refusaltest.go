// Package refusaltest checks a surface's refusal table against its domain and its spec, so an
// unmapped domain error or an undocumented status fails a test instead of answering 500 (or an
// undocumented code) at run time.
package refusaltest

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/impl/kit/refusal"
)

// Check fails t when
//   - the domain package in dir declares an exported Err* variable that errs does not list (so a
//     new domain error cannot be forgotten by the test either);
//   - an error of errs is not mapped by table, unless elsewhere names it with the reason (an error
//     another handler answers, e.g. the OAuth token endpoint);
//   - a table entry's status is documented with the Error body by no operation of spec.
func Check(t *testing.T, table refusal.Table, errs map[string]error, elsewhere map[string]string, dir string, spec *openapi3.T) {
	t.Helper()
	for _, name := range DomainErrors(t, dir) {
		if _, ok := errs[name]; !ok {
			t.Errorf("domain error %s is not in the test's list: add it, and map it in the refusal table", name)
		}
	}
	for name, err := range errs {
		if _, ok := elsewhere[name]; ok {
			continue
		}
		if _, ok := table.Lookup(err); !ok {
			t.Errorf("domain error %s has no refusal: it would answer 500", name)
		}
	}
	documented := Statuses(spec)
	for _, e := range table {
		if !documented[e.Status] {
			t.Errorf("refusal of %v answers %d, which no operation of the spec documents", e.Err, e.Status)
		}
	}
}

// DomainErrors lists the exported package-level variables named Err* declared in dir's non-test
// Go files.
func DomainErrors(t *testing.T, dir string) []string {
	t.Helper()
	fset := token.NewFileSet()
	pkgs, err := parser.ParseDir(fset, dir, func(fi fs.FileInfo) bool {
		return !strings.HasSuffix(fi.Name(), "_test.go")
	}, 0)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, pkg := range pkgs {
		for _, f := range pkg.Files {
			for _, d := range f.Decls {
				g, ok := d.(*ast.GenDecl)
				if !ok || g.Tok != token.VAR {
					continue
				}
				for _, s := range g.Specs {
					for _, n := range s.(*ast.ValueSpec).Names {
						if strings.HasPrefix(n.Name, "Err") && n.IsExported() {
							names = append(names, n.Name)
						}
					}
				}
			}
		}
	}
	sort.Strings(names)
	return names
}

// Statuses is the set of error statuses (4xx and 5xx) any operation of spec documents.
func Statuses(spec *openapi3.T) map[int]bool {
	out := map[int]bool{}
	for _, item := range spec.Paths.Map() {
		for _, op := range item.Operations() {
			for code := range op.Responses.Map() {
				if n, err := strconv.Atoi(code); err == nil && n >= 400 {
					out[n] = true
				}
			}
		}
	}
	return out
}
