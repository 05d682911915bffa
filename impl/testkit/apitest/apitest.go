// Package apitest checks, in tests, that every response a server sends matches its OpenAPI spec,
// and (CheckBounds) that the bounds Go code states again are the spec's.
//
// Client wraps an http.Client's transport: each request is matched to its operation in the spec and
// the response (status, headers, body) is validated with kin-openapi. A response the spec does not
// document fails the test. Because the check sits in the transport, it covers whatever drives the
// server: plain net/http, golang.org/x/oauth2 (through its context client) or a generated SDK.
package apitest

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"

	"github.com/triadhq/triad/api"
)

// Validator matches requests to a spec's operations and validates responses.
type Validator struct {
	router routers.Router
}

// NewValidator builds a validator for spec. The spec's servers are cleared so any host matches,
// and its open enums closed (api.CloseEnums), in place; a document of Spec, shared, is left as it
// is, and its prepared copy used instead.
func NewValidator(t testing.TB, spec *openapi3.T) *Validator {
	t.Helper()
	spec, err := validated(spec)
	if err != nil {
		t.Fatal(err)
	}
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		t.Fatalf("apitest: building router: %v", err)
	}
	return &Validator{router: router}
}

// prepare clears spec's servers and closes its open enums.
func prepare(spec *openapi3.T) {
	spec.Servers = nil
	api.CloseEnums(spec)
}

// Check validates one exchange. It returns an error describing the first violation, or nil.
func (v *Validator) Check(req *http.Request, status int, header http.Header, body []byte) error {
	// Match on path and method only: the server may live on any host.
	probe := req.Clone(context.Background())
	probe.URL = &url.URL{Path: req.URL.Path, RawQuery: req.URL.RawQuery}
	probe.Host = ""
	route, params, err := v.router.FindRoute(probe)
	if err != nil {
		return fmt.Errorf("%s %s: not in the spec: %w", req.Method, req.URL.Path, err)
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request:    probe,
			PathParams: params,
			Route:      route,
			Options:    &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, IncludeResponseStatus: true},
		},
		Status: status,
		Header: header,
		Options: &openapi3filter.Options{
			IncludeResponseStatus: true,
			MultiError:            true,
		},
	}
	in.SetBodyBytes(body)
	if err := openapi3filter.ValidateResponse(context.Background(), in); err != nil {
		return fmt.Errorf("%s %s -> %d: response violates the spec: %w\nbody: %s", req.Method, req.URL.Path, status, err, truncate(body))
	}
	return nil
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "..."
	}
	return string(b)
}

type transport struct {
	t    testing.TB
	v    *Validator
	base http.RoundTripper
}

func (tr *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := tr.base.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	body, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	if err != nil {
		return nil, err
	}
	resp.Body = io.NopCloser(bytes.NewReader(body))
	if verr := tr.v.Check(req, resp.StatusCode, resp.Header, body); verr != nil {
		tr.t.Errorf("apitest: %v", verr)
	}
	return resp, nil
}

// Transport wraps base (nil means http.DefaultTransport) so every response is validated against
// the spec; a violation is reported with t.Errorf.
func (v *Validator) Transport(t testing.TB, base http.RoundTripper) http.RoundTripper {
	if base == nil {
		base = http.DefaultTransport
	}
	return &transport{t: t, v: v, base: base}
}

// Client returns an http.Client that validates every response against spec and does not follow
// redirects (tests assert on them). Pass a cookie jar through the returned client's Jar field.
func Client(t testing.TB, spec *openapi3.T) *http.Client {
	v := NewValidator(t, spec)
	return &http.Client{
		Transport:     v.Transport(t, nil),
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
}

// ClientFrom is Client whose connections leave from the local address ip, so a server sees
// another client address (RemoteAddr): on Linux every address of 127.0.0.0/8 is local, so tests
// of per-address behaviour (login throttling) can play several clients on one machine.
func ClientFrom(t testing.TB, spec *openapi3.T, ip string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(ip)}, Timeout: 10 * time.Second}
	c := Client(t, spec)
	c.Transport = NewValidator(t, spec).Transport(t, &http.Transport{DialContext: d.DialContext})
	return c
}
