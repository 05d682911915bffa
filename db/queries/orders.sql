-- name: CreateOrder :one
-- CreateOrder publishes a waiting order of a customer.
INSERT INTO orders (customer_id, description, price) VALUES (@customer_id, @description, @price)
RETURNING id, customer_id, description, price, status, created_at;

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
