package main

import (
	"context"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	"github.com/triadhq/triad/impl/testkit/browsertest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// authorizeScheme fills one security scheme of Swagger UI's Authorize dialog (by its name, for the
// apiKey and http schemes whose block holds one input) and applies it.
const authorizeScheme = `((name, value) => {
	const box = [...document.querySelectorAll(".modal-ux .auth-container")]
		.find((c) => (c.querySelector("h4") || {}).textContent.includes(name));
	if (!box) throw new Error("no Authorize block for " + name);
	const input = box.querySelector("input");
	Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(input, value);
	input.dispatchEvent(new Event("input", {bubbles: true}));
	box.querySelector("button.authorize").click();
	return true;
})`

// docsPage drives Swagger UI at /docs in headless Chromium, one step at a time, each with its own
// deadline, so a failure names the step and shows what the page said at that moment.
type docsPage struct {
	t    *testing.T
	ctx  context.Context
	base string
}

func (p docsPage) run(what string, steps ...chromedp.Action) {
	p.t.Helper()
	for i, step := range steps {
		ctx, cancel := context.WithTimeout(p.ctx, time.Minute)
		err := chromedp.Run(ctx, step)
		cancel()
		if err != nil {
			var text string
			_ = chromedp.Run(p.ctx, chromedp.Evaluate(`(document.querySelector(".modal-ux") || document.body).innerText`, &text))
			p.t.Fatalf("%s, step %d: %v; the page said:\n%.4000s", what, i, err, text)
		}
	}
}

// open shows one spec's page and waits for the operation op.
func (p docsPage) open(spec, op string) {
	p.t.Helper()
	p.run("open "+spec, chromedp.Navigate(p.base+"/docs/?urls.primaryName="+spec), chromedp.WaitVisible(op, chromedp.ByQuery))
}

// tryItOut executes operation op with what Swagger UI fills in (the spec's examples) and returns
// the status and the response shown.
func (p docsPage) tryItOut(op string) (status, shown string) {
	p.t.Helper()
	p.run("try "+op,
		chromedp.Click(op+` .opblock-summary-control`, chromedp.ByQuery),
		chromedp.WaitVisible(op+` .try-out__btn`, chromedp.ByQuery),
		chromedp.Click(op+` .try-out__btn`, chromedp.ByQuery),
		chromedp.WaitVisible(op+` .btn.execute`, chromedp.ByQuery),
		chromedp.Click(op+` .btn.execute`, chromedp.ByQuery),
		chromedp.WaitVisible(op+` .live-responses-table tr.response td.response-col_status`, chromedp.ByQuery),
		chromedp.Text(op+` .live-responses-table tr.response td.response-col_status`, &status, chromedp.ByQuery),
		chromedp.Text(op+` .live-responses-table tr.response td.response-col_description`, &shown, chromedp.ByQuery),
	)
	return strings.TrimSpace(status), shown
}

// authorize opens the Authorize dialog, applies value to the scheme named, and closes it.
func (p docsPage) authorize(scheme, value string) {
	p.t.Helper()
	var ok bool
	p.run("authorize "+scheme,
		chromedp.Click(`.auth-wrapper .authorize`, chromedp.ByQuery),
		chromedp.WaitVisible(`.modal-ux .auth-container`, chromedp.ByQuery),
		chromedp.Evaluate(authorizeScheme+`(`+jsString(scheme)+`, `+jsString(value)+`)`, &ok),
		// Applied: the scheme's block offers to log out instead.
		chromedp.Poll(`[...document.querySelectorAll(".modal-ux .auth-container")].some((c) =>
			(c.querySelector("h4") || {}).textContent.includes(`+jsString(scheme)+`) && c.innerText.includes("Logout"))`, nil),
		chromedp.Click(`.modal-ux .close-modal`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`.modal-ux`, chromedp.ByQuery),
	)
}

// authorizeOrders logs in on the orders page's Authorize dialog with the OAuth 2.0 password flow,
// as the dev customer alice with the dev client.
func (p docsPage) authorizeOrders() {
	p.t.Helper()
	p.run("orders authorize",
		chromedp.Click(`.auth-wrapper .authorize`, chromedp.ByQuery),
		chromedp.WaitVisible(`#oauth_username`, chromedp.ByQuery),
		chromedp.SendKeys(`#oauth_username`, "alice", chromedp.ByQuery),
		chromedp.SendKeys(`#oauth_password`, "alice-password", chromedp.ByQuery),
		chromedp.SendKeys(`#client_id_password`, "triad-orders", chromedp.ByQuery),
		chromedp.SendKeys(`#client_secret_password`, "triad-orders-secret", chromedp.ByQuery),
		chromedp.Click(`button[aria-label="Apply given OAuth2 credentials"]`, chromedp.ByQuery),
		// Authorized: the password flow's block swaps its inputs for a Logout button (an error
		// would be shown in the block instead).
		chromedp.WaitNotPresent(`#oauth_username`, chromedp.ByQuery),
		chromedp.WaitVisible(`button[aria-label="Remove authorization"]`, chromedp.ByQuery),
		chromedp.Click(`.modal-ux .close-modal`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`.modal-ux`, chromedp.ByQuery),
	)
}

// TestDocs_DefaultExamplesWork: every example Swagger UI fills in works against a dev-mode server
// as it is, for one operation of each surface after Authorize, and what Authorize was given
// survives a reload. Orders: the password flow as the demo customer, then POST /orders with the
// example body. Brands: log in with the example (the demo user), Authorize bearerAuth with the
// token it answered, GET /api/user/me (the access_token parameter has no example, which would win
// over Authorize); after a reload GET /api/user/me still answers 200. Auth: the direct login with
// the example provider (local) and credentials, Authorize xsrfHeader with the XSRF-TOKEN cookie,
// GET /auth/user.
func TestDocs_DefaultExamplesWork(t *testing.T) {
	t.Parallel()
	base, _ := testServer(t, "-mode", "dev", "-database-url", dbtest.NewURL(t))
	p := docsPage{t: t, ctx: browsertest.New(t, 4*time.Minute), base: base}
	// The browser starts under the test's context, not under a step's deadline, which would end it.
	if err := chromedp.Run(p.ctx); err != nil {
		t.Fatal(err)
	}
	p.run("start", chromedp.EmulateViewport(1280, 2000))

	// orders
	const createOrder = `#operations-orders-createOrder`
	p.open("orders", createOrder)
	p.authorizeOrders()
	if status, shown := p.tryItOut(createOrder); status != "201" || !strings.Contains(shown, "Paint the fence") {
		t.Fatalf("orders: POST /orders with the example shows %s: %.500s", status, shown)
	}

	// brands
	const login, getMe = `#operations-user-loginUser`, `#operations-user-getMe`
	p.open("brands", login)
	status, shown := p.tryItOut(login)
	token := regexp.MustCompile(`"token":\s*"([^"]+)"`).FindStringSubmatch(shown)
	if status != "200" || token == nil {
		t.Fatalf("brands: POST /api/user/login with the example shows %s: %.500s", status, shown)
	}
	p.authorize("bearerAuth", token[1])
	if status, shown := p.tryItOut(getMe); status != "200" || !strings.Contains(shown, "demo@brands.test") {
		t.Fatalf("brands: GET /api/user/me after Authorize shows %s: %.500s", status, shown)
	}
	p.open("brands", getMe) // a reload: the page starts again from the server
	if status, shown := p.tryItOut(getMe); status != "200" {
		t.Fatalf("brands: after a reload GET /api/user/me shows %s (the authorization was not kept): %.500s", status, shown)
	}

	// auth
	const authLogin, authUser = `#operations-login-authLoginPost`, `#operations-session-getAuthUser`
	p.open("auth", authLogin)
	if status, shown := p.tryItOut(authLogin); status != "200" || !strings.Contains(shown, `"name": "demo"`) {
		t.Fatalf("auth: POST /auth/{provider}/login with the examples shows %s: %.500s", status, shown)
	}
	var xsrf string
	p.run("read the XSRF-TOKEN cookie", chromedp.Evaluate(`decodeURIComponent((document.cookie.match(/(?:^|; )XSRF-TOKEN=([^;]*)/) || [])[1] || "")`, &xsrf))
	if xsrf == "" {
		t.Fatal("auth: the login set no XSRF-TOKEN cookie the page can read")
	}
	p.authorize("xsrfHeader", xsrf)
	if status, shown := p.tryItOut(authUser); status != "200" || !strings.Contains(shown, `"name": "demo"`) {
		t.Fatalf("auth: GET /auth/user after Authorize shows %s: %.500s", status, shown)
	}
}
