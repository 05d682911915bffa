-- +goose Up
-- A flood of subscriptions to one brand no longer queues on the brand's row. Each subscription
-- change adds +1/-1 to one of the brand's counter slots (the slot of the writer's database
-- session, backend pid modulo 16), so concurrent subscribers on different connections touch
-- different rows; a brand's subscriber count is the sum of its slots.
--
-- The brand lists' caches (00021_brands_version.sql) stay exact: each slot change also stamps the
-- slot with a new number from brands_version_seq, drawn while the slot is locked, and a brand's
-- listed version is its row's version plus the sum of its slots' stamps. Every committed change,
-- to the row or to any slot, makes that sum strictly larger, so a later snapshot shows a brand
-- with the same version only when nothing about it changed.
CREATE TABLE brand_subscriber_slots (
    brand_id text     NOT NULL REFERENCES brands (id) ON DELETE CASCADE,
    slot     smallint NOT NULL CHECK (slot BETWEEN 0 AND 15),
    n        integer  NOT NULL,
    version  bigint   NOT NULL,
    PRIMARY KEY (brand_id, slot)
);
INSERT INTO brand_subscriber_slots (brand_id, slot, n, version)
SELECT id, 0, subscriber_count, nextval('brands_version_seq') FROM brands WHERE subscriber_count <> 0;
ALTER TABLE brands DROP COLUMN subscriber_count;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION brand_subscriptions_count() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    brand text;
    delta integer;
BEGIN
    IF TG_OP = 'INSERT' THEN
        brand := NEW.brand_id; delta := 1;
    ELSE
        brand := OLD.brand_id; delta := -1;
        -- A brand being deleted takes its subscriptions and its slots with it: nothing to count.
        IF NOT EXISTS (SELECT 1 FROM brands WHERE id = brand) THEN
            RETURN NULL;
        END IF;
    END IF;
    INSERT INTO brand_subscriber_slots AS s (brand_id, slot, n, version)
    VALUES (brand, pg_backend_pid() % 16, delta, nextval('brands_version_seq'))
        -- The stamp is drawn once the slot is locked, so each slot's stamps only grow.
    ON CONFLICT (brand_id, slot) DO UPDATE SET n = s.n + excluded.n, version = nextval('brands_version_seq');
    RETURN NULL;
END
$$;
-- +goose StatementEnd

-- brand_subscriber_count is one brand's subscriber count: its slots summed.
CREATE FUNCTION brand_subscriber_count(brand text) RETURNS integer
LANGUAGE sql STABLE PARALLEL SAFE
RETURN (SELECT coalesce(sum(n), 0)::integer FROM brand_subscriber_slots WHERE brand_id = brand);

-- brands_counted is brands as readers see them: each with its subscriber count (its slots summed)
-- and its listed version (see above). Every read of a brand goes through it.
CREATE VIEW brands_counted AS
SELECT b.id, b.name, b.description, b.url, b.featured_image, b.availability, b.is_featured, b.products,
       coalesce(s.n, 0)::integer AS subscriber_count,
       (b.version + coalesce(s.version, 0))::bigint AS version,
       b.seq, b.created_at
FROM brands b
LEFT JOIN (SELECT brand_id, sum(n) AS n, sum(version) AS version FROM brand_subscriber_slots GROUP BY brand_id) s
    ON s.brand_id = b.id;

-- +goose Down
DROP VIEW brands_counted;
DROP FUNCTION brand_subscriber_count(text);
ALTER TABLE brands ADD COLUMN subscriber_count integer NOT NULL DEFAULT 0 CHECK (subscriber_count >= 0);
UPDATE brands b SET subscriber_count = s.n FROM (
    SELECT brand_id, sum(n)::integer AS n FROM brand_subscriber_slots GROUP BY brand_id) s
WHERE s.brand_id = b.id;
DROP TABLE brand_subscriber_slots;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION brand_subscriptions_count() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        UPDATE brands SET subscriber_count = subscriber_count + 1 WHERE id = NEW.brand_id;
        RETURN NEW;
    END IF;
    UPDATE brands SET subscriber_count = subscriber_count - 1 WHERE id = OLD.brand_id;
    RETURN OLD;
END
$$;
-- +goose StatementEnd
