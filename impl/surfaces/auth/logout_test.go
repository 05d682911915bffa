package auth_test

import (
	"net/http"
	"net/http/cookiejar"
	"testing"
	"time"
)

// TestLogout_RevokesTheSession: a token captured before logout (sent as X-JWT, or as the cookie
// with its XSRF header) is refused once its session logged out, and its cookie, expired, is not
// refreshed any more; another login of the same user is not affected.
func TestLogout_RevokesTheSession(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	now := time.Now()
	ts := s.svc.TokenService()
	ts.Now = func() time.Time { return now }
	s.directLogin("")
	jwt, xsrf := s.cookie("JWT"), s.cookie("XSRF-TOKEN")
	other := newSiteClient(s)
	other.directLogin("")

	captured := func() (header, cookie int) {
		header, _, _ = s.do(s.plain, http.MethodGet, "/app/private", nil, map[string]string{"X-JWT": jwt})
		cookie, _, _ = s.do(http.DefaultClient, http.MethodGet, "/app/private", nil,
			map[string]string{"Cookie": "JWT=" + jwt + "; XSRF-TOKEN=" + xsrf, "X-XSRF-TOKEN": xsrf})
		return header, cookie
	}
	if h, c := captured(); h != http.StatusOK || c != http.StatusOK {
		t.Fatalf("before logout: X-JWT %d, cookie %d; want 200", h, c)
	}
	if st, _, b := s.do(s.client, http.MethodPost, "/auth/logout", nil, s.xsrf()); st != http.StatusOK {
		t.Fatalf("logout: %d %s", st, b)
	}
	if h, c := captured(); h != http.StatusUnauthorized || c != http.StatusUnauthorized {
		t.Fatalf("after logout: X-JWT %d, cookie %d; want 401", h, c)
	}
	// Expired, within the cookie lifetime: a live session's cookie is refreshed, a revoked one's not.
	now = now.Add(time.Hour)
	st, h, _ := s.do(http.DefaultClient, http.MethodGet, "/auth/user", nil,
		map[string]string{"Cookie": "JWT=" + jwt + "; XSRF-TOKEN=" + xsrf, "X-XSRF-TOKEN": xsrf})
	if st != http.StatusUnauthorized || len(h.Values("Set-Cookie")) != 0 {
		t.Fatalf("expired cookie of the revoked session: %d, Set-Cookie %q; want 401 and none", st, h.Values("Set-Cookie"))
	}
	if st, h, b := other.get("/auth/user", other.xsrf()); st != http.StatusOK || len(h.Values("Set-Cookie")) == 0 {
		t.Fatalf("the other session, expired: %d %s; want 200 and a refreshed cookie", st, b)
	}
}

// newSiteClient is s seen by a second browser: its own cookie jar, the same server.
func newSiteClient(s *site) *site {
	other := *s
	jar, _ := cookiejar.New(nil)
	c := *s.client
	c.Jar = jar
	other.client, other.jar = &c, jar
	other.plain = &http.Client{Jar: jar, CheckRedirect: s.plain.CheckRedirect}
	return &other
}
