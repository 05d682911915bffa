// Package screen refuses hostile request input before any parser, validator or handler sees it,
// in one place for every surface: text (path segments, query and form parameters, JSON keys and
// string values, declared headers, and credentials: Authorization and the specs' apiKey headers
// and cookies) that is not valid UTF-8 or holds NUL, number literals longer
// than a bound, and JSON bodies that are not one strict value (duplicate keys, trailing data,
// nesting too deep, containers too large). A refusal is a 400 naming the field; the bytes of an
// accepted body are handed on unchanged.
package screen

import (
	"bytes"
	"io"
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
)

// Limits bound what a request may carry. Zero fields take the defaults.
type Limits struct {
	// MaxNumberLen bounds the characters of a number literal: any JSON number, and any query, path
	// or form parameter the spec types as integer or number. Default 32, far beyond any amount or
	// id the APIs accept (a price needs at most 10), so only an attack gets near it.
	MaxNumberLen int
	// MaxDepth bounds the nesting of JSON containers; the document itself is level 1. Default 16,
	// which leaves a free-form brand product 13 levels of its own.
	MaxDepth int
	// MaxMembers bounds the members of any one JSON object or array. Default 1000, the spec's
	// largest maxItems (a brand's products).
	MaxMembers int
}

// Default limits; see Limits.
const (
	DefaultMaxNumberLen = 32
	DefaultMaxDepth     = 16
	DefaultMaxMembers   = 1000
)

func (l Limits) orDefaults() Limits {
	if l.MaxNumberLen <= 0 {
		l.MaxNumberLen = DefaultMaxNumberLen
	}
	if l.MaxDepth <= 0 {
		l.MaxDepth = DefaultMaxDepth
	}
	if l.MaxMembers <= 0 {
		l.MaxMembers = DefaultMaxMembers
	}
	return l
}

// Screen is the middleware: it knows from the specs which parameters are numeric and what the
// path parameters are called.
type Screen struct {
	limits  Limits
	routes  map[int][]route // by segment count
	headers []string        // header parameters and apiKey headers the specs declare, plus Authorization
	cookies map[string]bool // cookies the specs' apiKey security schemes declare
	refuse  RefuseFunc
}

// RefuseFunc writes the answer to a refused request. The default writes the shared error body
// (web.Error, code validation_failed) with status 400.
type RefuseFunc func(w http.ResponseWriter, r *http.Request, p *invalid.Detail)

// Options configure New.
type Options struct {
	Limits Limits
	// Refuse answers refused requests; nil means WriteRefusal.
	Refuse RefuseFunc
}

// route is one path template of a spec with, per method, the operation's numeric inputs.
type route struct {
	segments []string            // "{name}" marks a parameter
	ops      map[string]*numbers // by method
}

// numbers lists an operation's inputs the spec types as integer or number.
type numbers struct {
	params map[string]bool // query and path parameters
	form   map[string]bool // properties of an application/x-www-form-urlencoded body
}

// New builds the screen for the operations of specs (their paths as mounted: servers are ignored).
func New(opts Options, specs ...*openapi3.T) *Screen {
	s := &Screen{limits: opts.Limits.orDefaults(), routes: map[int][]route{}, refuse: opts.Refuse,
		headers: []string{"Authorization"}, cookies: map[string]bool{}}
	if s.refuse == nil {
		s.refuse = WriteRefusal
	}
	seenHeader := map[string]bool{"Authorization": true}
	addHeader := func(name string) {
		if h := http.CanonicalHeaderKey(name); !seenHeader[h] {
			seenHeader[h] = true
			s.headers = append(s.headers, h)
		}
	}
	for _, spec := range specs {
		// Credentials carried as API keys (auth's X-JWT header and JWT cookie) are text the
		// surfaces read like any declared parameter; query keys are screened with the query.
		if spec.Components != nil {
			for _, ref := range spec.Components.SecuritySchemes {
				if ref == nil || ref.Value == nil || ref.Value.Type != "apiKey" {
					continue
				}
				switch ref.Value.In {
				case openapi3.ParameterInHeader:
					addHeader(ref.Value.Name)
				case openapi3.ParameterInCookie:
					s.cookies[ref.Value.Name] = true
				}
			}
		}
		if spec.Paths == nil {
			continue
		}
		for path, item := range spec.Paths.Map() {
			rt := route{segments: strings.Split(strings.Trim(path, "/"), "/"), ops: map[string]*numbers{}}
			for method, op := range item.Operations() {
				n := &numbers{params: map[string]bool{}, form: map[string]bool{}}
				for _, params := range []openapi3.Parameters{item.Parameters, op.Parameters} {
					for _, pr := range params {
						if pr.Value == nil {
							continue
						}
						switch pr.Value.In {
						case openapi3.ParameterInHeader:
							addHeader(pr.Value.Name)
						case openapi3.ParameterInQuery, openapi3.ParameterInPath:
							if isNumeric(pr.Value.Schema) {
								n.params[pr.Value.Name] = true
							}
						}
					}
				}
				if op.RequestBody != nil && op.RequestBody.Value != nil {
					if mt := op.RequestBody.Value.Content.Get("application/x-www-form-urlencoded"); mt != nil && mt.Schema != nil && mt.Schema.Value != nil {
						for name, prop := range mt.Schema.Value.Properties {
							if isNumeric(prop) {
								n.form[name] = true
							}
						}
					}
				}
				rt.ops[method] = n
			}
			s.routes[len(rt.segments)] = append(s.routes[len(rt.segments)], rt)
		}
	}
	return s
}

// checkCookies screens the declared credential cookies in the raw Cookie headers. Other cookies
// are not the server's to judge: a browser sends every cookie of the host, those of other
// applications too. (net/http's own cookie parser skips a value with bytes outside the cookie
// grammar, NUL and non-ASCII among them, so a handler would see no cookie rather than a bad one;
// the screen says why instead.)
func (s *Screen) checkCookies(r *http.Request) *invalid.Detail {
	if len(s.cookies) == 0 {
		return nil
	}
	for _, line := range r.Header.Values("Cookie") {
		for pair := range strings.SplitSeq(line, ";") {
			name, value, _ := strings.Cut(strings.TrimSpace(pair), "=")
			if s.cookies[name] {
				if p := CheckText(invalid.Cookie, name, value); p != nil {
					return p
				}
			}
		}
	}
	return nil
}

func isNumeric(ref *openapi3.SchemaRef) bool {
	return ref != nil && ref.Value != nil && ref.Value.Type != nil &&
		(ref.Value.Type.Is(openapi3.TypeInteger) || ref.Value.Type.Is(openapi3.TypeNumber))
}

// match finds the operation of the request path's template; a template without parameters wins
// over one with (/api/brand/list over /api/brand/{id}).
func (s *Screen) match(method, path string) (*route, *numbers) {
	path = strings.Trim(path, "/")
	var best *route
	for i := range s.routes[strings.Count(path, "/")+1] {
		rt := &s.routes[strings.Count(path, "/")+1][i]
		rest, ok := path, true
		for _, t := range rt.segments {
			var seg string
			seg, rest, _ = strings.Cut(rest, "/")
			if !isParam(t) && t != seg {
				ok = false
				break
			}
		}
		if ok && (best == nil || literals(rt) > literals(best)) {
			best = rt
		}
	}
	if best == nil {
		return nil, nil
	}
	return best, best.ops[method]
}

func isParam(seg string) bool { return strings.HasPrefix(seg, "{") && strings.HasSuffix(seg, "}") }

func literals(rt *route) int {
	n := 0
	for _, t := range rt.segments {
		if !isParam(t) {
			n++
		}
	}
	return n
}

// Handler screens every request before next sees it.
func (s *Screen) Handler(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, overflow := s.check(w, r)
		if p != nil {
			if p == errTooLarge {
				web.WriteError(w, r, http.StatusRequestEntityTooLarge, web.Error{Code: web.CodeTooLarge, Message: "request body is too large"})
				return
			}
			s.refuse(w, r, p)
			return
		}
		if overflow != nil {
			r = r.WithContext(web.WithOverflow(r.Context(), *overflow))
		}
		next.ServeHTTP(w, r)
	})
}

// errTooLarge marks a body that ran past the server's body limit while being read.
var errTooLarge = bad(invalid.New(invalid.Body, "body", invalid.Invalid))

// check returns why r is refused, or nil, and the first number of a JSON body beyond float64 (the
// request goes on with it noted: web.WithOverflow).
func (s *Screen) check(w http.ResponseWriter, r *http.Request) (refused, overflow *invalid.Detail) {
	rt, ops := s.match(r.Method, r.URL.Path)
	// Path: checked whole (cheap); on failure, or when the template has numeric parameters,
	// segment by segment so the refusal can name the parameter.
	pathBad := CheckText(invalid.Path, "path", r.URL.Path) != nil
	if pathBad || (ops != nil && len(ops.params) > 0) {
		for i, seg := range strings.Split(strings.Trim(r.URL.Path, "/"), "/") {
			name := "path"
			if rt != nil && isParam(rt.segments[i]) {
				name = strings.Trim(rt.segments[i], "{}")
			}
			if p := CheckText(invalid.Path, name, seg); p != nil {
				return p, nil
			}
			if rt != nil && ops != nil && ops.params[name] && len(seg) > s.limits.MaxNumberLen {
				return bad(invalid.Bound(invalid.Path, name, invalid.TooLong, invalid.Int(int64(s.limits.MaxNumberLen)))), nil
			}
		}
	}
	if r.URL.RawQuery != "" {
		var numeric func(string) bool
		if ops != nil {
			numeric = func(name string) bool { return ops.params[name] }
		}
		if p := s.limits.CheckValues(invalid.Query, r.URL.RawQuery, numeric); p != nil {
			return p, nil
		}
	}
	for _, h := range s.headers {
		for _, v := range r.Header.Values(h) {
			if p := CheckText(invalid.Header, h, v); p != nil {
				return p, nil
			}
		}
	}
	if p := s.checkCookies(r); p != nil {
		return p, nil
	}
	if r.Body == nil || r.Body == http.NoBody {
		return nil, nil
	}
	kind := bodyKind(r.Header.Get("Content-Type"))
	if kind == otherBody {
		return nil, nil
	}
	body, err := io.ReadAll(r.Body)
	_ = r.Body.Close()
	if err != nil {
		if web.IsTooLarge(err) {
			return errTooLarge, nil
		}
		return bad(invalid.New(invalid.Body, "body", invalid.Malformed)), nil
	}
	// Hand the same bytes on: later layers read the body as if nothing had touched it.
	r.Body = io.NopCloser(bytes.NewReader(body))
	r.ContentLength = int64(len(body))
	switch kind {
	case jsonBody:
		if len(body) == 0 {
			return nil, nil // a missing body is the validator's to refuse where one is required
		}
		return s.limits.checkJSON(body)
	case formBody:
		var numeric func(string) bool
		if ops != nil {
			numeric = func(name string) bool { return ops.form[name] }
		}
		return s.limits.CheckValues(invalid.Body, string(body), numeric), nil
	}
	return nil, nil
}

type kindOfBody int

const (
	otherBody kindOfBody = iota
	jsonBody
	formBody
)

// bodyKind classifies a Content-Type without allocating: JSON (application/json or any +json) and
// forms are screened; other media types are left to the layers that accept or refuse them.
func bodyKind(ct string) kindOfBody {
	if i := strings.IndexByte(ct, ';'); i >= 0 {
		ct = ct[:i]
	}
	ct = strings.TrimSpace(ct)
	switch {
	case strings.EqualFold(ct, "application/json"),
		len(ct) > 5 && strings.EqualFold(ct[len(ct)-5:], "+json") && strings.HasPrefix(strings.ToLower(ct), "application/"):
		return jsonBody
	case strings.EqualFold(ct, "application/x-www-form-urlencoded"):
		return formBody
	}
	return otherBody
}

// WriteRefusal answers 400 with the shared error body, code validation_failed, naming the field.
func WriteRefusal(w http.ResponseWriter, r *http.Request, p *invalid.Detail) {
	web.WriteError(w, r, http.StatusBadRequest, web.Invalid(*p))
}
