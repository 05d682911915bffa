package main

import (
	"net/http"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/screen"
	"github.com/triadhq/triad/impl/kit/web"
)

// inputScreen is the one input-screening layer in front of every surface (impl/kit/screen): it refuses
// invalid UTF-8, NUL, over-long number literals and non-strict JSON before any validator or
// handler parses the request, with the numeric parameters and path names taken from the three specs.
func inputScreen(specs []*openapi3.T) func(http.Handler) http.Handler {
	return screen.New(screen.Options{Refuse: refuseInput}, specs...).Handler
}

// published is publishedSpecs, parsed once per process (a test process builds the server dozens of
// times, and under -race each parse of the three costs most of a second) and shared by everything
// routes builds from them, which only reads them.
var published = sync.OnceValues(publishedSpecs)

// publishedSpecs parses the published documents, not the generated packages' embedded
// copies: those leave out operations served by hand (the OAuth token endpoint).
func publishedSpecs() ([]*openapi3.T, error) {
	var specs []*openapi3.T
	for _, name := range specNames {
		spec, err := api.Load(name)
		if err != nil {
			return nil, err
		}
		specs = append(specs, spec)
	}
	return specs, nil
}

// refuseInput answers a screened-out request with the shared error body, except at the OAuth token
// endpoint, whose refusals are RFC 6749 §5.2 bodies (its spec says so, and OAuth clients read them).
func refuseInput(w http.ResponseWriter, r *http.Request, p *invalid.Detail) {
	if r.URL.Path == "/oauth/token" {
		web.WriteOAuthError(w, r, http.StatusBadRequest, "invalid_request", p.Error())
		return
	}
	screen.WriteRefusal(w, r, p)
}
