// Package avatartest holds the behaviour every avatar.Store promises, as checks that each store's
// tests run against the real backend (a directory, a bbolt file, Postgres, a MongoDB-protocol
// server), so all four stores are held to one contract.
package avatartest

import (
	"bytes"
	"context"
	"errors"
	"io"
	"slices"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
)

// Pictures used by the checks: real PNGs, different from each other.
func pictures() (a, b []byte) { return avatar.Identicon("picture-a"), avatar.Identicon("picture-b") }

// Read returns an avatar's bytes, failing the test if Get fails or its size is not the byte count.
func Read(t testing.TB, s avatar.Store, id string) []byte {
	t.Helper()
	rc, size, err := s.Get(context.Background(), id)
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	defer func() { _ = rc.Close() }()
	b, err := io.ReadAll(rc)
	if err != nil {
		t.Fatalf("read %s: %v", id, err)
	}
	if size != len(b) {
		t.Fatalf("get %s: size %d, but %d bytes", id, size, len(b))
	}
	return b
}

// StoreContract checks Put, Get, ID, Remove, List and Close on the store that open returns, which
// must be empty. It opens the store twice: once for the checks, closing it at the end (Close must
// succeed), and again to check that what was stored survives the close and that the first
// instance released whatever it held (a bbolt file lock, a connection pool).
func StoreContract(t *testing.T, open func() avatar.Store) {
	t.Helper()
	s := open()
	img1, img2 := pictures()

	if ids, err := s.List(context.Background()); err != nil || len(ids) != 0 {
		t.Fatalf("list of an empty store = %v, %v", ids, err)
	}

	id, err := s.Put(context.Background(), "github_alice", bytes.NewReader(img1))
	if err != nil {
		t.Fatalf("put: %v", err)
	}
	if id != avatar.AvatarID("github_alice") || !avatar.ValidID(id) {
		t.Fatalf("id = %q, want the hash-derived id", id)
	}
	if strings.Contains(id, "alice") {
		t.Fatalf("id %q leaks the user id", id)
	}
	if got := Read(t, s, id); !bytes.Equal(got, img1) {
		t.Fatalf("get returned %d bytes, want the %d stored", len(got), len(img1))
	}
	etag1 := s.ID(context.Background(), id)
	if etag1 == "" {
		t.Fatal("ID of a stored avatar is empty")
	}
	if s.ID(context.Background(), id) != etag1 {
		t.Fatal("ID is not stable")
	}

	// A new login replaces the picture under the same id, and the content id changes.
	if id2, err := s.Put(context.Background(), "github_alice", bytes.NewReader(img2)); err != nil || id2 != id {
		t.Fatalf("replace: id %q err %v", id2, err)
	}
	if got := Read(t, s, id); !bytes.Equal(got, img2) {
		t.Fatal("replace did not replace the bytes")
	}
	etag2 := s.ID(context.Background(), id)
	if etag2 == "" || etag2 == etag1 {
		t.Fatalf("ID after replace = %q (before %q): it must follow the content", etag2, etag1)
	}

	// The same bytes under another user: another avatar, same content id.
	idB, err := s.Put(context.Background(), "github_bob", bytes.NewReader(img1))
	if err != nil {
		t.Fatal(err)
	}
	if idB == id || s.ID(context.Background(), idB) != etag1 {
		t.Fatalf("bob's avatar %q has content id %q, want a new id with content id %q", idB, s.ID(context.Background(), idB), etag1)
	}
	ids, err := s.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	want := []string{id, idB}
	slices.Sort(want)
	if !slices.Equal(ids, want) {
		t.Fatalf("list = %v, want %v", ids, want)
	}

	// Refusals: bytes that are not an image never get stored, even behind an image signature,
	// and neither does a picture over the byte cap.
	for name, b := range map[string][]byte{
		"html":                  []byte("<html><script>alert(1)</script></html>"),
		"svg":                   []byte(`<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>`),
		"png signature, script": []byte("\x89PNG\r\n\x1a\n<script>alert(1)</script>"),
		"empty":                 nil,
	} {
		if _, err := s.Put(context.Background(), "github_carol", bytes.NewReader(b)); !errors.Is(err, avatar.ErrNotImage) {
			t.Errorf("put %s: err = %v, want ErrNotImage", name, err)
		}
	}
	big := append(append([]byte{}, img1...), make([]byte, avatar.MaxStoreBytes)...)
	if _, err := s.Put(context.Background(), "github_carol", bytes.NewReader(big)); !errors.Is(err, avatar.ErrTooLarge) {
		t.Fatalf("put huge: err = %v, want ErrTooLarge", err)
	}
	if _, _, err := s.Get(context.Background(), avatar.AvatarID("github_carol")); !errors.Is(err, avatar.ErrNotFound) {
		t.Fatalf("refused puts left something behind: %v", err)
	}

	// Unknown and malformed ids are not found, never an error of another kind. The malformed ones
	// include path tricks and query operators, which must not reach a file name or a filter.
	for _, bad := range []string{avatar.AvatarID("nobody"), "../../etc/passwd", "../" + id, "x.image", "",
		strings.Repeat("a", 40), strings.ToUpper(id), `{"$ne": ""}`, id + "\x00"} {
		if _, _, err := s.Get(context.Background(), bad); !errors.Is(err, avatar.ErrNotFound) {
			t.Errorf("get %q: err = %v, want ErrNotFound", bad, err)
		}
		if s.ID(context.Background(), bad) != "" {
			t.Errorf("ID(%q) is not empty", bad)
		}
		if err := s.Remove(context.Background(), bad); !errors.Is(err, avatar.ErrNotFound) {
			t.Errorf("remove %q: err = %v, want ErrNotFound", bad, err)
		}
	}

	if err := s.Remove(context.Background(), idB); err != nil {
		t.Fatal(err)
	}
	if _, _, err := s.Get(context.Background(), idB); !errors.Is(err, avatar.ErrNotFound) {
		t.Fatalf("get after remove: %v", err)
	}
	if s.ID(context.Background(), idB) != "" {
		t.Fatal("ID after remove is not empty")
	}
	if err := s.Remove(context.Background(), idB); !errors.Is(err, avatar.ErrNotFound) {
		t.Fatalf("second remove: err = %v, want ErrNotFound", err)
	}
	if ids, err := s.List(context.Background()); err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("list after remove = %v, %v", ids, err)
	}
	if err := s.Close(); err != nil {
		t.Fatalf("close: %v", err)
	}

	// Reopened, the store still holds alice's picture and nothing else.
	s = open()
	defer func() { _ = s.Close() }()
	if got := Read(t, s, id); !bytes.Equal(got, img2) || s.ID(context.Background(), id) != etag2 {
		t.Fatal("the avatar did not survive closing and reopening the store")
	}
	if ids, err := s.List(context.Background()); err != nil || !slices.Equal(ids, []string{id}) {
		t.Fatalf("list after reopen = %v, %v", ids, err)
	}
}

// MigrateCheck fills src with a few avatars, migrates them into dst with avatar.Migrate and checks
// that dst then serves every one of them under the same id, with the same bytes and content id.
// A second run copies them again without creating duplicates. Both stores stay open.
func MigrateCheck(t *testing.T, dst, src avatar.Store) {
	t.Helper()
	want := map[string][]byte{}
	for _, u := range []string{"migrate_a", "migrate_b", "migrate_c"} {
		img := avatar.Identicon(u)
		id, err := src.Put(context.Background(), u, bytes.NewReader(img))
		if err != nil {
			t.Fatal(err)
		}
		want[id] = img
	}
	srcIDs, err := src.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	before, err := dst.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	for run := 1; run <= 2; run++ {
		n, err := avatar.Migrate(context.Background(), dst, src)
		if err != nil || n != len(srcIDs) {
			t.Fatalf("migrate run %d = %d, %v; want %d", run, n, err, len(srcIDs))
		}
	}
	for id, img := range want {
		if got := Read(t, dst, id); !bytes.Equal(got, img) {
			t.Errorf("%s differs after migration", id)
		}
		if dst.ID(context.Background(), id) == "" || dst.ID(context.Background(), id) != src.ID(context.Background(), id) {
			t.Errorf("%s: content id %q after migration, %q before", id, dst.ID(context.Background(), id), src.ID(context.Background(), id))
		}
	}
	after, err := dst.List(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	wantIDs := append(append([]string{}, before...), srcIDs...)
	slices.Sort(wantIDs)
	wantIDs = slices.Compact(wantIDs)
	slices.Sort(after)
	if !slices.Equal(after, wantIDs) {
		t.Fatalf("destination lists %v, want %v", after, wantIDs)
	}
}
