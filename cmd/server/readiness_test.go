package main

import (
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// relay is a TCP listener that copies every connection to a PostgreSQL server until cut: the
// network path to one database, which the test can break.
type relay struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

// newRelay relays to the server of dbURL and returns the relay and a URL to the same database
// through it.
func newRelay(t *testing.T, dbURL string) (*relay, string) {
	t.Helper()
	cfg, err := pgconn.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	network, addr := "tcp", net.JoinHostPort(cfg.Host, fmt.Sprint(cfg.Port))
	if strings.HasPrefix(cfg.Host, "/") {
		network, addr = "unix", fmt.Sprintf("%s/.s.PGSQL.%d", cfg.Host, cfg.Port)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	r := &relay{ln: ln}
	t.Cleanup(r.cut)
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			s, err := net.Dial(network, addr)
			if err != nil {
				c.Close()
				continue
			}
			r.mu.Lock()
			r.conns = append(r.conns, c, s)
			r.mu.Unlock()
			go func() { _, _ = io.Copy(s, c); s.Close() }()
			go func() { _, _ = io.Copy(c, s); c.Close() }()
		}
	}()
	return r, fmt.Sprintf("postgres://%s@%s/%s?sslmode=disable&connect_timeout=2", cfg.User, ln.Addr(), cfg.Database)
}

// cut refuses new connections and breaks those open.
func (r *relay) cut() {
	r.ln.Close()
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, c := range r.conns {
		c.Close()
	}
}

// TestReadyz_StandbyKeepsTheServerReady: with a read URL, a primary that does not answer leaves
// /readyz at 200 ("standby only"), so a database fault shared by every replica does not take them
// all out of the balancer, and a customer's list of orders is still served (its token resolved
// and its page read on the standby); with neither answering /readyz is 503.
func TestReadyz_StandbyKeepsTheServerReady(t *testing.T) {
	t.Parallel()
	dbURL := dbtest.NewURL(t)
	primary, primaryURL := newRelay(t, dbURL)
	standby, standbyURL := newRelay(t, dbURL)
	base, _ := routerServer(t, "-mode", "dev", "-database-url", primaryURL, "-database-read-url", standbyURL)
	probe := func() (int, string) {
		resp, err := http.Get(base + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		var body struct{ Status, Database string }
		if err := json.NewDecoder(resp.Body).Decode(&body); err != nil {
			t.Fatal(err)
		}
		return resp.StatusCode, body.Database
	}
	// waitProbe polls until the probe answers code and database (the pools notice a cut
	// connection on their next use), with a bound generous for a busy machine.
	waitProbe := func(code int, database string) {
		t.Helper()
		var gotCode int
		var got string
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
			if gotCode, got = probe(); gotCode == code && got == database {
				return
			}
		}
		t.Fatalf("/readyz: %d %q, want %d %q", gotCode, got, code, database)
	}
	waitProbe(http.StatusOK, "ok")
	resp, err := http.PostForm(base+"/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {devOrdersClientID},
		"client_secret": {devOrdersClientSecret}, "username": {"alice"}, "password": {"alice-password"}})
	if err != nil {
		t.Fatal(err)
	}
	var tok struct {
		AccessToken string `json:"access_token"`
	}
	err = json.NewDecoder(resp.Body).Decode(&tok)
	resp.Body.Close()
	if err != nil || tok.AccessToken == "" {
		t.Fatalf("login: %d %v", resp.StatusCode, err)
	}
	authed := func(path string) (int, string) {
		req, _ := http.NewRequest(http.MethodGet, base+path, nil)
		req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	code, body := authed("/authenticated")
	var me struct{ ID int64 }
	if err := json.Unmarshal([]byte(body), &me); code != http.StatusOK || err != nil || me.ID == 0 {
		t.Fatalf("/authenticated: %d %s", code, body)
	}
	list := fmt.Sprintf("/users/%d/orders?page=0&size=20", me.ID)
	if code, body := authed(list); code != http.StatusOK {
		t.Fatalf("the list with the primary up: %d %s", code, body)
	}

	primary.cut()
	waitProbe(http.StatusOK, "standby only")
	for i := range 3 {
		if code, body := authed(list); code != http.StatusOK {
			t.Fatalf("list %d with the primary cut: %d %s, want 200 from the standby", i, code, body)
		}
	}
	standby.cut()
	waitProbe(http.StatusServiceUnavailable, "unreachable")
}
