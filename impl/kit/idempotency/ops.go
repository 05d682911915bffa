package idempotency

import (
	"net/http"
	"sort"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// Operation is a method and a path template ("/api/subscribe/{id}") that takes Idempotency-Key.
type Operation struct {
	Method, Path string
}

// Operations lists the operations of specs that declare an Idempotency-Key header parameter: the
// specs are where an operation says it takes the key, and the middleware follows them.
func Operations(specs ...*openapi3.T) []Operation {
	var ops []Operation
	for _, spec := range specs {
		if spec.Paths == nil {
			continue
		}
		for path, item := range spec.Paths.Map() {
			for method, op := range item.Operations() {
				params := append(openapi3.Parameters{}, item.Parameters...)
				for _, p := range append(params, op.Parameters...) {
					if p.Value != nil && p.Value.In == openapi3.ParameterInHeader && strings.EqualFold(p.Value.Name, Header) {
						ops = append(ops, Operation{Method: method, Path: path})
						break
					}
				}
			}
		}
	}
	sort.Slice(ops, func(i, j int) bool { return ops[i].Path+ops[i].Method < ops[j].Path+ops[j].Method })
	return ops
}

// match returns the operation of ops that r is a request of.
func match(ops []Operation, r *http.Request) (Operation, bool) {
	for _, op := range ops {
		if r.Method == op.Method && pathMatches(op.Path, r.URL.Path) {
			return op, true
		}
	}
	return Operation{}, false
}

// pathMatches reports whether path fills template, each {name} standing for one non-empty segment.
func pathMatches(template, path string) bool {
	t, p := strings.Split(template, "/"), strings.Split(path, "/")
	if len(t) != len(p) {
		return false
	}
	for i := range t {
		if strings.HasPrefix(t[i], "{") && strings.HasSuffix(t[i], "}") {
			if p[i] == "" {
				return false
			}
		} else if t[i] != p[i] {
			return false
		}
	}
	return true
}
