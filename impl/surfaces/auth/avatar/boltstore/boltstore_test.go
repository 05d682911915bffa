package boltstore_test

import (
	"context"
	"path/filepath"
	"testing"

	bolt "go.etcd.io/bbolt"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatartest"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/boltstore"
)

func TestBoltStore_Contract(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "sub", "avatars.db") // the folder is created on open
	avatartest.StoreContract(t, func() avatar.Store {
		s, err := boltstore.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

// A revalidation with the current ETag is answered 304 without reading the picture out of the file.
func TestBoltStore_RevalidationReadsNoPicture(t *testing.T) {
	t.Parallel()
	s, err := boltstore.Open(filepath.Join(t.TempDir(), "avatars.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	avatartest.RevalidationReadsNoPicture(t, s, func() int64 { return boltstore.Reads(s) })
}

// A file written before content ids were kept (pictures only) gets them at Open, so revalidating
// its avatars reads no picture either.
func TestBoltStore_OpenFillsContentIDsOfAnOlderFile(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "old.db")
	pic := avatar.Identicon("older-file")
	id := avatar.AvatarID("github_older")
	old, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := old.Update(func(tx *bolt.Tx) error {
		b, err := tx.CreateBucket([]byte("avatars"))
		if err != nil {
			return err
		}
		return b.Put([]byte(id), pic)
	}); err != nil {
		t.Fatal(err)
	}
	if err := old.Close(); err != nil {
		t.Fatal(err)
	}
	s, err := boltstore.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.ID(context.Background(), id); got != avatar.ContentID(pic) || boltstore.Reads(s) != 0 {
		t.Fatalf("ID = %q after %d reads, want %q after none", got, boltstore.Reads(s), avatar.ContentID(pic))
	}
}
