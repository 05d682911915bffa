package e2e

import (
	"archive/tar"
	"compress/gzip"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/kit/cors"
	"github.com/triadhq/triad/impl/testkit/browsertest"
)

// TestSDKCrossOrigin is a single-page app on its own origin using the packed SDK in headless
// Chromium (testdata/sdkpage). The server lists that origin in -cors-origins. Through the SDK the
// page signs a customer and a performer up and in on orders (password grant), places an order with
// an Idempotency-Key and sends it again (the repeat reads Idempotent-Replayed: true; both headers
// are in the CORS lists because the specs declare them), runs the order from WAITING to COMPLETED, registers and logs in on brands, and logs in on auth with its cookies and
// the X-XSRF-TOKEN header; the Go side then checks the order and the money through its own client.
// The same page served from an origin the server does not list can read nothing, and its JSON POST
// never reaches the server.
func TestSDKCrossOrigin(t *testing.T) {
	t.Parallel()
	pkg := unpackSDK(t, packSDK(t))
	page := newPageServer(t, pkg)
	stranger := newPageServer(t, pkg)

	// No surface behind Prism in contract mode: the browser talks to the server (or the balancer)
	// itself, since what is tested is the server's CORS answer.
	srv := startServerArgs(t, []string{"-cors-origins", page.URL})

	// What the browser relies on, seen from Go: the listed origin is echoed with credentials, the
	// other gets no CORS header at all.
	for origin, want := range map[string]string{page.URL: page.URL, stranger.URL: ""} {
		req, _ := http.NewRequest(http.MethodGet, srv.URL+"/auth/list", nil)
		req.Header.Set("Origin", origin)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if got := resp.Header.Get("Access-Control-Allow-Origin"); got != want {
			t.Errorf("Origin %s: Access-Control-Allow-Origin %q, want %q", origin, got, want)
		}
	}

	b := browsertest.New(t)
	var console []string
	chromedp.ListenTarget(b, func(ev any) {
		switch e := ev.(type) {
		case *runtime.EventConsoleAPICalled:
			for _, a := range e.Args {
				console = append(console, fmt.Sprintf("console.%s %s", e.Type, a.Value))
			}
		case *runtime.EventExceptionThrown:
			console = append(console, "exception "+e.ExceptionDetails.Error())
		}
	})
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("page console:\n%s", strings.Join(console, "\n"))
		}
	})

	const suffix = "x1"
	var got struct {
		Orders struct {
			OrderID  int64    `json:"orderId"`
			Statuses []string `json:"statuses"`
			Customer struct {
				ID       int64  `json:"id"`
				Username string `json:"username"`
				Password string `json:"password"`
			} `json:"customer"`
			PerformerID   int64   `json:"performerId"`
			Balance       string  `json:"balance"`
			RequestID     string  `json:"requestId"`
			FirstReplayed *string `json:"firstReplayed"`
			Repeat        struct {
				ID       int64   `json:"id"`
				Replayed *string `json:"replayed"`
			} `json:"repeat"`
		} `json:"orders"`
		Brands struct {
			Email string `json:"email"`
		} `json:"brands"`
		Auth struct {
			User          string            `json:"user"`
			ID            string            `json:"id"`
			WithoutHeader int               `json:"withoutHeader"`
			Status        map[string]string `json:"status"`
			JWTReadable   bool              `json:"jwtReadable"`
		} `json:"auth"`
	}
	flow := fmt.Sprintf(`window.runFlow({api: %q, clientId: %q, clientSecret: %q, suffix: %q})`,
		srv.URL, ordersClientID, ordersClientSecret, suffix)
	if err := chromedp.Run(b,
		chromedp.Navigate(page.URL+"/"),
		chromedp.Poll(`window.sdkLoaded === true`, nil),
		chromedp.Evaluate(flow, &got, awaitPromise),
	); err != nil {
		t.Fatalf("the page's flow through the SDK: %v", err)
	}

	if strings.Join(got.Orders.Statuses, ",") != "WAITING,IN PROGRESS,READY,COMPLETED" {
		t.Errorf("order statuses seen by the page: %v", got.Orders.Statuses)
	}
	// The customer started with 500 and paid the price 100 plus the 5% commission.
	if got.Orders.Balance != "395" {
		t.Errorf("the customer's balance seen by the page: %s, want 395", got.Orders.Balance)
	}
	if got.Orders.RequestID == "" {
		t.Errorf("the page could not read X-Request-Id (an exposed header)")
	}
	// The page sent Idempotency-Key (allowed by the preflight, from the specs) and read
	// Idempotent-Replayed (exposed, from the specs) on the repeat, which answered the same order.
	if got.Orders.FirstReplayed != nil || got.Orders.Repeat.ID != got.Orders.OrderID ||
		got.Orders.Repeat.Replayed == nil || *got.Orders.Repeat.Replayed != "true" {
		t.Errorf("the repeated POST /orders with one Idempotency-Key, seen by the page: first replayed %v, repeat %d replayed %v, want order %d replayed true",
			got.Orders.FirstReplayed, got.Orders.Repeat.ID, got.Orders.Repeat.Replayed, got.Orders.OrderID)
	}
	if got.Brands.Email != "web-"+suffix+"@brands.test" {
		t.Errorf("brands profile seen by the page: %q", got.Brands.Email)
	}
	if got.Auth.User != "demo" || !strings.HasPrefix(got.Auth.ID, "local_") {
		t.Errorf("auth user seen by the page: %q %q, want demo local_…", got.Auth.User, got.Auth.ID)
	}
	if got.Auth.WithoutHeader != http.StatusUnauthorized {
		t.Errorf("GET /auth/user with the cookie but without X-XSRF-TOKEN: %d, want 401", got.Auth.WithoutHeader)
	}
	if got.Auth.Status["status"] != "logged in" || got.Auth.Status["user"] != "demo" {
		t.Errorf("GET /auth/status seen by the page: %v", got.Auth.Status)
	}
	if got.Auth.JWTReadable {
		t.Errorf("the page could read the JWT cookie; it must be HttpOnly")
	}

	// The Go side sees what the page did: the order completed, owned by the customer, taken by the
	// performer.
	e := newOrdersEnvAt(t, srv.URL)
	customer := e.logIn(got.Orders.Customer.Username, got.Orders.Customer.Password)
	mine, err := customer.ListUserOrdersWithResponse(context.Background(), got.Orders.Customer.ID, &ordersapi.ListUserOrdersParams{})
	if err != nil {
		t.Fatal(err)
	}
	if mine.JSON200 == nil || len(mine.JSON200.Content) != 1 {
		t.Fatalf("the customer's orders: status %d: %s", mine.StatusCode(), mine.Body)
	}
	o := mine.JSON200.Content[0]
	if o.Id != got.Orders.OrderID || o.Status != ordersapi.COMPLETED || o.Performer == nil || o.Performer.Id != got.Orders.PerformerID {
		t.Errorf("the order from Go: %+v, want %d COMPLETED by performer %d", o, got.Orders.OrderID, got.Orders.PerformerID)
	}

	// From an origin the server does not list, fetch rejects: the page reads no answer.
	var refused map[string]string
	probe := fmt.Sprintf(`window.probe({api: %q, suffix: %q})`, srv.URL, suffix)
	if err := chromedp.Run(b,
		chromedp.Navigate(stranger.URL+"/"),
		chromedp.Poll(`window.sdkLoaded === true`, nil),
		chromedp.Evaluate(probe, &refused, awaitPromise),
	); err != nil {
		t.Fatalf("the probe from an unlisted origin: %v", err)
	}
	if refused["simple"] != "TypeError" || refused["preflighted"] != "TypeError" {
		t.Errorf("calls from an unlisted origin: %v, want both to fail with TypeError", refused)
	}
	// The preflight was refused, so the browser never sent the POST: the name is still free.
	reg, err := e.anon.RegisterOrdersUserWithResponse(context.Background(), nil, ordersapi.RegisterOrdersUserJSONRequestBody{
		Username: "web-probe-" + suffix, Password: "web-probe-password", UserType: ordersapi.Customer,
	})
	if err != nil {
		t.Fatal(err)
	}
	if reg.JSON201 == nil {
		t.Errorf("registering the unlisted page's username from Go: status %d (the refused POST reached the server?)", reg.StatusCode())
	}
}

// awaitPromise makes chromedp.Evaluate wait for the promise an async function returns.
func awaitPromise(p *runtime.EvaluateParams) *runtime.EvaluateParams { return p.WithAwaitPromise(true) }

// newPageServer serves the test page (testdata/sdkpage) at / and the unpacked SDK under /sdk/ from
// a new origin. It is never one of the dev-server origins dev mode allows anyway.
func newPageServer(t *testing.T, pkg string) *httptest.Server {
	t.Helper()
	mux := http.NewServeMux()
	mux.Handle("/sdk/", http.StripPrefix("/sdk/", http.FileServer(http.Dir(pkg))))
	mux.Handle("/", http.FileServer(http.Dir(filepath.Join("testdata", "sdkpage"))))
	for {
		s := httptest.NewServer(mux)
		if !slices.Contains(cors.DevOrigins(), s.URL) {
			t.Cleanup(s.Close)
			return s
		}
		s.Close()
	}
}

// unpackSDK extracts the npm tarball (its files under package/) into a temporary folder and returns
// the package's folder: what `npm install` would put in node_modules/@triad/sdk.
func unpackSDK(t *testing.T, tarball string) string {
	t.Helper()
	f, err := os.Open(tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Typeflag != tar.TypeReg {
			continue
		}
		name := filepath.Clean(h.Name)
		if !filepath.IsLocal(name) {
			t.Fatalf("tarball entry %q escapes the package", h.Name)
		}
		out := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(out, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return filepath.Join(dir, "package")
}

// logIn is a client of the orders API logged in as an existing user (the password grant).
func (e *ordersEnv) logIn(username, password string) *ordersapi.ClientWithResponses {
	e.t.Helper()
	tok, err := e.oauth.PasswordCredentialsToken(e.ctxTok, username, password)
	if err != nil {
		e.t.Fatalf("password grant for %s: %v", username, err)
	}
	api, err := ordersapi.NewClientWithResponses(e.base, ordersapi.WithHTTPClient(e.oauth.Client(e.ctxTok, tok)))
	if err != nil {
		e.t.Fatal(err)
	}
	return api
}
