-- +goose Up
-- Every replica caches resolved access tokens in memory and must drop a token the moment its row
-- goes (logout, password change, user deletion, an operator's DELETE). Deleting a row therefore
-- notifies the channel named by the trigger's argument, on commit, with the token's hash in hex;
-- each process listens (opaquetoken.Watcher) and drops that hash from its cache. Rows that expired
-- more than five minutes ago are skipped: no replica serves them any more (the cache honours the
-- expiry; five minutes leave room for clocks that disagree), and the hourly sweep of expired tokens
-- would otherwise send one notification per row. A TRUNCATE empties the caches with one '*'.
-- +goose StatementBegin
CREATE FUNCTION notify_token_revoked() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    h bytea;
BEGIN
    IF TG_OP = 'TRUNCATE' THEN
        PERFORM pg_notify(TG_ARGV[0], '*');
        RETURN NULL;
    END IF;
    -- The two tables name their hash column differently; plpgsql resolves a field only when the
    -- statement runs, so each branch reads a column its table has.
    IF TG_TABLE_NAME = 'brand_tokens' THEN
        h := OLD.token_hash;
    ELSE
        h := OLD.hash;
    END IF;
    PERFORM pg_notify(TG_ARGV[0], encode(h, 'hex'));
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER brand_tokens_revoked AFTER DELETE ON brand_tokens
    FOR EACH ROW WHEN (OLD.expires_at > now() - interval '5 minutes')
    EXECUTE FUNCTION notify_token_revoked('brand_tokens_revoked');
CREATE TRIGGER brand_tokens_truncated AFTER TRUNCATE ON brand_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION notify_token_revoked('brand_tokens_revoked');
CREATE TRIGGER order_tokens_revoked AFTER DELETE ON order_tokens
    FOR EACH ROW WHEN (OLD.expires_at > now() - interval '5 minutes')
    EXECUTE FUNCTION notify_token_revoked('order_tokens_revoked');
CREATE TRIGGER order_tokens_truncated AFTER TRUNCATE ON order_tokens
    FOR EACH STATEMENT EXECUTE FUNCTION notify_token_revoked('order_tokens_revoked');

-- +goose Down
DROP TRIGGER order_tokens_truncated ON order_tokens;
DROP TRIGGER order_tokens_revoked ON order_tokens;
DROP TRIGGER brand_tokens_truncated ON brand_tokens;
DROP TRIGGER brand_tokens_revoked ON brand_tokens;
DROP FUNCTION notify_token_revoked();
