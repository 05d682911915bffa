package avatar_test

import (
	"path/filepath"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatartest"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/boltstore"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/filestore"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/pgstore"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestMigrate_BetweenStores moves avatars along file -> bolt -> postgres -> file, so every store is
// both a source and a destination of Migrate (the MongoDB store's turn is in its own package).
func TestMigrate_BetweenStores(t *testing.T) {
	t.Parallel()
	keep := func(s avatar.Store, err error) avatar.Store {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = s.Close() })
		return s
	}
	files := keep(filestore.New(t.TempDir()))
	bolt := keep(boltstore.Open(filepath.Join(t.TempDir(), "a.db")))
	pg := keep(pgstore.Open(t.Context(), dbtest.NewURL(t)))
	back := keep(filestore.New(t.TempDir()))
	avatartest.MigrateCheck(t, bolt, files)
	avatartest.MigrateCheck(t, pg, bolt)
	avatartest.MigrateCheck(t, back, pg)
}
