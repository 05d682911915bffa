-- name: CreateOrderUser :one
-- CreateOrderUser registers a user of the orders API with a starting balance.
INSERT INTO order_users (username, password_hash, user_type, balance)
VALUES (@username, @password_hash, @user_type, @balance)
RETURNING id, username, user_type, balance;

-- name: GetOrderUserByUsername :one
-- GetOrderUserByUsername finds a user by username ignoring case, with the password hash for login.
SELECT id, username, password_hash, user_type, balance FROM order_users WHERE lower(username) = lower(@username);

-- name: GetOrderUser :one
-- GetOrderUser reads a user by id.
SELECT id, username, user_type, balance FROM order_users WHERE id = @id;
