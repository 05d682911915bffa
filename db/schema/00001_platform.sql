-- +goose Up
-- The platform table records facts about the deployment itself; surfaces add their own tables in
-- later migrations (orders 00010-00019, brands 00020-00029, auth and avatars 00030-00039).
CREATE TABLE platform_info (
    key        text PRIMARY KEY,
    value      text NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now()
);

-- +goose Down
DROP TABLE platform_info;
