package clientkey

import "testing"

// TestNet: the addresses of one client share a key, and an IPv6 host's /64 is one client.
func TestNet(t *testing.T) {
	for _, tc := range []struct{ remote, want string }{
		{"192.0.2.7:4711", "192.0.2.7"},
		{"[::ffff:192.0.2.7]:4711", "192.0.2.7"},
		{"[2001:db8:1:2:aaaa::1]:443", "2001:db8:1:2::/64"},
		{"[2001:db8:1:2:bbbb::9]:80", "2001:db8:1:2::/64"},
		{"@", "@"},
		{"not-an-address", "not-an-address"},
	} {
		if got := Net(tc.remote); got != tc.want {
			t.Errorf("Net(%q) = %q, want %q", tc.remote, got, tc.want)
		}
	}
}
