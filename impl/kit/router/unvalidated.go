package router

import (
	"net/http"
	"slices"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/impl/kit/web"
)

// Skips returns what decides, for Surface.Unvalidated, whether a request skips spec's validator:
// the request's operation, found by its method and path alone against spec's path templates
// (a literal segment wins over a parameter; nothing is decoded, the cost the skip saves), is a
// key of unvalidated whose test the request passes. It fails when a key names no operation of
// spec. Surfaces' tests use it to hold each test against the validator.
func Skips(spec *openapi3.T, unvalidated map[string]func(*http.Request) bool) (func(*http.Request) bool, error) {
	ids := make([]string, 0, len(unvalidated))
	for id := range unvalidated {
		ids = append(ids, id)
	}
	if err := web.KnownOperations(spec, ids...); err != nil {
		return nil, err
	}
	byMethod := map[string][]template{}
	for path, item := range spec.Paths.Map() {
		segments := strings.Split(strings.TrimPrefix(path, "/"), "/")
		literals := 0
		for _, s := range segments {
			if !isParam(s) {
				literals++
			}
		}
		for method, op := range item.Operations() {
			byMethod[method] = append(byMethod[method], template{segments: segments, literals: literals, id: web.GeneratedOperationID(op.OperationID)})
		}
	}
	for _, ts := range byMethod {
		slices.SortStableFunc(ts, func(a, b template) int {
			if a.literals != b.literals {
				return b.literals - a.literals
			}
			return strings.Compare(a.id, b.id)
		})
	}
	return func(r *http.Request) bool {
		path, rooted := strings.CutPrefix(r.URL.Path, "/")
		if !rooted {
			return false
		}
		for _, t := range byMethod[r.Method] {
			if t.matches(path) {
				skip, ok := unvalidated[t.id]
				return ok && skip(r)
			}
		}
		return false
	}, nil
}

// template is one operation's path template, split in segments.
type template struct {
	segments []string
	literals int // segments that are not parameters
	id       string
}

// matches reports whether path (without its leading slash) has t's segments and no more (a
// trailing slash is one more, empty): each literal as written, each parameter non-empty.
func (t template) matches(path string) bool {
	rest := path
	for i, s := range t.segments {
		seg, tail, more := strings.Cut(rest, "/")
		if more != (i < len(t.segments)-1) {
			return false
		}
		if isParam(s) {
			if seg == "" {
				return false
			}
		} else if seg != s {
			return false
		}
		rest = tail
	}
	return true
}

func isParam(segment string) bool {
	return strings.HasPrefix(segment, "{") && strings.HasSuffix(segment, "}")
}
