package main

import (
	"encoding/json"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// Every answer to a request that presents a valid token carries Cache-Control: no-store, on every
// operation of every surface that the specs mark as needing one (read from the specs, so a new
// operation is covered the day it is added): the answers are about the caller, and a browser or a
// shared cache that kept one would show it to the next user of the machine or the proxy.
func TestServer_AuthenticatedResponsesAreNoStore(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-database-url", dbtest.NewURL(t))
	call := func(method, path, ctype, body string, hdr ...string) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequest(method, base+path, strings.NewReader(body))
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		for i := 0; i+1 < len(hdr); i += 2 {
			req.Header.Set(hdr[i], hdr[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp, b
	}
	// A fresh credential per request, so a logout among the operations revokes only its own.
	credential := map[string]func() []string{
		"orders": func() []string {
			_, b := call("POST", "/oauth/token", "application/x-www-form-urlencoded", url.Values{"grant_type": {"password"},
				"client_id": {devOrdersClientID}, "client_secret": {devOrdersClientSecret}, "username": {"alice"}, "password": {"alice-password"}}.Encode())
			var tok struct {
				AccessToken string `json:"access_token"`
			}
			_ = json.Unmarshal(b, &tok)
			return []string{"Authorization", "Bearer " + tok.AccessToken}
		},
		"brands": func() []string {
			_, b := call("POST", "/api/user/login", "application/x-www-form-urlencoded", url.Values{"email": {"demo@brands.test"}, "password": {"demo-password"}}.Encode())
			var tok struct{ Token string }
			_ = json.Unmarshal(b, &tok)
			return []string{"Authorization", "Bearer " + tok.Token}
		},
		"auth": func() []string {
			resp, _ := call("POST", "/auth/local/login", "application/json", `{"user":"demo","passwd":"demo-password"}`)
			for _, c := range resp.Cookies() {
				if c.Name == "JWT" {
					return []string{"X-JWT", c.Value}
				}
			}
			t.Fatal("no JWT cookie from the demo login")
			return nil
		},
	}
	// Any other surface (a scaffolded one) takes the bearer tokens of one token source.
	specs := publishedSpecsT(t)
	bearers := devBearers(t, base)
	for surface, spec := range specs {
		if !handWalked(surface) {
			token := surfaceBearer(t, base, surface, spec, bearers)
			credential[surface] = func() []string { return []string{"Authorization", "Bearer " + token()} }
		}
	}
	var alice struct{ ID json.Number }
	_, b := call("GET", "/authenticated", "", "", credential["orders"]()...)
	if err := json.Unmarshal(b, &alice); err != nil || alice.ID == "" {
		t.Fatalf("alice: %s", b)
	}

	param := regexp.MustCompile(`\{[^}]+\}`)
	checked := map[string]int{}
	for surface, spec := range specs {
		paths := spec.Paths.InMatchingOrder()
		sort.Strings(paths)
		for _, path := range paths {
			item := spec.Paths.Value(path)
			for method, op := range item.Operations() {
				if !needsToken(spec, op) {
					continue
				}
				target := param.ReplaceAllStringFunc(path, func(p string) string {
					if path == "/users/{id}/orders" {
						return alice.ID.String()
					}
					return paramExample(item, op, strings.Trim(p, "{}"))
				})
				resp, b := call(method, target, "", "", credential[surface]()...)
				if resp.StatusCode == http.StatusUnauthorized {
					t.Fatalf("%s %s: 401 with a valid token: %s", method, target, b)
				}
				if got := resp.Header.Get("Cache-Control"); got != "no-store" {
					t.Errorf("%s %s (%s): %d with Cache-Control %q, want no-store", method, target, surface, resp.StatusCode, got)
				}
				if (target == "/authenticated" || strings.HasPrefix(target, "/users/")) && resp.StatusCode != http.StatusOK {
					t.Errorf("%s %s: %d %s, want 200", method, target, resp.StatusCode, b)
				}
				checked[surface]++
			}
		}
	}
	for _, surface := range []string{"orders", "brands", "auth"} {
		if checked[surface] == 0 {
			t.Fatalf("only %d operations of %s need a token per its spec: the spec walk is broken (%v)", checked[surface], surface, checked)
		}
	}
}

// publishedSpecsT returns the served specs by surface name.
func publishedSpecsT(t *testing.T) map[string]*openapi3.T {
	t.Helper()
	specs, err := publishedSpecs()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]*openapi3.T{}
	for i, s := range specs {
		out[specNames[i]] = s
	}
	return out
}

// needsToken reports whether op requires a credential: its own security, or the spec's, is set
// and has no empty (anonymous) alternative.
func needsToken(spec *openapi3.T, op *openapi3.Operation) bool {
	sec := spec.Security
	if op.Security != nil {
		sec = *op.Security
	}
	if len(sec) == 0 {
		return false
	}
	for _, req := range sec {
		if len(req) == 0 {
			return false
		}
	}
	return true
}

// paramExample is the example of a path parameter, or "1".
func paramExample(item *openapi3.PathItem, op *openapi3.Operation, name string) string {
	for _, ps := range []openapi3.Parameters{op.Parameters, item.Parameters} {
		if p := ps.GetByInAndName("path", name); p != nil {
			if p.Example != nil {
				return strings.Trim(strings.TrimSpace(string(mustJSON(p.Example))), `"`)
			}
			if p.Schema != nil && p.Schema.Value != nil && p.Schema.Value.Example != nil {
				return strings.Trim(strings.TrimSpace(string(mustJSON(p.Schema.Value.Example))), `"`)
			}
		}
	}
	return "1"
}

func mustJSON(v any) []byte {
	b, _ := json.Marshal(v)
	return b
}
