-- name: SubscribeBrand :execrows
-- SubscribeBrand subscribes the user to the brand when it exists, is available and the user is not
-- subscribed yet; 0 rows means one of those did not hold. The count trigger fires only on a new row.
INSERT INTO brand_subscriptions (user_id, brand_id)
SELECT sqlc.arg(user_id)::text, b.id FROM brands b WHERE b.id = sqlc.arg(brand_id) AND b.availability
ON CONFLICT (user_id, brand_id) DO NOTHING;

-- name: UnsubscribeBrand :execrows
-- UnsubscribeBrand ends the user's subscription to the brand; 0 rows means there was none.
DELETE FROM brand_subscriptions WHERE user_id = $1 AND brand_id = $2;
