package main

import (
	"encoding/json"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
)

// handWalked reports whether the tests that walk every surface know surface's credentials and
// operations by hand; any other (a surface `make new-surface` made) is walked generically: it
// takes the bearer tokens of one token source (kit.Sources), found by surfaceBearer.
func handWalked(surface string) bool {
	return slices.Contains([]string{"orders", "brands", "auth"}, surface)
}

// devBearers returns, by token source, a way to get a fresh access token of the dev data's user
// from the server at base: orders' alice (the password grant with the dev client), brands' demo
// user, and the auth service's demo user (its JWT, which the source "auth" takes as a bearer
// token).
func devBearers(t *testing.T, base string) map[string]func() string {
	t.Helper()
	post := func(path, ctype, body string) *http.Response {
		t.Helper()
		resp, err := http.Post(base+path, ctype, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		return resp
	}
	field := func(resp *http.Response, name string) string {
		t.Helper()
		defer resp.Body.Close()
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		s, _ := body[name].(string)
		if s == "" {
			t.Fatalf("%s: %d, no %s in the answer", resp.Request.URL.Path, resp.StatusCode, name)
		}
		return s
	}
	return map[string]func() string{
		"orders": func() string {
			return field(post("/oauth/token", "application/x-www-form-urlencoded", url.Values{"grant_type": {"password"},
				"client_id": {devOrdersClientID}, "client_secret": {devOrdersClientSecret}, "username": {"alice"}, "password": {"alice-password"}}.Encode()), "access_token")
		},
		"brands": func() string {
			return field(post("/api/user/login", "application/x-www-form-urlencoded",
				url.Values{"email": {"demo@brands.test"}, "password": {"demo-password"}}.Encode()), "token")
		},
		"auth": func() string {
			resp := post("/auth/local/login", "application/json", `{"user":"demo","passwd":"demo-password"}`)
			resp.Body.Close()
			for _, c := range resp.Cookies() {
				if c.Name == "JWT" {
					return c.Value
				}
			}
			t.Fatal("no JWT cookie from the auth demo login")
			return ""
		},
	}
}

// surfaceBearer returns the way to a fresh token that the surface of spec, served at base, takes:
// the first source of bearers (by name) whose token its first operation needing one does not
// refuse with 401. Every surface authenticates before it validates (docs/adding-a-surface.md), so
// a request with no body or parameters tells a token it takes from one it refuses.
func surfaceBearer(t *testing.T, base, surface string, spec *openapi3.T, bearers map[string]func() string) func() string {
	t.Helper()
	method, path := firstTokenOperation(spec)
	if path == "" {
		t.Fatalf("%s: no operation needs a token; nothing to authenticate", surface)
	}
	sources := make([]string, 0, len(bearers))
	for s := range bearers {
		sources = append(sources, s)
	}
	slices.Sort(sources)
	for _, source := range sources {
		req, err := http.NewRequest(method, base+examplePath(path), nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+bearers[source]())
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			return bearers[source]
		}
	}
	t.Fatalf("%s: %s %s refuses a bearer token of every source (%v): give the tests that walk every surface its credential", surface, method, path, sources)
	return nil
}

// firstTokenOperation is the first operation of spec, by path then method, that needs a token.
func firstTokenOperation(spec *openapi3.T) (method, path string) {
	for _, op := range orderedOperations(spec) {
		if needsToken(spec, op.Operation) {
			return op.Method, op.Path
		}
	}
	return "", ""
}

// operation is one operation of a spec with its method and path.
type operation struct {
	Method, Path string
	*openapi3.Operation
}

// orderedOperations are spec's operations path by path (sorted), and on a path in the order a
// thing is read, made, changed and removed: GET, HEAD, POST, PUT, PATCH, DELETE, then the rest.
func orderedOperations(spec *openapi3.T) []operation {
	rank := map[string]int{http.MethodGet: 0, http.MethodHead: 1, http.MethodPost: 2, http.MethodPut: 3, http.MethodPatch: 4, http.MethodDelete: 5}
	order := func(m string) int {
		if r, ok := rank[m]; ok {
			return r
		}
		return len(rank)
	}
	paths := spec.Paths.InMatchingOrder()
	slices.Sort(paths)
	var out []operation
	for _, path := range paths {
		ops := spec.Paths.Value(path).Operations()
		methods := make([]string, 0, len(ops))
		for m := range ops {
			methods = append(methods, m)
		}
		slices.SortFunc(methods, func(a, b string) int { return order(a) - order(b) })
		for _, m := range methods {
			out = append(out, operation{m, path, ops[m]})
		}
	}
	return out
}

// examplePath is path with each parameter 1.
func examplePath(path string) string {
	var b strings.Builder
	for {
		open := strings.IndexByte(path, '{')
		end := strings.IndexByte(path, '}')
		if open < 0 || end < open {
			b.WriteString(path)
			return b.String()
		}
		b.WriteString(path[:open] + "1")
		path = path[end+1:]
	}
}
