package main

import (
	"net/http"

	"github.com/go-chi/chi/v5"
	"github.com/swaggest/swgui"
	"github.com/swaggest/swgui/v5emb"

	"github.com/triadhq/triad/api"
)

// specNames are the published OpenAPI documents, one per surface.
var specNames = []string{"orders", "brands", "auth"}

// mountDocs publishes the specs byte for byte at /openapi/{name}.yaml and an interactive reference
// (Swagger UI, embedded in the binary by the swgui module) at /docs with a picker for the three specs.
func mountDocs(r chi.Router) {
	for _, name := range specNames {
		body, err := api.FS.ReadFile(name + ".yaml")
		if err != nil {
			panic(err) // the embed directive guarantees the files; a miss is a build mistake
		}
		r.Get("/openapi/"+name+".yaml", func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", "application/yaml")
			w.Header().Set("Cache-Control", "no-cache")
			_, _ = w.Write(body)
		})
	}
	ui := v5emb.NewHandlerWithConfig(swgui.Config{
		Title:       "triad API reference",
		SwaggerJSON: "/openapi/orders.yaml",
		BasePath:    "/docs/",
		ShowTopBar:  true,
		SettingsUI: map[string]string{
			"urls": `[{"url":"/openapi/orders.yaml","name":"orders"},{"url":"/openapi/brands.yaml","name":"brands"},{"url":"/openapi/auth.yaml","name":"auth"}]`,
		},
	})
	r.Get("/docs", http.RedirectHandler("/docs/", http.StatusMovedPermanently).ServeHTTP)
	r.Mount("/docs/", ui)
}
