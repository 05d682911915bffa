package filestore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatartest"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
)

func TestFileStore_Contract(t *testing.T) {
	t.Parallel()
	dir := filepath.Join(t.TempDir(), "new", "dir") // created on open
	avatartest.StoreContract(t, func() avatar.Store {
		s, err := filestore.New(dir)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestFileStore_NoTraversal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "avatars")
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(context.Background(), "u1", bytes.NewReader(avatar.Identicon(fmt.Sprint("picture", 4, "x", 4)))); err != nil {
		t.Fatal(err)
	}
	// A secret next to the store must stay unreachable whatever the id looks like.
	secret := filepath.Join(root, "secret.png")
	if err := os.WriteFile(secret, avatar.Identicon(fmt.Sprint("picture", 2, "x", 2)), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../secret.png", "..%2Fsecret.png", "/" + secret, "../avatars/../secret.png"} {
		if _, _, err := s.Get(context.Background(), id); !errors.Is(err, avatar.ErrNotFound) {
			t.Errorf("get %q: %v, want ErrNotFound", id, err)
		}
		if err := s.Remove(context.Background(), id); !errors.Is(err, avatar.ErrNotFound) {
			t.Errorf("remove %q: %v", id, err)
		}
	}
	if _, err := os.Stat(secret); err != nil {
		t.Fatalf("secret touched: %v", err)
	}
	// Stray files in the directory are not avatars.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if ids, _ := s.List(context.Background()); len(ids) != 1 || ids[0] != avatar.AvatarID("u1") {
		t.Fatalf("list = %v", ids)
	}
}

func TestFileStore_ReadersNeverSeeAPartialPicture(t *testing.T) {
	t.Parallel()
	s, err := filestore.New(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	imgs := [][]byte{avatar.Identicon(fmt.Sprint("picture", 300, "x", 200)), avatar.Identicon(fmt.Sprint("picture", 200, "x", 300)), avatar.Identicon(fmt.Sprint("picture", 250, "x", 250))}
	id, err := s.Put(context.Background(), "u", bytes.NewReader(imgs[0]))
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for i := 0; i < 4; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for n := 0; ; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := s.Put(context.Background(), "u", bytes.NewReader(imgs[n%len(imgs)])); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	for i := 0; i < 200; i++ {
		got := avatartest.Read(t, s, id)
		if !slices.ContainsFunc(imgs, func(img []byte) bool { return bytes.Equal(img, got) }) {
			close(stop)
			wg.Wait()
			t.Fatalf("read %d bytes that are none of the pictures", len(got))
		}
	}
	close(stop)
	wg.Wait()
	// No temporary files are left behind.
	if ids, _ := s.List(context.Background()); len(ids) != 1 {
		t.Fatalf("list = %v", ids)
	}
	entries, _ := os.ReadDir(s.Dir())
	if len(entries) != 1 {
		t.Fatalf("%d files in the store directory, want 1", len(entries))
	}
}

// A revalidation with the current ETag is answered 304 without opening the picture's file, also by
// a store opened after the picture was written (it hashes the file once, then stats it only).
func TestFileStore_RevalidationReadsNoPicture(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	s, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	avatartest.RevalidationReadsNoPicture(t, s, func() int64 { return filestore.Reads(s) })

	reopened, err := filestore.New(dir)
	if err != nil {
		t.Fatal(err)
	}
	id := avatar.AvatarID("github_revalidate")
	etag := reopened.ID(context.Background(), id)
	before := filestore.Reads(reopened)
	for range 5 {
		if reopened.ID(context.Background(), id) != etag {
			t.Fatal("ID changed without a new picture")
		}
	}
	if n := filestore.Reads(reopened) - before; n != 0 {
		t.Fatalf("five IDs of a known file read it %d times, want 0", n)
	}
}
