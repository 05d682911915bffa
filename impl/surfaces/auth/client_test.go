package auth_test

import (
	"context"
	"testing"

	"github.com/triadhq/triad/gen/authapi"
)

// TestGeneratedClient_DirectLoginSession drives the session endpoints with the client generated
// from api/auth.yaml (over the validating, cookie-keeping transport): what an SDK user sees.
func TestGeneratedClient_DirectLoginSession(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	c, err := authapi.NewClientWithResponses(s.srv.URL, authapi.WithHTTPClient(s.client))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	list, err := c.ListAuthProvidersWithResponse(ctx)
	if err != nil || list.JSON200 == nil || len(*list.JSON200) != 2 {
		t.Fatalf("list: %v %s", err, list.Body)
	}
	bad, err := c.AuthLoginPostWithResponse(ctx, "local", nil, authapi.Credentials{User: "demo", Passwd: "nope"})
	if err != nil || bad.JSON403 == nil || bad.JSON403.Code != "bad_credentials" {
		t.Fatalf("bad login: %v %s", err, bad.Body)
	}
	in, err := c.AuthLoginPostWithResponse(ctx, "local", nil, authapi.Credentials{User: "demo", Passwd: "demo-password"})
	if err != nil || in.JSON200 == nil || in.JSON200.Name != "demo" {
		t.Fatalf("login: %v %s", err, in.Body)
	}
	xsrf := s.cookie("XSRF-TOKEN")
	u, err := c.GetAuthUserWithResponse(ctx, &authapi.GetAuthUserParams{XXSRFTOKEN: &xsrf})
	if err != nil || u.JSON200 == nil || u.JSON200.Id != in.JSON200.Id {
		t.Fatalf("user: %v %s", err, u.Body)
	}
	noXSRF, err := c.GetAuthUserWithResponse(ctx, &authapi.GetAuthUserParams{})
	if err != nil || noXSRF.JSON401 == nil {
		t.Fatalf("user without XSRF: %v %s", err, noXSRF.Body)
	}
	st, err := c.GetAuthStatusWithResponse(ctx, &authapi.GetAuthStatusParams{XXSRFTOKEN: &xsrf})
	if err != nil || st.JSON200 == nil || st.JSON200.User == nil || *st.JSON200.User != "demo" {
		t.Fatalf("status: %v %s", err, st.Body)
	}
	out, err := c.AuthLogoutPostWithResponse(ctx)
	if err != nil || out.JSON200 == nil || out.JSON200.Status != "logged out" {
		t.Fatalf("logout: %v %s", err, out.Body)
	}
}
