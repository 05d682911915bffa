-- +goose Up
-- The brands API: users with opaque access tokens, brands, and subscriptions of users to brands.

-- brands_object_id makes a 24-hex-digit id like the original API's MongoDB _ids: 4 bytes of creation
-- time (seconds) and 8 random bytes from gen_random_uuid (bytes 0-5 and 10-11 of a v4 UUID are random).
-- +goose StatementBegin
CREATE FUNCTION brands_object_id() RETURNS text
LANGUAGE sql VOLATILE PARALLEL SAFE AS $$
    SELECT lpad(to_hex(floor(extract(epoch FROM clock_timestamp()))::bigint), 8, '0')
        || encode(substring(uuid_send(u) FROM 1 FOR 6) || substring(uuid_send(u) FROM 11 FOR 2), 'hex')
    FROM gen_random_uuid() AS u
$$;
-- +goose StatementEnd

CREATE TABLE brand_users (
    id            text PRIMARY KEY DEFAULT brands_object_id() CHECK (id ~ '^[0-9a-f]{24}$'),
    email         text NOT NULL CHECK (length(email) BETWEEN 3 AND 254),
    name          text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
    password_hash text NOT NULL,
    is_admin      boolean NOT NULL DEFAULT false,
    created_at    timestamptz NOT NULL DEFAULT now()
);
-- Emails are unique without regard to case; the stored spelling is the user's.
CREATE UNIQUE INDEX brand_users_email_key ON brand_users (lower(email));

-- Only a SHA-256 hash of each token is stored, so a copy of the table authenticates nobody.
CREATE TABLE brand_tokens (
    token_hash bytea PRIMARY KEY CHECK (length(token_hash) = 32),
    user_id    text NOT NULL REFERENCES brand_users (id) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX brand_tokens_user_id_idx ON brand_tokens (user_id);

CREATE TABLE brands (
    id               text PRIMARY KEY DEFAULT brands_object_id() CHECK (id ~ '^[0-9a-f]{24}$'),
    name             text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
    description      text NOT NULL DEFAULT '',
    url              text NOT NULL DEFAULT '',
    featured_image   text NOT NULL DEFAULT '',
    availability     boolean NOT NULL DEFAULT true,
    is_featured      boolean NOT NULL DEFAULT false,
    products         jsonb NOT NULL DEFAULT '[]' CHECK (jsonb_typeof(products) = 'array'),
    -- subscriber_count is maintained by the triggers below, never by application code.
    subscriber_count integer NOT NULL DEFAULT 0 CHECK (subscriber_count >= 0),
    seq              bigint GENERATED ALWAYS AS IDENTITY UNIQUE,
    created_at       timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX brands_available_idx ON brands (seq) WHERE availability;
CREATE INDEX brands_featured_idx ON brands (seq) WHERE is_featured;

CREATE TABLE brand_subscriptions (
    user_id    text NOT NULL REFERENCES brand_users (id) ON DELETE CASCADE,
    brand_id   text NOT NULL REFERENCES brands (id) ON DELETE CASCADE,
    seq        bigint GENERATED ALWAYS AS IDENTITY,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, brand_id)
);
CREATE INDEX brand_subscriptions_brand_id_idx ON brand_subscriptions (brand_id);

-- The count follows every row that really enters or leaves brand_subscriptions, whatever the path
-- (an INSERT ... ON CONFLICT DO NOTHING that inserts nothing fires no row trigger, a cascade from a
-- deleted user does). The UPDATE takes the brand row's lock, so concurrent changes add up exactly.
-- +goose StatementBegin
CREATE FUNCTION brand_subscriptions_count() RETURNS trigger
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

CREATE TRIGGER brand_subscriptions_count
AFTER INSERT OR DELETE ON brand_subscriptions
FOR EACH ROW EXECUTE FUNCTION brand_subscriptions_count();

-- +goose Down
DROP TABLE brand_subscriptions;
DROP FUNCTION brand_subscriptions_count();
DROP TABLE brands;
DROP TABLE brand_tokens;
DROP TABLE brand_users;
DROP FUNCTION brands_object_id();
