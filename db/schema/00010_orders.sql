-- +goose Up
-- Orders API. Money is integer kopecks (1 ruble = 100); balances can never go negative.

CREATE TABLE order_users (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    username      text   NOT NULL CHECK (length(username) BETWEEN 3 AND 32),
    password_hash text   NOT NULL,
    user_type     text   NOT NULL CHECK (user_type IN ('Customer', 'Performer')),
    balance       bigint NOT NULL CHECK (balance >= 0),
    created_at    timestamptz NOT NULL DEFAULT now()
);
-- Usernames are unique regardless of letter case.
CREATE UNIQUE INDEX order_users_username_key ON order_users (lower(username));

-- Access tokens are opaque random strings; only their SHA-256 is stored, so a database leak
-- reveals no usable token.
CREATE TABLE order_tokens (
    hash       bytea  PRIMARY KEY,
    user_id    bigint NOT NULL REFERENCES order_users (id) ON DELETE CASCADE,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX order_tokens_expires_at ON order_tokens (expires_at);

CREATE TABLE orders (
    id           bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    customer_id  bigint NOT NULL REFERENCES order_users (id),
    performer_id bigint REFERENCES order_users (id),
    description  text   NOT NULL CHECK (length(description) BETWEEN 1 AND 2000),
    price        bigint NOT NULL CHECK (price > 0 AND price <= 100000000),
    status       text   NOT NULL DEFAULT 'WAITING' CHECK (status IN ('WAITING', 'IN_PROGRESS', 'READY', 'COMPLETED')),
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    -- Only a waiting order lacks a performer.
    CHECK ((status = 'WAITING') = (performer_id IS NULL))
);
-- The new-orders list, in each allowed sort order (partial: only waiting orders are listed).
CREATE INDEX orders_waiting_id ON orders (id) WHERE status = 'WAITING';
CREATE INDEX orders_waiting_price ON orders (price, id) WHERE status = 'WAITING';
CREATE INDEX orders_waiting_created ON orders (created_at, id) WHERE status = 'WAITING';
-- A user's own orders; other sort orders sort one user's rows only.
CREATE INDEX orders_customer ON orders (customer_id, id);
CREATE INDEX orders_performer ON orders (performer_id, id) WHERE performer_id IS NOT NULL;

-- Exact list sizes for pagination, kept in the same transaction as each change so no request
-- counts rows: ('waiting', 0), ('customer', user id), ('performer', user id).
CREATE TABLE order_counters (
    scope    text   NOT NULL CHECK (scope IN ('waiting', 'customer', 'performer')),
    owner_id bigint NOT NULL,
    n        bigint NOT NULL CHECK (n >= 0),
    PRIMARY KEY (scope, owner_id)
);
INSERT INTO order_counters (scope, owner_id, n) VALUES ('waiting', 0, 0);

-- The platform's commission account, split into slots so concurrent acceptances do not queue on
-- one row; its balance is the sum of the slots.
CREATE TABLE order_platform_slots (
    slot    integer PRIMARY KEY CHECK (slot BETWEEN 0 AND 15),
    balance bigint  NOT NULL CHECK (balance >= 0)
);
INSERT INTO order_platform_slots (slot, balance) SELECT g, 0 FROM generate_series(0, 15) AS g;

-- Every balance change is a ledger row: a user's balance is the sum of the user's rows, the
-- platform's the sum of rows without a user, and the sum of all rows is the sum of the grants.
CREATE TABLE order_ledger (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    user_id    bigint REFERENCES order_users (id),
    order_id   bigint REFERENCES orders (id),
    kind       text   NOT NULL CHECK (kind IN ('grant', 'payment', 'earning', 'commission')),
    amount     bigint NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind = 'commission') = (user_id IS NULL))
);
CREATE INDEX order_ledger_user ON order_ledger (user_id) WHERE user_id IS NOT NULL;

-- +goose Down
DROP TABLE order_ledger;
DROP TABLE order_platform_slots;
DROP TABLE order_counters;
DROP TABLE orders;
DROP TABLE order_tokens;
DROP TABLE order_users;
