package httpapi_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/brands/devdata"
)

// loadDevData fills the env's database with the prepared brands, admin and demo user.
func (e *env) loadDevData() {
	e.t.Helper()
	if _, err := devdata.Load(context.Background(), e.pool, e.api.Service()); err != nil {
		e.t.Fatal(err)
	}
}

func TestBrands_ListsAndByID(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	if got := e.list("/api/brand/list"); len(got) != 0 {
		t.Fatalf("empty database lists %d brands", len(got))
	}
	e.want(e.do(request{method: "GET", path: "/api/brand/list/featured"}), http.StatusOK)
	e.loadDevData()
	e.loadDevData() // idempotent

	var available, featured, hiddenFeatured int
	for _, b := range devdata.Brands {
		if b.Available {
			available++
		}
		if b.Featured {
			featured++
			if !b.Available {
				hiddenFeatured++
			}
		}
	}
	if hiddenFeatured == 0 {
		t.Fatal("dev data lacks a featured brand that is unavailable, which this test needs")
	}
	list := e.list("/api/brand/list")
	if len(list) != available {
		t.Fatalf("list has %d brands, want the %d available ones", len(list), available)
	}
	for i, b := range list {
		if !b.Availability {
			t.Errorf("list holds unavailable brand %s", b.UnderscoreId)
		}
		if i > 0 && list[i-1].UnderscoreId >= b.UnderscoreId {
			t.Errorf("list not in creation order at %d", i)
		}
	}
	// Every brand with isFeatured appears in the featured list (the seed's rule), an unavailable
	// one included: its availability tells clients that it cannot be subscribed to.
	feat := e.list("/api/brand/list/featured")
	if len(feat) != featured || featured < 3 {
		t.Fatalf("featured has %d brands, want %d (>= 3)", len(feat), featured)
	}
	unavailable := 0
	for i, b := range feat {
		if !b.IsFeatured {
			t.Errorf("featured list holds %+v", b)
		}
		if !b.Availability {
			unavailable++
		}
		if i > 0 && feat[i-1].UnderscoreId >= b.UnderscoreId {
			t.Errorf("featured list not in creation order at %d", i)
		}
	}
	if unavailable != hiddenFeatured {
		t.Errorf("featured list holds %d unavailable brands, want %d", unavailable, hiddenFeatured)
	}

	first := devdata.Brands[0]
	b := e.brand(first.ID)
	if b.Name != first.Name || b.Url != first.URL || b.FeaturedImage != first.Image || b.Description != first.Description ||
		len(products(t, b.Products)) != len(first.Products) || products(t, b.Products)[0]["name"] != first.Products[0]["name"] {
		t.Errorf("brand by id = %+v, want %+v", b, first)
	}
	// Unavailable brands are still readable by id.
	if hidden := e.brand("655e1f2a000000000000000b"); hidden.Availability {
		t.Errorf("unavailable brand reads as available")
	}

	for _, id := range []string{unknownID, "nope", "655E1F2A0000000000000001", "655e1f2a00000000000000011", "list2", "%20", strings.Repeat("ab", 100)} {
		r := e.want(e.do(request{method: "GET", path: "/api/brand/" + id}), http.StatusNotFound)
		if c := r.errBody(t).Code; c != "not_found" {
			t.Errorf("%q: code %q", id, c)
		}
	}
}

func subscribe(e *env, tok, id string) string {
	e.t.Helper()
	return e.want(e.do(request{method: "POST", path: "/api/subscribe/" + id, token: tok}), http.StatusOK).message(e.t)
}

func unsubscribe(e *env, tok, id string) string {
	e.t.Helper()
	return e.want(e.do(request{method: "POST", path: "/api/unsubscribe/" + id, token: tok}), http.StatusOK).message(e.t)
}

func TestSubscriptions(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	e.loadDevData()
	u := e.register("Ada", "ada@example.com", "correct-horse")
	a, b := devdata.Brands[1].ID, devdata.Brands[2].ID
	startA := e.brand(a).SubscriberCount

	if m := subscribe(e, u.Token, a); m != "Successfully Subscribed" {
		t.Errorf("first subscribe: %q", m)
	}
	if m := subscribe(e, u.Token, a); m != "Already Subscribed" {
		t.Errorf("second subscribe: %q", m)
	}
	if c := e.brand(a).SubscriberCount; c != startA+1 {
		t.Errorf("subscriberCount %d after subscribing twice, want %d", c, startA+1)
	}
	// Bearer works as well.
	if m := e.want(e.do(request{method: "POST", path: "/api/subscribe/" + b, bearer: u.Token}), http.StatusOK).message(t); m != "Successfully Subscribed" {
		t.Errorf("bearer subscribe: %q", m)
	}

	me := e.me(u.Token)
	if len(me.Subscriptions) != 2 || me.Subscriptions[0].UnderscoreId != a || me.Subscriptions[1].UnderscoreId != b {
		t.Fatalf("me subscriptions = %+v, want [%s %s]", me.Subscriptions, a, b)
	}
	if s := me.Subscriptions[0]; s.Name != devdata.Brands[1].Name || s.SubscriberCount != startA+1 || len(products(t, s.Products)) == 0 {
		t.Errorf("subscription is not the full brand: %+v", s)
	}

	if m := unsubscribe(e, u.Token, a); m != "Successfully Unsubscribed" {
		t.Errorf("unsubscribe: %q", m)
	}
	if m := unsubscribe(e, u.Token, a); m != "Not Subscribed" {
		t.Errorf("second unsubscribe: %q", m)
	}
	if c := e.brand(a).SubscriberCount; c != startA {
		t.Errorf("subscriberCount %d after unsubscribing, want %d", c, startA)
	}
	if me := e.me(u.Token); len(me.Subscriptions) != 1 || me.Subscriptions[0].UnderscoreId != b {
		t.Errorf("me after unsubscribe = %+v", me.Subscriptions)
	}

	// Unsubscribing from a brand others subscribe to, without being subscribed, changes nothing.
	demoBrand := devdata.Brands[0].ID // the demo user's subscription
	demoCount := e.brand(demoBrand).SubscriberCount
	if demoCount == 0 {
		t.Fatal("dev data: the demo user's brand has no subscriber")
	}
	if m := unsubscribe(e, u.Token, demoBrand); m != "Not Subscribed" {
		t.Errorf("unsubscribe without a subscription: %q", m)
	}
	if c := e.brand(demoBrand).SubscriberCount; c != demoCount {
		t.Errorf("subscriberCount %d after a non-subscriber unsubscribed, want %d", c, demoCount)
	}

	for _, id := range []string{unknownID, "not-an-id"} {
		e.want(e.do(request{method: "POST", path: "/api/subscribe/" + id, token: u.Token}), http.StatusNotFound)
		e.want(e.do(request{method: "POST", path: "/api/unsubscribe/" + id, token: u.Token}), http.StatusNotFound)
	}
	r := e.want(e.do(request{method: "POST", path: "/api/subscribe/655e1f2a000000000000000b", token: u.Token}), http.StatusConflict)
	if c := r.errBody(t).Code; c != "brand_unavailable" {
		t.Errorf("unavailable: code %q", c)
	}
	if m := unsubscribe(e, u.Token, "655e1f2a000000000000000b"); m != "Not Subscribed" {
		t.Errorf("unsubscribe from unavailable: %q", m)
	}
}

func TestAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.admin()
	if !e.me(admin).IsAdmin {
		t.Fatal("admin's profile lacks isAdmin")
	}
	user := e.register("Ada", "ada@example.com", "correct-horse")

	in := map[string]any{"name": "Acme", "description": "Anvils.", "url": "https://acme.example.com",
		"featuredImage": "https://images.example.com/acme.png", "isFeatured": true,
		"products": []map[string]any{{"name": "Anvil", "price": 10}}}
	r := e.want(e.do(request{method: "POST", path: "/api/brand", token: user.Token, json: in}), http.StatusForbidden)
	if c := r.errBody(t).Code; c != "forbidden" {
		t.Errorf("code %q", c)
	}
	b := e.createBrand(admin, in)
	if !hexID.MatchString(b.UnderscoreId) || b.Name != "Acme" || !b.Availability || !b.IsFeatured || b.SubscriberCount != 0 || len(products(t, b.Products)) != 1 {
		t.Errorf("created %+v", b)
	}
	if got := e.brand(b.UnderscoreId); got.Name != "Acme" {
		t.Errorf("read back %+v", got)
	}
	if l := e.list("/api/brand/list/featured"); len(l) != 1 || l[0].UnderscoreId != b.UnderscoreId {
		t.Errorf("featured = %+v", l)
	}
	subscribe(e, user.Token, b.UnderscoreId)

	e.want(e.do(request{method: "PATCH", path: "/api/brand/" + b.UnderscoreId, token: user.Token, json: map[string]any{"availability": false}}), http.StatusForbidden)
	r = e.want(e.do(request{method: "PATCH", path: "/api/brand/" + b.UnderscoreId, bearer: admin, json: map[string]any{"availability": false, "name": "Acme Corp"}}), http.StatusOK)
	var up struct {
		Name            string `json:"name"`
		Availability    bool   `json:"availability"`
		Description     string `json:"description"`
		SubscriberCount int    `json:"subscriberCount"`
	}
	r.decode(t, &up)
	if up.Name != "Acme Corp" || up.Availability || up.Description != "Anvils." || up.SubscriberCount != 1 {
		t.Errorf("updated %+v", up)
	}
	if l := e.list("/api/brand/list"); len(l) != 0 {
		t.Errorf("unavailable brand still listed: %+v", l)
	}
	if l := e.list("/api/brand/list/featured"); len(l) != 1 || l[0].Availability {
		t.Errorf("featured list after withdrawing its brand = %+v, want it shown as unavailable", l)
	}

	// Refusals: bad input, unknown ids, unknown fields.
	e.want(e.do(request{method: "POST", path: "/api/brand", token: admin, json: map[string]any{"name": ""}}), http.StatusBadRequest)
	e.want(e.do(request{method: "POST", path: "/api/brand", token: admin, json: map[string]any{"name": "X", "url": "javascript:alert(1)"}}), http.StatusBadRequest)
	e.want(e.do(request{method: "POST", path: "/api/brand", token: admin, json: map[string]any{"name": "X", "subscriberCount": 5}}), http.StatusBadRequest)
	e.want(e.do(request{method: "PATCH", path: "/api/brand/" + b.UnderscoreId, token: admin, json: map[string]any{}}), http.StatusBadRequest)
	e.want(e.do(request{method: "PATCH", path: "/api/brand/" + unknownID, token: admin, json: map[string]any{"name": "X"}}), http.StatusNotFound)
	e.want(e.do(request{method: "DELETE", path: "/api/brand/zzz", token: admin}), http.StatusNotFound)
	e.want(e.do(request{method: "DELETE", path: "/api/brand/" + b.UnderscoreId, token: user.Token}), http.StatusForbidden)

	r = e.want(e.do(request{method: "DELETE", path: "/api/brand/" + b.UnderscoreId, token: admin}), http.StatusOK)
	if m := r.message(t); m != "Brand successfully deleted." {
		t.Errorf("message %q", m)
	}
	e.want(e.do(request{method: "GET", path: "/api/brand/" + b.UnderscoreId}), http.StatusNotFound)
	e.want(e.do(request{method: "DELETE", path: "/api/brand/" + b.UnderscoreId, token: admin}), http.StatusNotFound)
	if me := e.me(user.Token); len(me.Subscriptions) != 0 {
		t.Errorf("deleted brand still in subscriptions: %+v", me.Subscriptions)
	}
}

// TestSubscriberCountRace has many users subscribe and unsubscribe at once, each several times and
// in random order, and checks that every brand's subscriberCount equals its number of subscribers.
func TestSubscriberCountRace(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	admin := e.admin()
	brandIDs := []string{
		e.createBrand(admin, map[string]any{"name": "Hot"}).UnderscoreId,
		e.createBrand(admin, map[string]any{"name": "Warm"}).UnderscoreId,
	}
	const users, ops = 24, 12
	e.list("/api/brand/list") // warm the list cache, which must not serve the pre-race counts after
	tokens := make([]string, users)
	for i := range tokens {
		tokens[i] = e.register(fmt.Sprintf("User %d", i), fmt.Sprintf("u%d@example.com", i), "password-123").Token
	}

	// final[u][b] is what user u ends with; each goroutine owns its user's row.
	final := make([][]bool, users)
	var wg sync.WaitGroup
	for u := range users {
		final[u] = make([]bool, len(brandIDs))
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(uint64(u), 7))
			for range ops {
				b := rng.IntN(len(brandIDs))
				// Each call is sent twice at once: duplicates must count once.
				path := "/api/unsubscribe/"
				if rng.IntN(3) > 0 {
					path = "/api/subscribe/"
				}
				var inner sync.WaitGroup
				for range 2 {
					inner.Add(1)
					go func() {
						defer inner.Done()
						e.want(e.do(request{method: "POST", path: path + brandIDs[b], token: tokens[u]}), http.StatusOK)
					}()
				}
				inner.Wait()
				final[u][b] = path == "/api/subscribe/"
			}
		}()
	}
	wg.Wait()

	for b, id := range brandIDs {
		want := 0
		for u := range users {
			if final[u][b] {
				want++
			}
		}
		if got := e.brand(id).SubscriberCount; int(got) != want {
			t.Errorf("brand %d: subscriberCount %d, want %d", b, got, want)
		}
		if got := e.list("/api/brand/list")[b].SubscriberCount; int(got) != want {
			t.Errorf("brand %d: listed subscriberCount %d, want %d", b, got, want)
		}
		var rows int
		if err := e.pool.QueryRow(context.Background(), `SELECT count(*) FROM brand_subscriptions WHERE brand_id = $1`, id).Scan(&rows); err != nil || rows != want {
			t.Errorf("brand %d: %d subscription rows (%v), want %d", b, rows, err, want)
		}
	}
	for u := range users {
		n := 0
		for b := range brandIDs {
			if final[u][b] {
				n++
			}
		}
		if got := len(e.me(tokens[u]).Subscriptions); got != n {
			t.Errorf("user %d has %d subscriptions, want %d", u, got, n)
		}
	}
}

// TestBrandList_CacheFollowsChanges reads the lists through a second server on the same database
// (as another instance behind a load balancer would) while the first one changes brands: every read
// must show every change committed before it, though the lists are cached.
func TestBrandList_CacheFollowsChanges(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	other := e.twin()
	admin := e.admin()
	user := e.register("Ada", "ada@example.com", "correct-horse")
	b := e.createBrand(admin, map[string]any{"name": "One", "isFeatured": true})

	count := func(path, id string) (int32, bool) {
		for _, x := range other.list(path) {
			if x.UnderscoreId == id {
				return x.SubscriberCount, true
			}
		}
		return 0, false
	}
	for _, path := range []string{"/api/brand/list", "/api/brand/list/featured"} {
		if c, ok := count(path, b.UnderscoreId); !ok || c != 0 {
			t.Fatalf("%s: new brand %v with count %d", path, ok, c)
		}
		subscribe(e, user.Token, b.UnderscoreId)
		if c, _ := count(path, b.UnderscoreId); c != 1 {
			t.Errorf("%s: count %d after subscribing, want 1", path, c)
		}
		unsubscribe(e, user.Token, b.UnderscoreId)
		if c, _ := count(path, b.UnderscoreId); c != 0 {
			t.Errorf("%s: count %d after unsubscribing, want 0", path, c)
		}
	}
	e.want(e.do(request{method: "PATCH", path: "/api/brand/" + b.UnderscoreId, token: admin, json: map[string]any{"name": "Renamed"}}), http.StatusOK)
	if l := other.list("/api/brand/list"); len(l) != 1 || l[0].Name != "Renamed" {
		t.Errorf("list after rename: %+v", l)
	}
	e.want(e.do(request{method: "PATCH", path: "/api/brand/" + b.UnderscoreId, token: admin, json: map[string]any{"isFeatured": false}}), http.StatusOK)
	if l := other.list("/api/brand/list/featured"); len(l) != 0 {
		t.Errorf("featured after unfeaturing: %+v", l)
	}
	c := e.createBrand(admin, map[string]any{"name": "Two"})
	if l := other.list("/api/brand/list"); len(l) != 2 || l[1].UnderscoreId != c.UnderscoreId {
		t.Errorf("list after create: %+v", l)
	}
	e.want(e.do(request{method: "DELETE", path: "/api/brand/" + b.UnderscoreId, token: admin}), http.StatusOK)
	if l := other.list("/api/brand/list"); len(l) != 1 || l[0].UnderscoreId != c.UnderscoreId {
		t.Errorf("list after delete: %+v", l)
	}
}

// TestFirstAdmin: the configured admin email takes over a non-admin account that registered it
// first (new password, its tokens revoked), and leaves an existing admin's password alone.
func TestFirstAdmin(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	squatter := e.register("Squatter", "boss@example.com", "squatter-password")
	svc := e.api.Service()
	changed, err := svc.EnsureAdmin(context.Background(), "BOSS@example.com", "Boss", "boss-password")
	if err != nil || !changed {
		t.Fatalf("EnsureAdmin over a user: changed=%v err=%v", changed, err)
	}
	e.want(e.do(request{method: "GET", path: "/api/user/me", token: squatter.Token}), http.StatusUnauthorized)
	e.want(e.do(request{method: "POST", path: "/api/user/login",
		form: url.Values{"email": {"boss@example.com"}, "password": {"squatter-password"}}}), http.StatusUnauthorized)
	tok := e.login("boss@example.com", "boss-password")
	if me := e.me(tok); !me.IsAdmin || me.UnderscoreId != squatter.UnderscoreId {
		t.Fatalf("after takeover: %+v", me)
	}

	// The admin changes the password; a restart with the same config must not undo it.
	e.want(e.do(request{method: "POST", path: "/api/user/reset", token: tok,
		form: url.Values{"currentPassword": {"boss-password"}, "newPassword": {"private-password"}}}), http.StatusOK)
	changed, err = svc.EnsureAdmin(context.Background(), "boss@example.com", "Boss", "boss-password")
	if err != nil || changed {
		t.Fatalf("EnsureAdmin over an admin: changed=%v err=%v", changed, err)
	}
	e.login("boss@example.com", "private-password")
	e.me(tok)

	// A fresh email creates the admin.
	if changed, err := svc.EnsureAdmin(context.Background(), "new@example.com", "New", "new-admin-pw"); err != nil || !changed {
		t.Fatalf("EnsureAdmin of a new email: changed=%v err=%v", changed, err)
	}
	if !e.me(e.login("new@example.com", "new-admin-pw")).IsAdmin {
		t.Fatal("new admin is no admin")
	}
	if _, err := svc.EnsureAdmin(context.Background(), "not an email", "X", "password-123"); err == nil {
		t.Fatal("EnsureAdmin accepted a bad email")
	}
}

// products reads a brand's products array as the API sent it.
func products(t *testing.T, raw json.RawMessage) []map[string]any {
	t.Helper()
	var out []map[string]any
	if err := json.Unmarshal(raw, &out); err != nil {
		t.Fatalf("products %s: %v", raw, err)
	}
	return out
}
