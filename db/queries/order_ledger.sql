-- name: AddOrderLedgerEntry :exec
-- AddOrderLedgerEntry records one balance change of a user (a grant at registration).
INSERT INTO order_ledger (user_id, order_id, kind, amount) VALUES (@user_id, @order_id, @kind, @amount);

-- name: SettleOrder :execrows
-- SettleOrder pays for a READY order whose customer and performer rows the caller has locked and whose funds it has checked: debit, credit, commission, three ledger rows and COMPLETED, in one statement.
WITH debit AS (
    UPDATE order_users SET balance = balance - @total::bigint WHERE id = @customer_id::bigint
), credit AS (
    UPDATE order_users SET balance = balance + @price::bigint WHERE id = @performer_id::bigint
), platform AS (
    UPDATE order_platform_slots SET balance = balance + @commission::bigint WHERE slot = @slot::integer
), entries AS (
    INSERT INTO order_ledger (user_id, order_id, kind, amount) VALUES
        (@customer_id::bigint, @order_id::bigint, 'payment', -(@total::bigint)),
        (@performer_id::bigint, @order_id::bigint, 'earning', @price::bigint),
        (NULL, @order_id::bigint, 'commission', @commission::bigint)
)
UPDATE orders SET status = 'COMPLETED', updated_at = now()
WHERE id = @order_id::bigint AND status = 'READY' AND customer_id = @customer_id::bigint;
