package httpapi_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/ordersapi"
)

// TestGetOrder_LocationResolvesForItsPeopleOnly: the Location of POST /orders answers the order to
// its customer and (once taken) its performer; any performer reads it while it is WAITING (it is
// on the new-orders list then); anyone else gets the 404 an unknown id gets, word for word apart
// from the id, so ids reveal nothing.
func TestGetOrder_LocationResolvesForItsPeopleOnly(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice, carol := e.account("alice", "Customer"), e.account("carol", "Customer")
	bob, dave := e.account("bob", "Performer"), e.account("dave", "Performer")

	r := e.do("POST", "/orders", alice.token, `{"description":"Paint the fence","price":"120.50"}`)
	e.want(r, http.StatusCreated)
	var created ordersapi.Order
	r.decode(t, &created)
	loc := r.header.Get("Location")
	if loc == "" {
		t.Fatal("no Location")
	}
	read := func(a account, wantStatus int) ordersapi.Order {
		t.Helper()
		r := e.do("GET", loc, a.token, nil)
		if r.status != wantStatus {
			t.Fatalf("GET %s as %s: %d %s, want %d", loc, a.Username, r.status, r.body, wantStatus)
		}
		var o ordersapi.Order
		if wantStatus == http.StatusOK {
			r.decode(t, &o)
		} else if r.errCode(t) != "not_found" {
			t.Fatalf("GET %s as %s: %s, want not_found", loc, a.Username, r.body)
		}
		return o
	}
	if o := read(alice, http.StatusOK); o.Id != created.Id || o.Status != ordersapi.WAITING || o.Price.String() != "120.50" {
		t.Fatalf("the customer reads %+v, want the created order", o)
	}
	read(bob, http.StatusOK) // waiting: on every performer's list anyway
	read(dave, http.StatusOK)
	read(carol, http.StatusNotFound)

	e.want(e.transition(bob, created.Id, "take"), http.StatusOK)
	r = e.do("GET", loc, bob.token, nil)
	e.want(r, http.StatusOK)
	// The seed's literal, with a space.
	if !strings.Contains(string(r.body), `"status":"IN PROGRESS"`) {
		t.Fatalf("taken order reads %s, want status \"IN PROGRESS\"", r.body)
	}
	var taken ordersapi.Order
	r.decode(t, &taken)
	if taken.Performer == nil || taken.Performer.Username != "bob" {
		t.Fatalf("taken order's performer: %+v", taken.Performer)
	}
	read(alice, http.StatusOK)
	read(dave, http.StatusNotFound) // taken by someone else: no longer dave's to see
	read(carol, http.StatusNotFound)

	stranger := e.do("GET", loc, carol.token, nil)
	unknown := e.do("GET", "/orders/999999", carol.token, nil)
	if stranger.status != unknown.status ||
		!strings.Contains(string(unknown.body), "order 999999 not found") ||
		!strings.Contains(string(stranger.body), "order "+loc[len("/orders/"):]+" not found") {
		t.Fatalf("a stranger's answer %d %s differs from an unknown id's %d %s", stranger.status, stranger.body, unknown.status, unknown.body)
	}
	if r := e.do("GET", "/orders/0", alice.token, nil); r.status != http.StatusBadRequest {
		t.Fatalf("GET /orders/0: %d %s", r.status, r.body)
	}
	if r := e.do("GET", loc, "", nil); r.status != http.StatusUnauthorized {
		t.Fatalf("GET without a token: %d %s", r.status, r.body)
	}
}
