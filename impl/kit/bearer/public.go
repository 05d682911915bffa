package bearer

import (
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
)

// PublicBySpec returns the Public predicate of a surface from its spec: a request is public when
// the operation its method and path name lists an anonymous alternative in its security (`[]` or
// `- {}`), or inherits such a document-level requirement. A request that names no operation is
// public too: the router answers it 404 or 405 without a token, as it would anyone.
func PublicBySpec(spec *openapi3.T) func(*http.Request) bool {
	type op struct {
		segs   []string
		public bool
	}
	byMethod := map[string][]op{}
	for path, item := range spec.Paths.Map() {
		segs := strings.Split(strings.Trim(path, "/"), "/")
		for method, o := range item.Operations() {
			sec := o.Security
			if sec == nil {
				sec = &spec.Security
			}
			byMethod[method] = append(byMethod[method], op{segs: segs, public: anonymous(*sec)})
		}
	}
	return func(r *http.Request) bool {
		ops := byMethod[r.Method]
		if len(ops) == 0 {
			return true
		}
		path := strings.Trim(r.URL.Path, "/")
		// The operation whose path matches with the most literal segments wins, as in the router
		// (/api/brand/list before /api/brand/{id}).
		best, bestLit := -1, -1
		for i, o := range ops {
			if lit, ok := match(o.segs, path); ok && lit > bestLit {
				best, bestLit = i, lit
			}
		}
		return best < 0 || ops[best].public
	}
}

// anonymous reports whether a security requirement list admits a caller without credentials.
func anonymous(sec openapi3.SecurityRequirements) bool {
	if len(sec) == 0 {
		return true
	}
	for _, req := range sec {
		if len(req) == 0 {
			return true
		}
	}
	return false
}

// match compares a request path with a template's segments, counting the literal ones.
func match(segs []string, path string) (literal int, ok bool) {
	for i, s := range segs {
		if path == "" && i < len(segs) {
			return 0, false
		}
		part := path
		if j := strings.IndexByte(path, '/'); j >= 0 {
			part, path = path[:j], path[j+1:]
		} else {
			path = ""
		}
		if strings.HasPrefix(s, "{") {
			if part == "" {
				return 0, false
			}
			continue
		}
		if part != s {
			return 0, false
		}
		literal++
	}
	return literal, path == ""
}
