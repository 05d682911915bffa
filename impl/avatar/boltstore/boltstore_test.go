package boltstore_test

import (
	"path/filepath"
	"testing"

	"github.com/triadhq/triad/impl/avatar"
	"github.com/triadhq/triad/impl/avatar/avatartest"
	"github.com/triadhq/triad/impl/avatar/boltstore"
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
