// The MongoDB store's tests run against a real MongoDB-protocol server: an embedded FerretDB
// (SQLite backend) listening on an ephemeral loopback port.
package mongostore_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/FerretDB/FerretDB/ferretdb"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatartest"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/mongostore"
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
	s, err := mongostore.Open(context.Background(), uri)
	if err != nil {
		t.Fatalf("Open(%s): %v", uri, err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func TestMongoStore_Contract(t *testing.T) {
	uri := startFerretDB(t) + "?ava_db=triad_test&ava_coll=pics"
	avatartest.StoreContract(t, func() avatar.Store {
		s, err := mongostore.Open(context.Background(), uri)
		if err != nil {
			t.Fatalf("Open(%s): %v", uri, err)
		}
		return s
	})
}

// TestMongoStore_URIChoosesDatabaseAndBucket: ava_db and ava_coll select where avatars live, and
// without them the store uses database triad, bucket avatars.
func TestMongoStore_URIChoosesDatabaseAndBucket(t *testing.T) {
	uri := startFerretDB(t)
	img := avatar.Identicon("one")
	id := avatar.AvatarID("github_alice")
	stores := map[string]avatar.Store{
		"default":    openStore(t, uri),
		"pics":       openStore(t, uri+"?ava_db=triad_test&ava_coll=pics"),
		"other coll": openStore(t, uri+"?ava_db=triad_test&ava_coll=other"),
		"other db":   openStore(t, uri+"?ava_db=elsewhere&ava_coll=pics"),
	}
	for _, name := range []string{"default", "pics"} {
		if _, err := stores[name].Put(context.Background(), "github_alice", bytes.NewReader(img)); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	for name, s := range stores {
		ids, err := s.List(context.Background())
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		want := []string{}
		if name == "default" || name == "pics" {
			want = []string{id}
		}
		if !slices.Equal(ids, want) {
			t.Errorf("%s lists %v, want %v", name, ids, want)
		}
	}
	explicit := openStore(t, uri+"?ava_db="+mongostore.DefaultDB+"&ava_coll="+mongostore.DefaultColl)
	if !bytes.Equal(avatartest.Read(t, explicit, id), img) {
		t.Fatal("the default store is not database triad, bucket avatars")
	}
}

// TestMigrate_MongoAndFiles migrates from a file store into GridFS and from GridFS into another
// file store.
func TestMigrate_MongoAndFiles(t *testing.T) {
	mongo := openStore(t, startFerretDB(t)+"?ava_db=triad_test&ava_coll=migrated")
	src, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dst, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	avatartest.MigrateCheck(t, mongo, src)
	avatartest.MigrateCheck(t, dst, mongo)
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
				_, err := s.Put(context.Background(), "same_user", bytes.NewReader(img))
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
		got := avatartest.Read(t, s, id)
		if !slices.ContainsFunc(imgs, func(img []byte) bool { return bytes.Equal(img, got) }) {
			t.Fatalf("round %d: stored bytes are none of the pictures", round)
		}
		if ids, err := s.List(context.Background()); err != nil || !slices.Equal(ids, []string{id}) {
			t.Fatalf("round %d: list = %v, %v", round, ids, err)
		}
	}
}

// A revalidation with the current ETag is answered 304 without downloading the picture's chunks.
func TestMongoStore_RevalidationReadsNoPicture(t *testing.T) {
	s := openStore(t, startFerretDB(t)+"?ava_db=triad_test&ava_coll=revalidate")
	avatartest.RevalidationReadsNoPicture(t, s, func() int64 { return mongostore.Reads(s.(*mongostore.Store)) })
}
