package refusal

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
)

var (
	errGone  = errors.New("the thing is gone")
	errSlow  = errors.New("slow down")
	errFixed = errors.New("internal wording")
)

func TestTable_Write(t *testing.T) {
	table := Table{
		{Err: errGone, Refusal: Refusal{Status: 404, Code: "not_found"}},
		{Err: errFixed, Refusal: Refusal{Status: 403, Code: "forbidden", Message: "not for you",
			Details: func(error) []web.FieldError { return []web.FieldError{{Field: "f", Message: "m"}} }}},
		{Err: errSlow, Refusal: Refusal{Status: 429, Code: "too_many", Challenge: `Bearer realm="x"`,
			RetryAfter: func(error) int { return 7 }}},
	}
	handle := table.ResponseErrorHandler()
	for _, tc := range []struct {
		err                     error
		status                  int
		code, msg, retry, chall string
		details                 int
	}{
		{fmt.Errorf("wrapped: %w", errGone), 404, "not_found", "wrapped: the thing is gone", "", "", 0},
		{errFixed, 403, "forbidden", "not for you", "", "", 1},
		{errSlow, 429, "too_many", "slow down", "7", `Bearer realm="x"`, 0},
		{errors.New("pq: secret detail"), 500, web.CodeInternal, "internal server error", "", "", 0},
	} {
		w := httptest.NewRecorder()
		handle(w, httptest.NewRequest("GET", "/", nil), tc.err)
		var body web.Error
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if w.Code != tc.status || body.Code != tc.code || body.Message != tc.msg || len(body.Details) != tc.details ||
			w.Header().Get("Retry-After") != tc.retry || w.Header().Get("WWW-Authenticate") != tc.chall {
			t.Errorf("%v: got %d %+v headers %v", tc.err, w.Code, body, w.Header())
		}
	}
}

// TestInvalidInput: a domain's invalid.Problems, however wrapped, answers 400 validation_failed
// with every problem placed by the edge.
func TestInvalidInput(t *testing.T) {
	table := Table{InvalidInput(func(field string) invalid.In {
		if field == "id" {
			return invalid.Path
		}
		return invalid.Body
	})}
	err := fmt.Errorf("create: %w", invalid.Problems{invalid.New("", "text", invalid.Blank), invalid.New("", "id", invalid.Invalid)})
	w := httptest.NewRecorder()
	table.ResponseErrorHandler()(w, httptest.NewRequest("POST", "/", nil), err)
	var body web.Error
	if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
		t.Fatal(err)
	}
	if w.Code != 400 || body.Code != web.CodeValidation || len(body.Details) != 2 ||
		body.Details[0].In != invalid.Body || body.Details[0].Code != invalid.Blank || body.Details[1].In != invalid.Path {
		t.Fatalf("got %d %+v", w.Code, body)
	}
}

// TestOAuthLogin: every outcome of the login guard a token endpoint refuses is answered from the
// one table in RFC 6749's §5.2 body, with the status and Retry-After every other login gives it,
// and Cache-Control: no-store; an error the table does not know is left to the endpoint.
func TestOAuthLogin(t *testing.T) {
	for _, tc := range []struct {
		err               error
		status            int
		code, desc, retry string
	}{
		{password.ErrBusy, 503, OAuthTemporarilyUnavailable, MessageServerBusy, "1"},
		{fmt.Errorf("login: %w", password.ErrClientBusy), 429, OAuthTemporarilyUnavailable, MessageTooManyRequests, "1"},
		{&loginguard.Blocked{Seconds: 42}, 429, OAuthInvalidGrant, "too many failed logins; try again in 42 seconds", "42"},
		{&loginguard.Blocked{Seconds: 0}, 429, OAuthInvalidGrant, "too many failed logins; try again in 0 seconds", "1"},
		{domainerr.InvalidCredentials, 400, OAuthInvalidGrant, MessageInvalidGrant, ""},
	} {
		w := httptest.NewRecorder()
		if !OAuthLogin.WriteOAuth(w, httptest.NewRequest("POST", "/oauth/token", nil), tc.err) {
			t.Fatalf("%v: not in the table", tc.err)
		}
		var body web.OAuthError
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil {
			t.Fatal(err)
		}
		if w.Code != tc.status || body.Error != tc.code || body.Description != tc.desc ||
			w.Header().Get("Retry-After") != tc.retry || w.Header().Get("Cache-Control") != "no-store" {
			t.Errorf("%v: got %d %+v headers %v", tc.err, w.Code, body, w.Header())
		}
	}
	if OAuthLogin.WriteOAuth(httptest.NewRecorder(), httptest.NewRequest("POST", "/", nil), errors.New("database down")) {
		t.Error("an unknown error was answered by the table")
	}
}
