package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
)

// TestListParams_EveryProblemAtOnce: the list routes skip the spec validator, and their generated
// binder stops at the first parameter it cannot read; a request with several bad parameters still
// gets one answer naming each of them, whether they are unreadable (the binder's path) or out of
// bounds (orders.ParsePage's), and the same message per field either way.
func TestListParams_EveryProblemAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	bob := e.account("bob", "Performer")
	alice := e.account("alice", "Customer")
	own := fmt.Sprintf("/users/%d/orders", alice.Id)
	tests := []struct {
		target string
		who    account
		want   map[string]string // field → "in code [limit]"
	}{
		{"/orders?page=-1&size=0", bob, map[string]string{"page": "query too_small 0", "size": "query too_small 1"}},
		{"/orders?size=abc&page=xyz", bob, map[string]string{"page": "query type", "size": "query type"}},
		{"/orders?page=xyz&size=0&sort=password", bob, map[string]string{"page": "query type",
			"size": "query too_small 1", "sort": "query enum"}},
		{"/orders?page=1&size=99999999999&sort=id,up", bob, map[string]string{"size": "query too_large 100",
			"sort": "query enum"}},
		{"/orders?page=1&page=2&size=-3", bob, map[string]string{"page": "query repeated", "size": "query too_small 1"}},
		{own + "?page=-1&size=101", alice, map[string]string{"page": "query too_small 0", "size": "query too_large 100"}},
		{"/users/0/orders?page=-1", alice, map[string]string{"id": "path too_small 1", "page": "query too_small 0"}},
		{"/users/0/orders?page=abc", alice, map[string]string{"id": "path too_small 1", "page": "query type"}},
		{"/users/abc/orders?size=0", alice, map[string]string{"id": "path type", "size": "query too_small 1"}},
		{"/orders?page=10001", bob, map[string]string{"page": "query too_large 10000"}},
		// One problem stays one detail.
		{"/orders?size=abc", bob, map[string]string{"size": "query type"}},
		{"/orders?sort=price,up", bob, map[string]string{"sort": "query enum"}},
	}
	for _, tc := range tests {
		t.Run(tc.target, func(t *testing.T) {
			r := e.do("GET", tc.target, tc.who.token, nil)
			var body ordersapi.Error
			r.decode(t, &body)
			if r.status != http.StatusBadRequest || body.Code != web.CodeValidation || body.Message != web.MessageValidation {
				t.Fatalf("got %d %s, want 400 validation_failed", r.status, r.body)
			}
			if body.Details == nil {
				t.Fatalf("no details in %s", r.body)
			}
			got := map[string]string{}
			for _, d := range *body.Details {
				got[d.Field] = strings.TrimSpace(fmt.Sprintf("%s %s %s", d.In, d.Code, limitOf(d)))
				// Every detail carries its code's one message.
				if want := invalid.Message(invalid.Code(d.Code), limitOf(d), deref(d.Expected), derefs(d.Allowed)); d.Message != want {
					t.Errorf("%s: message %q, want %q", d.Field, d.Message, want)
				}
			}
			// One detail per field: none missing, none twice.
			if len(*body.Details) != len(tc.want) || len(got) != len(tc.want) {
				t.Fatalf("details %s, want one per field of %v", r.body, tc.want)
			}
			for f, msg := range tc.want {
				if got[f] != msg {
					t.Errorf("%s: %q, want %q (body %s)", f, got[f], msg, r.body)
				}
			}
		})
	}
}

// TestParams_SameWordsOnBothPaths: a request with a body goes through the spec validator, one
// without through the generated binder; an unreadable id reads the same on both.
func TestParams_SameWordsOnBothPaths(t *testing.T) {
	t.Parallel()
	e := newEnv(t, time.Hour)
	bob := e.account("bob", "Performer")
	for _, body := range []any{nil, `{}`} {
		r := e.do("PATCH", "/orders/abc/take", bob.token, body)
		var got ordersapi.Error
		r.decode(t, &got)
		if r.status != http.StatusBadRequest || got.Details == nil || len(*got.Details) != 1 ||
			(*got.Details)[0].Field != "id" || (*got.Details)[0].Code != string(invalid.Type) ||
			(*got.Details)[0].In != ordersapi.Path || (*got.Details)[0].Message != "must be an integer" {
			t.Errorf("body %v: got %d %s, want 400 naming path id: type, must be an integer", body, r.status, r.body)
		}
	}
}

// limitOf is a detail's limit, "" when it has none.
func limitOf(d ordersapi.ErrorDetail) json.Number {
	if d.Limit == nil {
		return ""
	}
	return *d.Limit
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

func derefs(s *[]string) []string {
	if s == nil {
		return nil
	}
	return *s
}
