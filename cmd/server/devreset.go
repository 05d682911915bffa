package main

import (
	"context"
	"fmt"
	"mime"
	"net/http"
	"sync"
	"time"

	"github.com/triadhq/triad/impl/kit/web"
)

// devResets is dev mode's POST /dev/reset: the surfaces' resets of their demo data
// (kit.Deps.DevReset), run in mount order, one reset at a time. A walk of Swagger UI's operations
// (docs/specs.md) moves orders to their final states, registers the examples' new users and
// deletes a brand; the reset puts all of it back, so the next walk finds what the examples name.
// Outside dev mode the server has no devResets and the path does not exist (404).
type devResets struct {
	mu     sync.Mutex // held by add and by a reset, so two resets never interleave
	resets []devReset
}

// devReset is one surface's reset.
type devReset struct {
	name  string
	reset func(context.Context) error
}

// add registers a surface's reset (kit.Deps.DevReset).
func (d *devResets) add(name string, reset func(context.Context) error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.resets = append(d.resets, devReset{name, reset})
}

// ServeHTTP runs every reset and answers 200 {"status":"reset","surfaces":[...]}. The request must
// be JSON (Content-Type application/json, any body): a page of another site cannot send that
// without a CORS preflight, which its origin does not pass, so no form elsewhere can wipe a
// developer's demo data. The reset runs to its end even when the caller hangs up (a half-loaded
// demo would be worse than either state).
func (d *devResets) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if mt, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type")); mt != "application/json" {
		web.WriteError(w, r, http.StatusUnsupportedMediaType, web.Error{Code: web.CodeUnsupportedMediaType,
			Message: "the reset takes an application/json request (any body)"})
		return
	}
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), time.Minute)
	defer cancel()
	d.mu.Lock()
	defer d.mu.Unlock()
	names := make([]string, 0, len(d.resets))
	for _, s := range d.resets {
		if err := s.reset(ctx); err != nil {
			web.Internal(w, r, fmt.Errorf("dev reset of %s: %w", s.name, err))
			return
		}
		names = append(names, s.name)
	}
	web.WriteJSON(w, http.StatusOK, map[string]any{"status": "reset", "surfaces": names})
}
