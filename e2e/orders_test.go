package e2e

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"strings"
	"testing"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/gen/ordersapi"
)

// ordersUser is one account of the orders API, with a generated client that carries its token.
type ordersUser struct {
	ordersapi.User
	api *ordersapi.ClientWithResponses
}

// ordersEnv is a running server seen through the orders API's generated client.
type ordersEnv struct {
	t      *testing.T
	base   string
	hc     *http.Client // validates every response against api/orders.yaml
	oauth  oauth2.Config
	anon   *ordersapi.ClientWithResponses
	ctxTok context.Context // carries hc for golang.org/x/oauth2
}

func newOrdersEnv(t *testing.T) *ordersEnv {
	t.Helper()
	return newOrdersEnvAt(t, startServer(t, orders).Base(orders))
}

// newOrdersEnvAt is newOrdersEnv for a server (or balancer) already running at base.
func newOrdersEnvAt(t *testing.T, base string) *ordersEnv {
	t.Helper()
	e := &ordersEnv{t: t, base: base, hc: httpClient(t, loadSpec(t, orders))}
	var err error
	id, secret := ordersClient()
	e.oauth = oauth2.Config{
		ClientID:     id,
		ClientSecret: secret,
		Endpoint:     oauth2.Endpoint{TokenURL: e.base + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader},
	}
	// golang.org/x/oauth2 takes its HTTP client from the context: the token requests are validated
	// against the spec like every other request.
	e.ctxTok = context.WithValue(context.Background(), oauth2.HTTPClient, e.hc)
	e.anon, err = ordersapi.NewClientWithResponses(e.base, ordersapi.WithHTTPClient(e.hc))
	if err != nil {
		t.Fatal(err)
	}
	return e
}

// signUp registers a user and logs in with the password grant. Against a running server the name
// gets this run's suffix (uniqueName).
func (e *ordersEnv) signUp(username string, role ordersapi.UserType) ordersUser {
	e.t.Helper()
	username = uniqueName(username)
	password := username + "-password"
	reg, err := e.anon.RegisterOrdersUserWithResponse(context.Background(), nil, ordersapi.RegisterOrdersUserJSONRequestBody{
		Username: username, Password: password, UserType: role,
	})
	if err != nil {
		e.t.Fatal(err)
	}
	if reg.JSON201 == nil {
		e.t.Fatalf("register %s: status %d: %s", username, reg.StatusCode(), reg.Body)
	}
	tok, err := e.oauth.PasswordCredentialsToken(e.ctxTok, username, password)
	if err != nil {
		e.t.Fatalf("password grant for %s: %v", username, err)
	}
	if tok.TokenType != "bearer" && tok.TokenType != "Bearer" {
		e.t.Fatalf("token type %q, want bearer", tok.TokenType)
	}
	api, err := ordersapi.NewClientWithResponses(e.base, ordersapi.WithHTTPClient(e.oauth.Client(e.ctxTok, tok)))
	if err != nil {
		e.t.Fatal(err)
	}
	return ordersUser{User: *reg.JSON201, api: api}
}

// balance reads the user's balance at GET /authenticated.
func (u ordersUser) balance(t *testing.T) *big.Rat {
	t.Helper()
	me, err := u.api.GetAuthenticatedUserWithResponse(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if me.JSON200 == nil {
		t.Fatalf("GET /authenticated: status %d: %s", me.StatusCode(), me.Body)
	}
	if me.JSON200.Id != u.Id {
		t.Fatalf("GET /authenticated answered user %d, want %d", me.JSON200.Id, u.Id)
	}
	return money(t, me.JSON200.Balance)
}

// money parses an exact decimal amount.
func money(t *testing.T, n json.Number) *big.Rat {
	t.Helper()
	r, ok := new(big.Rat).SetString(string(n))
	if !ok {
		t.Fatalf("amount %q is not a decimal number", n)
	}
	return r
}

func wantMoney(t *testing.T, what string, got *big.Rat, want string) {
	t.Helper()
	w, _ := new(big.Rat).SetString(want)
	if got.Cmp(w) != 0 {
		t.Errorf("%s = %s, want %s", what, got.FloatString(2), want)
	}
}

// TestOrders_LifecycleThroughGeneratedClient runs an order through every state with two users
// logged in through golang.org/x/oauth2's password grant, and checks where the money went.
func TestOrders_LifecycleThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	e := newOrdersEnv(t)
	ctx := context.Background()
	customer := e.signUp("e2e-customer", ordersapi.Customer)
	performer := e.signUp("e2e-performer", ordersapi.Performer)
	wantMoney(t, "new customer's balance", customer.balance(t), "500")
	wantMoney(t, "new performer's balance", performer.balance(t), "300")

	created, err := customer.api.CreateOrderWithResponse(ctx, nil, ordersapi.NewOrder{Description: "Paint the fence", Price: "120.50"})
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON201 == nil {
		t.Fatalf("create order: status %d: %s", created.StatusCode(), created.Body)
	}
	order := *created.JSON201
	if order.Status != ordersapi.WAITING || order.CustomerId != customer.Id || order.Performer != nil {
		t.Fatalf("created order = %+v, want WAITING, customer %d, no performer", order, customer.Id)
	}

	// The Location of the create resolves, for the customer; a stranger gets 404 as for no order.
	if loc := created.HTTPResponse.Header.Get("Location"); loc != fmt.Sprintf("/orders/%d", order.Id) {
		t.Fatalf("Location %q, want /orders/%d", loc, order.Id)
	}
	read, err := customer.api.GetOrderWithResponse(ctx, order.Id)
	if err != nil {
		t.Fatal(err)
	}
	if read.JSON200 == nil || read.JSON200.Id != order.Id || read.JSON200.Status != ordersapi.WAITING {
		t.Fatalf("GET /orders/%d as its customer: status %d: %s", order.Id, read.StatusCode(), read.Body)
	}
	stranger := e.signUp("e2e-stranger", ordersapi.Customer)
	if r, err := stranger.api.GetOrderWithResponse(ctx, order.Id); err != nil || r.JSON404 == nil {
		t.Fatalf("GET /orders/%d as a stranger: %v %s; want 404", order.Id, err, r.Body)
	}

	// Newest first: on a shared server (make contract BASE_URL=...) older waiting orders may fill pages.
	size, newest := ordersapi.Size(100), ordersapi.Sort(ordersapi.Iddesc)
	offered, err := performer.api.ListNewOrdersWithResponse(ctx, &ordersapi.ListNewOrdersParams{Size: &size, Sort: &newest})
	if err != nil {
		t.Fatal(err)
	}
	if offered.JSON200 == nil || !containsOrder(offered.JSON200.Content, order.Id) {
		t.Fatalf("new orders for performers (status %d) lack order %d: %s", offered.StatusCode(), order.Id, offered.Body)
	}

	step := func(name string, do func() (*ordersapi.Order, int, []byte, error), want ordersapi.OrderStatus) ordersapi.Order {
		t.Helper()
		got, status, body, err := do()
		if err != nil {
			t.Fatal(err)
		}
		if got == nil || got.Status != want {
			t.Fatalf("%s: status %d, body %s; want order in %s", name, status, body, want)
		}
		return *got
	}
	taken := step("take", func() (*ordersapi.Order, int, []byte, error) {
		r, err := performer.api.TakeOrderWithResponse(ctx, order.Id, nil)
		if err != nil {
			return nil, 0, nil, err
		}
		return r.JSON200, r.StatusCode(), r.Body, nil
	}, ordersapi.INPROGRESS)
	if taken.Performer == nil || taken.Performer.Id != performer.Id {
		t.Fatalf("taken order's performer = %+v, want %d", taken.Performer, performer.Id)
	}
	if r, err := performer.api.GetOrderWithResponse(ctx, order.Id); err != nil || r.JSON200 == nil || r.JSON200.Status != ordersapi.INPROGRESS {
		t.Fatalf("GET /orders/%d as its performer: %v %s; want it IN PROGRESS", order.Id, err, r.Body)
	}
	step("pass", func() (*ordersapi.Order, int, []byte, error) {
		r, err := performer.api.PassOrderWithResponse(ctx, order.Id, nil)
		if err != nil {
			return nil, 0, nil, err
		}
		return r.JSON200, r.StatusCode(), r.Body, nil
	}, ordersapi.READY)
	step("accept", func() (*ordersapi.Order, int, []byte, error) {
		r, err := customer.api.AcceptOrderWithResponse(ctx, order.Id, nil)
		if err != nil {
			return nil, 0, nil, err
		}
		return r.JSON200, r.StatusCode(), r.Body, nil
	}, ordersapi.COMPLETED)

	// 120.50 + 5% (6.025, rounded up to 6.03) leaves the customer, 120.50 reaches the performer.
	wantMoney(t, "customer's balance after paying", customer.balance(t), "373.47")
	wantMoney(t, "performer's balance after being paid", performer.balance(t), "420.50")

	// A second acceptance is refused with the documented body and moves nothing.
	again, err := customer.api.AcceptOrderWithResponse(ctx, order.Id, nil)
	if err != nil {
		t.Fatal(err)
	}
	if again.JSON409 == nil || again.JSON409.Code != "invalid_state" {
		t.Fatalf("second accept: status %d, body %s; want 409 invalid_state", again.StatusCode(), again.Body)
	}
	wantMoney(t, "customer's balance after the refused accept", customer.balance(t), "373.47")

	for _, u := range []ordersUser{customer, performer} {
		mine, err := u.api.ListUserOrdersWithResponse(ctx, u.Id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if mine.JSON200 == nil || len(mine.JSON200.Content) != 1 || mine.JSON200.Content[0].Status != ordersapi.COMPLETED {
			t.Fatalf("%s's orders: status %d, body %s; want the one COMPLETED order", u.Username, mine.StatusCode(), mine.Body)
		}
	}
}

// TestOrders_RefusalsThroughGeneratedClient checks the business refusals a client must handle, each
// with its documented status and Error body. Every request is valid against the spec, so Prism
// forwards them all to the server in contract mode.
func TestOrders_RefusalsThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	e := newOrdersEnv(t)
	ctx := context.Background()
	customer := e.signUp("e2e-poor-customer", ordersapi.Customer)
	other := e.signUp("e2e-other-customer", ordersapi.Customer)
	performer := e.signUp("e2e-busy-performer", ordersapi.Performer)

	t.Run("wrong password: invalid_grant", func(t *testing.T) {
		_, err := e.oauth.PasswordCredentialsToken(e.ctxTok, customer.Username, "not-the-password")
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || re.Response.StatusCode != http.StatusBadRequest || re.ErrorCode != "invalid_grant" {
			t.Fatalf("err = %v, want a 400 invalid_grant", err)
		}
	})
	t.Run("wrong client secret: invalid_client", func(t *testing.T) {
		bad := e.oauth
		bad.ClientSecret = "not-the-secret"
		_, err := bad.PasswordCredentialsToken(e.ctxTok, customer.Username, customer.Username+"-password")
		var re *oauth2.RetrieveError
		if !errors.As(err, &re) || re.Response.StatusCode != http.StatusUnauthorized || re.ErrorCode != "invalid_client" {
			t.Fatalf("err = %v, want a 401 invalid_client", err)
		}
	})
	t.Run("unknown token: 401", func(t *testing.T) {
		r, err := e.anon.GetAuthenticatedUserWithResponse(ctx, func(_ context.Context, req *http.Request) error {
			req.Header.Set("Authorization", "Bearer not-a-token")
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON401 == nil {
			t.Fatalf("status %d, body %s; want 401", r.StatusCode(), r.Body)
		}
	})
	t.Run("taken username: 409", func(t *testing.T) {
		// Usernames are unique regardless of letter case.
		r, err := e.anon.RegisterOrdersUserWithResponse(ctx, nil, ordersapi.NewUser{Username: strings.ToUpper(customer.Username), Password: "whatever-pass", UserType: ordersapi.Performer})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON409 == nil || r.JSON409.Code != "username_taken" {
			t.Fatalf("status %d, body %s; want 409 username_taken", r.StatusCode(), r.Body)
		}
	})

	t.Run("an order beyond the balance: 409, nothing created", func(t *testing.T) {
		// 500.00 cannot reserve 1000 + 50.
		r, err := customer.api.CreateOrderWithResponse(ctx, nil, ordersapi.NewOrder{Description: "Build a house", Price: "1000"})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON409 == nil || r.JSON409.Code != "insufficient_funds" {
			t.Fatalf("status %d, body %s; want 409 insufficient_funds", r.StatusCode(), r.Body)
		}
		mine, err := customer.api.ListUserOrdersWithResponse(ctx, customer.Id, nil)
		if err != nil || mine.JSON200 == nil || len(mine.JSON200.Content) != 0 {
			t.Fatalf("the refused order was created: %v %s", err, mine.Body)
		}
	})

	created, err := customer.api.CreateOrderWithResponse(ctx, nil, ordersapi.NewOrder{Description: "Build a shed", Price: "400"})
	if err != nil || created.JSON201 == nil {
		t.Fatalf("create order: %v %s", err, created.Body)
	}
	id := created.JSON201.Id

	t.Run("customer lists new orders: 403", func(t *testing.T) {
		r, err := customer.api.ListNewOrdersWithResponse(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON403 == nil {
			t.Fatalf("status %d, body %s; want 403", r.StatusCode(), r.Body)
		}
	})
	t.Run("performer creates an order: 403", func(t *testing.T) {
		r, err := performer.api.CreateOrderWithResponse(ctx, nil, ordersapi.NewOrder{Description: "x", Price: "1"})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON403 == nil {
			t.Fatalf("status %d, body %s; want 403", r.StatusCode(), r.Body)
		}
	})
	t.Run("someone else's order list: 403", func(t *testing.T) {
		r, err := other.api.ListUserOrdersWithResponse(ctx, customer.Id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON403 == nil {
			t.Fatalf("status %d, body %s; want 403", r.StatusCode(), r.Body)
		}
	})
	t.Run("unknown order: 404", func(t *testing.T) {
		r, err := performer.api.TakeOrderWithResponse(ctx, id+1000, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON404 == nil {
			t.Fatalf("status %d, body %s; want 404", r.StatusCode(), r.Body)
		}
	})
	t.Run("pass before take: 409", func(t *testing.T) {
		r, err := performer.api.PassOrderWithResponse(ctx, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		// The performer is not yet the order's performer: either refusal is documented.
		if r.JSON409 == nil && r.JSON403 == nil {
			t.Fatalf("status %d, body %s; want 409 or 403", r.StatusCode(), r.Body)
		}
	})

	// Run the order to READY; the customer pays from what the create reserved.
	if r, err := performer.api.TakeOrderWithResponse(ctx, id, nil); err != nil || r.JSON200 == nil {
		t.Fatalf("take: %v %s", err, r.Body)
	}
	if r, err := performer.api.PassOrderWithResponse(ctx, id, nil); err != nil || r.JSON200 == nil {
		t.Fatalf("pass: %v %s", err, r.Body)
	}
	t.Run("another customer accepts: 403", func(t *testing.T) {
		r, err := other.api.AcceptOrderWithResponse(ctx, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON403 == nil {
			t.Fatalf("status %d, body %s; want 403", r.StatusCode(), r.Body)
		}
	})
	t.Run("the reserved order is paid", func(t *testing.T) {
		r, err := customer.api.AcceptOrderWithResponse(ctx, id, nil)
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil || r.JSON200.Status != ordersapi.COMPLETED {
			t.Fatalf("status %d, body %s; want 200 COMPLETED", r.StatusCode(), r.Body)
		}
		wantMoney(t, "customer's balance", customer.balance(t), "80")
		wantMoney(t, "performer's balance", performer.balance(t), "700")
	})
}

func containsOrder(list []ordersapi.Order, id int64) bool {
	for _, o := range list {
		if o.Id == id {
			return true
		}
	}
	return false
}
