package httpapi

import (
	"context"
	"encoding/json"
	"fmt"
	"sync/atomic"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/surfaces/brands"
)

// The Brand object of api/brands.yaml is the generated brandsapi.Brand, filled by brandJSON and
// nowhere else, and answered through the generated response types: a new field is one edit of
// the spec and one line of brandJSON. Every brand the API answers with (lists, one brand, a
// profile's subscriptions) goes through it; only the two public lists are encoded here, once per
// change of their rows (listCache), and answered as those bytes (cachedList).

// brandJSON is a brand as the API shows it.
func brandJSON(b *brands.Brand) brandsapi.Brand {
	products := json.RawMessage(b.Products) // jsonb text from PostgreSQL: valid JSON already
	if len(products) == 0 {
		products = json.RawMessage("[]")
	}
	return brandsapi.Brand{
		UnderscoreId: b.ID, Name: b.Name, Description: b.Description, Url: b.URL, FeaturedImage: b.FeaturedImage,
		Availability: b.Availability, IsFeatured: b.IsFeatured, Products: products, SubscriberCount: b.SubscriberCount,
	}
}

// brandsJSON is brandJSON of each brand, never nil (an empty list is []).
func brandsJSON(bs []brands.Brand) []brandsapi.Brand {
	out := make([]brandsapi.Brand, len(bs))
	for i := range bs {
		out[i] = brandJSON(&bs[i])
	}
	return out
}

// encode is v as JSON; the generated types always encode.
func encode(v any) []byte {
	body, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("brands: encoding %T: %v", v, err))
	}
	return body
}

// renderList encodes brands as the JSON array of Brand objects, as ListBrands200JSONResponse does.
func renderList(bs []brands.Brand) []byte {
	return encode(brandsapi.ListBrands200JSONResponse(brandsJSON(bs)))
}

// timeLayout is ISO 8601 in UTC with milliseconds, like JavaScript's toISOString.
const timeLayout = "2006-01-02T15:04:05.000Z"

// userJSON is a profile as the API shows it, with the token the caller presented.
func userJSON(tok string, p *brands.Profile) brandsapi.User {
	return brandsapi.User{
		UnderscoreId: p.ID, Token: tok, Email: p.Email, Name: p.Name, IsAdmin: p.IsAdmin,
		Subscriptions: brandsJSON(p.Subscriptions), CreatedAt: p.CreatedAt.UTC().Format(timeLayout),
	}
}

// listCache holds the last rendering of a brand list with the digest of the rows it was rendered
// from (brands.Service.ListDigest).
type listCache struct {
	list brands.List
	p    atomic.Pointer[renderedList]
}

type renderedList struct {
	digest string
	body   []byte
}

// get serves the cached rendering when the list's rows are exactly those it was rendered from
// (one cheap digest query), and renders afresh otherwise. A stale entry can never be served: the
// digest changes with every change of a listed row, and a fresh rendering and its digest come
// from one snapshot. Concurrent misses may each render; the last one stored wins, and any of them
// is correct for its digest.
func (c *listCache) get(ctx context.Context, svc *brands.Service) ([]byte, error) {
	if cur := c.p.Load(); cur != nil {
		d, err := svc.ListDigest(ctx, c.list)
		if err != nil {
			return nil, err
		}
		if d == cur.digest {
			return cur.body, nil
		}
	}
	bs, d, err := svc.ListBrands(ctx, c.list)
	if err != nil {
		return nil, err
	}
	body := renderList(bs)
	c.p.Store(&renderedList{digest: d, body: body})
	return body, nil
}
