package cors

import (
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestParse(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, list string
		extra      []string
		wantErr    bool
		enabled    bool
	}{
		{"empty denies everything", "", nil, false, false},
		{"exact origins", "https://app.example.com, http://localhost:5173", nil, false, true},
		{"wildcard alone", "*", nil, false, true},
		{"wildcard with a list", "*,https://a.example", nil, true, false},
		{"path is not an origin", "https://app.example.com/", nil, true, false},
		{"no scheme", "app.example.com", nil, true, false},
		{"upper case never matches a browser's Origin", "https://App.example.com", nil, true, false},
		{"dev origins alone", "", DevOrigins(), false, true},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse(tc.list, tc.extra...)
			if (err != nil) != tc.wantErr {
				t.Fatalf("err = %v, wantErr %v", err, tc.wantErr)
			}
			if err == nil && p.Enabled() != tc.enabled {
				t.Fatalf("Enabled = %v, want %v", p.Enabled(), tc.enabled)
			}
		})
	}
}

func TestMiddleware(t *testing.T) {
	t.Parallel()
	h := Headers{Methods: []string{"GET", "POST"}, Allow: []string{"Authorization", "Idempotency-Key"}, Expose: []string{"Idempotent-Replayed", "X-Request-Id"}}
	exact, err := Parse("https://app.example.com", DevOrigins()...)
	if err != nil {
		t.Fatal(err)
	}
	exact = exact.With(h)
	star, err := Parse("*")
	if err != nil {
		t.Fatal(err)
	}
	star = star.With(h)
	none, err := Parse("")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name                   string
		p                      Policy
		method, origin, reqMth string
		wantStatus             int
		wantOrigin, wantCreds  string
	}{
		{"preflight from a listed origin", exact, http.MethodOptions, "https://app.example.com", "POST", http.StatusNoContent, "https://app.example.com", "true"},
		{"preflight from a dev server", exact, http.MethodOptions, "http://localhost:5173", "PATCH", http.StatusNoContent, "http://localhost:5173", "true"},
		{"preflight from another origin reaches the router", exact, http.MethodOptions, "https://evil.example", "POST", http.StatusMethodNotAllowed, "", ""},
		{"actual request from a listed origin", exact, http.MethodGet, "https://app.example.com", "", http.StatusOK, "https://app.example.com", "true"},
		{"actual request from another origin", exact, http.MethodGet, "https://evil.example", "", http.StatusOK, "", ""},
		{"same-origin request (no Origin)", exact, http.MethodGet, "", "", http.StatusOK, "", ""},
		{"wildcard never allows credentials", star, http.MethodGet, "https://any.example", "", http.StatusOK, "*", ""},
		{"wildcard preflight", star, http.MethodOptions, "https://any.example", "DELETE", http.StatusNoContent, "*", ""},
		{"nothing configured", none, http.MethodOptions, "https://app.example.com", "POST", http.StatusMethodNotAllowed, "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			// The next handler stands for chi: no OPTIONS route, so a preflight it sees is a 405.
			h := tc.p.Middleware(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if r.Method == http.MethodOptions {
					w.WriteHeader(http.StatusMethodNotAllowed)
					return
				}
				w.WriteHeader(http.StatusOK)
			}))
			req := httptest.NewRequest(tc.method, "/orders", nil)
			if tc.origin != "" {
				req.Header.Set("Origin", tc.origin)
			}
			if tc.reqMth != "" {
				req.Header.Set("Access-Control-Request-Method", tc.reqMth)
				req.Header.Set("Access-Control-Request-Headers", "authorization, content-type")
			}
			rec := httptest.NewRecorder()
			h.ServeHTTP(rec, req)
			got := rec.Result().Header
			if rec.Code != tc.wantStatus || got.Get("Access-Control-Allow-Origin") != tc.wantOrigin ||
				got.Get("Access-Control-Allow-Credentials") != tc.wantCreds {
				t.Fatalf("got %d origin %q creds %q, want %d %q %q", rec.Code, got.Get("Access-Control-Allow-Origin"),
					got.Get("Access-Control-Allow-Credentials"), tc.wantStatus, tc.wantOrigin, tc.wantCreds)
			}
			if tc.wantStatus == http.StatusNoContent && (got.Get("Access-Control-Allow-Methods") != "GET, POST" || got.Get("Access-Control-Allow-Headers") != "Authorization, Idempotency-Key") {
				t.Fatalf("preflight allows %q / %q", got.Get("Access-Control-Allow-Methods"), got.Get("Access-Control-Allow-Headers"))
			}
			if tc.wantStatus == http.StatusOK && tc.wantOrigin != "" && got.Get("Access-Control-Expose-Headers") != "Idempotent-Replayed, X-Request-Id" {
				t.Fatalf("exposes %q", got.Get("Access-Control-Expose-Headers"))
			}
		})
	}
}
