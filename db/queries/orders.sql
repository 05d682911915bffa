-- name: CreateOrder :one
-- CreateOrder publishes a waiting order of a customer.
INSERT INTO orders (customer_id, description, price) VALUES (@customer_id, @description, @price)
RETURNING id, customer_id, description, price, status, created_at;

-- name: GetOrderForUpdate :one
-- GetOrderForUpdate reads and locks an order with its performer's name (any caller; rules are applied by the service).
SELECT o.id, o.customer_id, o.performer_id, u.username AS performer_name, o.description, o.price, o.status, o.created_at
FROM orders o LEFT JOIN order_users u ON u.id = o.performer_id
WHERE o.id = @id
FOR UPDATE OF o;

-- name: GetOrderState :one
-- GetOrderState reads who owns an order and its status, to explain a refused transition.
SELECT customer_id, performer_id, status FROM orders WHERE id = @id;

-- name: TakeOrder :one
-- TakeOrder moves a waiting order to IN_PROGRESS for a performer; no row means it was not waiting.
UPDATE orders SET status = 'IN_PROGRESS', performer_id = @performer_id, updated_at = now()
WHERE id = @id AND status = 'WAITING'
RETURNING id, customer_id, description, price, status, created_at;

-- name: PassOrder :one
-- PassOrder moves an order in progress to READY when the caller is its performer; no row means refused.
UPDATE orders SET status = 'READY', updated_at = now()
WHERE id = @id AND status = 'IN_PROGRESS' AND performer_id = @performer_id
RETURNING id, customer_id, description, price, status, created_at;
