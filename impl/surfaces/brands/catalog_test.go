package brands

import (
	"context"
	"testing"
	"time"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestCatalog_DigestOfRowsMatchesListDigest: the digest ListBrands computes from the rows it read
// equals the one ListDigest computes from the versions query, for both lists, empty or not, and
// moves with every change of a listed row: that is what lets the HTTP edge's list cache hit and
// never serve a stale list.
func TestCatalog_DigestOfRowsMatchesListDigest(t *testing.T) {
	pool := dbtest.New(t)
	ctx := context.Background()
	tokens, err := opaquetoken.New(NewTokenStore(db.New(pool), nil), opaquetoken.Options{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(pool, Config{Hasher: password.New(password.Fast), Tokens: tokens})
	admin := Principal{UserID: "000000000000000000000000", IsAdmin: true}
	agree := func(l List, wantLen int) string {
		t.Helper()
		bs, d, err := svc.ListBrands(ctx, l)
		if err != nil {
			t.Fatal(err)
		}
		sqlD, err := svc.ListDigest(ctx, l)
		if err != nil || d != sqlD {
			t.Fatalf("list %d: digest %s, ListDigest says %s (%v)", l, d, sqlD, err)
		}
		if len(bs) != wantLen {
			t.Fatalf("list %d has %d brands, want %d", l, len(bs), wantLen)
		}
		return d
	}
	empty := agree(Available, 0)
	agree(Featured, 0)
	var ids []string
	for _, in := range []BrandInput{
		{Name: "Plain", Availability: true},
		{Name: "Star", Availability: true, IsFeatured: true, Products: []Product{{"name": "p", "price": 1.5}}},
		{Name: "Hidden", IsFeatured: true},
	} {
		b, err := svc.CreateBrand(ctx, admin, in)
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, b.ID)
	}
	before := agree(Available, 2)
	agree(Featured, 2)
	if before == empty {
		t.Fatal("the digest did not move when brands were added")
	}
	name := "Renamed"
	if _, err := svc.UpdateBrand(ctx, admin, ids[0], BrandPatch{Name: &name}); err != nil {
		t.Fatal(err)
	}
	if agree(Available, 2) == before {
		t.Fatal("the digest did not move when a listed brand changed")
	}
}
