package avatar

import (
	"bytes"
	"errors"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
)

// storeContract checks the behaviour every Store promises; each store's test runs it against the
// real backend.
func storeContract(t *testing.T, s Store) {
	t.Helper()
	img1, img2 := pngImage(t, 8, 8), pngImage(t, 9, 7)

	id, err := s.Put("github_alice", bytes.NewReader(img1))
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if id != AvatarID("github_alice") || !ValidID(id) {
		t.Fatalf("id = %q, want the hash-derived id", id)
	}
	if strings.Contains(id, "alice") {
		t.Fatalf("id %q leaks the user id", id)
	}
	got, size := readAll(t, s, id)
	if !bytes.Equal(got, img1) || size != len(img1) {
		t.Fatalf("get returned %d bytes (size %d), want the %d stored", len(got), size, len(img1))
	}
	etag1 := s.ID(id)
	if etag1 == "" {
		t.Fatal("ID of a stored avatar is empty")
	}
	if s.ID(id) != etag1 {
		t.Fatal("ID is not stable")
	}

	// A new login replaces the picture under the same id, and the content id changes.
	if id2, err := s.Put("github_alice", bytes.NewReader(img2)); err != nil || id2 != id {
		t.Fatalf("replace: id %q err %v", id2, err)
	}
	if got, _ := readAll(t, s, id); !bytes.Equal(got, img2) {
		t.Fatal("replace did not replace the bytes")
	}
	if s.ID(id) == etag1 {
		t.Fatal("ID did not change with the content")
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

	// Refusals: bytes that are not an image never get stored.
	if _, err := s.Put("github_carol", strings.NewReader("<html><script>alert(1)</script></html>")); !errors.Is(err, ErrNotImage) {
		t.Fatalf("put html: err = %v, want ErrNotImage", err)
	}
	if _, _, err := s.Get(AvatarID("github_carol")); !errors.Is(err, ErrNotFound) {
		t.Fatalf("refused put left something behind: %v", err)
	}
	big := append(append([]byte{}, img1...), make([]byte, MaxStoreBytes)...)
	if _, err := s.Put("github_carol", bytes.NewReader(big)); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("put huge: err = %v, want ErrTooLarge", err)
	}

	// Unknown and malformed ids are not found, never an error of another kind.
	for _, bad := range []string{AvatarID("nobody"), "../../etc/passwd", "x.image", "", strings.Repeat("a", 40)} {
		if _, _, err := s.Get(bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("get %q: err = %v, want ErrNotFound", bad, err)
		}
		if s.ID(bad) != "" {
			t.Errorf("ID(%q) is not empty", bad)
		}
		if err := s.Remove(bad); !errors.Is(err, ErrNotFound) {
			t.Errorf("remove %q: err = %v, want ErrNotFound", bad, err)
		}
	}

	if err := s.Remove(idB); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(idB); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get after remove: %v", err)
	}
	if ids, _ := s.List(); !slices.Equal(ids, []string{id}) {
		t.Fatalf("list after remove = %v", ids)
	}
}

// readAll gets an avatar's bytes.
func readAll(t *testing.T, s Store, id string) ([]byte, int) {
	t.Helper()
	rc, size, err := s.Get(id)
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

func TestFileStore_Contract(t *testing.T) {
	t.Parallel()
	s, err := NewStore(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storeContract(t, s)
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
	if _, err := s.Put("u1", bytes.NewReader(pngImage(t, 4, 4))); err != nil {
		t.Fatal(err)
	}
	// A secret next to the store must stay unreachable whatever the id looks like.
	secret := filepath.Join(root, "secret.png")
	if err := os.WriteFile(secret, pngImage(t, 2, 2), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"../secret.png", "..%2Fsecret.png", "/" + secret, "../avatars/../secret.png"} {
		if _, _, err := s.Get(id); !errors.Is(err, ErrNotFound) {
			t.Errorf("get %q: %v, want ErrNotFound", id, err)
		}
		if err := s.Remove(id); !errors.Is(err, ErrNotFound) {
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
	if ids, _ := s.List(); len(ids) != 1 || ids[0] != AvatarID("u1") {
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

func TestMigrate_FileToFile(t *testing.T) {
	t.Parallel()
	src, _ := NewFileStore(t.TempDir())
	dst, _ := NewFileStore(t.TempDir())
	want := map[string][]byte{}
	for i, u := range []string{"a", "b", "c"} {
		img := pngImage(t, 3+i, 3)
		id, err := src.Put(u, bytes.NewReader(img))
		if err != nil {
			t.Fatal(err)
		}
		want[id] = img
	}
	n, err := Migrate(dst, src)
	if err != nil || n != 3 {
		t.Fatalf("migrate = %d, %v", n, err)
	}
	for id, img := range want {
		if got, _ := readAll(t, dst, id); !bytes.Equal(got, img) {
			t.Errorf("%s differs after migration", id)
		}
		if dst.ID(id) != src.ID(id) {
			t.Errorf("%s content id differs after migration", id)
		}
	}
}

func TestFileStore_ReadersNeverSeeAPartialPicture(t *testing.T) {
	t.Parallel()
	s := mustFileStore(t)
	imgs := [][]byte{pngImage(t, 300, 200), pngImage(t, 200, 300), pngImage(t, 250, 250)}
	id, err := s.Put("u", bytes.NewReader(imgs[0]))
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
				if _, err := s.Put("u", bytes.NewReader(imgs[n%len(imgs)])); err != nil {
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
	if ids, _ := s.List(); len(ids) != 1 {
		t.Fatalf("list = %v", ids)
	}
	entries, _ := os.ReadDir(s.dir)
	if len(entries) != 1 {
		t.Fatalf("%d files in the store directory, want 1", len(entries))
	}
}
