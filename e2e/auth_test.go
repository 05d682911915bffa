package e2e

import (
	"context"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/triadhq/triad/gen/authapi"
)

// authRedirectsOrCookies selects the auth routes that redirect or set several cookies (logins,
// callbacks, logouts), which Prism's proxy cannot pass through (see httpClientVia): in contract
// mode they go to the server directly, the rest through Prism.
func authRedirectsOrCookies(r *http.Request) bool {
	p := r.URL.Path
	return strings.HasSuffix(p, "/login") || strings.HasSuffix(p, "/callback") || strings.HasSuffix(p, "/logout")
}

// authEnv is a running server seen through the auth service's generated client, with a browser-like
// cookie jar.
type authEnv struct {
	base string
	jar  *cookiejar.Jar
	api  *authapi.ClientWithResponses
}

func newAuthEnv(t *testing.T) *authEnv {
	t.Helper()
	srv := startServer(t, auth)
	jar, err := cookiejar.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	hc := httpClientVia(t, loadSpec(t, auth), srv, authRedirectsOrCookies)
	hc.Jar = jar
	api, err := authapi.NewClientWithResponses(srv.Base(auth), authapi.WithHTTPClient(hc))
	if err != nil {
		t.Fatal(err)
	}
	return &authEnv{base: srv.Base(auth), jar: jar, api: api}
}

// cookie returns the value of the named cookie the jar would send to the server, or "".
func (e *authEnv) cookie(t *testing.T, name string) string {
	t.Helper()
	u, err := url.Parse(e.base)
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range e.jar.Cookies(u) {
		if c.Name == name {
			return c.Value
		}
	}
	return ""
}

// loggedInAs checks GET /auth/user (cookie plus X-XSRF-TOKEN, as a browser app sends them) and
// GET /auth/status.
func (e *authEnv) loggedInAs(t *testing.T, name string) authapi.User {
	t.Helper()
	ctx := context.Background()
	xsrf := e.cookie(t, "XSRF-TOKEN")
	if xsrf == "" || e.cookie(t, "JWT") == "" {
		t.Fatalf("no JWT and XSRF-TOKEN cookies after login")
	}
	u, err := e.api.GetAuthUserWithResponse(ctx, &authapi.GetAuthUserParams{XXSRFTOKEN: &xsrf})
	if err != nil {
		t.Fatal(err)
	}
	if u.JSON200 == nil || u.JSON200.Name != name {
		t.Fatalf("GET /auth/user: status %d, body %s; want user %s", u.StatusCode(), u.Body, name)
	}
	st, err := e.api.GetAuthStatusWithResponse(ctx, &authapi.GetAuthStatusParams{XXSRFTOKEN: &xsrf})
	if err != nil {
		t.Fatal(err)
	}
	if st.JSON200 == nil || st.JSON200.Status != authapi.StatusStatusLoggedIn || st.JSON200.User == nil || *st.JSON200.User != name {
		t.Fatalf("GET /auth/status: status %d, body %s; want logged in as %s", st.StatusCode(), st.Body, name)
	}
	return *u.JSON200
}

// logout logs out and checks the session is gone.
func (e *authEnv) logout(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	out, err := e.api.AuthLogoutWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if out.JSON200 == nil || out.JSON200.Status != authapi.StatusStatusLoggedOut {
		t.Fatalf("logout: status %d, body %s", out.StatusCode(), out.Body)
	}
	if e.cookie(t, "JWT") != "" {
		t.Fatalf("the JWT cookie survived the logout")
	}
	st, err := e.api.GetAuthStatusWithResponse(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.JSON200 == nil || st.JSON200.Status != authapi.StatusStatusNotLoggedIn {
		t.Fatalf("status after logout: %d %s", st.StatusCode(), st.Body)
	}
}

// TestAuth_DirectLoginThroughGeneratedClient logs in with a direct provider's account (dev mode's
// demo user of local, or the one authAccount names against a running server), uses the session the
// way a browser app does, and logs out.
func TestAuth_DirectLoginThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	ctx := context.Background()
	provider, user, password := authAccount()

	list, err := e.api.ListAuthProvidersWithResponse(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if list.JSON200 == nil || (remoteURL == "" && strings.Join(*list.JSON200, ",") != "dev,local") ||
		!slices.Contains(*list.JSON200, provider) {
		t.Fatalf("providers: status %d, body %s; want %s (dev and local in dev mode)", list.StatusCode(), list.Body, provider)
	}

	wrong, err := e.api.AuthLoginPostWithResponse(ctx, provider, nil, authapi.Credentials{User: user, Passwd: "not-the-password"})
	if err != nil {
		t.Fatal(err)
	}
	if wrong.JSON403 == nil || wrong.JSON403.Code != "bad_credentials" {
		t.Fatalf("wrong password: status %d, body %s; want 403 bad_credentials", wrong.StatusCode(), wrong.Body)
	}
	if e.cookie(t, "JWT") != "" {
		t.Fatalf("a refused login set a session cookie")
	}

	in, err := e.api.AuthLoginPostWithResponse(ctx, provider, nil, authapi.Credentials{User: user, Passwd: password})
	if err != nil {
		t.Fatal(err)
	}
	if in.JSON200 == nil || in.JSON200.Name != user {
		t.Fatalf("direct login: status %d, body %s", in.StatusCode(), in.Body)
	}
	me := e.loggedInAs(t, user)
	if me.Id != in.JSON200.Id {
		t.Fatalf("GET /auth/user id %q, login answered %q", me.Id, in.JSON200.Id)
	}

	// A service holding the token sends it in X-JWT instead of the cookie pair.
	jwt := e.cookie(t, "JWT")
	u, err := e.api.GetAuthUserWithResponse(ctx, nil, func(_ context.Context, req *http.Request) error {
		req.Header.Del("Cookie")
		req.Header.Set("X-JWT", jwt)
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if u.JSON200 == nil || u.JSON200.Id != me.Id {
		t.Fatalf("GET /auth/user with X-JWT: status %d, body %s", u.StatusCode(), u.Body)
	}

	e.logout(t)
}

// TestAuth_DevOAuth2LoginThroughGeneratedClient runs the OAuth 2.0 authorization-code flow against
// the dev provider as a browser would: the login redirects to the dev server's page, its form
// redirects to the callback, and the callback sets the session. The new user's avatar is served.
func TestAuth_DevOAuth2LoginThroughGeneratedClient(t *testing.T) {
	t.Parallel()
	e := newAuthEnv(t)
	ctx := context.Background()

	site := "triad"
	start, err := e.api.AuthLoginWithResponse(ctx, "dev", &authapi.AuthLoginParams{Site: &site})
	if err != nil {
		t.Fatal(err)
	}
	if start.StatusCode() != http.StatusFound || start.Headers302 == nil || start.Headers302.Location == nil {
		t.Fatalf("login: status %d, body %s; want 302 to the provider", start.StatusCode(), start.Body)
	}
	if e.cookie(t, "AUTH-HANDSHAKE") == "" {
		t.Fatalf("login set no AUTH-HANDSHAKE cookie")
	}

	// The dev provider's pages are not part of the spec: a plain client plays the browser there.
	browser := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	authorize, err := url.Parse(*start.Headers302.Location)
	if err != nil {
		t.Fatal(err)
	}
	page, err := browser.Get(authorize.String())
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(page.Body)
	page.Body.Close()
	if page.StatusCode != http.StatusOK || !strings.Contains(string(body), `name="username"`) {
		t.Fatalf("dev login page: status %d: %s", page.StatusCode, body)
	}
	q := authorize.Query()
	form := url.Values{"username": {"carol"}, "state": {q.Get("state")}, "redirect_uri": {q.Get("redirect_uri")}, "code_challenge": {q.Get("code_challenge")}}
	back, err := browser.PostForm(authorize.String(), form)
	if err != nil {
		t.Fatal(err)
	}
	back.Body.Close()
	callback, err := url.Parse(back.Header.Get("Location"))
	if back.StatusCode != http.StatusSeeOther || err != nil || callback.Path != "/auth/dev/callback" {
		t.Fatalf("dev provider answered %d to %q; want 303 to the callback", back.StatusCode, back.Header.Get("Location"))
	}

	// The callback goes to the surface (through Prism in contract mode) with the code and state.
	state, code := callback.Query().Get("state"), callback.Query().Get("code")
	done, err := e.api.AuthCallbackWithResponse(ctx, "dev", &authapi.AuthCallbackParams{State: &state, Code: &code})
	if err != nil {
		t.Fatal(err)
	}
	if done.JSON200 == nil || done.JSON200.Name != "carol" {
		t.Fatalf("callback: status %d, body %s; want carol logged in", done.StatusCode(), done.Body)
	}
	me := e.loggedInAs(t, "carol")
	if me.Aud == nil || *me.Aud != site {
		t.Fatalf("token audience %v, want %q", me.Aud, site)
	}

	// The state works once: replaying the callback is refused and sets no session.
	e.logout(t)
	replay, err := e.api.AuthCallbackWithResponse(ctx, "dev", &authapi.AuthCallbackParams{State: &state, Code: &code})
	if err != nil {
		t.Fatal(err)
	}
	if replay.JSON400 == nil || replay.JSON400.Code != "bad_state" {
		t.Fatalf("replayed callback: status %d, body %s; want 400 bad_state", replay.StatusCode(), replay.Body)
	}

	// The provider gave no picture, so the avatar proxy stored an identicon under the user's link.
	if me.Picture == nil {
		t.Fatalf("the user has no avatar link")
	}
	pic, err := url.Parse(*me.Picture)
	if err != nil || !strings.HasPrefix(pic.Path, "/avatar/") {
		t.Fatalf("avatar link %q is not under /avatar/", *me.Picture)
	}
	avatar, err := e.api.GetAvatarWithResponse(ctx, path.Base(pic.Path), nil)
	if err != nil {
		t.Fatal(err)
	}
	if ct := avatar.HTTPResponse.Header.Get("Content-Type"); avatar.StatusCode() != http.StatusOK || !strings.HasPrefix(ct, "image/") || len(avatar.Body) == 0 {
		t.Fatalf("avatar: status %d, type %q, %d bytes; want an image", avatar.StatusCode(), ct, len(avatar.Body))
	}
	// A cache revalidating with the ETag it holds gets 304 without the bytes.
	etag := avatar.HTTPResponse.Header.Get("ETag")
	again, err := e.api.GetAvatarWithResponse(ctx, path.Base(pic.Path), &authapi.GetAvatarParams{IfNoneMatch: &etag})
	if err != nil {
		t.Fatal(err)
	}
	if etag == "" || again.StatusCode() != http.StatusNotModified || len(again.Body) != 0 {
		t.Fatalf("revalidation with ETag %q: status %d, %d bytes; want 304 and no body", etag, again.StatusCode(), len(again.Body))
	}

	// An avatar nobody stored is a documented 404, not a proxied fetch.
	missing, err := e.api.GetAvatarWithResponse(ctx, "0b4a6e2f3c9d0b4a6e2f3c9d0b4a6e2f3c9d0b4a.image", nil)
	if err != nil {
		t.Fatal(err)
	}
	if missing.JSON404 == nil {
		t.Fatalf("unknown avatar: status %d, body %s; want 404", missing.StatusCode(), missing.Body)
	}
}
