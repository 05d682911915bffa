package main

import (
	"context"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/triadhq/triad/impl/testkit/patience"
)

// setReactValue sets a form control's value the way typing would, so Swagger UI's React state
// sees it: the native value setter, then an input event.
const setReactValue = `((sel, v) => {
	const el = document.querySelector(sel);
	if (!el) throw new Error("no " + sel);
	const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
	Object.getOwnPropertyDescriptor(proto, "value").set.call(el, v);
	el.dispatchEvent(new Event("input", {bubbles: true}));
	return true;
})`

// authorizeScheme fills one security scheme of Swagger UI's Authorize dialog (by its name, for the
// apiKey and http schemes whose block holds one input) and applies it; a scheme applied before is
// logged out of first.
const authorizeScheme = `((name, value) => {
	const box = [...document.querySelectorAll(".modal-ux .auth-container")]
		.find((c) => (c.querySelector("h4") || {}).textContent.includes(name));
	if (!box) throw new Error("no Authorize block for " + name);
	const logout = [...box.querySelectorAll("button")].find((b) => b.textContent.trim() === "Logout");
	if (logout) {
		logout.click();
		return false;
	}
	const input = box.querySelector("input");
	Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value").set.call(input, value);
	input.dispatchEvent(new Event("input", {bubbles: true}));
	box.querySelector("button.authorize").click();
	return true;
})`

// executeOperation is Try it out on one operation, in the page, awaited as one step: expand its
// block, turn on Try it out (each only when not yet done), pick the request body's example named
// example when one is named (from the body's list of examples, as a visitor would; the list's
// first is the default), clear an earlier response, Execute, wait for the answer, read its status
// and what is shown, and close the block again (so the page Swagger UI re-renders on every change
// stays small).
const executeOperation = `(async (sel, example) => {
	const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
	const until = async (f, what) => {
		for (let i = 0; i < 1200; i++) {
			const v = f();
			if (v) return v;
			await sleep(50);
		}
		throw new Error("timed out waiting for " + what + " in " + sel);
	};
	const op = document.querySelector(sel);
	if (!op) throw new Error("no operation " + sel);
	if (!op.classList.contains("is-open")) op.querySelector(".opblock-summary-control").click();
	const tryOut = await until(() => op.querySelector(".try-out__btn"), "Try it out");
	if (!tryOut.classList.contains("cancel")) tryOut.click();
	if (example) {
		const pick = await until(() => op.querySelector(".opblock-section-request-body select.examples-select-element"), "the list of examples");
		if (![...pick.options].some((o) => o.value === example)) throw new Error("no example " + example + " in " + sel);
		Object.getOwnPropertyDescriptor(HTMLSelectElement.prototype, "value").set.call(pick, example);
		pick.dispatchEvent(new Event("change", {bubbles: true}));
		await until(() => pick.value === example, "the example " + example + " to be picked");
	}
	const clear = op.querySelector(".btn-clear");
	if (clear) clear.click();
	const execute = await until(() => !op.querySelector(".live-responses-table") && op.querySelector(".btn.execute"), "Execute");
	execute.click();
	const status = await until(() => op.querySelector(".live-responses-table tr.response td.response-col_status"), "the response");
	const shown = op.querySelector(".live-responses-table tr.response td.response-col_description");
	const answer = [status.innerText.trim(), shown ? shown.innerText : ""];
	op.querySelector(".opblock-summary-control").click();
	await until(() => !op.querySelector(".opblock-body"), "the block to close");
	return answer;
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
		ctx, cancel := context.WithTimeout(p.ctx, patience.Bound(time.Minute))
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

// tryItOut executes operation op (a CSS selector of its block) with what Swagger UI fills in (the
// spec's examples) and returns the status and the response shown. An operation tried before is
// executed again, its earlier response cleared first.
func (p docsPage) tryItOut(op string) (status, shown string) {
	p.t.Helper()
	return p.tryItOutWith(op, "")
}

// tryItOutWith is tryItOut with the request body's example named example picked from its list
// first ("" keeps the default, the list's first).
func (p docsPage) tryItOutWith(op, example string) (status, shown string) {
	p.t.Helper()
	var answer []string
	p.run("try "+op, chromedp.Evaluate(executeOperation+`(`+jsString(op)+`, `+jsString(example)+`)`, &answer,
		func(e *runtime.EvaluateParams) *runtime.EvaluateParams { return e.WithAwaitPromise(true) }))
	if len(answer) != 2 {
		p.t.Fatalf("try %s: the page answered %q", op, answer)
	}
	return answer[0], answer[1]
}

// authorize opens the Authorize dialog, applies value to the scheme named (logging out of it
// first when it was applied before), and closes it.
func (p docsPage) authorize(scheme, value string) {
	p.t.Helper()
	var applied bool
	p.run("authorize "+scheme,
		chromedp.Click(`.auth-wrapper .authorize`, chromedp.ByQuery),
		chromedp.WaitVisible(`.modal-ux .auth-container`, chromedp.ByQuery),
		chromedp.ActionFunc(func(ctx context.Context) error {
			for !applied {
				if err := chromedp.Evaluate(authorizeScheme+`(`+jsString(scheme)+`, `+jsString(value)+`)`, &applied).Do(ctx); err != nil {
					return err
				}
			}
			return nil
		}),
		// Applied: the scheme's block offers to log out instead.
		chromedp.Poll(`[...document.querySelectorAll(".modal-ux .auth-container")].some((c) =>
			(c.querySelector("h4") || {}).textContent.includes(`+jsString(scheme)+`) && c.innerText.includes("Logout"))`, nil),
		chromedp.Click(`.modal-ux .close-modal`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`.modal-ux`, chromedp.ByQuery),
	)
}

// authorizeOrders logs in on the orders page's Authorize dialog with the OAuth 2.0 password flow,
// as user with the dev client, logging out whoever was authorized before (on this page or, kept by
// persistAuthorization, on an earlier load).
func (p docsPage) authorizeOrders(user, password string) {
	p.t.Helper()
	set := func(sel, v string) chromedp.Action {
		return chromedp.Evaluate(setReactValue+`(`+jsString(sel)+`, `+jsString(v)+`)`, nil)
	}
	p.run("orders authorize "+user,
		chromedp.Click(`.auth-wrapper .authorize`, chromedp.ByQuery),
		chromedp.WaitVisible(`.modal-ux .auth-container`, chromedp.ByQuery),
		// Log out of the password flow first: the user authorized before, on this page or on an
		// earlier load (persistAuthorization keeps it across reloads).
		chromedp.Evaluate(`(() => {
			const box = [...document.querySelectorAll(".modal-ux .auth-container")].find((c) => c.innerText.includes("passwordGrant"));
			const b = box && [...box.querySelectorAll("button")].find((b) => b.textContent.trim() === "Logout");
			if (b) b.click();
			return true;
		})()`, nil),
		chromedp.WaitVisible(`#oauth_username`, chromedp.ByQuery),
		set(`#oauth_username`, user),
		set(`#oauth_password`, password),
		set(`#client_id_password`, "triad-orders"),
		set(`#client_secret_password`, "triad-orders-secret"),
		chromedp.Click(`button[aria-label="Apply given OAuth2 credentials"]`, chromedp.ByQuery),
		// Authorized: the password flow's block swaps its inputs for a Logout button (an error
		// would be shown in the block instead).
		chromedp.WaitNotPresent(`#oauth_username`, chromedp.ByQuery),
		chromedp.WaitVisible(`button[aria-label="Remove authorization"]`, chromedp.ByQuery),
		chromedp.Click(`.modal-ux .close-modal`, chromedp.ByQuery),
		chromedp.WaitNotPresent(`.modal-ux`, chromedp.ByQuery),
	)
}
