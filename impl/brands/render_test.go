package brands

import (
	"context"
	"encoding/json"
	"reflect"
	"strings"
	"testing"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/dbtest"
	"github.com/triadhq/triad/impl/password"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

func TestRender_StringsRoundTrip(t *testing.T) {
	for _, s := range []string{"", "plain", `quote " and \ backslash`, "ctl \x00\x01\x1f\t\n\r", "ünïcödé ✓ 😀",
		"line\u2028sep\u2029", "bad \xff utf8", "</script><!--"} {
		out := appendString(nil, s)
		var back string
		if err := json.Unmarshal(out, &back); err != nil {
			t.Errorf("%q -> %s: invalid JSON: %v", s, out, err)
			continue
		}
		want := strings.ToValidUTF8(s, "\uFFFD")
		if back != want {
			t.Errorf("%q -> %s -> %q", s, out, back)
		}
	}
}

// TestRender_MatchesSQL renders brands from the database and checks the body against
// encoding/json's view of the same rows and the digest against the SQL digest query, which is
// what lets the list cache hit.
func TestRender_MatchesSQL(t *testing.T) {
	pool := dbtest.New(t)
	ctx := context.Background()
	svc := NewService(pool, Config{Hasher: password.New(password.Fast)})
	q := db.New(pool)
	for _, in := range []BrandInput{
		{Name: "Plain", Availability: true},
		{Name: `Tricky "name" \ ✓`, Description: "line\nbreak\x01", URL: "https://a.example.com/?q=1&r=<2>", Availability: true, IsFeatured: true,
			Products: []Product{{"name": "p", "price": 1.5, "tags": []any{"a", "b"}}}},
		{Name: "Hidden", Availability: false},
	} {
		p := productsJSON(&ValidationError{}, in.Products)
		if _, err := q.CreateBrand(ctx, db.CreateBrandParams{Name: in.Name, Description: in.Description, Url: in.URL,
			Availability: in.Availability, IsFeatured: in.IsFeatured, Products: p}); err != nil {
			t.Fatal(err)
		}
	}
	rows, err := q.ListAvailableBrandRows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	digest, body := renderList(rows)
	sqlDigest, err := q.AvailableBrandsDigest(ctx)
	if err != nil || digest != sqlDigest {
		t.Fatalf("digest %s, SQL says %s (%v)", digest, sqlDigest, err)
	}
	var got []map[string]any
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatalf("invalid JSON %s: %v", body, err)
	}
	if len(got) != 2 {
		t.Fatalf("rendered %d brands, want the 2 available", len(got))
	}
	for i, r := range rows {
		var products any
		_ = json.Unmarshal(r.Products, &products)
		want := map[string]any{"_id": r.ID, "name": r.Name, "description": r.Description, "url": r.Url,
			"featuredImage": r.FeaturedImage, "availability": r.Availability, "isFeatured": r.IsFeatured,
			"products": products, "subscriberCount": float64(r.SubscriberCount)}
		if !reflect.DeepEqual(got[i], want) {
			t.Errorf("brand %d:\n got %v\nwant %v", i, got[i], want)
		}
	}
	// Empty lists agree too.
	if _, err := pool.Exec(ctx, `UPDATE brands SET availability = false`); err != nil {
		t.Fatal(err)
	}
	d, b := renderList(nil)
	if sqlDigest, _ := q.AvailableBrandsDigest(ctx); d != sqlDigest || b != "[]" {
		t.Fatalf("empty list: %s %s vs SQL %s", d, b, sqlDigest)
	}
	// And the service's own list reflects the change.
	if l, err := svc.ListJSON(ctx); err != nil || l != "[]" {
		t.Fatalf("ListJSON = %s, %v", l, err)
	}
}
