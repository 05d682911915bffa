package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync/atomic"
	"time"
)

// sourceAddr is the i-th flood address, 127.0.1.1 onward (Linux answers for all of 127.0.0.0/8).
func sourceAddr(i int) string { return fmt.Sprintf("127.0.%d.%d", 1+i/250, 1+i%250) }

// clientFrom is an HTTP client whose connections come from the local address src, one connection
// at a time (a flood connection, or the real user's browser).
func clientFrom(src string) *http.Client {
	d := &net.Dialer{LocalAddr: &net.TCPAddr{IP: net.ParseIP(src)}, Timeout: 10 * time.Second}
	return &http.Client{Timeout: 60 * time.Second, Transport: &http.Transport{DialContext: d.DialContext,
		MaxConnsPerHost: 1, MaxIdleConnsPerHost: 1, DisableCompression: true}}
}

// floodStats counts the flood's answers by class.
type floodStats struct {
	sent, ok, refused, throttled, busy, other, errs atomic.Int64
}

func (f *floodStats) String() string {
	return fmt.Sprintf("%d requests: %d 2xx, %d 4xx wrong password or taken, %d 429 throttled, %d 503 busy, %d other, %d transport errors",
		f.sent.Load(), f.ok.Load(), f.refused.Load(), f.throttled.Load(), f.busy.Load(), f.other.Load(), f.errs.Load())
}

func (f *floodStats) count(status int, err error) {
	f.sent.Add(1)
	switch {
	case err != nil:
		f.errs.Add(1)
	case status < 300:
		f.ok.Add(1)
	case status == http.StatusTooManyRequests:
		f.throttled.Add(1)
	case status == http.StatusServiceUnavailable:
		f.busy.Add(1)
	case status >= 400 && status < 500:
		f.refused.Add(1)
	default:
		f.other.Add(1)
	}
}

// flood sends one kind of unauthenticated request over one connection until ctx ends: kind i%4
// is an orders login, a brands login, an orders registration or a brands registration, each with
// a fresh name, so no per-account limit applies.
func flood(ctx context.Context, s *server, src string, i int, stats *floodStats) {
	c := clientFrom(src)
	defer c.CloseIdleConnections()
	for n := 0; ctx.Err() == nil; n++ {
		name := fmt.Sprintf("f%d-%d-%s", i, n, randomHex(3))
		var req *http.Request
		switch i % 4 {
		case 0:
			req = form(ctx, s.base+"/oauth/token", url.Values{"grant_type": {"password"}, "client_id": {s.clientID},
				"client_secret": {s.secret}, "username": {name}, "password": {"not-the-password"}})
		case 1:
			req = form(ctx, s.base+"/api/user/login", url.Values{"email": {name + "@flood.test"}, "password": {"not-the-password"}})
		case 2:
			req = jsonReq(ctx, s.base+"/users", map[string]string{"username": name, "password": "flood-password", "userType": "Customer"})
		default:
			req = form(ctx, s.base+"/api/user/register", url.Values{"name": {name}, "email": {name + "@flood.test"}, "password": {"flood-password"}})
		}
		resp, err := c.Do(req)
		if ctx.Err() != nil {
			return // the flood is over; this answer is not counted
		}
		status := 0
		if err == nil {
			_, _ = io.Copy(io.Discard, resp.Body)
			resp.Body.Close()
			status = resp.StatusCode
		}
		stats.count(status, err)
		if err != nil {
			time.Sleep(50 * time.Millisecond) // a refused connection: do not spin
		}
	}
}

func form(ctx context.Context, u string, v url.Values) *http.Request {
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, strings.NewReader(v.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return req
}

func jsonReq(ctx context.Context, u string, v any) *http.Request {
	b, _ := json.Marshal(v)
	req, _ := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
	req.Header.Set("Content-Type", "application/json")
	return req
}
