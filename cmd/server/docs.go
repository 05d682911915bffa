package main

import (
	"cmp"
	"encoding/json"
	"errors"
	"html/template"
	"net/http"
	"slices"
	"sync"

	"github.com/go-chi/chi/v5"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"

	"github.com/triadhq/triad/api"
)

// specNames are the published OpenAPI documents, one per spec in api/ (api.Names), in the order
// their surfaces are registered (orders first: the document /docs opens on).
var specNames = registeredOrder(api.Names())

// registeredOrder sorts names (stably) by the position of their surface in surfaces; a name with no
// surface registered goes last (TestSurfaces_EverySpecIsMounted fails on it).
func registeredOrder(names []string) []string {
	at := func(name string) int {
		return cmp.Or(slices.IndexFunc(surfaces, func(s surface) bool { return s.name == name })+1, len(surfaces)+1)
	}
	slices.SortStableFunc(names, func(a, b string) int { return cmp.Compare(at(a), at(b)) })
	return names
}

// swaggerURLs is Swagger UI's spec picker: every published document.
func swaggerURLs() string {
	type entry struct {
		URL  string `json:"url"`
		Name string `json:"name"`
	}
	urls := make([]entry, len(specNames))
	for i, name := range specNames {
		urls[i] = entry{URL: "/openapi/" + name + ".yaml", Name: name}
	}
	b, err := json.Marshal(urls)
	if err != nil {
		panic(err) // strings only
	}
	return string(b)
}

// mountDocs publishes the specs byte for byte as bundled (api.FS: gen/openapi, each self-contained)
// at /openapi/{name}.yaml, the same documents as JSON at /openapi/{name}.json (for tools that read
// no YAML; api.JSON keeps the keys in the YAML's order, so a generator builds the same client), and an interactive reference (Swagger UI, embedded in the binary by the swgui module)
// at /docs with a picker for every spec. The UI keeps what Authorize was given across reloads
// (persistAuthorization, in the browser's localStorage). In dev mode the page starts with a bar
// whose button puts the demo data back (POST /dev/reset), for a second walk of the operations.
func mountDocs(r chi.Router, dev bool) {
	for _, name := range specNames {
		body, err := api.FS.ReadFile(name + ".yaml")
		if err != nil {
			panic(err) // the embed directive guarantees the files; a miss is a build mistake
		}
		r.Get("/openapi/"+name+".yaml", serveSpec("application/yaml", body))
		r.Get("/openapi/"+name+".json", serveSpec("application/json", specsAsJSON()[name]))
	}
	cfg := swgui.Config{
		Title:       "triad API reference",
		SwaggerJSON: "/openapi/" + specNames[0] + ".yaml",
		BasePath:    "/docs/",
		ShowTopBar:  true,
		SettingsUI: map[string]string{
			"urls":                 swaggerURLs(),
			"persistAuthorization": "true",
		},
	}
	if dev {
		cfg.PrependHTML = devResetBar
	}
	ui := v5emb.NewHandlerWithConfig(cfg)
	r.Get("/docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently).ServeHTTP)
	r.Mount("/docs/", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ui.ServeHTTP(&firstStatus{ResponseWriter: w}, r)
	}))
}

// specsAsJSON is every published spec as JSON (api.JSON), by name, converted once per process.
var specsAsJSON = sync.OnceValue(func() map[string][]byte {
	out := map[string][]byte{}
	for _, name := range specNames {
		body, err := api.FS.ReadFile(name + ".yaml")
		if err != nil {
			panic(err) // the embed directive guarantees the files; a miss is a build mistake
		}
		if out[name], err = api.JSON(body); err != nil {
			panic(err) // api's tests load every spec; a miss is a build mistake
		}
	}
	return out
})

// devResetBar is the bar dev mode puts above Swagger UI: its button asks POST /dev/reset (as JSON,
// which no other site's page can send without a preflight) and says how it went.
const devResetBar template.HTML = `<div id="dev-reset" style="font: 14px sans-serif; padding: 8px 20px; background: #fff8e1; border-bottom: 1px solid #e6d28a">
Dev mode: every visitor shares the demo data the examples name, and a walk of the operations uses it up.
<button type="button" id="dev-reset-button">Put the demo data back</button>
<span id="dev-reset-status" role="status"></span>
</div>
<script>
document.getElementById("dev-reset-button").addEventListener("click", async () => {
	const status = document.getElementById("dev-reset-status");
	status.textContent = "putting it back...";
	try {
		const res = await fetch("/dev/reset", {method: "POST", headers: {"Content-Type": "application/json"}, body: "{}"});
		status.textContent = res.ok ? "put back: sign in and Authorize again" : "failed: " + res.status + " " + await res.text();
	} catch (e) {
		status.textContent = "failed: " + e;
	}
});
</script>`

// serveSpec answers a spec document of the given media type.
func serveSpec(contentType string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", contentType)
		w.Header().Set("Cache-Control", "no-cache")
		_, _ = w.Write(body)
	}
}

// firstStatus passes on a response's first status and drops any later one, with the body of a
// response whose write already failed. The Swagger UI's file server (statigz) answers a failed copy
// with http.Error, though the file's status and first bytes are out: when a client hangs up in the
// middle of a large asset, that 500 cannot be sent, and net/http would log every such call as a
// "superfluous response.WriteHeader" warning for a fault that is not the server's.
type firstStatus struct {
	http.ResponseWriter
	started bool // a final status (or a body byte) has gone to the writer
	failed  bool // a write failed: the connection is gone or broken
}

func (f *firstStatus) WriteHeader(code int) {
	if f.started {
		return
	}
	f.started = code >= 200 // informational statuses (1xx) may precede the final one
	f.ResponseWriter.WriteHeader(code)
}

func (f *firstStatus) Write(b []byte) (int, error) {
	if f.failed {
		return 0, errWriteFailed
	}
	f.started = true
	n, err := f.ResponseWriter.Write(b)
	f.failed = err != nil
	return n, err
}

// Unwrap lets http.ResponseController reach the writer underneath.
func (f *firstStatus) Unwrap() http.ResponseWriter { return f.ResponseWriter }

// errWriteFailed refuses writes after one failed, so nothing is appended to a broken response.
var errWriteFailed = errors.New("docs: an earlier write of this response failed")
