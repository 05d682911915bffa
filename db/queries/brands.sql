-- name: AvailableBrandsDigest :one
-- AvailableBrandsDigest identifies the current row versions of the available brands; it changes
-- whenever ListAvailableBrandsJSON's result would.
SELECT md5(coalesce(string_agg(b.version::text, ',' ORDER BY b.seq), ''))::text AS digest
FROM brands_counted b WHERE b.availability;

-- name: FeaturedBrandsDigest :one
-- FeaturedBrandsDigest identifies the current row versions of the featured brands, available or not.
SELECT md5(coalesce(string_agg(b.version::text, ',' ORDER BY b.seq), ''))::text AS digest
FROM brands_counted b WHERE b.is_featured;

-- name: GetBrandJSON :one
-- GetBrandJSON renders one brand, available or not, as a JSON object.
SELECT json_build_object(
    '_id', b.id, 'name', b.name, 'description', b.description, 'url', b.url,
    'featuredImage', b.featured_image, 'availability', b.availability, 'isFeatured', b.is_featured,
    'products', b.products, 'subscriberCount', b.subscriber_count)::text AS brand
FROM brands_counted b WHERE b.id = $1;

-- name: GetBrandAvailability :one
-- GetBrandAvailability tells whether a brand exists (no row otherwise) and is available.
SELECT availability FROM brands WHERE id = $1;

-- name: CreateBrand :one
-- CreateBrand inserts a brand with no subscribers and renders it as JSON.
INSERT INTO brands (name, description, url, featured_image, availability, is_featured, products)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING json_build_object(
    '_id', id, 'name', name, 'description', description, 'url', url,
    'featuredImage', featured_image, 'availability', availability, 'isFeatured', is_featured,
    'products', products, 'subscriberCount', 0)::text AS brand;

-- name: UpdateBrand :one
-- UpdateBrand changes the given fields of a brand (NULL keeps one) and renders it as JSON.
UPDATE brands SET
    name = coalesce(sqlc.narg(name), name),
    description = coalesce(sqlc.narg(description), description),
    url = coalesce(sqlc.narg(url), url),
    featured_image = coalesce(sqlc.narg(featured_image), featured_image),
    availability = coalesce(sqlc.narg(availability), availability),
    is_featured = coalesce(sqlc.narg(is_featured), is_featured),
    products = coalesce(sqlc.narg(products), products)
WHERE id = sqlc.arg(id)
RETURNING json_build_object(
    '_id', id, 'name', name, 'description', description, 'url', url,
    'featuredImage', featured_image, 'availability', availability, 'isFeatured', is_featured,
    'products', products,
    'subscriberCount', brand_subscriber_count(id))::text AS brand;

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
-- rendering in Go (one snapshot gives both the list and its digest).
SELECT id, name, description, url, featured_image, availability, is_featured, products, subscriber_count, version
FROM brands_counted WHERE availability ORDER BY seq;

-- name: ListFeaturedBrandRows :many
-- ListFeaturedBrandRows reads every featured brand, available or not, with its row version, in
-- creation order (the seed: brands whose isFeatured is true appear in the featured list).
SELECT id, name, description, url, featured_image, availability, is_featured, products, subscriber_count, version
FROM brands_counted WHERE is_featured ORDER BY seq;
