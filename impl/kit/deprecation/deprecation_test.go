package deprecation_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/deprecation"
	"github.com/triadhq/triad/impl/kit/router"
)

func load(t *testing.T, src string) *openapi3.T {
	t.Helper()
	doc, err := openapi3.NewLoader().LoadFromData([]byte(src))
	if err != nil {
		t.Fatal(err)
	}
	return doc
}

// TestMiddleware_TheSpecDecides serves testdata/deprecated.yaml as a surface is served (router.New,
// router.Group with the spec validator, over real HTTP) and reads the headers of each answer: the
// deprecated operation always, the deprecated parameter only when sent (the earliest dates of
// two), the operation whose body schemas hold a deprecated property always (its refusals too),
// and nothing where nothing is deprecated.
func TestMiddleware_TheSpecDecides(t *testing.T) {
	t.Parallel()
	spec, err := openapi3.NewLoader().LoadFromFile("testdata/deprecated.yaml")
	if err != nil {
		t.Fatal(err)
	}
	ok := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{}`))
	}
	list := func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`[]`))
	}
	h, err := router.Standalone(nil, func(r chi.Router) error {
		return router.Group(r, router.Surface{Spec: spec}, func(g chi.Router) {
			g.Get("/old", ok)
			g.Get("/things", list)
			g.Get("/things/{id}", ok)
			g.Put("/things/{id}", ok)
			g.Get("/new", ok)
		})
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	for _, tc := range []struct {
		method, path, header, body string
		status                     int
		deprecation, sunset        string
	}{
		{"GET", "/old", "", "", 200, "@1796083200", "Wed, 30 Jun 2027 12:00:00 GMT"},
		{"GET", "/things/7", "", "", 200, "", ""},
		{"GET", "/things/7?legacy=1", "", "", 200, "@1790812800", ""},
		{"GET", "/things/7?legacy=1", "X-Old-Client: 1", "", 200, "@1788220800", "Mon, 01 Mar 2027 00:00:00 GMT"},
		{"GET", "/things", "", "", 200, "@1793491200", "Fri, 01 Jan 2027 00:00:00 GMT"},
		{"PUT", "/things/7", "", `{"details":{"color":"red"}}`, 200, "@1793491200", "Fri, 01 Jan 2027 00:00:00 GMT"},
		{"PUT", "/things/7", "", `{"details":{"colour":5}}`, 400, "@1793491200", "Fri, 01 Jan 2027 00:00:00 GMT"},
		{"GET", "/new", "", "", 200, "", ""},
	} {
		req, err := http.NewRequest(tc.method, srv.URL+tc.path, strings.NewReader(tc.body))
		if err != nil {
			t.Fatal(err)
		}
		if tc.body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		if name, value, found := strings.Cut(tc.header, ": "); found {
			req.Header.Set(name, value)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		got := resp.Header
		if resp.StatusCode != tc.status || got.Get(deprecation.Header) != tc.deprecation || got.Get(deprecation.SunsetHeader) != tc.sunset {
			t.Errorf("%s %s %s: %d, Deprecation %q, Sunset %q; want %d, %q, %q", tc.method, tc.path, tc.header, resp.StatusCode,
				got.Get(deprecation.Header), got.Get(deprecation.SunsetHeader), tc.status, tc.deprecation, tc.sunset)
		}
	}
}

// TestMiddleware_AnUndatedDeprecationFails: a deprecation the headers cannot be written from stops
// the surface from mounting, naming the place and what to set.
func TestMiddleware_AnUndatedDeprecationFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, op, want string }{
		{"no date", `deprecated: true`, "GET /x: deprecated: true needs x-deprecated-at"},
		{"unreadable date", "deprecated: true\n      x-deprecated-at: soon", "GET /x: x-deprecated-at soon is not an RFC 3339 date"},
		{"sunset alone", `x-sunset: "2027-01-01"`, "GET /x: x-deprecated-at or x-sunset without deprecated: true"},
		{"sunset first", "deprecated: true\n      x-deprecated-at: \"2027-02-01\"\n      x-sunset: \"2027-01-01\"", "x-sunset 2027-01-01T00:00:00Z is before x-deprecated-at"},
	} {
		spec := load(t, `
openapi: 3.0.3
info: {title: t, version: 1.0.0}
paths:
  /x:
    get:
      `+tc.op+`
      responses:
        "200": {description: ok}
`)
		_, err := deprecation.Middleware(spec)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want an error containing %q", tc.name, err, tc.want)
		}
		r := chi.NewRouter()
		if err := router.Group(r, router.Surface{Spec: spec}, func(chi.Router) {}); err == nil {
			t.Errorf("%s: router.Group mounted the surface", tc.name)
		}
	}
}
