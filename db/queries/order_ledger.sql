-- name: AddOrderLedgerEntry :exec
-- AddOrderLedgerEntry records one balance change of a user (a grant at registration).
INSERT INTO order_ledger (user_id, order_id, kind, amount) VALUES (@user_id, @order_id, @kind, @amount);
