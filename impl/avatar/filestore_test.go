package avatar

import (
	"bytes"
	"context"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// readAll gets an avatar's bytes.
func readAll(t *testing.T, s Store, id string) ([]byte, int) {
	t.Helper()
	rc, size, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	defer rc.Close()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatal(err)
	}
	return b, size
}

func TestFileStore_FileURIAndNoTraversal(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	dir := filepath.Join(root, "avatars")
	s, err := NewStore("file://" + dir)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Put(context.Background(), "u1", bytes.NewReader(pngImage(t, 4, 4))); err != nil {
		t.Fatal(err)
	}
	// A secret next to the store must stay unreachable whatever the id looks like.
	secret := filepath.Join(root, "secret.png")
	if err := os.WriteFile(secret, pngImage(t, 2, 2), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../secret.png", "..%2Fsecret.png", "/" + secret, "../avatars/../secret.png"} {
		if _, _, err := s.Get(context.Background(), id); !errors.Is(err, ErrNotFound) {
			t.Errorf("get %q: %v, want ErrNotFound", id, err)
		}
		if err := s.Remove(context.Background(), id); !errors.Is(err, ErrNotFound) {
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
	if ids, _ := s.List(context.Background()); len(ids) != 1 || ids[0] != AvatarID("u1") {
		t.Fatalf("list = %v", ids)
	}
}

func TestNewStore_Refusals(t *testing.T) {
	t.Parallel()
	for _, uri := range []string{"", "ftp://host/x", "s3://bucket"} {
		if s, err := NewStore(uri); err == nil {
			_ = s.Close()
			t.Errorf("NewStore(%q) accepted", uri)
		}
	}
}

func TestNewStore_ErrorsDoNotLeakCredentials(t *testing.T) {
	t.Parallel()
	// Every one of these fails fast (a parse error, a bad option, a refused connection), and the
	// error, which the server logs, must not repeat the password.
	for _, uri := range []string{
		"postgres://bob:s3cret@host:badport/db",
		"postgres://bob:s3cret@127.0.0.1:1/db?sslmode=bogus",
		"postgres://bob:s3cret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2",
		"mongodb://bob:s3cret@host:badport/?ava_db=x",
		"mongodb://bob:s3cret@127.0.0.1:1/?authMechanism=BOGUS",
		"bolt://bob:s3cret@host:badport/x.db",
	} {
		s, err := NewStore(uri)
		if err == nil {
			_ = s.Close()
			t.Errorf("NewStore(%q) accepted", uri)
			continue
		}
		if strings.Contains(err.Error(), "s3cret") {
			t.Errorf("NewStore(%q) error leaks the password: %v", uri, err)
		}
	}
}

func TestFileStore_ReadersNeverSeeAPartialPicture(t *testing.T) {
	t.Parallel()
	s := mustFileStore(t)
	imgs := [][]byte{pngImage(t, 300, 200), pngImage(t, 200, 300), pngImage(t, 250, 250)}
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
		got, _ := readAll(t, s, id)
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
	entries, _ := os.ReadDir(s.dir)
	if len(entries) != 1 {
		t.Fatalf("%d files in the store directory, want 1", len(entries))
	}
}
