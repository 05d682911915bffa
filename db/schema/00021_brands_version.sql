-- +goose Up
-- Every brand row version gets a number no other row version ever had, so the ordered list of
-- (version) numbers of a set of brands identifies exactly what a listing of them would show. The
-- list endpoints compare a digest of it with the one their cached JSON was built from, and rebuild
-- only on a change (a subscription changes subscriber_count, so it changes the version too).
CREATE SEQUENCE brands_version_seq;
ALTER TABLE brands ADD COLUMN version bigint NOT NULL DEFAULT nextval('brands_version_seq');

-- +goose StatementBegin
CREATE FUNCTION brands_bump_version() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    NEW.version := nextval('brands_version_seq');
    RETURN NEW;
END
$$;
-- +goose StatementEnd

CREATE TRIGGER brands_bump_version
BEFORE UPDATE ON brands
FOR EACH ROW EXECUTE FUNCTION brands_bump_version();

-- +goose Down
DROP TRIGGER brands_bump_version ON brands;
DROP FUNCTION brands_bump_version();
ALTER TABLE brands DROP COLUMN version;
DROP SEQUENCE brands_version_seq;
