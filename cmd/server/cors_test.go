package main

import (
	"net/http"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestServer_CORS: a SPA on a listed origin can preflight and read every surface's answers (with
// credentials, for auth's cookies); any other origin gets no CORS headers, so its page reads nothing.
func TestServer_CORS(t *testing.T) {
	t.Parallel()
	base, _ := routerServer(t, "-database-url", dbtest.NewURL(t), "-cors-origins", "https://app.example.com")
	tests := []struct {
		name, method, path, origin string
		preflight                  bool
		wantStatus                 int
		wantOrigin                 string
	}{
		{"preflight POST /orders (405 without CORS)", http.MethodOptions, "/orders", "https://app.example.com", true, http.StatusNoContent, "https://app.example.com"},
		{"preflight brands login", http.MethodOptions, "/api/user/login", "https://app.example.com", true, http.StatusNoContent, "https://app.example.com"},
		{"preflight auth user", http.MethodOptions, "/auth/user", "https://app.example.com", true, http.StatusNoContent, "https://app.example.com"},
		{"a refusal is readable too", http.MethodGet, "/orders", "https://app.example.com", false, http.StatusUnauthorized, "https://app.example.com"},
		{"dev servers are allowed in dev mode", http.MethodGet, "/auth/list", "http://localhost:5173", false, http.StatusOK, "http://localhost:5173"},
		{"another origin gets nothing", http.MethodGet, "/auth/list", "https://evil.example", false, http.StatusOK, ""},
		{"another origin's preflight fails", http.MethodOptions, "/orders", "https://evil.example", true, http.StatusMethodNotAllowed, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req, err := http.NewRequest(tc.method, base+tc.path, nil)
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Origin", tc.origin)
			if tc.preflight {
				req.Header.Set("Access-Control-Request-Method", "POST")
				req.Header.Set("Access-Control-Request-Headers", "authorization,content-type,x-xsrf-token")
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			got := resp.Header.Get("Access-Control-Allow-Origin")
			if resp.StatusCode != tc.wantStatus || got != tc.wantOrigin {
				t.Fatalf("got %d, Allow-Origin %q; want %d, %q", resp.StatusCode, got, tc.wantStatus, tc.wantOrigin)
			}
			if tc.wantOrigin != "" && resp.Header.Get("Access-Control-Allow-Credentials") != "true" {
				t.Fatal("a listed origin is not allowed credentials")
			}
			if tc.preflight && tc.wantOrigin != "" && !strings.Contains(resp.Header.Get("Access-Control-Allow-Headers"), "X-XSRF-TOKEN") {
				t.Fatalf("preflight allows headers %q", resp.Header.Get("Access-Control-Allow-Headers"))
			}
		})
	}
}

// TestLoadConfig_CORSOrigins: a malformed origin stops the start instead of silently blocking a frontend.
func TestLoadConfig_CORSOrigins(t *testing.T) {
	for _, bad := range []string{"app.example.com", "https://app.example.com/", "*,https://a.example"} {
		if _, err := LoadConfig([]string{"-cors-origins", bad}); err == nil || !strings.Contains(err.Error(), "cors origins") {
			t.Errorf("-cors-origins %q: err = %v, want a cors origins error", bad, err)
		}
	}
	if _, err := LoadConfig([]string{"-cors-origins", "https://app.example.com,http://localhost:3000"}); err != nil {
		t.Fatal(err)
	}
}
