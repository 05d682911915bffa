package avatar

import (
	"bytes"
	"context"
	"sync"
	"testing"

	"github.com/triadhq/triad/impl/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestPostgresStore_ReplicasShareAvatars(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	a, err := OpenPostgresStore(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := OpenPostgresStore(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	img := pngImage(t, 6, 6)
	id, err := a.Put("u", bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	if got, _ := readAll(t, b, id); !bytes.Equal(got, img) {
		t.Fatal("replica b does not see replica a's avatar")
	}
	if a.ID(id) != b.ID(id) || a.ID(id) != contentID(img) {
		t.Fatal("replicas disagree on the content id")
	}
}

func TestPostgresStore_ConcurrentLogins(t *testing.T) {
	t.Parallel()
	s := NewPostgresStore(dbtest.New(t))
	// Many replicas logging the same user in at once: every Put succeeds and the row ends up as
	// one of the pictures, with its matching content id.
	imgs := make([][]byte, 8)
	for i := range imgs {
		imgs[i] = pngImage(t, 3+i, 3)
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(imgs))
	for _, img := range imgs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, err := s.Put("same_user", bytes.NewReader(img))
			errs <- err
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	got, _ := readAll(t, s, AvatarID("same_user"))
	if s.ID(AvatarID("same_user")) != contentID(got) {
		t.Fatal("content id does not match the stored bytes")
	}
	found := false
	for _, img := range imgs {
		found = found || bytes.Equal(img, got)
	}
	if !found {
		t.Fatal("stored bytes are none of the pictures")
	}
	if ids, _ := s.List(); len(ids) != 1 {
		t.Fatalf("list = %v", ids)
	}
}

func TestPostgresStore_TableRefusesNonImages(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	for _, tc := range []struct{ id, ct string }{
		{AvatarID("u"), "text/html"},      // not an image type
		{"../../etc/passwd", "image/png"}, // not an avatar id
	} {
		_, err := pool.Exec(ctx, `INSERT INTO avatars (id, content, content_type, etag) VALUES ($1, $2, $3, 'x')`,
			tc.id, []byte("<html>"), tc.ct)
		if err == nil {
			t.Errorf("insert %q %q accepted", tc.id, tc.ct)
		}
	}
}

func TestProxy_ReplicasServeTheSameAvatar(t *testing.T) {
	t.Parallel()
	pics := pictureServer(t)
	url := dbtest.NewURL(t)
	// Two server replicas, each with its own connection to the shared database.
	replica := func() *Proxy {
		s, err := NewStore(url)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		p, _ := testProxy(t, ProxyOptions{Store: s})
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
