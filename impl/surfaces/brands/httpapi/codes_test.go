package httpapi_test

import (
	"context"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/brands/httpapi"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestErrorCodes_EveryEnumCodeIsSent holds the Error.code enum of api/brands.yaml to what the
// server sends: each code of the enum is triggered here through the real handler (every answer
// also validated against the spec by the client), and the table and the enum list the same codes,
// so a code that can no longer happen, or a new one, fails until the spec and this table agree.
func TestErrorCodes_EveryEnumCodeIsSent(t *testing.T) {
	t.Parallel()
	registerForm := url.Values{"name": {"Ada"}, "email": {"ada@example.com"}, "password": {"correct-horse"}}
	tests := map[string]struct {
		status  int
		trigger func(t *testing.T) resp
	}{
		"validation_failed": {http.StatusBadRequest, func(t *testing.T) resp {
			return newEnv(t).do(request{method: "POST", path: "/api/user/register",
				form: url.Values{"name": {"Ada"}, "email": {"not-an-email"}, "password": {"correct-horse"}}})
		}},
		"unsupported_media_type": {http.StatusUnsupportedMediaType, func(t *testing.T) resp {
			return newEnv(t).do(request{method: "POST", path: "/api/user/register", form: registerForm, ctype: "text/plain"})
		}},
		"request_too_large": {http.StatusRequestEntityTooLarge, func(t *testing.T) resp {
			return newEnv(t).do(request{method: "POST", path: "/api/user/register",
				form: url.Values{"name": {strings.Repeat("a", 2<<20)}, "email": {"ada@example.com"}, "password": {"correct-horse"}}})
		}},
		"unauthorized": {http.StatusUnauthorized, func(t *testing.T) resp {
			return newEnv(t).do(request{method: "GET", path: "/api/user/me"})
		}},
		"not_found": {http.StatusNotFound, func(t *testing.T) resp {
			return newEnv(t).do(request{method: "GET", path: "/api/brand/655e1f2a00000000000000ff"})
		}},
		"method_not_allowed": {http.StatusMethodNotAllowed, func(t *testing.T) resp {
			e := newEnv(t)
			// A method the spec does not have for the path: no operation to validate the answer
			// against, so a plain client sends it.
			plain := &env{t: t, url: e.url, c: http.DefaultClient, pool: e.pool, api: e.api}
			return plain.do(request{method: "PUT", path: "/api/brand/list"})
		}},
		"internal_error": {http.StatusInternalServerError, func(t *testing.T) resp {
			e := newEnv(t)
			e.register("Ada", "ada@example.com", "correct-horse")
			// A schema the code does not expect (here: a table gone) is a bug, not a refusal.
			if _, err := e.pool.Exec(context.Background(), "ALTER TABLE brand_users RENAME TO brand_users_gone"); err != nil {
				t.Fatal(err)
			}
			return e.tryLogin("ada@example.com", "correct-horse")
		}},
		"database_unavailable": {http.StatusServiceUnavailable, func(t *testing.T) resp {
			pool, outage := dbtest.NewWithOutage(t)
			e := newEnvPool(t, pool, httpapi.Options{})
			outage.Begin()
			defer outage.End()
			return e.do(request{method: "GET", path: "/api/brand/655e1f2a00000000000000ff"})
		}},
		"forbidden": {http.StatusForbidden, func(t *testing.T) resp {
			e := newEnv(t)
			u := e.register("Ada", "ada@example.com", "correct-horse")
			return e.do(request{method: "POST", path: "/api/brand", token: u.Token, json: map[string]any{"name": "Fabrikam"}})
		}},
		"email_taken": {http.StatusConflict, func(t *testing.T) resp {
			e := newEnv(t)
			e.register("Ada", "ada@example.com", "correct-horse")
			return e.do(request{method: "POST", path: "/api/user/register",
				form: url.Values{"name": {"Other"}, "email": {"ADA@example.com"}, "password": {"other-horse"}}})
		}},
		"invalid_credentials": {http.StatusUnauthorized, func(t *testing.T) resp {
			e := newEnv(t)
			e.register("Ada", "ada@example.com", "correct-horse")
			return e.tryLogin("ada@example.com", "wrong-horse")
		}},
		"wrong_password": {http.StatusForbidden, func(t *testing.T) resp {
			e := newEnv(t)
			u := e.register("Ada", "ada@example.com", "correct-horse")
			return e.do(request{method: "POST", path: "/api/user/reset", token: u.Token,
				form: url.Values{"currentPassword": {"wrong-horse"}, "newPassword": {"new-password"}}})
		}},
		"too_many_attempts": {http.StatusTooManyRequests, func(t *testing.T) resp {
			e := newEnvWith(t, httpapi.Options{Logins: throttle.Options{Max: 2}})
			e.register("Ada", "ada@example.com", "correct-horse")
			e.failLogins("ada@example.com", 2)
			return e.tryLogin("ada@example.com", "correct-horse")
		}},
		"idempotency_key_reused": {http.StatusUnprocessableEntity, func(t *testing.T) resp {
			e := newEnv(t)
			e.want(e.do(request{method: "POST", path: "/api/user/register", form: registerForm, idemKey: "k"}), http.StatusCreated)
			other := url.Values{"name": {"Bea"}, "email": {"bea@example.com"}, "password": {"correct-horse"}}
			return e.do(request{method: "POST", path: "/api/user/register", form: other, idemKey: "k"})
		}},
		"idempotency_key_in_use": {http.StatusConflict, func(t *testing.T) resp {
			h := idempotency.NewHoldOnce(idempotency.HoldInTx)
			e := newEnvWith(t, httpapi.Options{IdempotencyHold: h.Hold})
			reg := request{method: "POST", path: "/api/user/register", form: registerForm, idemKey: "k"}
			first := make(chan resp)
			go func() { first <- e.do(reg) }()
			<-h.Held
			again := e.do(reg)
			close(h.Release)
			e.want(<-first, http.StatusCreated)
			return again
		}},
		"brand_unavailable": {http.StatusConflict, func(t *testing.T) resp {
			e := newEnv(t)
			b := e.createBrand(e.admin(), map[string]any{"name": "Fabrikam", "availability": false})
			u := e.register("Ada", "ada@example.com", "correct-horse")
			return e.do(request{method: "POST", path: "/api/subscribe/" + b.UnderscoreId, token: u.Token})
		}},
		"too_many_requests": {http.StatusTooManyRequests, func(t *testing.T) resp {
			h := password.NewSized(password.Fast, 1, 0) // one place per client
			h.SetClientLine(0)
			e := newEnvPool(t, dbtest.New(t), httpapi.Options{Hasher: h}, oneClient)
			release, err := h.Hold(password.WithClient(context.Background(), "one-client"))
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			return e.do(request{method: "POST", path: "/api/user/register", form: registerForm})
		}},
		"too_many_signups": {http.StatusTooManyRequests, func(t *testing.T) resp {
			e := newEnvWith(t, httpapi.Options{Signups: throttle.Options{Max: 1}})
			e.register("Ada", "ada@example.com", "correct-horse")
			return e.do(request{method: "POST", path: "/api/user/register", form: registerForm})
		}},
		"server_busy": {http.StatusServiceUnavailable, func(t *testing.T) resp {
			h := password.NewSized(password.Fast, 1, 0)
			e := newEnvWith(t, httpapi.Options{Hasher: h})
			release, err := h.Hold(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			return e.do(request{method: "POST", path: "/api/user/register", form: registerForm})
		}},
	}
	var table []string
	for code := range tests {
		table = append(table, code)
	}
	slices.Sort(table)
	spec, err := brandsapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	enum := api.Known(spec.Components.Schemas["ApiError"].Value.Properties["code"].Value)
	slices.Sort(enum)
	if !slices.Equal(enum, table) {
		t.Fatalf("ApiError.code enum %q, codes triggered here %q: make them the same", enum, table)
	}
	for code, tc := range tests {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			r := tc.trigger(t)
			body := r.errBody(t)
			if r.status != tc.status || body.Code != code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tc.status, code)
			}
			// A code every surface shares carries its one message, whichever layer refused.
			if want, shared := web.OneMessage(code); shared && body.Message != want {
				t.Fatalf("%s answered with message %q, want its one message %q", code, body.Message, want)
			}
		})
	}
}

// oneClient tags every request as coming from one hashing client, as the server's hashingClient
// layer does per address, so a test can fill that client's share of the hasher.
func oneClient(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		next.ServeHTTP(w, r.WithContext(password.WithClient(r.Context(), "one-client")))
	})
}
