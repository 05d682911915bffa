package e2e

import (
	"context"
	"net/http"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// Dev-mode data of the brands API (impl/surfaces/brands/devdata): brand …0001 is available, …000b is not,
// …000c is featured but not available (so in the featured list, not in the list of available brands).
const (
	availableBrand           = "655e1f2a0000000000000001"
	unavailableBrand         = "655e1f2a000000000000000b"
	featuredUnavailableBrand = "655e1f2a000000000000000c"
)

func newBrandsClient(t *testing.T) *brandsapi.ClientWithResponses {
	t.Helper()
	srv := startServer(t, brands)
	api, err := brandsapi.NewClientWithResponses(srv.Base(brands), brandsapi.WithHTTPClient(httpClient(t, loadSpec(t, brands))))
	if err != nil {
		t.Fatal(err)
	}
	return api
}

// tokenParam is the access_token query parameter the user routes take.
func tokenParam(tok string) *brandsapi.AccessToken { return &tok }

// subscriberCount reads a brand's subscriberCount.
func subscriberCount(t *testing.T, api *brandsapi.ClientWithResponses, id string) int32 {
	t.Helper()
	b, err := api.GetBrandWithResponse(context.Background(), id)
	if err != nil {
		t.Fatal(err)
	}
	if b.JSON200 == nil {
		t.Fatalf("GET /api/brand/%s: status %d, body %s", id, b.StatusCode(), b.Body)
	}
	return b.JSON200.SubscriberCount
}

// TestBrands_UserJourneyThroughGeneratedClient registers with a form body as the original API
// took it, logs in, subscribes and unsubscribes, edits the profile, changes the password and logs
// out, checking what each step changes for the user and for the brand.
func TestBrands_UserJourneyThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	api := newBrandsClient(t)
	ctx := context.Background()

	reg, err := api.RegisterBrandsUserWithFormdataBodyWithResponse(ctx, nil, brandsapi.RegisterRequest{Name: "Grace", Email: "grace@e2e.test", Password: "grace-password"})
	if err != nil {
		t.Fatal(err)
	}
	if reg.JSON201 == nil || reg.JSON201.Token == "" || len(reg.JSON201.Subscriptions) != 0 {
		t.Fatalf("register: status %d, body %s; want a new user with a token and no subscriptions", reg.StatusCode(), reg.Body)
	}
	taken, err := api.RegisterBrandsUserWithFormdataBodyWithResponse(ctx, nil, brandsapi.RegisterRequest{Name: "Other", Email: "GRACE@e2e.test", Password: "other-password"})
	if err != nil {
		t.Fatal(err)
	}
	if taken.JSON409 == nil || taken.JSON409.Code != "email_taken" {
		t.Fatalf("register with a taken email: status %d, body %s; want 409 email_taken", taken.StatusCode(), taken.Body)
	}

	login, err := api.LoginUserWithFormdataBodyWithResponse(ctx, brandsapi.LoginRequest{Email: "grace@e2e.test", Password: "grace-password"})
	if err != nil {
		t.Fatal(err)
	}
	if login.JSON200 == nil || login.JSON200.Token == "" {
		t.Fatalf("login: status %d, body %s", login.StatusCode(), login.Body)
	}
	tok := login.JSON200.Token

	list, err := api.ListBrandsWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if list.JSON200 == nil {
		t.Fatalf("brand list: status %d, body %s", list.StatusCode(), list.Body)
	}
	for _, b := range *list.JSON200 {
		if !b.Availability || b.UnderscoreId == unavailableBrand {
			t.Fatalf("the list of available brands holds %s (availability %v)", b.UnderscoreId, b.Availability)
		}
	}
	featured, err := api.ListFeaturedBrandsWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if featured.JSON200 == nil || len(*featured.JSON200) == 0 {
		t.Fatalf("featured list: status %d, body %s; want some brands", featured.StatusCode(), featured.Body)
	}
	withdrawnShown := false
	for _, b := range *featured.JSON200 {
		if !b.IsFeatured {
			t.Fatalf("featured list holds %s, which is not featured", b.UnderscoreId)
		}
		withdrawnShown = withdrawnShown || (b.UnderscoreId == featuredUnavailableBrand && !b.Availability)
	}
	if !withdrawnShown {
		t.Fatalf("featured list lacks the featured but unavailable brand %s: %s", featuredUnavailableBrand, featured.Body)
	}

	before := subscriberCount(t, api, availableBrand)
	for _, want := range []string{"Successfully Subscribed", "Already Subscribed"} {
		sub, err := api.SubscribeBrandWithResponse(ctx, availableBrand, &brandsapi.SubscribeBrandParams{AccessToken: tokenParam(tok)})
		if err != nil {
			t.Fatal(err)
		}
		if sub.JSON200 == nil || sub.JSON200.Message != want {
			t.Fatalf("subscribe: status %d, body %s; want %q", sub.StatusCode(), sub.Body, want)
		}
	}
	if got := subscriberCount(t, api, availableBrand); got != before+1 {
		t.Fatalf("subscriberCount = %d after subscribing twice, want %d", got, before+1)
	}

	// The token works as a bearer header too.
	me, err := api.GetMeWithResponse(ctx, nil, func(_ context.Context, req *http.Request) error {
		req.Header.Set("Authorization", "Bearer "+tok)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if me.JSON200 == nil || me.JSON200.IsAdmin || len(me.JSON200.Subscriptions) != 1 || me.JSON200.Subscriptions[0].UnderscoreId != availableBrand {
		t.Fatalf("me: status %d, body %s; want a non-admin with the one subscription", me.StatusCode(), me.Body)
	}

	closed, err := api.SubscribeBrandWithResponse(ctx, unavailableBrand, &brandsapi.SubscribeBrandParams{AccessToken: tokenParam(tok)})
	if err != nil {
		t.Fatal(err)
	}
	if closed.JSON409 == nil || closed.JSON409.Code != "brand_unavailable" {
		t.Fatalf("subscribe to an unavailable brand: status %d, body %s; want 409 brand_unavailable", closed.StatusCode(), closed.Body)
	}
	unknown, err := api.SubscribeBrandWithResponse(ctx, "655e1f2affffffffffffffff", &brandsapi.SubscribeBrandParams{AccessToken: tokenParam(tok)})
	if err != nil {
		t.Fatal(err)
	}
	if unknown.JSON404 == nil {
		t.Fatalf("subscribe to an unknown brand: status %d, body %s; want 404", unknown.StatusCode(), unknown.Body)
	}

	for _, want := range []string{"Successfully Unsubscribed", "Not Subscribed"} {
		un, err := api.UnsubscribeBrandWithResponse(ctx, availableBrand, &brandsapi.UnsubscribeBrandParams{AccessToken: tokenParam(tok)})
		if err != nil {
			t.Fatal(err)
		}
		if un.JSON200 == nil || un.JSON200.Message != want {
			t.Fatalf("unsubscribe: status %d, body %s; want %q", un.StatusCode(), un.Body, want)
		}
	}
	if got := subscriberCount(t, api, availableBrand); got != before {
		t.Fatalf("subscriberCount = %d after unsubscribing, want %d", got, before)
	}

	name := "Grace Hopper"
	edit, err := api.EditProfileWithFormdataBodyWithResponse(ctx, &brandsapi.EditProfileParams{AccessToken: tokenParam(tok)}, brandsapi.EditRequest{Name: &name})
	if err != nil {
		t.Fatal(err)
	}
	if edit.JSON200 == nil {
		t.Fatalf("edit: status %d, body %s", edit.StatusCode(), edit.Body)
	}
	me, err = api.GetMeWithResponse(ctx, &brandsapi.GetMeParams{AccessToken: tokenParam(tok)})
	if err != nil {
		t.Fatal(err)
	}
	if me.JSON200 == nil || me.JSON200.Name != name || me.JSON200.Token != tok {
		t.Fatalf("me after edit: status %d, body %s; want name %q and the presented token", me.StatusCode(), me.Body, name)
	}

	reset, err := api.ResetPasswordWithFormdataBodyWithResponse(ctx, &brandsapi.ResetPasswordParams{AccessToken: tokenParam(tok)},
		brandsapi.ResetRequest{CurrentPassword: "grace-password", NewPassword: "grace-new-password"})
	if err != nil {
		t.Fatal(err)
	}
	if reset.JSON200 == nil {
		t.Fatalf("reset: status %d, body %s", reset.StatusCode(), reset.Body)
	}
	old, err := api.LoginUserWithFormdataBodyWithResponse(ctx, brandsapi.LoginRequest{Email: "grace@e2e.test", Password: "grace-password"})
	if err != nil {
		t.Fatal(err)
	}
	if old.JSON401 == nil || old.JSON401.Code != "invalid_credentials" {
		t.Fatalf("login with the old password: status %d, body %s; want 401 invalid_credentials", old.StatusCode(), old.Body)
	}

	out, err := api.LogoutUserWithResponse(ctx, &brandsapi.LogoutUserParams{AccessToken: tokenParam(tok)})
	if err != nil {
		t.Fatal(err)
	}
	if out.JSON200 == nil {
		t.Fatalf("logout: status %d, body %s", out.StatusCode(), out.Body)
	}
	// Behind a balancer (make test-replicas) another replica may answer before PostgreSQL's
	// notification of the deletion reached it: within milliseconds, so 2 s is ample.
	loggedOut := time.Now()
	for {
		gone, err := api.GetMeWithResponse(ctx, &brandsapi.GetMeParams{AccessToken: tokenParam(tok)})
		if err != nil {
			t.Fatal(err)
		}
		if gone.JSON401 != nil {
			break
		}
		if gone.StatusCode() != http.StatusOK || time.Since(loggedOut) > patience.Bound(2*time.Second) {
			t.Fatalf("me with a logged-out token %v after the logout: status %d, body %s; want 401",
				time.Since(loggedOut).Round(time.Millisecond), gone.StatusCode(), gone.Body)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestBrands_LogoutEndsEveryToken: brands-api.md, authentication rule 3, "logging out resets the
// user token, so the old token stops being the user token". Two logins (two devices) both work
// until one logs out; then neither does, while another user's token still does.
func TestBrands_LogoutEndsEveryToken(t *testing.T) {
	t.Parallel()
	api := newBrandsClient(t)
	ctx := context.Background()
	email := uniqueName("devices") + "@e2e.test"
	reg, err := api.RegisterBrandsUserWithFormdataBodyWithResponse(ctx, nil, brandsapi.RegisterRequest{Name: "Devices", Email: email, Password: "devices-password"})
	if err != nil {
		t.Fatal(err)
	}
	if reg.JSON201 == nil {
		t.Fatalf("register: status %d, body %s", reg.StatusCode(), reg.Body)
	}
	login := func(email, password string) string {
		t.Helper()
		r, err := api.LoginUserWithFormdataBodyWithResponse(ctx, brandsapi.LoginRequest{Email: email, Password: password})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil {
			t.Fatalf("login %s: status %d, body %s", email, r.StatusCode(), r.Body)
		}
		return r.JSON200.Token
	}
	me := func(tok string) int {
		t.Helper()
		r, err := api.GetMeWithResponse(ctx, &brandsapi.GetMeParams{AccessToken: tokenParam(tok)})
		if err != nil {
			t.Fatal(err)
		}
		return r.StatusCode()
	}
	phone, laptop := login(email, "devices-password"), login(email, "devices-password")
	otherEmail := uniqueName("bystander") + "@e2e.test"
	if r, err := api.RegisterBrandsUserWithFormdataBodyWithResponse(ctx, nil, brandsapi.RegisterRequest{Name: "Bystander", Email: otherEmail, Password: "bystander-password"}); err != nil || r.JSON201 == nil {
		t.Fatalf("register another user: %v %v", err, r)
	}
	demo := login(otherEmail, "bystander-password")
	for _, tok := range []string{reg.JSON201.Token, phone, laptop} {
		if st := me(tok); st != http.StatusOK {
			t.Fatalf("a signed-in device is refused before any logout: %d", st)
		}
	}
	out, err := api.LogoutUserWithResponse(ctx, &brandsapi.LogoutUserParams{AccessToken: tokenParam(phone)})
	if err != nil {
		t.Fatal(err)
	}
	if out.JSON200 == nil {
		t.Fatalf("logout: status %d, body %s", out.StatusCode(), out.Body)
	}
	// Behind a balancer (make test-replicas) another replica may answer before PostgreSQL's
	// notification of the deletions reached it: within milliseconds, so 2 s is ample (stretched
	// with the load on a busy machine: patience.Bound).
	loggedOut := time.Now()
	for name, tok := range map[string]string{"register's": reg.JSON201.Token, "the logged-out": phone, "the other device's": laptop} {
		for st := me(tok); st != http.StatusUnauthorized; st = me(tok) {
			if st != http.StatusOK || time.Since(loggedOut) > patience.Bound(2*time.Second) {
				t.Fatalf("%s token %v after the logout: %d, want 401", name, time.Since(loggedOut).Round(time.Millisecond), st)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	if st := me(demo); st != http.StatusOK {
		t.Errorf("another user's token after the logout: %d, want 200", st)
	}
}

// TestBrands_AdminThroughGeneratedClient manages a brand as the admin (dev mode's, or the one
// brandsAdmin names against a running server) and checks that a plain user may not, and that
// availability governs subscriptions. It needs no prepared data: its user and brand are its own.
func TestBrands_AdminThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	api := newBrandsClient(t)
	ctx := context.Background()
	login := func(email, password string) string {
		t.Helper()
		r, err := api.LoginUserWithFormdataBodyWithResponse(ctx, brandsapi.LoginRequest{Email: email, Password: password})
		if err != nil {
			t.Fatal(err)
		}
		if r.JSON200 == nil {
			t.Fatalf("login %s: status %d, body %s", email, r.StatusCode(), r.Body)
		}
		return r.JSON200.Token
	}
	admin := login(brandsAdmin())
	userEmail := uniqueName("brand-fan") + "@e2e.test"
	if r, err := api.RegisterBrandsUserWithFormdataBodyWithResponse(ctx, nil, brandsapi.RegisterRequest{Name: "Brand Fan", Email: userEmail, Password: "brand-fan-password"}); err != nil || r.JSON201 == nil {
		t.Fatalf("register a user: %v %v", err, r)
	}
	user := login(userEmail, "brand-fan-password")

	url := "https://fabrikam.example.com"
	brand := brandsapi.BrandCreate{Name: "Fabrikam", Url: &url, Products: &[]brandsapi.Product{{"name": "Widget", "price": 3.5}}}
	refused, err := api.CreateBrandWithResponse(ctx, &brandsapi.CreateBrandParams{AccessToken: tokenParam(user)}, brand)
	if err != nil {
		t.Fatal(err)
	}
	if refused.JSON403 == nil {
		t.Fatalf("create by a non-admin: status %d, body %s; want 403", refused.StatusCode(), refused.Body)
	}
	created, err := api.CreateBrandWithResponse(ctx, &brandsapi.CreateBrandParams{AccessToken: tokenParam(admin)}, brand)
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON201 == nil || created.JSON201.SubscriberCount != 0 || !created.JSON201.Availability || created.JSON201.IsFeatured {
		t.Fatalf("create: status %d, body %s; want an available, unfeatured brand without subscribers", created.StatusCode(), created.Body)
	}
	id := created.JSON201.UnderscoreId

	sub, err := api.SubscribeBrandWithResponse(ctx, id, &brandsapi.SubscribeBrandParams{AccessToken: tokenParam(user)})
	if err != nil || sub.JSON200 == nil {
		t.Fatalf("subscribe to the new brand: %v %s", err, sub.Body)
	}
	if got := subscriberCount(t, api, id); got != 1 {
		t.Fatalf("subscriberCount = %d, want 1", got)
	}

	off := false
	upd, err := api.UpdateBrandWithResponse(ctx, id, &brandsapi.UpdateBrandParams{AccessToken: tokenParam(admin)}, brandsapi.BrandUpdate{Availability: &off})
	if err != nil {
		t.Fatal(err)
	}
	if upd.JSON200 == nil || upd.JSON200.Availability || upd.JSON200.SubscriberCount != 1 {
		t.Fatalf("update: status %d, body %s; want unavailable with its subscriber kept", upd.StatusCode(), upd.Body)
	}
	other, err := api.RegisterBrandsUserWithFormdataBodyWithResponse(ctx, nil, brandsapi.RegisterRequest{Name: "Late", Email: uniqueName("late") + "@e2e.test", Password: "late-password"})
	if err != nil || other.JSON201 == nil {
		t.Fatalf("register: %v %s", err, other.Body)
	}
	late, err := api.SubscribeBrandWithResponse(ctx, id, &brandsapi.SubscribeBrandParams{AccessToken: tokenParam(other.JSON201.Token)})
	if err != nil {
		t.Fatal(err)
	}
	if late.JSON409 == nil {
		t.Fatalf("subscribe to the withdrawn brand: status %d, body %s; want 409", late.StatusCode(), late.Body)
	}

	del, err := api.DeleteBrandWithResponse(ctx, id, &brandsapi.DeleteBrandParams{AccessToken: tokenParam(admin)})
	if err != nil {
		t.Fatal(err)
	}
	if del.JSON200 == nil {
		t.Fatalf("delete: status %d, body %s", del.StatusCode(), del.Body)
	}
	gone, err := api.GetBrandWithResponse(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if gone.JSON404 == nil {
		t.Fatalf("deleted brand: status %d, body %s; want 404", gone.StatusCode(), gone.Body)
	}
	me, err := api.GetMeWithResponse(ctx, &brandsapi.GetMeParams{AccessToken: tokenParam(user)})
	if err != nil {
		t.Fatal(err)
	}
	if me.JSON200 == nil {
		t.Fatalf("me: status %d, body %s", me.StatusCode(), me.Body)
	}
	for _, b := range me.JSON200.Subscriptions {
		if b.UnderscoreId == id {
			t.Fatalf("the deleted brand is still among the user's subscriptions")
		}
	}
}
