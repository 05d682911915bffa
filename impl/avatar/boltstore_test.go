package avatar

import (
	"bytes"
	"path/filepath"
	"testing"
)

func TestBoltStore_Contract(t *testing.T) {
	t.Parallel()
	s, err := NewStore("bolt://" + filepath.Join(t.TempDir(), "sub", "avatars.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	storeContract(t, s)
}

func TestBoltStore_SurvivesReopen(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "avatars.db")
	s, err := NewBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	img := pngImage(t, 5, 5)
	id, err := s.Put("u", bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = NewBoltStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got, _ := readAll(t, s, id); !bytes.Equal(got, img) {
		t.Fatal("avatar lost across reopen")
	}
}

func TestMigrate_FileToBoltAndBack(t *testing.T) {
	t.Parallel()
	src := mustFileStore(t)
	dst, err := NewBoltStore(filepath.Join(t.TempDir(), "a.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	for _, u := range []string{"a", "b"} {
		if _, err := src.Put(u, bytes.NewReader(Identicon(u))); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := Migrate(dst, src); err != nil || n != 2 {
		t.Fatalf("migrate = %d, %v", n, err)
	}
	back := mustFileStore(t)
	if n, err := Migrate(back, dst); err != nil || n != 2 {
		t.Fatalf("migrate back = %d, %v", n, err)
	}
	for _, u := range []string{"a", "b"} {
		if got, _ := readAll(t, back, AvatarID(u)); !bytes.Equal(got, Identicon(u)) {
			t.Fatalf("%s changed on the round trip", u)
		}
	}
}
