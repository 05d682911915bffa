package httpapi_test

import (
	"context"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/tokenedge"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/surfaces/orders/httpapi"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// specEnum is the enum of a string property of a component schema of api/orders.yaml.
func specEnum(t *testing.T, schema, property string) []string {
	t.Helper()
	out := api.Known(fullSpec(t).Components.Schemas[schema].Value.Properties[property].Value)
	slices.Sort(out)
	return out
}

// raw sends a request with the given Content-Type through the validating client.
func (e *env) raw(method, path, token, contentType, body string) resp {
	e.t.Helper()
	req, err := http.NewRequest(method, e.url+path, strings.NewReader(body))
	if err != nil {
		e.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := e.c.Do(req)
	if err != nil {
		e.t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return resp{status: res.StatusCode, header: res.Header, body: b}
}

// TestErrorCodes_EveryEnumCodeIsSent holds the ApiError.code enum of api/orders.yaml to what the
// server sends: each code of the enum is triggered here through the real handler (every answer
// also validated against the spec by the client), and the table and the enum list the same codes,
// so a code that can no longer happen, or a new one, fails until the spec and this table agree.
func TestErrorCodes_EveryEnumCodeIsSent(t *testing.T) {
	t.Parallel()
	tests := map[string]struct {
		status  int
		trigger func(t *testing.T) resp
	}{
		"validation_failed": {http.StatusBadRequest, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			return e.do("POST", "/orders", e.account("alice", "Customer").token, `{"description":"","price":1}`)
		}},
		"unsupported_media_type": {http.StatusUnsupportedMediaType, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			return e.raw("POST", "/orders", e.account("alice", "Customer").token, "text/plain", `{"description":"x","price":1}`)
		}},
		"request_too_large": {http.StatusRequestEntityTooLarge, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			body := `{"description":"` + strings.Repeat("x", 2<<20) + `","price":1}`
			return e.raw("POST", "/orders", e.account("alice", "Customer").token, "application/json", body)
		}},
		"unauthorized": {http.StatusUnauthorized, func(t *testing.T) resp {
			return newEnv(t, time.Hour).do("GET", "/authenticated", "", nil)
		}},
		"not_found": {http.StatusNotFound, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			return e.transition(e.account("bob", "Performer"), 999999, "take")
		}},
		"method_not_allowed": {http.StatusMethodNotAllowed, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			// A method the spec does not have for the path: no operation to validate the answer
			// against, so a plain client sends it.
			plain := &env{t: t, url: e.url, c: http.DefaultClient, pool: e.pool}
			return plain.raw("PUT", "/orders", "", "application/json", `{}`)
		}},
		"internal_error": {http.StatusInternalServerError, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			alice := e.account("alice", "Customer")
			// A schema the code does not expect (here: a table gone) is a bug, not a refusal.
			if _, err := e.pool.Exec(context.Background(), "ALTER TABLE orders RENAME TO orders_gone"); err != nil {
				t.Fatal(err)
			}
			return e.do("POST", "/orders", alice.token, `{"description":"x","price":1}`)
		}},
		"forbidden": {http.StatusForbidden, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			return e.do("POST", "/orders", e.account("bob", "Performer").token, `{"description":"x","price":1}`)
		}},
		"username_taken": {http.StatusConflict, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			e.register("alice", "alice-password", "Customer")
			return e.do("POST", "/users", "", map[string]string{"username": "ALICE", "password": "other-password", "userType": "Performer"})
		}},
		"invalid_state": {http.StatusConflict, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			o := e.createOrder(e.account("alice", "Customer"), "x", "1")
			e.want(e.transition(e.account("bob", "Performer"), o.Id, "take"), http.StatusOK)
			return e.transition(e.account("dave", "Performer"), o.Id, "take")
		}},
		"insufficient_funds": {http.StatusConflict, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			alice := e.account("alice", "Customer") // starts with 500.00
			return e.do("POST", "/orders", alice.token, `{"description":"x","price":1000}`)
		}},
		"too_many_in_progress": {http.StatusConflict, func(t *testing.T) resp {
			e := newEnvLimits(t, orders.Limits{MaxHeld: 1})
			alice, bob := e.account("alice", "Customer"), e.account("bob", "Performer")
			e.want(e.transition(bob, e.createOrder(alice, "x", "1").Id, "take"), http.StatusOK)
			return e.transition(bob, e.createOrder(alice, "y", "1").Id, "take")
		}},
		"retake_cooldown": {http.StatusConflict, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			alice, bob := e.account("alice", "Customer"), e.account("bob", "Performer")
			o := e.readyOrder(alice, bob, "1")
			e.want(e.transition(alice, o.Id, "reject"), http.StatusOK)
			return e.transition(bob, o.Id, "take")
		}},
		"server_busy": {http.StatusServiceUnavailable, func(t *testing.T) resp {
			h := password.NewSized(password.Fast, 1, 0)
			e := newEnvHasher(t, dbtest.New(t), time.Hour, throttle.Options{}, h)
			release, err := h.Hold(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			return e.do("POST", "/users", "", map[string]string{"username": "alice", "password": "alice-password", "userType": "Customer"})
		}},
		"too_many_requests": {http.StatusTooManyRequests, func(t *testing.T) resp {
			h := password.NewSized(password.Fast, 1, 0) // one place per client
			h.SetClientLine(0)
			e := newEnvWith(t, dbtest.New(t), httpapi.Options{Options: tokenedge.Options{TokenTTL: time.Hour, Hasher: h}}, oneClient)
			release, err := h.Hold(password.WithClient(context.Background(), "one-client"))
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			return e.do("POST", "/users", "", map[string]string{"username": "alice", "password": "alice-password", "userType": "Customer"})
		}},
		"too_many_signups": {http.StatusTooManyRequests, func(t *testing.T) resp {
			e := newEnvWith(t, dbtest.New(t), httpapi.Options{Options: tokenedge.Options{TokenTTL: time.Hour, Signups: throttle.Options{Max: 1}}})
			e.register("alice", "alice-password", "Customer")
			return e.do("POST", "/users", "", map[string]string{"username": "bob", "password": "bob-password", "userType": "Customer"})
		}},
		"idempotency_key_reused": {http.StatusUnprocessableEntity, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			alice := e.account("alice", "Customer")
			e.want(e.keyed("/orders", alice.token, "k", `{"description":"x","price":1}`), http.StatusCreated)
			return e.keyed("/orders", alice.token, "k", `{"description":"y","price":1}`)
		}},
		"idempotency_key_in_use": {http.StatusConflict, func(t *testing.T) resp {
			h := idempotency.NewHoldOnce(idempotency.HoldInTx)
			e := newEnvWith(t, nil, httpapi.Options{Options: tokenedge.Options{TokenTTL: time.Hour, IdempotencyHold: h.Hold}})
			alice := e.account("alice", "Customer")
			first := make(chan resp)
			go func() { first <- e.keyed("/orders", alice.token, "k", `{"description":"x","price":1}`) }()
			<-h.Held
			again := e.keyed("/orders", alice.token, "k", `{"description":"x","price":1}`)
			close(h.Release)
			e.want(<-first, http.StatusCreated)
			return again
		}},
		"database_unavailable": {http.StatusServiceUnavailable, func(t *testing.T) resp {
			pool, outage := dbtest.NewWithOutage(t)
			e := newEnvPool(t, pool, time.Hour, throttle.Options{})
			alice := e.account("alice", "Customer")
			outage.Begin()
			defer outage.End()
			return e.do("POST", "/orders", alice.token, `{"description":"x","price":1}`)
		}},
	}
	var table []string
	for code := range tests {
		table = append(table, code)
	}
	slices.Sort(table)
	if enum := specEnum(t, "ApiError", "code"); !slices.Equal(enum, table) {
		t.Fatalf("ApiError.code enum %q, codes triggered here %q: make them the same", enum, table)
	}
	for code, tc := range tests {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			r := tc.trigger(t)
			if r.status != tc.status || r.errCode(t) != code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tc.status, code)
			}
			wantOneMessage(t, code, r)
		})
	}
}

// wantOneMessage fails when r, an answer with a code every surface shares, does not carry that
// code's one message (web.OneMessage): whichever layer refuses, a client sees one text per code.
func wantOneMessage(t *testing.T, code string, r resp) {
	t.Helper()
	want, shared := web.OneMessage(code)
	if !shared {
		return
	}
	var e struct{ Message string }
	r.decode(t, &e)
	if e.Message != want {
		t.Fatalf("%s answered with message %q, want its one message %q", code, e.Message, want)
	}
}

// TestErrorCodes_EveryOAuthErrorIsSent is the same for the token endpoint's OAuthError.error enum
// (RFC 6749 §5.2 codes; the server answers only those listed).
func TestErrorCodes_EveryOAuthErrorIsSent(t *testing.T) {
	t.Parallel()
	token := func(e *env, form url.Values, basic bool) resp {
		req, _ := http.NewRequest("POST", e.url+"/oauth/token", strings.NewReader(form.Encode()))
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		if basic {
			req.SetBasicAuth(testClientID, testClientSecret)
		}
		res, err := e.c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return resp{status: res.StatusCode, header: res.Header, body: b}
	}
	grant := url.Values{"grant_type": {"password"}, "username": {"alice"}, "password": {"alice-password"}}
	tests := map[string]struct {
		status  int
		trigger func(t *testing.T) resp
	}{
		"invalid_request": {http.StatusBadRequest, func(t *testing.T) resp {
			return token(newEnv(t, time.Hour), url.Values{"username": {"alice"}, "password": {"x"}}, true)
		}},
		"invalid_client": {http.StatusUnauthorized, func(t *testing.T) resp {
			return token(newEnv(t, time.Hour), grant, false)
		}},
		"invalid_grant": {http.StatusBadRequest, func(t *testing.T) resp {
			return token(newEnv(t, time.Hour), url.Values{"grant_type": {"password"}, "username": {"nobody"}, "password": {"x"}}, true)
		}},
		"unsupported_grant_type": {http.StatusBadRequest, func(t *testing.T) resp {
			return token(newEnv(t, time.Hour), url.Values{"grant_type": {"client_credentials"}}, true)
		}},
		"server_error": {http.StatusInternalServerError, func(t *testing.T) resp {
			e := newEnv(t, time.Hour)
			e.register("alice", "alice-password", "Customer")
			if _, err := e.pool.Exec(context.Background(), "ALTER TABLE order_tokens RENAME TO order_tokens_gone"); err != nil {
				t.Fatal(err)
			}
			return token(e, grant, true)
		}},
		"temporarily_unavailable": {http.StatusServiceUnavailable, func(t *testing.T) resp {
			h := password.NewSized(password.Fast, 1, 0)
			e := newEnvHasher(t, dbtest.New(t), time.Hour, throttle.Options{}, h)
			release, err := h.Hold(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			defer release()
			return token(e, grant, true)
		}},
	}
	var table []string
	for code := range tests {
		table = append(table, code)
	}
	slices.Sort(table)
	if enum := specEnum(t, "OAuthError", "error"); !slices.Equal(enum, table) {
		t.Fatalf("OAuthError.error enum %q, codes triggered here %q: make them the same", enum, table)
	}
	for code, tc := range tests {
		t.Run(code, func(t *testing.T) {
			t.Parallel()
			r := tc.trigger(t)
			var body struct {
				Error string `json:"error"`
			}
			r.decode(t, &body)
			if r.status != tc.status || body.Error != code {
				t.Fatalf("got %d %s, want %d %s", r.status, r.body, tc.status, code)
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
