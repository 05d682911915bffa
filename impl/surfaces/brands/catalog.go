package brands

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"errors"
	"strconv"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/platform/pgtx"
)

// Brand is a brand as callers see it.
type Brand struct {
	ID            string
	Name          string
	Description   string
	URL           string
	FeaturedImage string
	Availability  bool
	IsFeatured    bool
	// Products is the JSON array of free-form product objects, as stored (valid JSON).
	Products        []byte
	SubscriberCount int32
}

// brandOf is a brand as read through brands_counted (its subscriber count summed from its slots):
// the one mapping of a brand row, which every query returning brands answers in that view's
// columns (a row of another query is converted to db.BrandsCounted, which the compiler allows
// only while the columns are the same).
func brandOf(r db.BrandsCounted) Brand {
	return Brand{ID: r.ID, Name: r.Name, Description: r.Description, URL: r.Url, FeaturedImage: r.FeaturedImage,
		Availability: r.Availability, IsFeatured: r.IsFeatured, Products: r.Products, SubscriberCount: r.SubscriberCount}
}

// Product is one element of a brand's products: a free-form JSON object.
type Product = map[string]any

// BrandInput is a new brand.
type BrandInput struct {
	Name          string
	Description   string
	URL           string
	FeaturedImage string
	Availability  bool
	IsFeatured    bool
	Products      []Product
}

// BrandPatch changes the non-nil fields of a brand.
type BrandPatch struct {
	Name          *string
	Description   *string
	URL           *string
	FeaturedImage *string
	Availability  *bool
	IsFeatured    *bool
	Products      *[]Product
}

// List names one of the two public brand lists.
type List int

// The public lists.
const (
	// Available is every available brand, in creation order.
	Available List = iota
	// Featured is every featured brand, available or not, in creation order.
	Featured
)

// ListDigest identifies the current contents of a list: it changes with every insert, update
// (subscriber counts included) and delete of a listed row (see db/schema/00021_brands_version.sql),
// so a rendering made from ListBrands' result stays exact while the digest does not move. It is
// one cheap query (the rows' versions alone), which is what lets the HTTP edge cache the rendered
// lists.
func (s *Service) ListDigest(ctx context.Context, l List) (string, error) {
	var versions []int64
	var err error
	err = s.read(ctx, func(q *db.Queries) (err error) {
		if l == Featured {
			versions, err = q.ListFeaturedBrandVersions(ctx)
		} else {
			versions, err = q.ListAvailableBrandVersions(ctx)
		}
		return err
	})
	if err != nil {
		return "", err
	}
	return digest(len(versions), func(i int) int64 { return versions[i] }), nil
}

// ListBrands reads a list with its digest, both from one snapshot (the digest is of the rows read).
func (s *Service) ListBrands(ctx context.Context, l List) ([]Brand, string, error) {
	var rows []db.BrandsCounted
	var err error
	err = s.read(ctx, func(q *db.Queries) (err error) {
		if l == Featured {
			rows, err = q.ListFeaturedBrandRows(ctx)
		} else {
			rows, err = q.ListAvailableBrandRows(ctx)
		}
		return err
	})
	if err != nil {
		return nil, "", err
	}
	out := make([]Brand, len(rows))
	for i, r := range rows {
		out[i] = brandOf(r)
	}
	return out, digest(len(rows), func(i int) int64 { return rows[i].Version }), nil
}

// read runs a catalog read on the pool s.reads picks: the catalog tolerates a standby's lag, and
// the Reader makes sure the caller's own writes are there.
func (s *Service) read(ctx context.Context, fn func(*db.Queries) error) error {
	return s.reads.Do(ctx, func(p *pgxpool.Pool) error { return fn(db.New(p)) })
}

// digest is the one statement of a list's digest: the MD5 of its n row versions, in list order,
// joined by commas. The database only returns the versions, so the formula lives here alone.
func digest(n int, version func(int) int64) string {
	h := md5.New()
	var num [20]byte
	for i := range n {
		if i > 0 {
			h.Write([]byte{','})
		}
		h.Write(strconv.AppendInt(num[:0], version(i), 10))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// Brand returns one brand, available or not.
func (s *Service) Brand(ctx context.Context, id string) (Brand, error) {
	if !ValidID(id) {
		return Brand{}, domainerr.NotFound
	}
	var r db.BrandsCounted
	err := s.read(ctx, func(q *db.Queries) (err error) {
		r, err = q.GetBrand(ctx, id)
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Brand{}, domainerr.NotFound
	}
	if err != nil {
		return Brand{}, err
	}
	return brandOf(r), nil
}

func requireAdmin(p Principal) error {
	if !p.IsAdmin {
		return domainerr.Forbidden
	}
	return nil
}

// CreateBrand creates a brand with no subscribers, for an admin.
func (s *Service) CreateBrand(ctx context.Context, p Principal, in BrandInput) (Brand, error) {
	if err := requireAdmin(p); err != nil {
		return Brand{}, err
	}
	var v checks
	params := db.CreateBrandParams{
		Name:          checkName(&v, "name", in.Name, MaxBrandNameLen),
		Description:   checkDescription(&v, in.Description),
		Url:           checkURL(&v, "url", in.URL),
		FeaturedImage: checkURL(&v, "featuredImage", in.FeaturedImage),
		Availability:  in.Availability,
		IsFeatured:    in.IsFeatured,
		Products:      productsJSON(&v, in.Products),
	}
	if err := v.orNil(); err != nil {
		return Brand{}, err
	}
	r, err := pgtx.Do(ctx, func() (db.CreateBrandRow, error) { return s.q.CreateBrand(ctx, params) })
	if err != nil {
		return Brand{}, err
	}
	return brandOf(db.BrandsCounted(r)), nil
}

func optText(v *string, check func(string) string) pgtype.Text {
	if v == nil {
		return pgtype.Text{}
	}
	return pgtype.Text{String: check(*v), Valid: true}
}

func optBool(v *bool) pgtype.Bool {
	if v == nil {
		return pgtype.Bool{}
	}
	return pgtype.Bool{Bool: *v, Valid: true}
}

// UpdateBrand changes the given fields of a brand, for an admin.
func (s *Service) UpdateBrand(ctx context.Context, p Principal, id string, in BrandPatch) (Brand, error) {
	if err := requireAdmin(p); err != nil {
		return Brand{}, err
	}
	if !ValidID(id) {
		return Brand{}, domainerr.NotFound
	}
	var v checks
	params := db.UpdateBrandParams{
		ID:            id,
		Name:          optText(in.Name, func(x string) string { return checkName(&v, "name", x, MaxBrandNameLen) }),
		Description:   optText(in.Description, func(x string) string { return checkDescription(&v, x) }),
		Url:           optText(in.URL, func(x string) string { return checkURL(&v, "url", x) }),
		FeaturedImage: optText(in.FeaturedImage, func(x string) string { return checkURL(&v, "featuredImage", x) }),
		Availability:  optBool(in.Availability),
		IsFeatured:    optBool(in.IsFeatured),
	}
	if in.Products != nil {
		params.Products = productsJSON(&v, *in.Products)
	}
	if err := v.orNil(); err != nil {
		return Brand{}, err
	}
	r, err := pgtx.Do(ctx, func() (db.UpdateBrandRow, error) { return s.q.UpdateBrand(ctx, params) })
	if errors.Is(err, pgx.ErrNoRows) {
		return Brand{}, domainerr.NotFound
	}
	if err != nil {
		return Brand{}, err
	}
	return brandOf(db.BrandsCounted(r)), nil
}

// DeleteBrand deletes a brand and its subscriptions, for an admin.
func (s *Service) DeleteBrand(ctx context.Context, p Principal, id string) error {
	if err := requireAdmin(p); err != nil {
		return err
	}
	if !ValidID(id) {
		return domainerr.NotFound
	}
	// One statement; under an Idempotency-Key, one transaction with its answer. A brand not there
	// is an error inside the write, so no answer is kept for it.
	_, err := pgtx.WriteOne(ctx, s.pool, func(c pgtx.Conn) (struct{}, error) {
		n, err := db.New(c).DeleteBrand(ctx, id)
		if err == nil && n == 0 {
			err = domainerr.NotFound
		}
		return struct{}{}, err
	})
	return err
}
