package httpapi

import (
	"encoding/json"
	"reflect"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/surfaces/brands"
)

// TestRender_BrandShape: the one mapping (brandJSON, userJSON) gives exactly the spec's view of the same
// brand (every field of the spec's Brand, nothing else), in lists, alone and in a profile.
func TestRender_BrandShape(t *testing.T) {
	bs := []brands.Brand{
		{ID: "0123456789abcdef01234567", Name: "Plain", Availability: true},
		{ID: "0123456789abcdef01234568", Name: `Tricky "name" \ ✓`, Description: "line\nbreak\x01",
			URL: "https://a.example.com/?q=1&r=<2>", Availability: true, IsFeatured: true,
			Products: []byte(`[{"name": "p", "price": 1.5, "tags": ["a", "b"]}]`), SubscriberCount: 7},
	}
	want := func(b brands.Brand) map[string]any {
		var products any = []any{}
		if len(b.Products) > 0 {
			_ = json.Unmarshal(b.Products, &products)
		}
		return map[string]any{"_id": b.ID, "name": b.Name, "description": b.Description, "url": b.URL,
			"featuredImage": b.FeaturedImage, "availability": b.Availability, "isFeatured": b.IsFeatured,
			"products": products, "subscriberCount": float64(b.SubscriberCount)}
	}
	var list []map[string]any
	if err := json.Unmarshal(renderList(bs), &list); err != nil || len(list) != 2 {
		t.Fatalf("list: %v %v", list, err)
	}
	for i := range bs {
		if !reflect.DeepEqual(list[i], want(bs[i])) {
			t.Errorf("brand %d:\n got %v\nwant %v", i, list[i], want(bs[i]))
		}
		var one map[string]any
		if err := json.Unmarshal(encode(brandJSON(&bs[i])), &one); err != nil || !reflect.DeepEqual(one, want(bs[i])) {
			t.Errorf("brand %d alone: %v %v", i, one, err)
		}
	}
	if string(renderList(nil)) != "[]" {
		t.Error("an empty list is not []")
	}
	created := time.Date(2024, 5, 6, 7, 8, 9, 123456789, time.FixedZone("x", 3600))
	var me map[string]any
	p := brands.Profile{User: brands.User{ID: "u1", Email: "a@example.com", Name: "Ada", CreatedAt: created}, Subscriptions: bs}
	if err := json.Unmarshal(encode(userJSON("tok", &p)), &me); err != nil {
		t.Fatal(err)
	}
	subs, _ := me["subscriptions"].([]any)
	if me["_id"] != "u1" || me["token"] != "tok" || me["isAdmin"] != false || me["created_at"] != "2024-05-06T06:08:09.123Z" ||
		len(subs) != 2 || !reflect.DeepEqual(subs[1], want(bs[1])) || len(me) != 7 {
		t.Errorf("profile %v", me)
	}
}
