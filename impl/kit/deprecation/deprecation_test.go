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
// two, the links of both), the operation whose body schemas hold a deprecated property always
// (its refusals too), and nothing where nothing is deprecated; Link names each notice
// (rel="deprecation") and each successor given (rel="successor-version").
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

	const (
		oldLinks    = `</docs/changes#old>; rel="deprecation", </new>; rel="successor-version"`
		legacy      = `<https://example.com/notes/legacy>; rel="deprecation"`
		oldClient   = `<https://example.com/notes/old-client>; rel="deprecation"`
		colourLinks = `</docs/changes#colour>; rel="deprecation", </docs/changes#color>; rel="successor-version"`
	)
	for _, tc := range []struct {
		method, path, header, body string
		status                     int
		deprecation, sunset, link  string
	}{
		{"GET", "/old", "", "", 200, "@1796083200", "Wed, 30 Jun 2027 12:00:00 GMT", oldLinks},
		{"GET", "/things/7", "", "", 200, "", "", ""},
		{"GET", "/things/7?legacy=1", "", "", 200, "@1790812800", "", legacy},
		{"GET", "/things/7?legacy=1", "X-Old-Client: 1", "", 200, "@1788220800", "Mon, 01 Mar 2027 00:00:00 GMT", legacy + ", " + oldClient},
		{"GET", "/things", "", "", 200, "@1793491200", "Fri, 01 Jan 2027 00:00:00 GMT", colourLinks},
		{"PUT", "/things/7", "", `{"details":{"color":"red"}}`, 200, "@1793491200", "Fri, 01 Jan 2027 00:00:00 GMT", colourLinks},
		{"PUT", "/things/7", "", `{"details":{"colour":5}}`, 400, "@1793491200", "Fri, 01 Jan 2027 00:00:00 GMT", colourLinks},
		{"GET", "/new", "", "", 200, "", "", ""},
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
		link := strings.Join(got.Values(deprecation.LinkHeader), ", ")
		if resp.StatusCode != tc.status || got.Get(deprecation.Header) != tc.deprecation || got.Get(deprecation.SunsetHeader) != tc.sunset || link != tc.link {
			t.Errorf("%s %s %s: %d, Deprecation %q, Sunset %q, Link %q; want %d, %q, %q, %q", tc.method, tc.path, tc.header, resp.StatusCode,
				got.Get(deprecation.Header), got.Get(deprecation.SunsetHeader), link, tc.status, tc.deprecation, tc.sunset, tc.link)
		}
	}
}

// TestMiddleware_AnUndatedDeprecationFails: a deprecation the headers cannot be written from (no
// date, no notice to link to, a date or link that does not read) stops the surface from
// mounting, naming the place and what to set.
func TestMiddleware_AnUndatedDeprecationFails(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct{ name, op, want string }{
		{"no date", "deprecated: true\n      x-deprecation-link: /docs/", "GET /x: deprecated: true needs x-deprecated-at"},
		{"unreadable date", "deprecated: true\n      x-deprecated-at: soon", "GET /x: x-deprecated-at soon is not an RFC 3339 date"},
		{"sunset alone", `x-sunset: "2027-01-01"`, "GET /x: x-deprecated-at, x-sunset, x-deprecation-link or x-successor without deprecated: true"},
		{"successor alone", `x-successor: /y`, "without deprecated: true"},
		{"sunset first", "deprecated: true\n      x-deprecated-at: \"2027-02-01\"\n      x-deprecation-link: /docs/\n      x-sunset: \"2027-01-01\"", "x-sunset 2027-01-01T00:00:00Z is before x-deprecated-at"},
		{"no notice", "deprecated: true\n      x-deprecated-at: \"2027-02-01\"", "GET /x: deprecated: true needs x-deprecation-link"},
		{"a notice that is no link", "deprecated: true\n      x-deprecated-at: \"2027-02-01\"\n      x-deprecation-link: see the changelog", "x-deprecation-link see the changelog is not an http(s) URL or a path"},
		{"a successor of another scheme", "deprecated: true\n      x-deprecated-at: \"2027-02-01\"\n      x-deprecation-link: /docs/\n      x-successor: \"javascript:alert(1)\"", "x-successor javascript:alert(1) is not"},
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
