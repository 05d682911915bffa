package main

import (
	"net"
	"strings"
	"testing"
)

// TestLoadConfig_AuthURLDefault: without AUTH_URL, dev mode takes the address it is told to listen
// on (run settles the port once listening); prod mode keeps the documented default; a given
// AUTH_URL wins in both.
func TestLoadConfig_AuthURLDefault(t *testing.T) {
	t.Setenv("AUTH_URL", "")
	prod := []string{"-mode", "prod", "-orders-client-id", "i", "-orders-client-secret", strings.Repeat("c", 24), "-auth-secret", strings.Repeat("k", 32)}
	for _, tc := range []struct {
		name     string
		args     []string
		url      string
		listener bool
	}{
		{"dev, a port", []string{"-addr", "127.0.0.1:9090"}, "http://127.0.0.1:9090", true},
		{"dev, every address", []string{"-addr", ":9090"}, "http://localhost:9090", true},
		{"dev, given", []string{"-addr", "127.0.0.1:9090", "-auth-url", "https://dev.example.test"}, "https://dev.example.test", false},
		{"prod", append([]string{"-addr", "127.0.0.1:9090"}, prod...), "http://localhost:8080", false},
		{"prod, given", append([]string{"-auth-url", "https://api.example.test"}, prod...), "https://api.example.test", false},
	} {
		c, err := LoadConfig(tc.args)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if c.Auth.URL != tc.url || c.Auth.URLFromListener != tc.listener {
			t.Errorf("%s: AUTH_URL %q (from the listener: %v), want %q (%v)", tc.name, c.Auth.URL, c.Auth.URLFromListener, tc.url, tc.listener)
		}
	}
}

func TestListenURL(t *testing.T) {
	bound := &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 41234}
	for _, tc := range []struct {
		addr  string
		bound net.Addr
		want  string
	}{
		{"127.0.0.1:9090", nil, "http://127.0.0.1:9090"},
		{"127.0.0.1:0", bound, "http://127.0.0.1:41234"},
		{":8080", nil, "http://localhost:8080"},
		{"0.0.0.0:8080", nil, "http://localhost:8080"},
		{"[::]:0", bound, "http://localhost:41234"},
		{"[::1]:9090", nil, "http://[::1]:9090"},
		{"localhost:9090", nil, "http://localhost:9090"},
	} {
		if got := listenURL(tc.addr, tc.bound); got != tc.want {
			t.Errorf("listenURL(%q, %v) = %q, want %q", tc.addr, tc.bound, got, tc.want)
		}
	}
}
