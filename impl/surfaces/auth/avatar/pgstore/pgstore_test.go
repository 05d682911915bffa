package pgstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatartest"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/pgstore"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestPostgresStore_Contract(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	avatartest.StoreContract(t, func() avatar.Store {
		s, err := pgstore.Open(context.Background(), url)
		if err != nil {
			t.Fatalf("Open: %v", err)
		}
		return s
	})
}

func TestPostgresStore_ReplicasShareAvatars(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	a, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := pgstore.Open(context.Background(), url)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	img := avatar.Identicon(fmt.Sprint("picture", 6, "x", 6))
	id, err := a.Put(context.Background(), "u", bytes.NewReader(img))
	if err != nil {
		t.Fatal(err)
	}
	if got := avatartest.Read(t, b, id); !bytes.Equal(got, img) {
		t.Fatal("replica b does not see replica a's avatar")
	}
	if a.ID(context.Background(), id) != b.ID(context.Background(), id) || a.ID(context.Background(), id) != avatar.ContentID(img) {
		t.Fatal("replicas disagree on the content id")
	}
}

func TestPostgresStore_ConcurrentLogins(t *testing.T) {
	t.Parallel()
	s := pgstore.New(dbtest.New(t))
	// Many replicas logging the same user in at once: every Put succeeds and the row ends up as
	// one of the pictures, with its matching content id.
	imgs := make([][]byte, 8)
	for i := range imgs {
		imgs[i] = avatar.Identicon(fmt.Sprint("picture", 3+i, "x", 3))
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
	got := avatartest.Read(t, s, avatar.AvatarID("same_user"))
	if s.ID(context.Background(), avatar.AvatarID("same_user")) != avatar.ContentID(got) {
		t.Fatal("content id does not match the stored bytes")
	}
	found := false
	for _, img := range imgs {
		found = found || bytes.Equal(img, got)
	}
	if !found {
		t.Fatal("stored bytes are none of the pictures")
	}
	if ids, _ := s.List(context.Background()); len(ids) != 1 {
		t.Fatalf("list = %v", ids)
	}
}

func TestPostgresStore_TableRefusesNonImages(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	for _, tc := range []struct{ id, ct string }{
		{avatar.AvatarID("u"), "text/html"}, // not an image type
		{"../../etc/passwd", "image/png"},   // not an avatar id
	} {
		_, err := pool.Exec(ctx, `INSERT INTO avatars (id, content, content_type, etag) VALUES ($1, $2, $3, 'x')`,
			tc.id, []byte("<html>"), tc.ct)
		if err == nil {
			t.Errorf("insert %q %q accepted", tc.id, tc.ct)
		}
	}
}

// TestPostgresStore_OwnTableMatchesMigration: pointed at a database triad's migrations do not
// manage (here an empty schema), the store creates its avatars table and nothing else, the same
// table migration 00030 makes, and replicas opening it together all succeed.
func TestPostgresStore_OwnTableMatchesMigration(t *testing.T) {
	t.Parallel()
	url := dbtest.NewURL(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE SCHEMA elsewhere"); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 3 {
		wg.Go(func() {
			s, err := pgstore.Open(ctx, url+"&search_path=elsewhere")
			if err != nil {
				t.Error(err)
				return
			}
			_ = s.Close()
		})
	}
	wg.Wait()
	describe := func(schema string) string {
		var out string
		err := conn.QueryRow(ctx, `SELECT string_agg(d, E'\n' ORDER BY d) FROM (
			SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' || coalesce(column_default, '') AS d
			  FROM information_schema.columns WHERE table_schema = $1
			UNION ALL
			SELECT conrelid::regclass::text || ' ' || pg_get_constraintdef(oid)
			  FROM pg_constraint WHERE connamespace = $1::regnamespace) x`, schema).Scan(&out)
		if err != nil {
			t.Fatal(err)
		}
		return out
	}
	var tables []string
	rows, _ := conn.Query(ctx, "SELECT table_name FROM information_schema.tables WHERE table_schema = 'elsewhere'")
	tables, err = pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(tables) != 1 || tables[0] != "avatars" {
		t.Fatalf("tables created: %v (%v), want only avatars", tables, err)
	}
	own := strings.Split(strings.ReplaceAll(describe("elsewhere"), "elsewhere.", ""), "\n")
	var migrated []string
	for _, l := range strings.Split(describe("public"), "\n") {
		if strings.HasPrefix(l, "avatars") {
			migrated = append(migrated, l)
		}
	}
	slices.Sort(own)
	slices.Sort(migrated)
	if !slices.Equal(own, migrated) {
		t.Fatalf("the store's table differs from migration 00030's:\n%s\n---\n%s", strings.Join(own, "\n"), strings.Join(migrated, "\n"))
	}
}

// TestPostgresStore_CancelReachesTheDatabase: a caller that gives up (a client gone) ends the
// store's query in PostgreSQL at once, instead of holding a connection to the store's timeout.
func TestPostgresStore_CancelReachesTheDatabase(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	s := pgstore.New(pool)
	ctx := context.Background()
	// Another session holds the table, so the store's read waits in the database.
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "LOCK TABLE avatars IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	waiting := func() int {
		var n int
		// Asked outside tx: a transaction sees one snapshot of the statistics views.
		if err := pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE '%avatars%'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	cctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, _, err := s.Get(cctx, avatar.AvatarID("u"))
		done <- err
	}()
	for waiting() == 0 {
		select {
		case err := <-done:
			t.Fatalf("Get returned before waiting on the lock: %v", err)
		default:
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("Get after cancel: %v, want context.Canceled", err)
	}
	// The query is gone from the database while tx still holds the lock.
	for waiting() != 0 {
		runtime.Gosched()
	}
}

// readCounter counts the queries that read avatar bytes out of PostgreSQL (GetAvatar), seen by the
// driver: what a revalidation must not send.
type readCounter struct{ n atomic.Int64 }

func (c *readCounter) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	if strings.Contains(d.SQL, "-- name: GetAvatar :one") {
		c.n.Add(1)
	}
	return ctx
}

func (c *readCounter) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// A revalidation with the current ETag is answered 304 without reading the picture out of
// PostgreSQL (it used to fetch the whole bytea per 304: 424 MB/s for 50 clients on a 4 MB avatar).
func TestPostgresStore_RevalidationReadsNoPicture(t *testing.T) {
	t.Parallel()
	cfg, err := pgxpool.ParseConfig(dbtest.NewURL(t))
	if err != nil {
		t.Fatal(err)
	}
	reads := &readCounter{}
	cfg.ConnConfig.Tracer = reads
	pool, err := pgxpool.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	// The test database is migrated: the avatars table is there.
	avatartest.RevalidationReadsNoPicture(t, pgstore.New(pool), reads.n.Load)
}
