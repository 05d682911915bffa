package main

import (
	"cmp"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"
)

// user is the real user: an account on orders and on brands, logging in from its own address.
type user struct {
	s               *server
	c               *http.Client
	name, email, pw string
}

func newUser(s *server, src string) *user {
	return &user{s: s, c: clientFrom(src), name: "real-user", email: "real-user@flood.test", pw: "real-user-password-" + randomHex(4)}
}

func (u *user) register() error {
	for _, req := range []*http.Request{
		jsonReq(context.Background(), u.s.base+"/users", map[string]string{"username": u.name, "password": u.pw, "userType": "Customer"}),
		form(context.Background(), u.s.base+"/api/user/register", url.Values{"name": {"Real User"}, "email": {u.email}, "password": {u.pw}}),
	} {
		resp, err := u.c.Do(req)
		if err != nil {
			return err
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusCreated {
			return fmt.Errorf("%s: %d %s", req.URL.Path, resp.StatusCode, b)
		}
	}
	return nil
}

// login is one of the real user's logins.
type login struct {
	surface string
	took    time.Duration
	status  int // 0: a transport error
}

// loginEvery logs in every interval, alternating orders and brands, until ctx ends; each login
// runs on its own context so the last one is not cut short.
func (u *user) loginEvery(ctx context.Context, every time.Duration) []login {
	var out []login
	t := time.NewTicker(every)
	defer t.Stop()
	for n := 0; ; n++ {
		select {
		case <-ctx.Done():
			return out
		case <-t.C:
		}
		var req *http.Request
		surface := "orders"
		if n%2 == 0 {
			req = form(context.Background(), u.s.base+"/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {u.s.clientID},
				"client_secret": {u.s.secret}, "username": {u.name}, "password": {u.pw}})
		} else {
			surface = "brands"
			req = form(context.Background(), u.s.base+"/api/user/login", url.Values{"email": {u.email}, "password": {u.pw}})
		}
		start := time.Now()
		resp, err := u.c.Do(req)
		l := login{surface: surface}
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			l.status = resp.StatusCode
		}
		l.took = time.Since(start)
		out = append(out, l)
	}
}

// summarize gives the median login time, where a login that was not answered 200 counts as
// slower than every one that was (the user did not get in), and ok=false when that makes the
// median one of them.
func summarize(logins []login) (median time.Duration, ok bool, text string) {
	if len(logins) == 0 {
		return 0, false, "no logins"
	}
	sorted := slices.Clone(logins)
	slices.SortFunc(sorted, func(a, b login) int {
		af, bf := a.status != http.StatusOK, b.status != http.StatusOK
		if af != bf {
			if af {
				return 1
			}
			return -1
		}
		return cmp.Compare(a.took, b.took)
	})
	mid := sorted[(len(sorted)-1)/2]
	median, ok = mid.took, mid.status == http.StatusOK
	var okTimes []time.Duration
	statuses := map[int]int{}
	per := map[string][]time.Duration{}
	for _, l := range logins {
		statuses[l.status]++
		if l.status == http.StatusOK {
			okTimes = append(okTimes, l.took)
			per[l.surface] = append(per[l.surface], l.took)
		}
	}
	slices.Sort(okTimes)
	var b strings.Builder
	fmt.Fprintf(&b, "%d logins, median %s", len(logins), fmtMedian(median, ok))
	if len(okTimes) > 0 {
		fmt.Fprintf(&b, ", successful ones %s..%s", okTimes[0].Round(time.Millisecond), okTimes[len(okTimes)-1].Round(time.Millisecond))
	}
	for _, s := range []string{"orders", "brands"} {
		if t := per[s]; len(t) > 0 {
			slices.Sort(t)
			fmt.Fprintf(&b, "; %s median %s", s, t[(len(t)-1)/2].Round(time.Millisecond))
		}
	}
	codes := make([]int, 0, len(statuses))
	for c := range statuses {
		codes = append(codes, c)
	}
	slices.Sort(codes)
	b.WriteString("; statuses")
	for _, c := range codes {
		fmt.Fprintf(&b, " %d×%d", c, statuses[c])
	}
	return median, ok, b.String()
}

func fmtMedian(d time.Duration, ok bool) string {
	if !ok {
		return "not logged in (most logins refused)"
	}
	return d.Round(time.Millisecond).String()
}
