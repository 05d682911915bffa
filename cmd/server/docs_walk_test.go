package main

import (
	"net/url"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/triadhq/triad/api"
	"github.com/triadhq/triad/impl/testkit/browsertest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// docsWalk walks Swagger UI's operations in the order docs/specs.md gives, on one page at a time,
// and records which operations it executed.
type docsWalk struct {
	docsPage
	spec   string
	blocks map[string]string // operationId → its block's CSS selector (operations-<first tag>-<id>)
	walked []string
	ok     map[string]bool // the operations that answered 2xx
	round  int             // 1 for the first walk on the server, 2 for the second
}

// newDocsWalk indexes every operation of every spec by its Swagger UI block.
func newDocsWalk(p docsPage) *docsWalk {
	w := &docsWalk{docsPage: p, blocks: map[string]string{}, ok: map[string]bool{}}
	for _, name := range api.Names() {
		doc, err := api.Load(name)
		if err != nil {
			p.t.Fatal(err)
		}
		for _, item := range doc.Paths.Map() {
			for _, op := range item.Operations() {
				if len(op.Tags) == 0 {
					p.t.Fatalf("%s: operation %s has no tag (Swagger UI files it under default)", name, op.OperationID)
				}
				w.blocks[op.OperationID] = "#operations-" + op.Tags[0] + "-" + op.OperationID
			}
		}
	}
	return w
}

// page opens one spec's page.
func (w *docsWalk) page(spec, firstOp string) {
	w.t.Helper()
	w.spec = spec
	w.open(spec, w.blocks[firstOp])
}

// try executes op with its defaults and requires status and, in the response shown, contains; it
// returns what was shown.
func (w *docsWalk) try(op, status, contains string) string {
	w.t.Helper()
	return w.tryExample(op, "", status, contains)
}

// replayedShown is how Swagger UI shows the header of an answer replayed for its Idempotency-Key.
const replayedShown = "idempotent-replayed: true"

// tryKeyed is try for an operation whose Idempotency-Key example Swagger UI fills in: the first
// walk's answer is the operation's own, the second walk's the same answer replayed (marked
// Idempotent-Replayed), which is what makes the second walk pass without a reset.
func (w *docsWalk) tryKeyed(op, status, contains string) string {
	w.t.Helper()
	shown := w.try(op, status, contains)
	if replayed := strings.Contains(shown, replayedShown); replayed != (w.round > 1) {
		w.t.Fatalf("%s: %s in walk %d shows %q: %v, want %v: %.800s", w.spec, op, w.round, replayedShown, replayed, w.round > 1, shown)
	}
	return shown
}

// tryExample is try with the request body's example named example picked from its list.
func (w *docsWalk) tryExample(op, example, status, contains string) string {
	w.t.Helper()
	sel, ok := w.blocks[op]
	if !ok {
		w.t.Fatalf("no operation %s in the specs", op)
	}
	start := time.Now()
	got, shown := w.tryItOutWith(sel, example)
	w.t.Logf("%s %s: %s in %v", op, example, got, time.Since(start).Round(time.Millisecond))
	w.walked = append(w.walked, op)
	if got != status || !strings.Contains(shown, contains) {
		w.t.Fatalf("%s: %s with its defaults shows %s, want %s with %q: %.800s", w.spec, op, got, status, contains, shown)
	}
	if strings.HasPrefix(got, "2") {
		w.ok[op] = true
	}
	return shown
}

// tokenIn is the "token" of a response shown.
func (w *docsWalk) tokenIn(shown string) string {
	w.t.Helper()
	m := regexp.MustCompile(`"token":\s*"([^"]+)"`).FindStringSubmatch(shown)
	if m == nil {
		w.t.Fatalf("%s: no token in %.500s", w.spec, shown)
	}
	return m[1]
}

// TestDocs_EveryOperationWorksWithItsDefaults is a visitor of /docs on a fresh dev-mode server
// (what `make run` serves on an empty database) executing every operation of the three specs with
// what Swagger UI fills in, in the order docs/specs.md documents: sign in, Authorize, then the rest,
// signing in again where an operation needs another role. Every answer is a success, the two
// OAuth 2.0 callbacks' included (dev mode's dev provider completes their example). Then a second
// visitor walks orders' and brands' pages again, on the same server and without putting the demo
// data back, with the same result: no example changes the demo data in a way a later example cannot undo. Those that
// cannot run twice (the registrations, an order's creation and moves, a brand's deletion) carry a
// fixed Idempotency-Key example, so the second walk gets their first answers replayed, and the
// walk checks that it does (and that the first walk's were not). Last, the dev bar's button puts
// the demo data back and says so. It fails when an operation of a spec is not in the walk, and
// when the page fetches anything from elsewhere than the server (the Swagger UI assets are
// embedded: the docs need no internet). What Authorize was given survives a reload
// (persistAuthorization).
func TestDocs_EveryOperationWorksWithItsDefaults(t *testing.T) {
	t.Parallel()
	base, _ := testServer(t, "-mode", "dev", "-database-url", dbtest.NewURL(t))
	origin, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}
	b := browsertest.New(t)
	var mu sync.Mutex
	var offsite []string
	chromedp.ListenTarget(b, func(ev any) {
		if e, ok := ev.(*network.EventRequestWillBeSent); ok {
			u, err := url.Parse(e.Request.URL)
			if err == nil && (u.Scheme == "data" || u.Scheme == "blob" || u.Host == origin.Host) {
				return
			}
			mu.Lock()
			offsite = append(offsite, e.Request.URL)
			mu.Unlock()
		}
	})
	// The browser starts under the test's context, not under a step's deadline, which would end it.
	if err := chromedp.Run(b); err != nil {
		t.Fatal(err)
	}
	w := newDocsWalk(docsPage{t: t, ctx: b, base: base})
	w.run("start", network.Enable(), chromedp.EmulateViewport(1280, 2000))
	// The second walk is orders' and brands' pages, whose examples change shared demo data. Auth's
	// page is walked in the first round only: its examples leave nothing a later try meets (each
	// login starts a new session and stores the user's same identicon again, the dev provider
	// signs its example user in afresh, and the logouts end the sessions), so the second walk
	// would repeat the first exactly, at a third of the walk's cost. A scaffolded surface's page
	// is walked in the first round only too (walkEveryOperation).
	secondWalk := map[string]bool{}
	for _, name := range []string{"orders", "brands"} {
		doc, err := api.Load(name)
		if err != nil {
			t.Fatal(err)
		}
		for _, item := range doc.Paths.Map() {
			for _, op := range item.Operations() {
				secondWalk[op.OperationID] = true
			}
		}
	}
	for round := 1; round <= 2; round++ {
		start := time.Now()
		w.walked, w.ok, w.round = nil, map[string]bool{}, round
		w.walkEveryOperation(round == 1)
		var missing []string
		want := 0
		for op := range w.blocks {
			if round > 1 && !secondWalk[op] {
				continue
			}
			want++
			if !slices.Contains(w.walked, op) {
				missing = append(missing, op)
			}
		}
		if len(missing) > 0 {
			slices.Sort(missing)
			t.Errorf("operations the walk (and docs/specs.md's order) leaves out: %v", missing)
		}
		t.Logf("walk %d: %d/%d operations answered 2xx with their defaults, in %v", round, len(w.ok), want, time.Since(start).Round(time.Second))
		if len(w.ok) != want {
			t.Fatalf("walk %d: %d of %d operations answered 2xx", round, len(w.ok), want)
		}
	}
	w.putDemoDataBack()
	mu.Lock()
	defer mu.Unlock()
	if len(offsite) > 0 {
		t.Fatalf("the docs page fetched from elsewhere than the server: %q", offsite)
	}
}

// putDemoDataBack presses the dev bar's button on the docs page and waits until it says the demo
// data is back (POST /dev/reset answered 200).
func (w *docsWalk) putDemoDataBack() {
	w.t.Helper()
	var said string
	w.open("orders", w.blocks["issueToken"])
	w.run("put the demo data back",
		chromedp.Click(`#dev-reset-button`, chromedp.ByQuery),
		chromedp.Poll(`(() => { const s = document.querySelector("#dev-reset-status").textContent; return !s.startsWith("putting") && s; })()`, &said))
	if !strings.HasPrefix(said, "put back") {
		w.t.Fatalf("the dev bar's reset said %q", said)
	}
}

// walkEveryOperation walks the pages in docs/specs.md's order; auth's and any scaffolded
// surface's only in the first walk.
func (w *docsWalk) walkEveryOperation(first bool) {
	t := w.t
	t.Helper()
	// orders: the token and a registration need no Authorize; then the performer bob, then the
	// customer alice (the password flow with the dev client each time).
	w.page("orders", "issueToken")
	w.try("issueToken", "200", `"token_type": "bearer"`)
	w.tryKeyed("registerOrdersUser", "201", `"username": "erin"`)
	w.authorizeOrders("bob", "bob-password")
	w.try("getAuthenticatedUser", "200", `"username": "bob"`)
	// Dev mode's three WAITING orders; after the first walk four (order 3 taken and released,
	// alice's new order, order 2 cancelled, order 7 rejected), and as many after any later walk,
	// whose keyed examples only replay.
	waiting := `"totalElements": 3`
	if w.round > 1 {
		waiting = `"totalElements": 4`
	}
	w.try("listNewOrders", "200", waiting)
	w.tryKeyed("takeOrder", "200", `"status": "IN PROGRESS"`)
	w.tryKeyed("releaseOrder", "200", `"status": "WAITING"`)
	w.tryKeyed("passOrder", "200", `"status": "READY"`)
	w.authorizeOrders("alice", "alice-password")
	w.tryKeyed("createOrder", "201", `"description": "Paint the fence"`)
	w.try("listUserOrders", "200", `"customerId": 1`)
	w.try("getOrder", "200", `"id": 1,`)
	w.tryKeyed("cancelOrder", "200", `"status": "CANCELLED"`)
	w.tryKeyed("rejectOrder", "200", `"status": "WAITING"`)
	w.tryKeyed("acceptOrder", "200", `"status": "COMPLETED"`)

	// brands: browse, register (the new user, Ada) and log in (dev mode's admin); Authorize as the
	// admin to manage brands, then log in as Ada (the login's second example: the registration's
	// answer, replayed to a later visitor, holds a token the first visitor's logout revoked) for
	// her profile, her subscriptions and her logout, which touch no account a visitor signs in
	// with but hers, and leave her password as the login example has it.
	w.page("brands", "listBrands")
	w.try("listBrands", "200", "Northwind Coffee")
	w.try("listFeaturedBrands", "200", "Northwind Coffee")
	w.try("getBrand", "200", "Northwind Coffee")
	w.tryKeyed("registerBrandsUser", "201", `"email": "ada@example.com"`)
	admin := w.tokenIn(w.try("loginUser", "200", `"token"`))
	w.authorize("bearerAuth", admin)
	w.try("createBrand", "201", "Northwind Coffee")
	w.try("updateBrand", "200", "back in stock next season")
	w.tryKeyed("deleteBrand", "200", "Brand successfully deleted.")
	w.open("brands", w.blocks["getMe"]) // a reload: the page starts again from the server
	w.try("getMe", "200", `"email": "admin@brands.test"`)
	ada := w.tokenIn(w.tryExample("loginUser", "ada", "200", `"token"`))
	w.authorize("bearerAuth", ada)
	w.try("getMe", "200", `"email": "ada@example.com"`)
	w.try("subscribeBrand", "200", "Successfully Subscribed")
	w.try("unsubscribeBrand", "200", "Successfully Unsubscribed")
	w.try("editProfile", "200", "Profile successfully changed.")
	w.try("getMe", "200", `"email": "ada@example.com"`) // the name changed, never the e-mail
	w.try("resetPassword", "200", "Password successfully changed")
	w.try("logoutUser", "200", "You have successfully logged out.")

	if !first {
		return
	}
	w.walkAuth()
	// Any other surface (a scaffolded one): its operations in order, with a token it takes, in the
	// first walk only: the skeleton's examples delete its item 1, which only dev mode's reset puts
	// back (docs/adding-a-surface.md).
	w.walkOthers(w.base)
}

// walkAuth walks auth's page: the direct login of dev mode's demo user (provider local), Authorize
// xsrfHeader with the XSRF-TOKEN cookie it set, the session, the avatar the login stored, the dev
// provider's example callbacks (a login of its user dev-example), then the logouts.
func (w *docsWalk) walkAuth() {
	t := w.t
	t.Helper()
	w.page("auth", "authLoginPage")
	w.try("authLoginPage", "200", "")
	w.try("listAuthProviders", "200", `"local"`)
	w.try("getAuthStatus", "200", `"not logged in"`)
	w.try("authLogin", "200", `"name": "demo"`)
	w.try("authLoginPost", "200", `"name": "demo"`)
	var xsrf string
	w.run("read the XSRF-TOKEN cookie", chromedp.Evaluate(`decodeURIComponent((document.cookie.match(/(?:^|; )XSRF-TOKEN=([^;]*)/) || [])[1] || "")`, &xsrf))
	if xsrf == "" {
		t.Fatal("auth: the login set no XSRF-TOKEN cookie the page can read")
	}
	w.authorize("xsrfHeader", xsrf)
	w.try("getAuthUser", "200", `"name": "demo"`)
	w.try("getAuthStatus", "200", `"status": "logged in"`)
	w.try("getAvatar", "200", "")
	w.try("headAvatar", "200", "")
	w.try("authCallback", "200", `"name": "dev-example"`)
	w.try("authCallbackPost", "200", `"name": "dev-example"`)
	w.try("authProviderLogout", "200", "logged out")
	w.try("authProviderLogoutPost", "200", "logged out")
	w.try("authLogout", "200", "logged out")
	w.try("authLogoutPost", "200", "logged out")
}
