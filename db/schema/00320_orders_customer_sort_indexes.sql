-- +goose Up
-- A customer's own list sorted by price or by creation reads an index instead of sorting every one
-- of the customer's orders (issue 32: four customers paging their own 1M-order lists by price
-- pushed a bystander's first page from 1.5 ms to 409 ms). The list by id reads orders_customer.
CREATE INDEX orders_customer_price ON orders (customer_id, price, id);
CREATE INDEX orders_customer_created ON orders (customer_id, created_at, id);

-- +goose Down
DROP INDEX orders_customer_created;
DROP INDEX orders_customer_price;
