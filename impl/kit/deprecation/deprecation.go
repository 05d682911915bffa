// Package deprecation tells a client, on the wire, what its surface's OpenAPI document marks
// deprecated: every answer of such an operation carries the Deprecation header (RFC 9745: the date
// it was deprecated, as a structured-field date "@<unix seconds>") and, when the document gives
// one, the Sunset header (RFC 8594: the HTTP-date after which it may stop working), and a Link
// header to the deprecation's notice (rel="deprecation", RFC 9745 §3) and, when there is one, to
// what replaces it (rel="successor-version", RFC 5829). The document is the one place this is
// decided: `deprecated: true` on an operation, a parameter or a schema property, beside the
// extensions x-deprecated-at (when it was or will be deprecated, required), x-deprecation-link
// (the notice a developer reads: an absolute URL or a path on the server, required), x-sunset
// (optional), an RFC 3339 date ("2027-06-30") or date-time like x-deprecated-at, and x-successor
// (optional, a URL or path like x-deprecation-link: the operation or document to move to).
//
// What carries the headers:
//   - a deprecated operation: every answer of it;
//   - a deprecated parameter: every answer to a request that sends it (a path parameter is
//     always sent);
//   - a deprecated property of a request or response body schema (at any depth): every answer of
//     the operation, since whether a body uses the property is not known without reading it.
//
// When several apply, the earliest date of each is sent, and every link (each once). router.Group installs the middleware on
// every surface from its spec, so a spec edit is all a deprecation takes.
package deprecation

import (
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
)

// The response headers, and the extensions that date them.
const (
	// Header is RFC 9745's Deprecation response header.
	Header = "Deprecation"
	// SunsetHeader is RFC 8594's Sunset response header.
	SunsetHeader = "Sunset"
	// AtExtension dates a deprecation: required beside every `deprecated: true`.
	AtExtension = "x-deprecated-at"
	// SunsetExtension dates the end of what is deprecated: optional.
	SunsetExtension = "x-sunset"
	// LinkHeader is RFC 8288's Link response header, which points to the notice and the successor.
	LinkHeader = "Link"
	// LinkExtension is the deprecation's notice (rel="deprecation"): required.
	LinkExtension = "x-deprecation-link"
	// SuccessorExtension is what replaces the deprecated thing (rel="successor-version"): optional.
	SuccessorExtension = "x-successor"
)

// ResponseHeaders are the headers Middleware may add to an answer (a CORS policy exposes them).
func ResponseHeaders() []string { return []string{Header, SunsetHeader, LinkHeader} }

// notice is one deprecation's dates and links; a zero sunset means none was given.
type notice struct {
	at, sunset time.Time
	links      []string // Link header values, each once
}

// merge keeps the earliest of each date and every link.
func (n notice) merge(o notice) notice {
	if n.at.IsZero() || (!o.at.IsZero() && o.at.Before(n.at)) {
		n.at = o.at
	}
	if n.sunset.IsZero() || (!o.sunset.IsZero() && o.sunset.Before(n.sunset)) {
		n.sunset = o.sunset
	}
	links := slices.Clone(n.links)
	for _, l := range o.links {
		if !slices.Contains(links, l) {
			links = append(links, l)
		}
	}
	n.links = links
	return n
}

// set writes the headers of n (Link added to any the answer has).
func (n notice) set(h http.Header) {
	h.Set(Header, "@"+strconv.FormatInt(n.at.Unix(), 10))
	if !n.sunset.IsZero() {
		h.Set(SunsetHeader, n.sunset.UTC().Format(http.TimeFormat))
	}
	for _, l := range n.links {
		h.Add(LinkHeader, l)
	}
}

// param is a deprecated parameter, announced when a request sends it.
type param struct {
	in, name string
	notice
}

func (p param) sent(r *http.Request) bool {
	switch p.in {
	case openapi3.ParameterInQuery:
		return r.URL.Query().Has(p.name)
	case openapi3.ParameterInHeader:
		return len(r.Header.Values(p.name)) > 0
	case openapi3.ParameterInCookie:
		_, err := r.Cookie(p.name)
		return err == nil
	}
	return true // a path parameter is part of every request to the operation
}

// operation is what one operation announces.
type operation struct {
	method   string
	segments []string // the path template's segments; "{...}" matches any one segment
	always   *notice  // the operation or a body property is deprecated
	params   []param
}

func (o operation) matches(r *http.Request) bool {
	if r.Method != o.method {
		return false
	}
	got := strings.Split(r.URL.Path, "/")
	if len(got) != len(o.segments) {
		return false
	}
	for i, s := range o.segments {
		if strings.HasPrefix(s, "{") && strings.HasSuffix(s, "}") {
			if got[i] == "" {
				return false
			}
			continue
		}
		if got[i] != s {
			return false
		}
	}
	return true
}

// notice is what o announces for r, and whether it announces anything.
func (o operation) notice(r *http.Request) (notice, bool) {
	var n notice
	found := false
	if o.always != nil {
		n, found = *o.always, true
	}
	for _, p := range o.params {
		if p.sent(r) {
			n, found = n.merge(p.notice), true
		}
	}
	return n, found
}

// Middleware adds the Deprecation, Sunset and Link headers to the answers spec marks (see the
// package comment), before the handler runs, so refusals carry them too. With nothing deprecated
// it is the identity. It fails, naming the place, on a `deprecated: true` without x-deprecated-at
// or x-deprecation-link, on a date or link it cannot read, on any of the extensions without
// `deprecated: true`, and on a sunset before its deprecation.
func Middleware(spec *openapi3.T) (func(http.Handler) http.Handler, error) {
	ops, err := operations(spec)
	if err != nil || len(ops) == 0 {
		return func(next http.Handler) http.Handler { return next }, err
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			for _, o := range ops {
				if o.matches(r) {
					if n, ok := o.notice(r); ok {
						n.set(w.Header())
					}
					break
				}
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// operations lists the operations of spec that announce something, in a stable order.
func operations(spec *openapi3.T) ([]operation, error) {
	if spec == nil || spec.Paths == nil {
		return nil, nil
	}
	var ops []operation
	var errs []error
	paths := spec.Paths.Map()
	keys := make([]string, 0, len(paths))
	for k := range paths {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, path := range keys {
		item := paths[path]
		methods := item.Operations()
		names := make([]string, 0, len(methods))
		for m := range methods {
			names = append(names, m)
		}
		sort.Strings(names)
		for _, method := range names {
			op := methods[method]
			where := method + " " + path
			o := operation{method: strings.ToUpper(method), segments: strings.Split(path, "/")}
			always := func(n notice) {
				if o.always == nil {
					o.always = &n
				} else {
					m := o.always.merge(n)
					o.always = &m
				}
			}
			n, ok, err := read(op.Deprecated, op.Extensions, where)
			errs = append(errs, err)
			if ok {
				always(n)
			}
			for _, p := range append(append(openapi3.Parameters{}, item.Parameters...), op.Parameters...) {
				if p == nil || p.Value == nil {
					continue
				}
				n, ok, err := read(p.Value.Deprecated, p.Value.Extensions, where+" parameter "+p.Value.Name)
				errs = append(errs, err)
				if ok {
					o.params = append(o.params, param{in: p.Value.In, name: p.Value.Name, notice: n})
				}
			}
			seen := map[*openapi3.Schema]bool{}
			if op.RequestBody != nil && op.RequestBody.Value != nil {
				for _, mt := range op.RequestBody.Value.Content {
					if mt == nil {
						continue
					}
					if n, ok := schema(mt.Schema, seen, where+" request body", &errs); ok {
						always(n)
					}
				}
			}
			if op.Responses != nil {
				for status, resp := range op.Responses.Map() {
					if resp == nil || resp.Value == nil {
						continue
					}
					for _, mt := range resp.Value.Content {
						if mt == nil {
							continue
						}
						if n, ok := schema(mt.Schema, seen, where+" response "+status, &errs); ok {
							always(n)
						}
					}
				}
			}
			if o.always != nil || len(o.params) > 0 {
				ops = append(ops, o)
			}
		}
	}
	return ops, errors.Join(errs...)
}

// schema is the merged notice of every deprecated schema in s (itself, its properties, items and
// alternatives, at any depth); seen keeps each schema to one visit (schemas may be recursive).
func schema(s *openapi3.SchemaRef, seen map[*openapi3.Schema]bool, where string, errs *[]error) (notice, bool) {
	if s == nil || s.Value == nil || seen[s.Value] {
		return notice{}, false
	}
	v := s.Value
	seen[v] = true
	var out notice
	found := false
	add := func(n notice, ok bool) {
		if ok {
			out, found = out.merge(n), true
		}
	}
	n, ok, err := read(v.Deprecated, v.Extensions, where)
	*errs = append(*errs, err)
	add(n, ok)
	names := make([]string, 0, len(v.Properties))
	for name := range v.Properties {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		add(schema(v.Properties[name], seen, where+" property "+name, errs))
	}
	add(schema(v.Items, seen, where+" items", errs))
	add(schema(v.AdditionalProperties.Schema, seen, where+" additionalProperties", errs))
	add(schema(v.Not, seen, where+" not", errs))
	for _, group := range []openapi3.SchemaRefs{v.AllOf, v.OneOf, v.AnyOf} {
		for _, alt := range group {
			add(schema(alt, seen, where, errs))
		}
	}
	return out, found
}

// read is one place's notice: ok when it is deprecated.
func read(deprecated bool, ext map[string]any, where string) (notice, bool, error) {
	at, hasAt, errAt := date(ext, AtExtension)
	sunset, hasSunset, errSunset := date(ext, SunsetExtension)
	link, hasLink, errLink := target(ext, LinkExtension)
	successor, hasSuccessor, errSuccessor := target(ext, SuccessorExtension)
	if err := errors.Join(errAt, errSunset, errLink, errSuccessor); err != nil {
		return notice{}, false, fmt.Errorf("%s: %w", where, err)
	}
	switch {
	case !deprecated && (hasAt || hasSunset || hasLink || hasSuccessor):
		return notice{}, false, fmt.Errorf("%s: %s, %s, %s or %s without deprecated: true", where, AtExtension, SunsetExtension, LinkExtension, SuccessorExtension)
	case !deprecated:
		return notice{}, false, nil
	case !hasAt:
		return notice{}, false, fmt.Errorf("%s: deprecated: true needs %s, the date of the deprecation (RFC 3339, e.g. \"2027-01-31\") for the Deprecation header", where, AtExtension)
	case !hasLink:
		return notice{}, false, fmt.Errorf("%s: deprecated: true needs %s, the URL or path of the notice explaining it, for the Link header (rel=\"deprecation\")", where, LinkExtension)
	case hasSunset && sunset.Before(at):
		return notice{}, false, fmt.Errorf("%s: %s %s is before %s %s", where, SunsetExtension, sunset.Format(time.RFC3339), AtExtension, at.Format(time.RFC3339))
	}
	n := notice{at: at, sunset: sunset, links: []string{"<" + link + `>; rel="deprecation"`}}
	if hasSuccessor {
		n.links = append(n.links, "<"+successor+`>; rel="successor-version"`)
	}
	return n, true, nil
}

// target reads an extension holding a link target: an absolute http(s) URL, or an absolute path
// on the server (/docs/), as a Link header may carry it (RFC 8288 §3: a URI reference).
func target(ext map[string]any, name string) (string, bool, error) {
	raw, ok := ext[name]
	if !ok {
		return "", false, nil
	}
	s, _ := raw.(string)
	u, err := url.Parse(s)
	switch {
	case err != nil || s == "" || strings.ContainsAny(s, " <>\"\\"):
	case (u.Scheme == "https" || u.Scheme == "http") && u.Host != "":
		return s, true, nil
	case u.Scheme == "" && u.Host == "" && strings.HasPrefix(s, "/") && !strings.HasPrefix(s, "//"):
		return s, true, nil
	}
	return "", true, fmt.Errorf("%s %v is not an http(s) URL or a path starting with /", name, raw)
}

// date reads an extension holding an RFC 3339 date or date-time (a YAML timestamp too).
func date(ext map[string]any, name string) (time.Time, bool, error) {
	raw, ok := ext[name]
	if !ok {
		return time.Time{}, false, nil
	}
	switch v := raw.(type) {
	case time.Time:
		return v.UTC(), true, nil
	case string:
		for _, layout := range []string{time.DateOnly, time.RFC3339} {
			if t, err := time.Parse(layout, v); err == nil {
				return t.UTC(), true, nil
			}
		}
	}
	return time.Time{}, true, fmt.Errorf("%s %v is not an RFC 3339 date (\"2027-01-31\") or date-time", name, raw)
}
