package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/metrics"
	"github.com/triadhq/triad/impl/kit/router"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// The demo page is text/html, which kin-openapi does not decode by default.
// Avatars are images, decoded as opaque files.
func init() {
	openapi3filter.RegisterBodyDecoder("text/html", openapi3filter.PlainBodyDecoder)
	openapi3filter.RegisterBodyDecoder("image/png", openapi3filter.FileBodyDecoder)
}

// testSecret signs the test sites' JWTs.
const testSecret = "test-only-secret-0123456789abcdef"

// serve mounts the auth surface alone as the server mounts it (Mount with kit.Shared's Deps over
// the PostgreSQL database dbURL, on the root router with its shared layers and the client address)
// on a real socket at addr ("" picks a loopback port), and returns its base URL. s.URL defaults to
// that base URL (as dev mode's does), s.Secret to testSecret; dev is the server's dev mode.
func serve(t *testing.T, dbURL string, dev bool, s Settings, addr ...string) string {
	t.Helper()
	at := "127.0.0.1:0"
	if len(addr) > 0 {
		at = addr[0]
	}
	ln, err := net.Listen("tcp", at)
	if err != nil {
		t.Fatal(err)
	}
	base := "http://" + ln.Addr().String()
	if s.URL == "" {
		s.URL = base
	}
	if s.Secret == "" {
		s.Secret = testSecret
	}
	if s.Issuer == "" {
		s.Issuer = "triad"
	}
	if s.ConfirmWindow == 0 {
		d := DefaultSettings()
		s.ConfirmPerRecipient, s.ConfirmPerClient, s.ConfirmWindow = d.ConfirmPerRecipient, d.ConfirmPerClient, d.ConfirmWindow
	}
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, dbURL)
	if err != nil {
		t.Fatal(err)
	}
	direct, err := pgx.ParseConfig(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	log := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	sh := kit.NewShared(kit.Shared{Pool: pool, Direct: direct, Log: log, Metrics: metrics.New(), Dev: dev,
		Logins: kit.DefaultLogins(), DeviceKey: []byte(s.Secret), SecureCookies: strings.HasPrefix(s.URL, "https://")})
	r := router.New(router.Options{Log: log, Outer: []func(http.Handler) http.Handler{web.ClientAddr(nil)}})
	if err := Mount(s)(sh.Deps("auth"), r); err != nil {
		ln.Close()
		sh.Close()
		pool.Close()
		t.Fatal(err)
	}
	if err := sh.Tokens.Seal(); err != nil {
		t.Fatal(err)
	}
	sh.OnClose(sh.Revocations.Start())
	srv := &http.Server{Handler: r, ReadHeaderTimeout: 5 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			t.Errorf("serve: %v", err)
		}
	}()
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = srv.Shutdown(ctx)
		sh.Close()
		pool.Close()
	})
	return base
}

// answer is one response as the login scenarios read it.
type answer struct {
	status     int
	code       string // the Error body's code
	retryAfter string
}

// send makes one request from client and reads the answer; body, when not nil, is sent as JSON.
func send(t *testing.T, client *http.Client, method, u string, body any) answer {
	t.Helper()
	var rd io.Reader
	if body != nil {
		js, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequest(method, u, rd)
	if err != nil {
		t.Fatal(err)
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var e struct{ Code string }
	_ = json.NewDecoder(resp.Body).Decode(&e)
	return answer{resp.StatusCode, e.Code, resp.Header.Get("Retry-After")}
}

// fromAddr returns an HTTP client whose connections leave from 127.0.0.n, so the site sees a
// distinct client address per n (Linux routes all of 127/8 to loopback).
func fromAddr(n int) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.IPv4(127, 0, 0, byte(n))}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DialContext: d.DialContext, DisableKeepAlives: true}}
}
