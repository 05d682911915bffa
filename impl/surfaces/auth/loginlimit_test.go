package auth_test

import (
	"encoding/base64"
	"errors"
	"math"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// TestLoginGuard_DirectLogin: with the service's default guard, 15 wrong passwords for demo meet
// 429 too_many_attempts from the 11th, with Retry-After, even for the right password (which is
// then not checked); a checker that fails (its directory down) counts nothing.
func TestLoginGuard_DirectLogin(t *testing.T) {
	t.Parallel()
	s := newSite(t)
	down := true
	if err := s.svc.AddDirectProvider("ldap", provider.CredCheckerFunc(func(u, p string) (bool, error) {
		if down {
			return false, errors.New("directory unreachable")
		}
		return u == "bob" && p == "bob-password", nil
	})); err != nil {
		t.Fatal(err)
	}
	for i := range 15 {
		if st, _, b := s.get("/auth/ldap/login?user=bob&passwd=guess", nil); st != http.StatusInternalServerError {
			t.Fatalf("login %d with the checker down: %d %s", i+1, st, b)
		}
	}
	down = false
	if st, _, b := s.get("/auth/ldap/login?user=bob&passwd=bob-password", nil); st != http.StatusOK {
		t.Fatalf("right password after the checker's failures: %d %s (they were counted)", st, b)
	}
	start := time.Now()
	for i := range 10 {
		if st, _, b := s.get("/auth/local/login?user=demo&passwd=guess", nil); st != http.StatusForbidden {
			t.Fatalf("wrong password %d: %d %s", i+1, st, b)
		}
	}
	for i := range 5 {
		st, h, b := s.get("/auth/local/login?user=demo&passwd=demo-password", nil)
		if st != http.StatusTooManyRequests || errCode(t, b) != "too_many_attempts" || !leftOfWindow(h.Get("Retry-After"), start) {
			t.Fatalf("login %d past 10 failures: %d %s Retry-After %q; want 429 too_many_attempts and what is left of 900 s since %v", 11+i, st, b, h.Get("Retry-After"), start)
		}
	}
	// POST (JSON) is the same login: the same count.
	st, _, b := s.do(s.client, http.MethodPost, "/auth/local/login", strings.NewReader(`{"user":"demo","passwd":"demo-password"}`),
		map[string]string{"Content-Type": "application/json"})
	if st != http.StatusTooManyRequests {
		t.Fatalf("POST past the limit: %d %s", st, b)
	}
}

// leftOfWindow says whether retryAfter is what is left of the guard's 900-second window, counted
// from the first failure (after start): whole seconds, at most 900, and no fewer than were left when
// checked. The guard runs on the real clock, so a busy machine may take seconds between the failures
// and the check; 900 exactly held only on a quiet one.
func leftOfWindow(retryAfter string, start time.Time) bool {
	v, err := strconv.Atoi(retryAfter)
	left := int(math.Floor((900*time.Second - time.Since(start)).Seconds()))
	return err == nil && v <= 900 && v >= left
}

// TestLoginGuard_BasicAuth: basic auth with AdminPasswd is guarded alike: after 10 wrong passwords
// for admin, the right one gets 429 too_many_attempts with Retry-After on /auth/user and on a route
// behind the Admin middleware, instead of being checked again.
func TestLoginGuard_BasicAuth(t *testing.T) {
	t.Parallel()
	s := newSite(t, func(o *auth.Options) { o.AdminPasswd = "admin-secret-password" })
	basic := func(pw string) map[string]string {
		return map[string]string{"Authorization": "Basic " + base64.StdEncoding.EncodeToString([]byte("admin:"+pw))}
	}
	if st, _, b := s.do(s.plain, http.MethodGet, "/app/admin", nil, basic("admin-secret-password")); st != http.StatusOK {
		t.Fatalf("right password: %d %s", st, b)
	}
	start := time.Now()
	for i := range 10 {
		if st, _, b := s.get("/auth/user", basic("guess")); st != http.StatusUnauthorized {
			t.Fatalf("wrong password %d: %d %s", i+1, st, b)
		}
	}
	st, h, b := s.get("/auth/user", basic("admin-secret-password"))
	if st != http.StatusTooManyRequests || errCode(t, b) != "too_many_attempts" || !leftOfWindow(h.Get("Retry-After"), start) {
		t.Fatalf("/auth/user past 10 failures: %d %s Retry-After %q", st, b, h.Get("Retry-After"))
	}
	st, h, b = s.do(s.plain, http.MethodGet, "/app/admin", nil, basic("admin-secret-password"))
	if st != http.StatusTooManyRequests || errCode(t, b) != "too_many_attempts" || h.Get("Retry-After") == "" {
		t.Fatalf("Admin route past 10 failures: %d %s Retry-After %q", st, b, h.Get("Retry-After"))
	}
}
