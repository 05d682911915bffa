package web

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestClientAddr(t *testing.T) {
	t.Parallel()
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 127.0.0.1 ,2001:db8::/32")
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, peer string
		xff        []string
		want       string
	}{
		{"untrusted peer: its header is ignored", "192.0.2.1:5000", []string{"203.0.113.9"}, "192.0.2.1:5000"},
		{"trusted peer without a header", "127.0.0.1:5000", nil, "127.0.0.1:5000"},
		{"trusted peer names the client", "127.0.0.1:5000", []string{"203.0.113.9"}, "203.0.113.9:0"},
		{"a forged left entry is skipped", "127.0.0.1:5000", []string{"198.51.100.66, 203.0.113.9"}, "203.0.113.9:0"},
		{"chained trusted proxies", "10.1.1.1:80", []string{"203.0.113.9, 10.2.2.2", "10.3.3.3"}, "203.0.113.9:0"},
		{"all hops trusted: the left-most", "10.1.1.1:80", []string{"10.9.9.9, 10.2.2.2"}, "10.9.9.9:0"},
		{"garbage stops the walk", "10.1.1.1:80", []string{"203.0.113.9, not-an-ip, 10.2.2.2"}, "10.2.2.2:0"},
		{"garbage right away keeps the peer", "10.1.1.1:80", []string{"nonsense"}, "10.1.1.1:80"},
		{"IPv6 client, with brackets", "[2001:db8::1]:443", []string{"[2001:db8:ffff::5]:1234, [2a00::7]"}, "[2a00::7]:0"},
		{"mapped IPv4 peer", "[::ffff:127.0.0.1]:80", []string{"203.0.113.9"}, "203.0.113.9:0"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got string
			h := ClientAddr(trusted)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.RemoteAddr }))
			req := httptest.NewRequest(http.MethodGet, "/", nil)
			req.RemoteAddr = tc.peer
			for _, v := range tc.xff {
				req.Header.Add("X-Forwarded-For", v)
			}
			h.ServeHTTP(httptest.NewRecorder(), req)
			if got != tc.want {
				t.Fatalf("RemoteAddr = %q, want %q", got, tc.want)
			}
		})
	}

	// No trusted proxies (the default): any header is ignored.
	var got string
	h := ClientAddr(nil)(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got = r.RemoteAddr }))
	req := httptest.NewRequest(http.MethodGet, "/", nil)
	req.RemoteAddr = "127.0.0.1:1"
	req.Header.Set("X-Forwarded-For", "203.0.113.9")
	h.ServeHTTP(httptest.NewRecorder(), req)
	if got != "127.0.0.1:1" {
		t.Fatalf("without trusted proxies RemoteAddr = %q", got)
	}
}

func TestParseTrustedProxies(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int{"": 0, " , ": 0, "10.0.0.0/8": 1, "10.1.2.3/8,::1": 2, "::ffff:10.0.0.1": 1} {
		got, err := ParseTrustedProxies(in)
		if err != nil || len(got) != want {
			t.Errorf("ParseTrustedProxies(%q) = %v, %v; want %d prefixes", in, got, err, want)
		}
	}
	for _, bad := range []string{"10.0.0.0/33", "example.com", "10.0.0.1:80", "10.0.0.0/8,nope"} {
		if _, err := ParseTrustedProxies(bad); err == nil {
			t.Errorf("ParseTrustedProxies(%q) accepted", bad)
		}
	}
}

// TestWideProxies_WiderThanASite: a range wider than a /24 (IPv4) or /64 (IPv6) is reported, one
// as narrow or narrower (a proxy's address, its subnet) is not.
func TestWideProxies_WiderThanASite(t *testing.T) {
	trusted, err := ParseTrustedProxies("10.0.0.0/8, 10.1.2.0/24, 192.0.2.7, 172.16.0.0/23, fd00::/48, fd00:1::/64, 2001:db8::1, ::ffff:10.0.0.0/104")
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range WideProxies(trusted) {
		got = append(got, p.String())
	}
	want := []string{"10.0.0.0/8", "172.16.0.0/23", "fd00::/48", "::ffff:10.0.0.0/104"}
	if strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("WideProxies = %v, want %v", got, want)
	}
}
