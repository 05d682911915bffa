package httpapi_test

import (
	"net/http"
	"strconv"
	"sync"
	"testing"
	"time"
)

// TestRace_FiftyPerformersTakeOneOrder: exactly one take wins, the other 49 get 409, and the
// order belongs to the winner.
func TestRace_FiftyPerformersTakeOneOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice := e.account("alice", "Customer")
	performers := e.accounts("perf", "Performer", 50)
	o := e.createOrder(alice, "contested", "50")

	statuses := make([]int, len(performers))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, p := range performers {
		wg.Go(func() {
			<-start
			statuses[i] = e.transition(p, o.Id, "take").status
		})
	}
	close(start)
	wg.Wait()
	winner := -1
	for i, s := range statuses {
		switch s {
		case http.StatusOK:
			if winner >= 0 {
				t.Fatalf("performers %d and %d both took the order", winner, i)
			}
			winner = i
		case http.StatusConflict:
		default:
			t.Fatalf("performer %d: status %d", i, s)
		}
	}
	if winner < 0 {
		t.Fatal("nobody took the order")
	}
	p := e.list(performers[winner], "/users/"+itoa(performers[winner].Id)+"/orders")
	if p.Page.TotalElements != 1 || p.Content[0].Id != o.Id {
		t.Fatalf("winner's list: %+v", p)
	}
	e.checkLedger()
}

// TestRace_TwentyAcceptsOfOneOrder: one payment only.
func TestRace_TwentyAcceptsOfOneOrder(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	alice, bob := e.account("alice", "Customer"), e.account("bob", "Performer")
	o := e.readyOrder(alice, bob, "100")

	accepts := make([]func() resp, 20)
	for i := range accepts {
		accepts[i] = func() resp { return e.transition(alice, o.Id, "accept") }
	}
	if got := e.outcomes(accepts...); got["ok"] != 1 || got["invalid_state"] != 19 {
		t.Fatalf("outcomes %v, want one paid and nineteen invalid_state", got)
	}
	if got := e.balance(alice); got != "395.00" {
		t.Fatalf("customer balance %s, want 500 - 105 = 395.00 (paid once)", got)
	}
	if got := e.balance(bob); got != "400.00" {
		t.Fatalf("performer balance %s, want 400.00", got)
	}
	e.checkLedger()
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// TestRace_RegisterOneNameAtOnce: ten registrations of one name in different letter cases at once
// create exactly one user; the others get 409 username_taken.
func TestRace_RegisterOneNameAtOnce(t *testing.T) {
	t.Parallel()
	e := newEnv(t, 24*time.Hour)
	names := []string{"alice", "Alice", "ALICE", "aLice", "alIce", "aliCe", "alicE", "ALice", "AlIcE", "alICE"}
	statuses := make([]int, len(names))
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i, n := range names {
		wg.Go(func() {
			<-start
			statuses[i] = e.do("POST", "/users", "", map[string]string{"username": n, "password": "password-" + n, "userType": "Customer"}).status
		})
	}
	close(start)
	wg.Wait()
	created := 0
	for i, s := range statuses {
		switch s {
		case http.StatusCreated:
			created++
		case http.StatusConflict:
		default:
			t.Fatalf("%s: status %d", names[i], s)
		}
	}
	if created != 1 {
		t.Fatalf("%d users created for one name", created)
	}
	e.checkLedger()
}
