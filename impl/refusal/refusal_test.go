package refusal

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http/httptest"
	"testing"

	"github.com/triadhq/triad/impl/web"
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
	handle := table.ResponseErrorHandler(nil)
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
