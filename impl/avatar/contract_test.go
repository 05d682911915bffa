package avatar_test

import (
	"path/filepath"
	"testing"

	"github.com/triadhq/triad/impl/avatar"
	"github.com/triadhq/triad/impl/avatar/avatartest"
	"github.com/triadhq/triad/impl/dbtest"
)

// opener opens the store at uri through avatar.NewStore, as the server does.
func opener(t *testing.T, uri string) func() avatar.Store {
	return func() avatar.Store {
		t.Helper()
		s, err := avatar.NewStore(uri)
		if err != nil {
			t.Fatalf("NewStore(%s): %v", uri, err)
		}
		return s
	}
}

func TestFileStore_Contract(t *testing.T) {
	t.Parallel()
	avatartest.StoreContract(t, opener(t, t.TempDir()))
}

func TestFileStore_FileURIContract(t *testing.T) {
	t.Parallel()
	avatartest.StoreContract(t, opener(t, "file://"+filepath.Join(t.TempDir(), "new", "dir")))
}

func TestBoltStore_Contract(t *testing.T) {
	t.Parallel()
	avatartest.StoreContract(t, opener(t, "bolt://"+filepath.Join(t.TempDir(), "sub", "avatars.db")))
}

func TestPostgresStore_Contract(t *testing.T) {
	t.Parallel()
	avatartest.StoreContract(t, opener(t, dbtest.NewURL(t)))
}

// TestMigrate_BetweenStores moves avatars along file -> bolt -> postgres -> file, so every store is
// both a source and a destination of Migrate (the MongoDB store's turn is in mongotest).
func TestMigrate_BetweenStores(t *testing.T) {
	t.Parallel()
	open := func(uri string) avatar.Store {
		s := opener(t, uri)()
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	files := open(t.TempDir())
	bolt := open("bolt://" + filepath.Join(t.TempDir(), "a.db"))
	pg := open(dbtest.NewURL(t))
	back := open("file://" + t.TempDir())
	avatartest.MigrateCheck(t, bolt, files)
	avatartest.MigrateCheck(t, pg, bolt)
	avatartest.MigrateCheck(t, back, pg)
}
