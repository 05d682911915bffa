package main

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/chromedp/cdproto/network"
	"github.com/chromedp/chromedp"

	"github.com/triadhq/triad/impl/testkit/browsertest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// setReactValue sets a form control's value the way typing would, so Swagger UI's React state
// sees it: the native value setter, then an input event.
const setReactValue = `((sel, v) => {
	const el = document.querySelector(sel);
	const proto = el instanceof HTMLTextAreaElement ? HTMLTextAreaElement.prototype : HTMLInputElement.prototype;
	Object.getOwnPropertyDescriptor(proto, "value").set.call(el, v);
	el.dispatchEvent(new Event("input", {bubbles: true}));
	return true;
})`

// TestDocs_SwaggerUITryItOut is what a reader of /docs does in a browser: the real server at
// 127.0.0.1 on a random port, Swagger UI on the orders spec, Authorize through the OAuth 2.0
// password flow with the dev client and a dev customer, then Try it out on POST /orders, Execute,
// and a 201 with the new order shown. Every request the page makes stays on the server (the Swagger
// UI assets are embedded in the binary; the machine running the docs may have no internet).
func TestDocs_SwaggerUITryItOut(t *testing.T) {
	t.Parallel()
	base, _ := testServer(t, "-mode", "dev", "-database-url", dbtest.NewURL(t))
	origin, err := url.Parse(base)
	if err != nil {
		t.Fatal(err)
	}

	b := browsertest.New(t, 4*time.Minute)
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

	const op = `#operations-orders-createOrder`
	description := "Swagger UI order " + strings.ReplaceAll(t.Name(), "/", "_")
	body, _ := json.Marshal(map[string]any{"description": description, "price": 42.5})
	p := docsPage{t: t, ctx: b, base: base}
	if err := chromedp.Run(b); err != nil {
		t.Fatal(err)
	}
	p.run("start", network.Enable(), chromedp.EmulateViewport(1280, 2000))
	p.open("orders", op)
	p.authorizeOrders()
	var status, shown string
	p.run("create an order",
		chromedp.Click(op+` .opblock-summary-control`, chromedp.ByQuery),
		chromedp.WaitVisible(op+` .try-out__btn`, chromedp.ByQuery),
		chromedp.Click(op+` .try-out__btn`, chromedp.ByQuery),
		chromedp.WaitVisible(op+` textarea.body-param__text`, chromedp.ByQuery),
		chromedp.Evaluate(setReactValue+`(`+jsString(op+` textarea.body-param__text`)+`, `+jsString(string(body))+`)`, nil),
		chromedp.Click(op+` .btn.execute`, chromedp.ByQuery),
		chromedp.WaitVisible(op+` .live-responses-table tr.response td.response-col_status`, chromedp.ByQuery),
		chromedp.Text(op+` .live-responses-table tr.response td.response-col_status`, &status, chromedp.ByQuery),
		chromedp.Text(op+` .live-responses-table tr.response td.response-col_description`, &shown, chromedp.ByQuery),
	)
	if strings.TrimSpace(status) != "201" {
		t.Fatalf("Execute POST /orders shows status %q, want 201; response %.500s", status, shown)
	}
	if !strings.Contains(shown, description) || !strings.Contains(shown, `"status": "WAITING"`) {
		t.Fatalf("the response shown is not the new order: %.500s", shown)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(offsite) > 0 {
		t.Fatalf("the docs page fetched from elsewhere than the server: %q", offsite)
	}
}

// jsString quotes s as a JavaScript string literal (JSON is a subset).
func jsString(s string) string {
	q, _ := json.Marshal(s)
	return string(q)
}

// brokenConn is a response writer whose connection broke: every write fails; it records the
// statuses it is given.
type brokenConn struct {
	header   http.Header
	statuses []int
}

func (b *brokenConn) Header() http.Header         { return b.header }
func (b *brokenConn) WriteHeader(code int)        { b.statuses = append(b.statuses, code) }
func (b *brokenConn) Write(p []byte) (int, error) { return 0, errors.New("broken pipe") }

// TestFirstStatus: what the Swagger UI's file server does when a client hangs up mid-file (a 200
// and a failed write, then http.Error's 500) reaches the connection as the 200 alone, and its
// error text is not written.
func TestFirstStatus(t *testing.T) {
	t.Parallel()
	conn := &brokenConn{header: http.Header{}}
	w := &firstStatus{ResponseWriter: conn}
	w.WriteHeader(http.StatusOK)
	if _, err := w.Write([]byte("window.SwaggerUIBundle = ")); err == nil {
		t.Fatal("the failed write reported no error")
	}
	http.Error(w, "Internal Server Error", http.StatusInternalServerError)
	if len(conn.statuses) != 1 || conn.statuses[0] != http.StatusOK {
		t.Fatalf("statuses sent %v, want [200]", conn.statuses)
	}
	if _, err := w.Write([]byte("more")); !errors.Is(err, errWriteFailed) {
		t.Fatalf("write after a failed one: %v, want errWriteFailed", err)
	}
}
