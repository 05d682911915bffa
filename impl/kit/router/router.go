// Package router builds the one chi router every surface is served from: the shared middleware
// (request ids, the request's logger, any outer layers such as metrics and CORS, access log, panic
// recovery, outage reporting, body limit, then any extra layers such as input screening), JSON 404/405 answers, and spec-validated
// groups for each surface's operations. cmd/server builds the root with New; tests and benchmarks
// of one surface build the same root, so they exercise the stack users get.
package router

import (
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/impl/kit/deprecation"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/web"
)

// DefaultBodyLimit caps request bodies when Options.BodyLimit is 0.
const DefaultBodyLimit int64 = 1 << 20

// Options configure the root router.
type Options struct {
	// Log is every request's logger (web.WithLogger): failures (web.Internal), panics and, with
	// AccessLog, one line per request; nil is slog.Default(), so a failure is never unlogged.
	Log *slog.Logger
	// AccessLog logs every request (the server does; tests and benchmarks need not).
	AccessLog bool
	// AccessLevel is the level of the access log lines (the zero value is info).
	AccessLevel slog.Level
	// BodyLimit caps request bodies in bytes; 0 means DefaultBodyLimit.
	BodyLimit int64
	// Outer runs on every request right after request ids, before logging and recovery: the
	// place for layers that see or decorate every response, such as metrics and CORS.
	Outer []func(http.Handler) http.Handler
	// Middleware runs on every request after the shared layers above and before routing, in
	// order: the place for layers every surface gets, such as input screening.
	Middleware []func(http.Handler) http.Handler
}

// New returns the root router with the shared middleware and JSON 404/405 answers. It is the one
// place middleware for every surface is chained.
func New(o Options) chi.Router {
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.BodyLimit <= 0 {
		o.BodyLimit = DefaultBodyLimit
	}
	r := chi.NewRouter()
	r.Use(web.WithRequestID, web.WithLogger(o.Log))
	r.Use(o.Outer...)
	if o.AccessLog {
		// Outside Recover, so a recovered panic is logged with its 500.
		r.Use(web.AccessLog(o.Log, o.AccessLevel))
	}
	r.Use(web.Recover, web.ReportOutages(o.Log), web.LimitBody(o.BodyLimit))
	r.Use(o.Middleware...)
	r.NotFound(web.NotFound)
	r.MethodNotAllowed(web.MethodNotAllowed)
	return r
}

// Standalone returns a root router with default Options (log aside) carrying one surface, whose
// mount registers its routes: what a surface's tests and benchmarks serve, so they exercise the
// shared stack users get rather than a bare handler.
func Standalone(log *slog.Logger, mount func(chi.Router) error) (http.Handler, error) {
	r := New(Options{Log: log})
	if err := mount(r); err != nil {
		return nil, err
	}
	return r, nil
}

// Surface describes how one surface's operations are guarded inside its group.
type Surface struct {
	// Spec is the surface's OpenAPI document; requests are validated against it.
	Spec *openapi3.T
	// Before runs ahead of validation (authentication: an anonymous caller learns nothing about
	// the rules its input breaks).
	Before []func(http.Handler) http.Handler
	// Unvalidated lists, by operation id (as the generated code spells it, like Also), the
	// operations whose requests may skip the spec validator, each with the test a request of it
	// must pass to skip it: every input plainly one the spec takes, which the generated binders
	// and the surface's own parsers then read with the spec's bounds (the surface's tests hold
	// each test against the validator, through Skips). nil validates every request; an id the
	// spec does not have makes Group fail.
	Unvalidated map[string]func(*http.Request) bool
	// Also runs the surface's own field checks (the domain's rules beyond the spec) of an
	// operation, keyed by its generated id, on a request the spec validator refused, so that one
	// answer lists every problem; an id the spec does not have makes Group fail.
	Also web.FieldChecks
	// Idempotency is the Idempotency-Key store of the operations whose spec declares the header
	// (idempotency.Operations); it runs after Before, ahead of validation. Group fails, naming the
	// operations, when the spec declares any and it is nil: a keyed operation served without it
	// would ignore the header, and a client's retry would write twice.
	Idempotency *idempotency.Keys
}

// Group registers a group on r guarded by s, and calls mount to add the surface's routes to it.
// Every answer of the group first gets the Deprecation, Sunset and Link headers s.Spec calls for
// (package deprecation), refusals included. It fails, registering nothing, when s.Also or
// s.Unvalidated names an operation s.Spec does not have, a deprecation in s.Spec is not dated as
// package deprecation asks, or s.Spec declares Idempotency-Key on an operation and s.Idempotency
// is nil.
func Group(r chi.Router, s Surface, mount func(chi.Router)) error {
	v, err := validator(s.Spec, s.Unvalidated, s.Also)
	if err != nil {
		return err
	}
	announce, err := deprecation.Middleware(s.Spec)
	if err != nil {
		return err
	}
	if keyed := idempotency.Operations(s.Spec); len(keyed) > 0 && s.Idempotency == nil {
		names := make([]string, len(keyed))
		for i, op := range keyed {
			names[i] = op.Method + " " + op.Path
		}
		return fmt.Errorf("%s declare %s, but the surface serves them without an idempotency store "+
			"(router.Surface.Idempotency: idempotency.New; each handler calls idempotency.Answer and writes through pgtx.Write)",
			strings.Join(names, ", "), idempotency.Header)
	}
	r.Group(func(g chi.Router) {
		g.Use(announce)
		g.Use(s.Before...)
		if s.Idempotency != nil {
			g.Use(s.Idempotency.Middleware)
		}
		g.Use(v)
		mount(g)
	})
	return nil
}

func validator(spec *openapi3.T, unvalidated map[string]func(*http.Request) bool, also web.FieldChecks) (func(http.Handler) http.Handler, error) {
	if len(unvalidated) == 0 {
		return web.Validator(spec, also)
	}
	skips, err := Skips(spec, unvalidated)
	if err != nil {
		return nil, err
	}
	validate, err := web.Validator(spec, also)
	if err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		validated := validate(next)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if skips(r) {
				next.ServeHTTP(w, r)
				return
			}
			validated.ServeHTTP(w, r)
		})
	}, nil
}
