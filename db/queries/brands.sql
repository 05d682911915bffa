-- name: ListAvailableBrandVersions :many
-- ListAvailableBrandVersions reads the row versions of the available brands in list order: they
-- change whenever ListAvailableBrandRows' result would (brands.ListDigest hashes them).
SELECT b.version FROM brands_counted b WHERE b.availability ORDER BY b.seq;

-- name: ListFeaturedBrandVersions :many
-- ListFeaturedBrandVersions reads the row versions of the featured brands, available or not, in
-- list order.
SELECT b.version FROM brands_counted b WHERE b.is_featured ORDER BY b.seq;

-- name: GetBrand :one
-- GetBrand reads one brand, available or not, with its subscriber count.
SELECT * FROM brands_counted WHERE id = $1;

-- name: GetBrandAvailability :one
-- GetBrandAvailability tells whether a brand exists (no row otherwise) and is available.
SELECT availability FROM brands WHERE id = $1;

-- name: CreateBrand :one
-- CreateBrand inserts a brand with no subscribers and returns it as brands_counted shows it (the
-- same columns in the same order, so one mapping reads every brand row).
INSERT INTO brands (name, description, url, featured_image, availability, is_featured, products)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING id, name, description, url, featured_image, availability, is_featured, products,
    0::integer AS subscriber_count, version, seq, created_at;

-- name: UpdateBrand :one
-- UpdateBrand changes the given fields of a brand (NULL keeps one) and returns it as brands_counted
-- shows it (the same columns in the same order, so one mapping reads every brand row).
UPDATE brands SET
    name = coalesce(sqlc.narg(name), name),
    description = coalesce(sqlc.narg(description), description),
    url = coalesce(sqlc.narg(url), url),
    featured_image = coalesce(sqlc.narg(featured_image), featured_image),
    availability = coalesce(sqlc.narg(availability), availability),
    is_featured = coalesce(sqlc.narg(is_featured), is_featured),
    products = coalesce(sqlc.narg(products), products)
WHERE id = sqlc.arg(id)
RETURNING id, name, description, url, featured_image, availability, is_featured, products,
    brand_subscriber_count(id) AS subscriber_count, version, seq, created_at;

-- name: DeleteBrand :execrows
-- DeleteBrand removes a brand; its subscriptions go with it (ON DELETE CASCADE).
DELETE FROM brands WHERE id = $1;

-- name: UpsertBrandFixture :exec
-- UpsertBrandFixture inserts a prepared brand with a fixed id unless it exists (dev data).
INSERT INTO brands (id, name, description, url, featured_image, availability, is_featured, products)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
ON CONFLICT (id) DO NOTHING;

-- name: ListAvailableBrandRows :many
-- ListAvailableBrandRows reads every available brand with its row version, in creation order, for
-- rendering at the HTTP edge (one snapshot gives both the list and its digest).
SELECT * FROM brands_counted WHERE availability ORDER BY seq;

-- name: ListFeaturedBrandRows :many
-- ListFeaturedBrandRows reads every featured brand, available or not, with its row version, in
-- creation order (the seed: brands whose isFeatured is true appear in the featured list).
SELECT * FROM brands_counted WHERE is_featured ORDER BY seq;
