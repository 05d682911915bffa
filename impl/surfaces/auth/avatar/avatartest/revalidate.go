package avatartest

import (
	"bytes"
	"context"
	"image"
	"image/color"
	"image/png"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
)

// bigPicture is a real PNG of about a megabyte (random pixels do not compress), so a store keeps
// it the way it keeps a large avatar (TOASTed in PostgreSQL, several GridFS chunks).
func bigPicture(t testing.TB) []byte {
	t.Helper()
	img := image.NewNRGBA(image.Rect(0, 0, 512, 512))
	r := rand.New(rand.NewPCG(1, 2))
	for i := range img.Pix {
		img.Pix[i] = byte(r.Uint32())
	}
	img.Set(0, 0, color.NRGBA{A: 255})
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// RevalidationReadsNoPicture serves a large avatar from s through the avatar Handler and checks
// that a revalidation whose If-None-Match holds the current ETag (GET or HEAD) answers 304 while
// reads, the store's own count of pictures it has read, stays unchanged; that a full GET does
// count (so the count is live); and that after a new picture the old ETag gets the new picture.
func RevalidationReadsNoPicture(t *testing.T, s avatar.Store, reads func() int64) {
	t.Helper()
	pic := bigPicture(t)
	id, err := s.Put(context.Background(), "github_revalidate", bytes.NewReader(pic))
	if err != nil {
		t.Fatal(err)
	}
	h := avatar.NewProxy(avatar.ProxyOptions{Store: s}).Handler()
	serve := func(method, inm string) *httptest.ResponseRecorder {
		t.Helper()
		req := httptest.NewRequest(method, "/"+id, nil)
		if inm != "" {
			req.Header.Set("If-None-Match", inm)
		}
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		return rec
	}
	before := reads()
	first := serve(http.MethodGet, "")
	etag := first.Header().Get("ETag")
	if first.Code != http.StatusOK || !bytes.Equal(first.Body.Bytes(), pic) || etag != `"`+avatar.ContentID(pic)+`"` {
		t.Fatalf("GET: %d, %d bytes, ETag %q; want 200, the %d bytes stored, the content id", first.Code, first.Body.Len(), etag, len(pic))
	}
	if reads() == before {
		t.Fatal("a full GET read no picture: the store's read count is not counting")
	}
	before = reads()
	for _, tc := range []struct{ method, inm string }{
		{http.MethodGet, etag}, {http.MethodHead, etag}, {http.MethodGet, "W/" + etag}, {http.MethodGet, `"other", ` + etag},
	} {
		rec := serve(tc.method, tc.inm)
		if rec.Code != http.StatusNotModified || rec.Body.Len() != 0 || rec.Header().Get("ETag") != etag ||
			rec.Header().Get("Cache-Control") != avatar.CacheControl {
			t.Fatalf("%s If-None-Match %s: %d with %d bytes, ETag %q, Cache-Control %q; want 304, ETag and Cache-Control",
				tc.method, tc.inm, rec.Code, rec.Body.Len(), rec.Header().Get("ETag"), rec.Header().Get("Cache-Control"))
		}
	}
	if n := reads() - before; n != 0 {
		t.Fatalf("four revalidations read the picture %d times, want 0", n)
	}

	// A new picture: the old ETag no longer matches, and the new bytes come with their own.
	pic2 := avatar.Identicon("revalidate-second")
	if _, err := s.Put(context.Background(), "github_revalidate", bytes.NewReader(pic2)); err != nil {
		t.Fatal(err)
	}
	rec := serve(http.MethodGet, etag)
	if rec.Code != http.StatusOK || !bytes.Equal(rec.Body.Bytes(), pic2) || rec.Header().Get("ETag") != `"`+avatar.ContentID(pic2)+`"` {
		t.Fatalf("stale If-None-Match after a new picture: %d, %d bytes, ETag %q; want 200 with the new picture", rec.Code, rec.Body.Len(), rec.Header().Get("ETag"))
	}
}
