package mongotest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"

	"github.com/triadhq/triad/impl/avatar"
)

// startFerretDB runs an embedded FerretDB over SQLite files in a temp dir and returns its
// mongodb:// URI; it stops with the test.
func startFerretDB(t *testing.T) string {
	t.Helper()
	f, err := ferretdb.New(&ferretdb.Config{
		Listener:  ferretdb.ListenerConfig{TCP: "127.0.0.1:0"},
		Handler:   "sqlite",
		SQLiteURL: (&url.URL{Scheme: "file", Path: t.TempDir() + "/"}).String(),
		Logger:    slog.New(slog.DiscardHandler),
	})
	if err != nil {
		t.Fatalf("ferretdb: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = f.Run(ctx)
	}()
	t.Cleanup(func() {
		cancel()
		<-done
	})
	// MongoDBURI needs the listener, which Run starts; poll until it is up.
	deadline := time.Now().Add(10 * time.Second)
	for {
		uri := f.MongoDBURI()
		if !strings.Contains(uri, ":0/") {
			return uri
		}
		if time.Now().After(deadline) {
			t.Fatal("ferretdb did not start")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func openStore(t *testing.T, uri string) avatar.Store {
	t.Helper()
	s, err := avatar.NewStore(uri)
	if err != nil {
		t.Fatalf("NewStore(%s): %v", uri, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func read(t *testing.T, s avatar.Store, id string) []byte {
	t.Helper()
	rc, size, err := s.Get(id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil || len(b) != size {
		t.Fatalf("read %s: %d bytes, size %d, %v", id, len(b), size, err)
	}
	return b
}

func TestMongoStore_GridFSOnFerretDB(t *testing.T) {
	uri := startFerretDB(t)
	s := openStore(t, uri+"?ava_db=triad_test&ava_coll=pics")
	img1, img2 := avatar.Identicon("one"), avatar.Identicon("two")

	id, err := s.Put("github_alice", bytes.NewReader(img1))
	if err != nil {
		t.Fatal(err)
	}
	if id != avatar.AvatarID("github_alice") {
		t.Fatalf("id %q", id)
	}
	if !bytes.Equal(read(t, s, id), img1) {
		t.Fatal("stored bytes differ")
	}
	etag1 := s.ID(id)
	if etag1 == "" {
		t.Fatal("empty content id")
	}

	// Replacing keeps one file per avatar and changes the content id.
	if _, err := s.Put("github_alice", bytes.NewReader(img2)); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(read(t, s, id), img2) || s.ID(id) == etag1 {
		t.Fatal("replace did not take")
	}
	idB, err := s.Put("github_bob", bytes.NewReader(img1))
	if err != nil {
		t.Fatal(err)
	}
	ids, err := s.List()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	want := []string{id, idB}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("list = %v, want %v", ids, want)
	}

	// Refusals and unknown ids.
	if _, err := s.Put("x", strings.NewReader("<html></html>")); !errors.Is(err, avatar.ErrNotImage) {
		t.Fatalf("html put: %v", err)
	}
	for _, bad := range []string{avatar.AvatarID("nobody"), `{"$ne": ""}`, "../x"} {
		if _, _, err := s.Get(bad); !errors.Is(err, avatar.ErrNotFound) {
			t.Errorf("get %q: %v", bad, err)
		}
		if err := s.Remove(bad); !errors.Is(err, avatar.ErrNotFound) {
			t.Errorf("remove %q: %v", bad, err)
		}
	}

	if err := s.Remove(idB); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(idB); !errors.Is(err, avatar.ErrNotFound) {
		t.Fatalf("get after remove: %v", err)
	}

	// The parameters select the database and bucket: another bucket is empty.
	other := openStore(t, uri+"?ava_db=triad_test&ava_coll=other")
	if ids, err := other.List(); err != nil || len(ids) != 0 {
		t.Fatalf("other bucket: %v %v", ids, err)
	}

	// Migration in both directions between Mongo and a file store.
	files, err := avatar.NewFileStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if n, err := avatar.Migrate(files, s); err != nil || n != 1 {
		t.Fatalf("migrate mongo->file = %d, %v", n, err)
	}
	if n, err := avatar.Migrate(other, files); err != nil || n != 1 {
		t.Fatalf("migrate file->mongo = %d, %v", n, err)
	}
	if !bytes.Equal(read(t, other, id), img2) || other.ID(id) != s.ID(id) {
		t.Fatal("migrated avatar differs")
	}
}

// TestMongoStore_ConcurrentLogins: several replicas saving the same user's picture at once must
// leave exactly one complete picture behind, never none (each Put drops only revisions older than
// its own).
func TestMongoStore_ConcurrentLogins(t *testing.T) {
	s := openStore(t, startFerretDB(t)+"?ava_db=triad_test&ava_coll=race")
	for round := 0; round < 5; round++ {
		imgs := make([][]byte, 6)
		for i := range imgs {
			imgs[i] = avatar.Identicon(fmt.Sprintf("picture-%d-%d", round, i))
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
		id := avatar.AvatarID("same_user")
		got := read(t, s, id)
		if !slices.ContainsFunc(imgs, func(img []byte) bool { return bytes.Equal(img, got) }) {
			t.Fatalf("round %d: stored bytes are none of the pictures", round)
		}
		if ids, err := s.List(); err != nil || !slices.Equal(ids, []string{id}) {
			t.Fatalf("round %d: list = %v, %v", round, ids, err)
		}
	}
}
