-- The list pages of orders, one static query per list, sort key and direction: ORDER BY cannot
-- take a parameter, and a CASE expression in the ORDER BY would defeat the indexes of
-- 00010_orders.sql under the generic plan the new-orders list runs with. impl/surfaces/orders
-- picks one by a switch and runs its text (db.ListWaitingByIDAsc, ...) in one pipelined round trip.
-- Each returns the page and, in the same snapshot, the exact total: the sum of the list's counter
-- slots (an InitPlan, evaluated once); an empty page carries no row and so no total.
-- Parameters: $1 the counter scope, $2 the owner (0 for the new-orders list), $3 the page size,
-- $4 the offset.
-- The queries stay as plain as possible because for a 20-row page PostgreSQL's planning costs more
-- than the execution: waiting orders have no performer, and a performer's own orders have the
-- caller as performer, so those two lists need no join; a customer's orders look the performer's
-- name up outside the LIMIT, so rows skipped by OFFSET cost no lookup.

-- name: ListWaitingByIDAsc :many
-- ListWaitingByIDAsc: the new-orders list (WAITING, no performer yet), by ID asc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.status = 'WAITING' ORDER BY o.id LIMIT $3 OFFSET $4;

-- name: ListWaitingByIDDesc :many
-- ListWaitingByIDDesc: the new-orders list (WAITING, no performer yet), by ID desc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.status = 'WAITING' ORDER BY o.id DESC LIMIT $3 OFFSET $4;

-- name: ListWaitingByPriceAsc :many
-- ListWaitingByPriceAsc: the new-orders list (WAITING, no performer yet), by Price asc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.status = 'WAITING' ORDER BY o.price, o.id LIMIT $3 OFFSET $4;

-- name: ListWaitingByPriceDesc :many
-- ListWaitingByPriceDesc: the new-orders list (WAITING, no performer yet), by Price desc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.status = 'WAITING' ORDER BY o.price DESC, o.id DESC LIMIT $3 OFFSET $4;

-- name: ListWaitingByCreatedAtAsc :many
-- ListWaitingByCreatedAtAsc: the new-orders list (WAITING, no performer yet), by CreatedAt asc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.status = 'WAITING' ORDER BY o.created_at, o.id LIMIT $3 OFFSET $4;

-- name: ListWaitingByCreatedAtDesc :many
-- ListWaitingByCreatedAtDesc: the new-orders list (WAITING, no performer yet), by CreatedAt desc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.status = 'WAITING' ORDER BY o.created_at DESC, o.id DESC LIMIT $3 OFFSET $4;

-- name: ListCustomerByIDAsc :many
-- ListCustomerByIDAsc: a customer's own orders, the performer's name looked up outside the LIMIT, by ID asc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id,
       (SELECT u.username FROM order_users u WHERE u.id = o.performer_id) AS performer_name,
       o.description, o.price, o.status, o.created_at
FROM (SELECT * FROM orders o WHERE o.customer_id = $2 ORDER BY o.id LIMIT $3 OFFSET $4) o
ORDER BY o.id;

-- name: ListCustomerByIDDesc :many
-- ListCustomerByIDDesc: a customer's own orders, the performer's name looked up outside the LIMIT, by ID desc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id,
       (SELECT u.username FROM order_users u WHERE u.id = o.performer_id) AS performer_name,
       o.description, o.price, o.status, o.created_at
FROM (SELECT * FROM orders o WHERE o.customer_id = $2 ORDER BY o.id DESC LIMIT $3 OFFSET $4) o
ORDER BY o.id DESC;

-- name: ListCustomerByPriceAsc :many
-- ListCustomerByPriceAsc: a customer's own orders, the performer's name looked up outside the LIMIT, by Price asc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id,
       (SELECT u.username FROM order_users u WHERE u.id = o.performer_id) AS performer_name,
       o.description, o.price, o.status, o.created_at
FROM (SELECT * FROM orders o WHERE o.customer_id = $2 ORDER BY o.price, o.id LIMIT $3 OFFSET $4) o
ORDER BY o.price, o.id;

-- name: ListCustomerByPriceDesc :many
-- ListCustomerByPriceDesc: a customer's own orders, the performer's name looked up outside the LIMIT, by Price desc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id,
       (SELECT u.username FROM order_users u WHERE u.id = o.performer_id) AS performer_name,
       o.description, o.price, o.status, o.created_at
FROM (SELECT * FROM orders o WHERE o.customer_id = $2 ORDER BY o.price DESC, o.id DESC LIMIT $3 OFFSET $4) o
ORDER BY o.price DESC, o.id DESC;

-- name: ListCustomerByCreatedAtAsc :many
-- ListCustomerByCreatedAtAsc: a customer's own orders, the performer's name looked up outside the LIMIT, by CreatedAt asc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id,
       (SELECT u.username FROM order_users u WHERE u.id = o.performer_id) AS performer_name,
       o.description, o.price, o.status, o.created_at
FROM (SELECT * FROM orders o WHERE o.customer_id = $2 ORDER BY o.created_at, o.id LIMIT $3 OFFSET $4) o
ORDER BY o.created_at, o.id;

-- name: ListCustomerByCreatedAtDesc :many
-- ListCustomerByCreatedAtDesc: a customer's own orders, the performer's name looked up outside the LIMIT, by CreatedAt desc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id,
       (SELECT u.username FROM order_users u WHERE u.id = o.performer_id) AS performer_name,
       o.description, o.price, o.status, o.created_at
FROM (SELECT * FROM orders o WHERE o.customer_id = $2 ORDER BY o.created_at DESC, o.id DESC LIMIT $3 OFFSET $4) o
ORDER BY o.created_at DESC, o.id DESC;

-- name: ListPerformerByIDAsc :many
-- ListPerformerByIDAsc: a performer's taken orders (the caller is the performer; list fills in the name), by ID asc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.performer_id = $2 ORDER BY o.id LIMIT $3 OFFSET $4;

-- name: ListPerformerByIDDesc :many
-- ListPerformerByIDDesc: a performer's taken orders (the caller is the performer; list fills in the name), by ID desc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.performer_id = $2 ORDER BY o.id DESC LIMIT $3 OFFSET $4;

-- name: ListPerformerByPriceAsc :many
-- ListPerformerByPriceAsc: a performer's taken orders (the caller is the performer; list fills in the name), by Price asc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.performer_id = $2 ORDER BY o.price, o.id LIMIT $3 OFFSET $4;

-- name: ListPerformerByPriceDesc :many
-- ListPerformerByPriceDesc: a performer's taken orders (the caller is the performer; list fills in the name), by Price desc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.performer_id = $2 ORDER BY o.price DESC, o.id DESC LIMIT $3 OFFSET $4;

-- name: ListPerformerByCreatedAtAsc :many
-- ListPerformerByCreatedAtAsc: a performer's taken orders (the caller is the performer; list fills in the name), by CreatedAt asc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.performer_id = $2 ORDER BY o.created_at, o.id LIMIT $3 OFFSET $4;

-- name: ListPerformerByCreatedAtDesc :many
-- ListPerformerByCreatedAtDesc: a performer's taken orders (the caller is the performer; list fills in the name), by CreatedAt desc.
SELECT (SELECT sum(n)::bigint FROM order_counters WHERE scope = $1 AND owner_id = $2) AS total,
       o.id, o.customer_id, o.performer_id, NULL::text AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o WHERE o.performer_id = $2 ORDER BY o.created_at DESC, o.id DESC LIMIT $3 OFFSET $4;
