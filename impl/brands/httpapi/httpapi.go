// Package httpapi serves the brands API (api/brands.yaml) over HTTP: it authenticates nothing
// itself but hands the caller's access token to the brands.Service, and maps the service's errors
// to status codes in one place (refuse).
package httpapi

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/routers"
	"github.com/getkin/kin-openapi/routers/gorillamux"
	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/brands"
	"github.com/triadhq/triad/impl/password"
	"github.com/triadhq/triad/impl/throttle"
	"github.com/triadhq/triad/impl/web"
)

// Options configure the HTTP surface.
type Options struct {
	// Hasher hashes passwords; nil uses password.Default. Tests pass a cheap one.
	Hasher *password.Hasher
	// TokenTTL is the access token lifetime; 0 uses brands.DefaultTokenTTL.
	TokenTTL time.Duration
	// Now is the clock for token expiry; nil uses time.Now.
	Now func() time.Time
	// Log receives internal errors; nil discards them.
	Log *slog.Logger
	// Logins limits failed logins per email and client address (throttle.LoginKey); zero fields
	// take throttle's defaults (10 per 15 minutes). The server uses the defaults; tests set a
	// clock (its own, apart from Now). The limit cannot be turned off.
	Logins throttle.Options
}

// API is the brands surface: the service and its HTTP handlers.
type API struct {
	svc    *brands.Service
	logins *throttle.Limiter
	log    *slog.Logger
}

// New builds the API over pool.
func New(pool *pgxpool.Pool, opts Options) *API {
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	svc := brands.NewService(pool, brands.Config{Hasher: opts.Hasher, TokenTTL: opts.TokenTTL, Now: opts.Now})
	return &API{svc: svc, logins: throttle.New(pool, opts.Logins), log: opts.Log}
}

// Service returns the domain service (for dev data and the first admin).
func (a *API) Service() *brands.Service { return a.svc }

// Mount registers the routes of api/brands.yaml (all under /api) on r, behind a check that routes
// needing a user got a token (tokenRequired) and request validation against the spec.
func (a *API) Mount(r chi.Router) error {
	spec, err := brandsapi.GetSpec()
	if err != nil {
		return err
	}
	spec.Servers = nil // match paths wherever the surface is mounted
	needsUser, err := tokenRequired(spec)
	if err != nil {
		return err
	}
	r.Group(func(g chi.Router) {
		g.Use(withToken, needsUser, web.Validator(spec))
		strict := brandsapi.NewStrictHandlerWithOptions(&server{svc: a.svc, logins: a.logins}, []brandsapi.StrictMiddlewareFunc{withRemoteAddr}, brandsapi.StrictHTTPServerOptions{
			RequestErrorHandlerFunc:  web.StrictRequestError,
			ResponseErrorHandlerFunc: web.StrictResponseError(a.log),
		})
		brandsapi.HandlerWithOptions(strict, brandsapi.ChiServerOptions{BaseRouter: g, ErrorHandlerFunc: web.BadParam})
	})
	return nil
}

// NewHTTPHandler returns the API as a complete handler (with the root plumbing cmd/server adds:
// request ids, panic recovery, JSON 404/405), for tests and benchmarks.
func NewHTTPHandler(pool *pgxpool.Pool, opts Options) (http.Handler, *API, error) {
	a := New(pool, opts)
	r := chi.NewRouter()
	r.Use(web.WithRequestID, web.Recover(a.log), web.LimitBody(1<<20))
	r.NotFound(web.NotFound)
	r.MethodNotAllowed(web.MethodNotAllowed)
	if err := a.Mount(r); err != nil {
		return nil, nil, err
	}
	return r, a, nil
}

type tokenKey struct{}

type remoteAddrKey struct{}

// withRemoteAddr hands the connection's address (http.Request.RemoteAddr, never a forwarding
// header, which any client can write) to LoginUser, which counts failed logins per address. Only
// that operation gets it, so no other request pays for the context value.
func withRemoteAddr(f brandsapi.StrictHandlerFunc, operationID string) brandsapi.StrictHandlerFunc {
	if operationID != "LoginUser" {
		return f
	}
	return func(ctx context.Context, w http.ResponseWriter, r *http.Request, req any) (any, error) {
		return f(context.WithValue(ctx, remoteAddrKey{}, r.RemoteAddr), w, r, req)
	}
}

func remoteAddr(ctx context.Context) string {
	a, _ := ctx.Value(remoteAddrKey{}).(string)
	return a
}

// withToken takes the access token from the access_token query parameter (the original API's way)
// or, failing that, from an Authorization: Bearer header, and puts it in the request context. It
// checks nothing: the service resolves the token where a route needs a user.
func withToken(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("access_token")
		if tok == "" {
			if scheme, v, ok := strings.Cut(r.Header.Get("Authorization"), " "); ok && strings.EqualFold(scheme, "Bearer") {
				tok = strings.TrimSpace(v)
			}
		}
		if tok != "" {
			r = r.WithContext(context.WithValue(r.Context(), tokenKey{}, tok))
		}
		next.ServeHTTP(w, r)
	})
}

// tokenRequired returns middleware that answers 401 at once when a request for an operation that
// needs a user (one with a non-empty security requirement in the spec) carries no token at all, so
// a caller without a token learns that first, whatever else is wrong with the request, and nothing
// parses its body. Whether a token that is present is valid is still the service's question.
func tokenRequired(spec *openapi3.T) (func(http.Handler) http.Handler, error) {
	router, err := gorillamux.NewRouter(spec)
	if err != nil {
		return nil, err
	}
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if token(r.Context()) == "" {
				if route, _, err := router.FindRoute(r); err == nil && securedOperation(route) {
					_ = refusal{status: http.StatusUnauthorized, body: web.Error{Code: web.CodeUnauthorized,
						Message: msgTokenRequired, RequestID: web.RequestID(r.Context())}}.write(w)
					return
				}
			}
			next.ServeHTTP(w, r)
		})
	}, nil
}

// securedOperation reports whether the route's operation requires credentials: its own security
// requirements, or the document's when it declares none, list no empty (anonymous) alternative.
func securedOperation(route *routers.Route) bool {
	sec := route.Operation.Security
	if sec == nil {
		sec = &route.Spec.Security
	}
	if len(*sec) == 0 {
		return false
	}
	for _, req := range *sec {
		if len(req) == 0 {
			return false
		}
	}
	return true
}

const msgTokenRequired = "a valid access token is required"

func token(ctx context.Context) string {
	t, _ := ctx.Value(tokenKey{}).(string)
	return t
}

// refusal is an error answer: the shared Error body with a status. It satisfies every operation's
// response interface, so refuse can serve them all.
type refusal struct {
	status     int
	body       web.Error
	retryAfter int // seconds for a Retry-After header; 0 sends none
}

func (e refusal) write(w http.ResponseWriter) error {
	if e.status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="brands"`)
	}
	if e.retryAfter > 0 {
		w.Header().Set("Retry-After", strconv.Itoa(e.retryAfter))
	}
	web.WriteJSON(w, e.status, e.body)
	return nil
}

// refuse maps a domain error to its HTTP answer; this is the one place that does. Errors it does
// not know are returned as they are and become an opaque, logged 500.
func refuse[T any](ctx context.Context, err error) (T, error) {
	var zero T
	e := refusal{body: web.Error{RequestID: web.RequestID(ctx)}}
	var ve *brands.ValidationError
	switch {
	case errors.As(err, &ve):
		e.status, e.body.Code, e.body.Message = http.StatusBadRequest, web.CodeValidation, web.MessageValidation
		for _, p := range ve.Problems {
			e.body.Details = append(e.body.Details, web.FieldError{Field: p.Field, Message: p.Message})
		}
	case errors.Is(err, brands.ErrUnauthenticated):
		e.status, e.body.Code, e.body.Message = http.StatusUnauthorized, web.CodeUnauthorized, msgTokenRequired
	case errors.Is(err, brands.ErrInvalidCredentials):
		e.status, e.body.Code, e.body.Message = http.StatusUnauthorized, "invalid_credentials", "email or password is incorrect"
	case errors.Is(err, brands.ErrWrongPassword):
		e.status, e.body.Code, e.body.Message = http.StatusForbidden, "wrong_password", "the current password is incorrect"
	case errors.Is(err, brands.ErrForbidden):
		e.status, e.body.Code, e.body.Message = http.StatusForbidden, web.CodeForbidden, "only admins may manage brands"
	case errors.Is(err, brands.ErrNotFound):
		e.status, e.body.Code, e.body.Message = http.StatusNotFound, web.CodeNotFound, "brand not found"
	case errors.Is(err, brands.ErrEmailTaken):
		e.status, e.body.Code, e.body.Message = http.StatusConflict, "email_taken", "the email is already registered"
	case errors.Is(err, brands.ErrUnavailable):
		e.status, e.body.Code, e.body.Message = http.StatusConflict, "brand_unavailable", "the brand is not available"
	case errors.Is(err, password.ErrBusy):
		e.status, e.body.Code, e.body.Message = http.StatusServiceUnavailable, codeServerBusy, "the server is busy; try again shortly"
		e.retryAfter = 1
	default:
		return zero, err
	}
	r, ok := any(e).(T)
	if !ok {
		return zero, err // a response type refusal lacks: a programming error, answered as a 500
	}
	return r, nil
}

// rawJSON is a success answer whose body is rendered JSON already.
type rawJSON struct {
	status  int
	body    string
	noStore bool // the body carries an access token (see noStore)
}

func (j rawJSON) write(w http.ResponseWriter) error {
	w.Header().Set("Content-Type", "application/json")
	if j.noStore {
		w.Header().Set("Cache-Control", noStore)
	}
	w.WriteHeader(j.status)
	_, err := io.WriteString(w, j.body)
	return err
}

// One Visit method per operation, so refusal and rawJSON satisfy each response interface.

func (e refusal) VisitCreateBrandResponse(w http.ResponseWriter) error        { return e.write(w) }
func (e refusal) VisitListBrandsResponse(w http.ResponseWriter) error         { return e.write(w) }
func (e refusal) VisitListFeaturedBrandsResponse(w http.ResponseWriter) error { return e.write(w) }
func (e refusal) VisitDeleteBrandResponse(w http.ResponseWriter) error        { return e.write(w) }
func (e refusal) VisitGetBrandResponse(w http.ResponseWriter) error           { return e.write(w) }
func (e refusal) VisitUpdateBrandResponse(w http.ResponseWriter) error        { return e.write(w) }
func (e refusal) VisitSubscribeBrandResponse(w http.ResponseWriter) error     { return e.write(w) }
func (e refusal) VisitUnsubscribeBrandResponse(w http.ResponseWriter) error   { return e.write(w) }
func (e refusal) VisitEditProfileResponse(w http.ResponseWriter) error        { return e.write(w) }
func (e refusal) VisitLoginUserResponse(w http.ResponseWriter) error          { return e.write(w) }
func (e refusal) VisitLogoutUserResponse(w http.ResponseWriter) error         { return e.write(w) }
func (e refusal) VisitGetMeResponse(w http.ResponseWriter) error              { return e.write(w) }
func (e refusal) VisitRegisterBrandsUserResponse(w http.ResponseWriter) error { return e.write(w) }
func (e refusal) VisitResetPasswordResponse(w http.ResponseWriter) error      { return e.write(w) }

func (j rawJSON) VisitCreateBrandResponse(w http.ResponseWriter) error        { return j.write(w) }
func (j rawJSON) VisitListBrandsResponse(w http.ResponseWriter) error         { return j.write(w) }
func (j rawJSON) VisitListFeaturedBrandsResponse(w http.ResponseWriter) error { return j.write(w) }
func (j rawJSON) VisitGetBrandResponse(w http.ResponseWriter) error           { return j.write(w) }
func (j rawJSON) VisitUpdateBrandResponse(w http.ResponseWriter) error        { return j.write(w) }
func (j rawJSON) VisitGetMeResponse(w http.ResponseWriter) error              { return j.write(w) }
