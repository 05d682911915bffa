package avatar_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/triadhq/triad/gen/authapi"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatartest"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/pgstore"
	"github.com/triadhq/triad/impl/testkit/apitest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// pictureServer is a hostile-or-not picture host on loopback.
func pictureServer(t *testing.T) *httptest.Server {
	t.Helper()
	big := append(pngImage(t, 4, 4), make([]byte, avatar.DefaultMaxBytes)...)
	mux := http.NewServeMux()
	serve := func(ct string, b []byte) http.HandlerFunc {
		return func(w http.ResponseWriter, _ *http.Request) {
			w.Header().Set("Content-Type", ct)
			_, _ = w.Write(b)
		}
	}
	mux.Handle("/wide.png", serve("image/png", pngImage(t, 600, 300)))
	mux.Handle("/small.png", serve("image/png", pngImage(t, 40, 20)))
	mux.Handle("/photo.jpg", serve("image/jpeg", jpegImage(t, 200, 400)))
	mux.Handle("/page.html", serve("image/png", []byte("<!DOCTYPE html><html><script>alert(1)</script></html>")))
	mux.Handle("/fake.png", serve("image/png", append([]byte("\x89PNG\r\n\x1a\n"), []byte("<script>alert(1)</script>")...)))
	mux.Handle("/bomb.png", serve("image/png", pngBomb(100000, 100000)))
	mux.HandleFunc("/huge.png", func(w http.ResponseWriter, _ *http.Request) {
		// Declared up front: the proxy must refuse on the header, before reading the body.
		w.Header().Set("Content-Type", "image/png")
		w.Header().Set("Content-Length", strconv.Itoa(len(big)))
		_, _ = w.Write(big)
	})
	mux.HandleFunc("/stream.png", func(w http.ResponseWriter, _ *http.Request) {
		// No Content-Length: the cap must hold while reading.
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pngImage(t, 4, 4))
		w.(http.Flusher).Flush()
		chunk := make([]byte, 64<<10)
		for i := 0; i < 200; i++ {
			if _, err := w.Write(chunk); err != nil {
				return
			}
		}
	})
	mux.HandleFunc("/slow.png", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	})
	mux.HandleFunc("/missing.png", http.NotFound)
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/to-file", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "file:///etc/passwd", http.StatusFound)
	})
	mux.HandleFunc("/to-small", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/small.png", http.StatusFound) })
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

// testProxy is a proxy over a fresh file store that may dial loopback (the picture server).
func testProxy(t *testing.T, o avatar.ProxyOptions) (*avatar.Proxy, avatar.Store) {
	t.Helper()
	if o.Store == nil {
		s, err := filestore.New(t.TempDir())
		if err != nil {
			t.Fatal(err)
		}
		o.Store = s
	}
	o.AllowPrivate = true
	if o.URL == "" {
		o.URL = "https://example.test"
	}
	if o.Timeout == 0 {
		o.Timeout = 2 * time.Second
	}
	return avatar.NewProxy(o), o.Store
}

// avatarServer mounts the proxy's handler at /avatar as cmd/server does, and returns its URL and a
// client that validates every response against api/auth.yaml.
func avatarServer(t *testing.T, p *avatar.Proxy) (string, *http.Client) {
	t.Helper()
	r := chi.NewRouter()
	r.Mount("/avatar", p.Handler())
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	spec, err := authapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	return srv.URL, apitest.Client(t, spec)
}

// idOf extracts the avatar id from a local link.
func idOf(t *testing.T, link string) string {
	t.Helper()
	const prefix = "https://example.test/avatar/"
	if !strings.HasPrefix(link, prefix) {
		t.Fatalf("link %q does not start with %q", link, prefix)
	}
	return strings.TrimPrefix(link, prefix)
}

func TestProxy_PutFetchesStoresAndServes(t *testing.T) {
	t.Parallel()
	pics := pictureServer(t)
	p, store := testProxy(t, avatar.ProxyOptions{})
	link, err := p.Put(context.Background(), "github_alice", pics.URL+"/wide.png")
	if err != nil {
		t.Fatal(err)
	}
	id := idOf(t, link)
	if id != avatar.AvatarID("github_alice") {
		t.Fatalf("id %q, want %q", id, avatar.AvatarID("github_alice"))
	}
	// No resize configured: the stored picture is the original.
	got := avatartest.Read(t, store, id)
	if w, h, _ := decodeSize(t, got); w != 600 || h != 300 {
		t.Fatalf("stored %dx%d, want the original 600x300", w, h)
	}

	base, c := avatarServer(t, p)
	resp, err := c.Get(base + "/avatar/" + id)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d", resp.StatusCode)
	}
	if !bytes.Equal(body, got) {
		t.Fatal("served bytes differ from the stored ones")
	}
	for h, want := range map[string]string{
		"Content-Type":           "image/png",
		"Cache-Control":          avatar.CacheControl,
		"X-Content-Type-Options": "nosniff",
		"ETag":                   `"` + store.ID(context.Background(), id) + `"`,
		"Content-Length":         strconv.Itoa(len(got)),
	} {
		if v := resp.Header.Get(h); v != want {
			t.Errorf("%s = %q, want %q", h, v, want)
		}
	}

	// Conditional requests: a matching tag (strong, weak, in a list, or *) gives 304 without a body.
	etag := resp.Header.Get("ETag")
	for _, inm := range []string{etag, "W/" + etag, `"other", ` + etag, "*"} {
		req, _ := http.NewRequest(http.MethodGet, base+"/avatar/"+id, nil)
		req.Header.Set("If-None-Match", inm)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotModified || len(b) != 0 || resp.Header.Get("ETag") != etag {
			t.Errorf("If-None-Match %s: status %d, %d bytes, etag %q", inm, resp.StatusCode, len(b), resp.Header.Get("ETag"))
		}
	}
	req, _ := http.NewRequest(http.MethodGet, base+"/avatar/"+id, nil)
	req.Header.Set("If-None-Match", `"stale"`)
	if resp, err := c.Do(req); err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("stale If-None-Match: %v %v", resp.StatusCode, err)
	} else {
		resp.Body.Close()
	}

	// A new login with another picture replaces it under the same link, with a new ETag.
	link2, err := p.Put(context.Background(), "github_alice", pics.URL+"/photo.jpg")
	if err != nil || link2 != link {
		t.Fatalf("second put: %q %v", link2, err)
	}
	resp, err = c.Get(base + "/avatar/" + id)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.Header.Get("Content-Type") != "image/jpeg" || resp.Header.Get("ETag") == etag {
		t.Fatalf("after replace: type %q etag %q (old %q)", resp.Header.Get("Content-Type"), resp.Header.Get("ETag"), etag)
	}
}

func TestProxy_Serve404(t *testing.T) {
	t.Parallel()
	p, store := testProxy(t, avatar.ProxyOptions{})
	base, c := avatarServer(t, p)
	// Bytes planted in the store that are not an image (a store written by something else) are
	// never served.
	dir := store.(*filestore.Store).Dir()
	planted, disguised := avatar.AvatarID("planted"), avatar.AvatarID("disguised")
	if err := os.WriteFile(filepath.Join(dir, planted), []byte("<html><script>alert(1)</script></html>"), 0o600); err != nil {
		t.Fatal(err)
	}
	// An image signature alone does not make an image.
	if err := os.WriteFile(filepath.Join(dir, disguised), []byte("\x89PNG\r\n\x1a\n<script>alert(1)</script>"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, path := range []string{
		"/avatar/" + avatar.AvatarID("nobody"), // unknown
		"/avatar/" + planted,                   // not an image
		"/avatar/" + disguised,                 // not an image behind a PNG signature
		"/avatar/%2e%2e.image",                 // dots, percent-encoded
		"/avatar/abc.image",
		"/avatar/" + strings.ToUpper(avatar.AvatarID("x")),
	} {
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		var e web.Error
		err = json.NewDecoder(resp.Body).Decode(&e)
		resp.Body.Close()
		if resp.StatusCode != http.StatusNotFound || err != nil || e.Code != web.CodeNotFound {
			t.Errorf("%s: status %d, code %q, err %v", path, resp.StatusCode, e.Code, err)
		}
		if strings.HasPrefix(resp.Header.Get("Content-Type"), "text/html") {
			t.Errorf("%s served html", path)
		}
	}
}

func TestProxy_IdenticonWithoutPicture(t *testing.T) {
	t.Parallel()
	p, store := testProxy(t, avatar.ProxyOptions{})
	link, err := p.Put(context.Background(), "dev_bob", "")
	if err != nil {
		t.Fatal(err)
	}
	got := avatartest.Read(t, store, idOf(t, link))
	if !bytes.Equal(got, avatar.Identicon("dev_bob")) {
		t.Fatal("stored picture is not the user's identicon")
	}
	if w, h, format := decodeSize(t, got); w != avatar.IdenticonSize || h != avatar.IdenticonSize || format != "png" {
		t.Fatalf("identicon %dx%d %s", w, h, format)
	}
}

func TestIdenticon_DeterministicPerUser(t *testing.T) {
	t.Parallel()
	a1, a2, b := avatar.Identicon("user-a"), avatar.Identicon("user-a"), avatar.Identicon("user-b")
	if !bytes.Equal(a1, a2) {
		t.Fatal("same user, different identicons")
	}
	if bytes.Equal(a1, b) {
		t.Fatal("different users, same identicon")
	}
}

func TestProxy_ResizeLimit(t *testing.T) {
	t.Parallel()
	pics := pictureServer(t)
	tests := []struct {
		name         string
		limit        int
		path         string
		wantW, wantH int
		wantFormat   string
	}{
		{"wide png scaled to limit", 100, "/wide.png", 100, 50, "png"},
		{"tall jpeg stays jpeg", 100, "/photo.jpg", 50, 100, "jpeg"},
		{"smaller than limit untouched", 100, "/small.png", 40, 20, "png"},
		{"zero disables resizing", 0, "/wide.png", 600, 300, "png"},
		{"identicon scaled too", 64, "", 64, 64, "png"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			p, store := testProxy(t, avatar.ProxyOptions{ResizeLimit: tc.limit})
			pic := ""
			if tc.path != "" {
				pic = pics.URL + tc.path
			}
			link, err := p.Put(context.Background(), "u", pic)
			if err != nil {
				t.Fatal(err)
			}
			got := avatartest.Read(t, store, idOf(t, link))
			if w, h, f := decodeSize(t, got); w != tc.wantW || h != tc.wantH || f != tc.wantFormat {
				t.Fatalf("got %dx%d %s, want %dx%d %s", w, h, f, tc.wantW, tc.wantH, tc.wantFormat)
			}
		})
	}
}

func TestProxy_FetchRefusals(t *testing.T) {
	t.Parallel()
	pics := pictureServer(t)
	p, _ := testProxy(t, avatar.ProxyOptions{Timeout: 10 * time.Second})
	// The timeout case gets its own short-timeout proxy, so the other cases have room on a busy machine.
	quick, _ := testProxy(t, avatar.ProxyOptions{Timeout: 300 * time.Millisecond})
	tests := []struct {
		name string
		url  string
		want error // nil: any error
	}{
		{"file scheme", "file:///etc/passwd", avatar.ErrBadURL},
		{"ftp scheme", "ftp://example.com/a.png", avatar.ErrBadURL},
		{"javascript", "javascript:alert(1)", avatar.ErrBadURL},
		{"data url", "data:image/png;base64,AAAA", avatar.ErrBadURL},
		{"relative", "/a.png", avatar.ErrBadURL},
		{"declared too large", pics.URL + "/huge.png", avatar.ErrTooLarge},
		{"streamed too large", pics.URL + "/stream.png", avatar.ErrTooLarge},
		{"timeout", pics.URL + "/slow.png", context.DeadlineExceeded},
		{"not found upstream", pics.URL + "/missing.png", nil},
		{"redirect loop", pics.URL + "/loop", nil},
		{"redirect to file", pics.URL + "/to-file", avatar.ErrBadURL},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			px := p
			if tc.name == "timeout" {
				px = quick
			}
			_, err := px.Fetch(context.Background(), tc.url)
			if err == nil || (tc.want != nil && !errors.Is(err, tc.want)) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	// A bounded redirect to a picture is followed.
	if b, err := p.Fetch(context.Background(), pics.URL+"/to-small"); err != nil || len(b) == 0 {
		t.Fatalf("redirect to picture: %v", err)
	}
}

func TestProxy_ImageRefusals(t *testing.T) {
	t.Parallel()
	p, _ := testProxy(t, avatar.ProxyOptions{MaxPixels: 1000})
	tests := []struct {
		name string
		b    []byte
		want error
	}{
		{"html", []byte("<!DOCTYPE html><html></html>"), avatar.ErrNotImage},
		{"svg", []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`), avatar.ErrNotImage},
		{"png header then script", append([]byte("\x89PNG\r\n\x1a\n"), "<script>"...), avatar.ErrNotImage},
		{"decompression bomb header", pngBomb(100000, 100000), avatar.ErrTooManyPixels},
		{"over the pixel cap", pngImage(t, 50, 21), avatar.ErrTooManyPixels},
		{"truncated png", pngImage(t, 20, 20)[:60], avatar.ErrNotImage},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			if _, err := p.Prepare(tc.b); !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
		})
	}
	if _, err := p.Prepare(pngImage(t, 50, 20)); err != nil {
		t.Fatalf("1000 pixels refused: %v", err)
	}
}

func TestProxy_RefusedPictureFallsBack(t *testing.T) {
	t.Parallel()
	pics := pictureServer(t)
	p, store := testProxy(t, avatar.ProxyOptions{})
	ctx := context.Background()

	// No avatar yet: a hostile picture gives the identicon, and the login goes on.
	for _, bad := range []string{"/page.html", "/fake.png", "/bomb.png", "/missing.png"} {
		link, err := p.Put(ctx, "new_user"+bad, pics.URL+bad)
		if err != nil {
			t.Fatalf("%s: %v", bad, err)
		}
		got := avatartest.Read(t, store, idOf(t, link))
		if !bytes.Equal(got, avatar.Identicon("new_user"+bad)) {
			t.Fatalf("%s: stored something other than the identicon", bad)
		}
	}

	// An existing avatar is kept when the next picture is refused.
	link, err := p.Put(ctx, "old_user", pics.URL+"/small.png")
	if err != nil {
		t.Fatal(err)
	}
	before := avatartest.Read(t, store, idOf(t, link))
	if _, err := p.Put(ctx, "old_user", pics.URL+"/page.html"); err != nil {
		t.Fatal(err)
	}
	if after := avatartest.Read(t, store, idOf(t, link)); !bytes.Equal(before, after) {
		t.Fatal("a refused picture replaced the stored avatar")
	}
}

func TestClient_DefaultRefusesNonPublicAddresses(t *testing.T) {
	t.Parallel()
	pics := pictureServer(t)
	_, port, _ := strings.Cut(strings.TrimPrefix(pics.URL, "http://"), ":")
	// The default proxy (no AllowPrivate) must not reach the loopback server, whether the URL
	// names the address or a host name that resolves to it: the guard checks the dialed address.
	p := avatar.NewProxy(avatar.ProxyOptions{Store: mustFileStore(t), URL: "https://example.test"})
	for _, u := range []string{
		pics.URL + "/small.png",
		"http://localhost:" + port + "/small.png",
		"http://[::1]:" + port + "/small.png",
		"http://0.0.0.0:" + port + "/small.png",
		// Refused before any packet leaves: Control runs between socket creation and connect.
		"http://169.254.169.254/latest/meta-data/", // link-local (cloud metadata)
		"http://10.0.0.1/a.png",                    // private
		"http://192.168.1.1/a.png",                 // private
		"http://[fd00::1]/a.png",                   // unique local
	} {
		if _, err := p.Fetch(context.Background(), u); !errors.Is(err, avatar.ErrForbiddenAddress) {
			t.Errorf("%s: err = %v, want ErrForbiddenAddress", u, err)
		}
	}
	// The refusal does not block the login: the user gets an identicon.
	link, err := p.Put(context.Background(), "u", pics.URL+"/small.png")
	if err != nil {
		t.Fatal(err)
	}
	got := avatartest.Read(t, p.ProxyStore(), idOf(t, link))
	if !bytes.Equal(got, avatar.Identicon("u")) {
		t.Fatal("want the identicon after a refused fetch")
	}
}

func TestPublicAddr(t *testing.T) {
	t.Parallel()
	for addr, want := range map[string]bool{
		"8.8.8.8":              true,
		"2606:4700:4700::1111": true,
		"127.0.0.1":            false,
		"127.8.9.10":           false,
		"::1":                  false,
		"10.1.2.3":             false,
		"172.16.0.1":           false,
		"192.168.1.1":          false,
		"169.254.169.254":      false, // cloud metadata
		"fe80::1":              false,
		"fc00::1":              false,
		"0.0.0.0":              false,
		"::":                   false,
		"224.0.0.1":            false,
		"ff02::1":              false,
		"100.64.0.1":           false,
		"255.255.255.255":      false,
		"::ffff:127.0.0.1":     false, // IPv4-mapped loopback
		"::ffff:10.0.0.1":      false,
		"64:ff9b::7f00:1":      false, // NAT64 of 127.0.0.1
		"2002:7f00:1::1":       false, // 6to4 of 127.0.0.1
		"198.18.0.1":           false,
		"2001:db8::1":          true, // documentation range, harmless: not routable to us
	} {
		if got := avatar.PublicAddr(netip.MustParseAddr(addr)); got != want {
			t.Errorf("PublicAddr(%s) = %v, want %v", addr, got, want)
		}
	}
}

func mustFileStore(t *testing.T) *filestore.Store {
	t.Helper()
	s, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestProxy_RefusalLogsDoNotLeakPictureURL(t *testing.T) {
	t.Parallel()
	pics := pictureServer(t)
	var logs bytes.Buffer
	// Default client: the loopback picture server is refused at dial time.
	p := avatar.NewProxy(avatar.ProxyOptions{Store: mustFileStore(t), URL: "https://example.test",
		Logger: slog.New(slog.NewTextHandler(&logs, nil))})
	secretURL := pics.URL + "/file/bot123456:SECRET-TOKEN/photo.jpg"
	_, err := p.Fetch(context.Background(), secretURL)
	if err == nil || strings.Contains(err.Error(), "SECRET-TOKEN") {
		t.Fatalf("error %v leaks the URL", err)
	}
	if _, err := p.Put(context.Background(), "telegram_1", secretURL); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(logs.String(), "picture refused") || strings.Contains(logs.String(), "SECRET-TOKEN") {
		t.Fatalf("log: %s", logs.String())
	}
}

func TestClient_RedirectIntoPrivateNetworkRefused(t *testing.T) {
	t.Parallel()
	// inner stands for a service on the private network: whatever the redirect, it is never reached.
	var innerHits atomic.Int32
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		innerHits.Add(1)
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pngImage(t, 4, 4))
	}))
	t.Cleanup(inner.Close)
	_, innerPort, _ := net.SplitHostPort(inner.Listener.Addr().String())

	// outer stands for a public picture host that answers with redirects.
	mux := http.NewServeMux()
	mux.HandleFunc("/pic.png", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		_, _ = w.Write(pngImage(t, 4, 4))
	})
	redirect := func(to string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, to, http.StatusFound) }
	}
	targets := map[string]string{
		"/to-ip":       "http://127.0.0.1:" + innerPort + "/a.png",
		"/to-name":     "http://localhost:" + innerPort + "/a.png", // a host name resolving to loopback
		"/to-ipv6":     "http://[::1]:" + innerPort + "/a.png",
		"/to-metadata": "http://169.254.169.254/latest/meta-data/",
		"/to-private":  "http://10.0.0.1/a.png",
	}
	for path, to := range targets {
		mux.Handle(path, redirect(to))
	}
	outer := httptest.NewServer(mux)
	t.Cleanup(outer.Close)
	outerAddr := netip.MustParseAddrPort(outer.Listener.Addr().String())

	// The guarded client, with only the outer server let through as if it were public.
	client := avatar.NewHTTPClient(avatar.WithPermit(avatar.ClientOptions{Timeout: 5 * time.Second}, func(ap netip.AddrPort) bool { return ap == outerAddr }))
	p := avatar.NewProxy(avatar.ProxyOptions{Store: mustFileStore(t), URL: "https://example.test", HTTPClient: client})
	ctx := context.Background()
	if b, err := p.Fetch(ctx, outer.URL+"/pic.png"); err != nil || len(b) == 0 {
		t.Fatalf("the permitted server itself: %v", err)
	}
	if _, err := p.Fetch(ctx, inner.URL+"/a.png"); !errors.Is(err, avatar.ErrForbiddenAddress) {
		t.Fatalf("inner server directly: err = %v, want ErrForbiddenAddress", err)
	}
	for path, to := range targets {
		if _, err := p.Fetch(ctx, outer.URL+path); !errors.Is(err, avatar.ErrForbiddenAddress) {
			t.Errorf("redirect to %s: err = %v, want ErrForbiddenAddress", to, err)
		}
	}
	// A login whose picture redirects inside gets the identicon.
	link, err := p.Put(ctx, "u", outer.URL+"/to-ip")
	if err != nil {
		t.Fatal(err)
	}
	if got := avatartest.Read(t, p.ProxyStore(), idOf(t, link)); !bytes.Equal(got, avatar.Identicon("u")) {
		t.Fatal("want the identicon after a refused redirect")
	}
	if n := innerHits.Load(); n != 0 {
		t.Fatalf("the private server got %d requests", n)
	}
}

// TestProxy_ReplicasServeTheSameAvatar: two replicas on one PostgreSQL store serve one avatar alike.
func TestProxy_ReplicasServeTheSameAvatar(t *testing.T) {
	t.Parallel()
	pics := pictureServer(t)
	url := dbtest.NewURL(t)
	// Two server replicas, each with its own connection to the shared database.
	replica := func() *avatar.Proxy {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		p, _ := testProxy(t, avatar.ProxyOptions{Store: s})
		return p
	}
	a, b := replica(), replica()
	link, err := a.Put(context.Background(), "github_alice", pics.URL+"/small.png")
	if err != nil {
		t.Fatal(err)
	}
	baseA, c := avatarServer(t, a)
	baseB, _ := avatarServer(t, b)
	path := "/avatar/" + idOf(t, link)
	var etags []string
	for _, base := range []string{baseA, baseB} {
		resp, err := c.Get(base + path)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != 200 || resp.Header.Get("Content-Type") != "image/png" {
			t.Fatalf("%s: %d %s", base, resp.StatusCode, resp.Header.Get("Content-Type"))
		}
		etags = append(etags, resp.Header.Get("ETag"))
	}
	if etags[0] == "" || etags[0] != etags[1] {
		t.Fatalf("replicas disagree on the ETag: %v", etags)
	}
}
