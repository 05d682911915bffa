// Package pgstate keeps the auth library's cross-request state in PostgreSQL, so N replicas of a
// server behind a load balancer behave like one: the ids of used confirmation tokens (UsedIDs), the
// pending messenger logins (TelegramLogins) and the election of the one process that polls a bot
// (Leader, a session-level advisory lock held on a dedicated connection).
//
// New creates the package's own tables (auth_used_ids, auth_telegram_logins, and
// auth_revoked_sessions of Sessions) when missing, and nothing else, so it can share any database, the embedder's included. Open uses them as they are:
// for a server whose migrations create them (triad's db/schema/00040_auth_state.sql holds Schema, 00210_auth_revoked_sessions.sql SessionsSchema),
// so that it can run as a role that may not change the schema.
package pgstate

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// Schema is the package's own tables. Expired rows are useless (the tokens they guard are refused
// by their exp), so they are swept, never kept.
const Schema = `
CREATE TABLE IF NOT EXISTS auth_used_ids (
    id         text PRIMARY KEY,
    expires_at timestamptz NOT NULL
);
CREATE INDEX IF NOT EXISTS auth_used_ids_expires_at ON auth_used_ids (expires_at);
CREATE TABLE IF NOT EXISTS auth_telegram_logins (
    token      text PRIMARY KEY,
    aud        text NOT NULL,
    session    boolean NOT NULL,
    expires_at timestamptz NOT NULL,
    usr        jsonb
);
CREATE INDEX IF NOT EXISTS auth_telegram_logins_expires_at ON auth_telegram_logins (expires_at);`

// schemaLock serialises the CREATE statements of replicas starting together: CREATE TABLE IF NOT
// EXISTS is not safe against a concurrent creation of the same table.
const schemaLock = int64(0x7472696164617574) // "triadaut"

// SweepEvery is how often the embedder runs Store.Sweep and Sessions.Sweep (through
// impl/platform/sweep, as cmd/server does; Sessions.Start runs its own).
const SweepEvery = time.Minute

// Store is the PostgreSQL provider.UsedIDs and provider.TelegramLogins. It is safe for concurrent use.
type Store struct {
	pool *pgxpool.Pool
}

var (
	_ provider.UsedIDs        = (*Store)(nil)
	_ provider.TelegramLogins = (*Store)(nil)
)

// New creates the package's tables in pool's database when missing and returns the Store. The
// caller owns the pool.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", schemaLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, Schema+";"+SessionsSchema)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstate: create tables: %w", err)
	}
	return &Store{pool: pool}, nil
}

// Open returns the Store over tables that already exist (Schema, applied by the embedder's own
// migrations): nothing is created, so the pool's role needs only to read and write rows.
func Open(pool *pgxpool.Pool) *Store { return &Store{pool: pool} }

// Sweep deletes the expired used ids and messenger logins and reports how many rows went; the
// embedder runs it every SweepEvery through impl/platform/sweep. An expired login is ignored by
// every read (each query checks expires_at) and an expired used id only keeps refusing its own
// single-use id, so a late sweep only leaves the tables larger.
func (s *Store) Sweep(ctx context.Context) (int64, error) {
	var n int64
	for _, q := range []string{"DELETE FROM auth_used_ids WHERE expires_at < now()",
		"DELETE FROM auth_telegram_logins WHERE expires_at < now()"} {
		tag, err := s.pool.Exec(ctx, q)
		if err != nil {
			return n, fmt.Errorf("pgstate: sweep: %w", err)
		}
		n += tag.RowsAffected()
	}
	return n, nil
}

// Use records id as used until expires; firstUse is true for exactly one caller across every
// process sharing the database (the primary key decides).
func (s *Store) Use(ctx context.Context, id string, expires time.Time) (bool, error) {
	tag, err := s.pool.Exec(ctx,
		"INSERT INTO auth_used_ids (id, expires_at) VALUES ($1, $2) ON CONFLICT (id) DO NOTHING", id, expires)
	if err != nil {
		return false, fmt.Errorf("pgstate: use id: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Start records an unconfirmed messenger login.
func (s *Store) Start(ctx context.Context, tok string, l provider.TelegramLogin) error {
	_, err := s.pool.Exec(ctx, `INSERT INTO auth_telegram_logins (token, aud, session, expires_at) VALUES ($1, $2, $3, $4)`,
		tok, l.Aud, l.Session, l.Expires)
	if err != nil {
		return fmt.Errorf("pgstate: start a telegram login: %w", err)
	}
	return nil
}

// Pending reports whether tok is a live, unconfirmed login.
func (s *Store) Pending(ctx context.Context, tok string) (bool, error) {
	var ok bool
	err := s.pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM auth_telegram_logins
		WHERE token = $1 AND usr IS NULL AND expires_at > now())`, tok).Scan(&ok)
	if err != nil {
		return false, fmt.Errorf("pgstate: pending telegram login: %w", err)
	}
	return ok, nil
}

// Confirm sets the user of a live, unconfirmed login in one conditional UPDATE, so of two
// confirmations racing on any processes exactly one wins.
func (s *Store) Confirm(ctx context.Context, tok string, u token.User) (bool, error) {
	b, err := json.Marshal(u)
	if err != nil {
		return false, fmt.Errorf("pgstate: confirm a telegram login: %w", err)
	}
	tag, err := s.pool.Exec(ctx, `UPDATE auth_telegram_logins SET usr = $2
		WHERE token = $1 AND usr IS NULL AND expires_at > now()`, tok, b)
	if err != nil {
		return false, fmt.Errorf("pgstate: confirm a telegram login: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Take deletes a live, confirmed login and returns it: the DELETE ... RETURNING hands it to exactly
// one of the requests racing for it.
func (s *Store) Take(ctx context.Context, tok string) (provider.TelegramLogin, bool, error) {
	var l provider.TelegramLogin
	var b []byte
	err := s.pool.QueryRow(ctx, `DELETE FROM auth_telegram_logins
		WHERE token = $1 AND usr IS NOT NULL AND expires_at > now()
		RETURNING aud, session, expires_at, usr`, tok).Scan(&l.Aud, &l.Session, &l.Expires, &b)
	if errors.Is(err, pgx.ErrNoRows) {
		return provider.TelegramLogin{}, false, nil
	}
	if err != nil {
		return provider.TelegramLogin{}, false, fmt.Errorf("pgstate: take a telegram login: %w", err)
	}
	var u token.User
	if err := json.Unmarshal(b, &u); err != nil {
		return provider.TelegramLogin{}, false, fmt.Errorf("pgstate: take a telegram login: %w", err)
	}
	l.User = &u
	return l, true, nil
}
