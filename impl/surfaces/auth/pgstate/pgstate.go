// Package pgstate keeps the auth library's cross-request state in PostgreSQL, so N replicas of a
// server behind a load balancer behave like one: the ids of used confirmation tokens (UsedIDs), the
// pending messenger logins (TelegramLogins), the election of the one process that polls a bot
// (Leader, a session-level advisory lock held on a dedicated connection) and where that poller
// stands in the bot's updates (the Store's Offset and SaveOffset: the next poller elected starts
// there and does not answer them again).
//
// New creates the package's own tables (auth_used_ids, auth_telegram_logins and
// auth_telegram_offsets of the Store, auth_revoked_sessions of Sessions: schema.sql,
// offsets_schema.sql and sessions_schema.sql, embedded) when missing, and nothing else, so it can
// share any database, the embedder's included, and an embedder needs no migration runner. Open uses
// them as they are: for a server whose migrations create them (triad's
// db/schema/00040_auth_state.sql holds Schema, 00210_auth_revoked_sessions.sql SessionsSchema,
// 00360_auth_telegram_offsets.sql OffsetsSchema: this package's files are the source, and
// TestSchema_IsTheServersMigration fails when a migration and its file differ by a statement), so
// that it can run as a role that may not change the schema. Every query is sqlc's (queries.sql,
// generated into gen/authstatedb).
package pgstate

import (
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/authstatedb"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
	"github.com/triadhq/triad/impl/surfaces/auth/token"
)

// Schema is the package's own tables (schema.sql), which New creates; SessionsSchema
// (sessions_schema.sql) is the table of Sessions, OffsetsSchema (offsets_schema.sql) that of the
// Store's Telegram offsets. Their queries are sqlc's, in queries.sql
// (gen/authstatedb), so sqlc checks every statement against them.
//
//go:embed schema.sql
var Schema string

// schemaLock serialises the CREATE statements of replicas starting together: CREATE TABLE IF NOT
// EXISTS is not safe against a concurrent creation of the same table.
const schemaLock = int64(0x7472696164617574) // "triadaut"

// SweepEvery is how often the embedder runs Store.Sweep and Sessions.Sweep (through
// impl/platform/sweep, as cmd/server does; Sessions.Start runs its own).
const SweepEvery = time.Minute

// Store is the PostgreSQL provider.UsedIDs, provider.TelegramLogins and telegram.Offsets. It is
// safe for concurrent use.
type Store struct {
	q *authstatedb.Queries
}

var (
	_ provider.UsedIDs        = (*Store)(nil)
	_ provider.TelegramLogins = (*Store)(nil)
)

// New creates the package's tables in pool's database when missing and returns the Store. The
// caller owns the pool.
func New(ctx context.Context, pool *pgxpool.Pool) (*Store, error) {
	err := pgx.BeginFunc(ctx, pool, func(tx pgx.Tx) error {
		if err := authstatedb.New(tx).CreateTablesLock(ctx, schemaLock); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, Schema+";"+SessionsSchema+";"+OffsetsSchema)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstate: create tables: %w", err)
	}
	return Open(pool), nil
}

// Open returns the Store over tables that already exist (Schema, applied by the embedder's own
// migrations): nothing is created, so the pool's role needs only to read and write rows.
func Open(pool *pgxpool.Pool) *Store { return &Store{q: authstatedb.New(pool)} }

// Sweep deletes the expired used ids and messenger logins and reports how many rows went; the
// embedder runs it every SweepEvery through impl/platform/sweep. An expired login is ignored by
// every read (each query checks expires_at) and an expired used id only keeps refusing its own
// single-use id, so a late sweep only leaves the tables larger.
func (s *Store) Sweep(ctx context.Context) (int64, error) {
	var n int64
	for _, sweep := range []func(context.Context) (int64, error){s.q.SweepUsedIDs, s.q.SweepTelegramLogins} {
		gone, err := sweep(ctx)
		if err != nil {
			return n, fmt.Errorf("pgstate: sweep: %w", err)
		}
		n += gone
	}
	return n, nil
}

// Use records id as used until expires; firstUse is true for exactly one caller across every
// process sharing the database (the primary key decides).
func (s *Store) Use(ctx context.Context, id string, expires time.Time) (bool, error) {
	n, err := s.q.UseID(ctx, authstatedb.UseIDParams{ID: id, ExpiresAt: expires})
	if err != nil {
		return false, fmt.Errorf("pgstate: use id: %w", err)
	}
	return n == 1, nil
}

// Start records an unconfirmed messenger login.
func (s *Store) Start(ctx context.Context, tok string, l provider.TelegramLogin) error {
	err := s.q.StartTelegramLogin(ctx, authstatedb.StartTelegramLoginParams{Token: tok, Aud: l.Aud, Session: l.Session, ExpiresAt: l.Expires})
	if err != nil {
		return fmt.Errorf("pgstate: start a telegram login: %w", err)
	}
	return nil
}

// Pending reports whether tok is a live, unconfirmed login.
func (s *Store) Pending(ctx context.Context, tok string) (bool, error) {
	ok, err := s.q.TelegramLoginPending(ctx, tok)
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
	n, err := s.q.ConfirmTelegramLogin(ctx, authstatedb.ConfirmTelegramLoginParams{Token: tok, Usr: b})
	if err != nil {
		return false, fmt.Errorf("pgstate: confirm a telegram login: %w", err)
	}
	return n == 1, nil
}

// Take deletes a live, confirmed login and returns it: the DELETE ... RETURNING hands it to exactly
// one of the requests racing for it.
func (s *Store) Take(ctx context.Context, tok string) (provider.TelegramLogin, bool, error) {
	row, err := s.q.TakeTelegramLogin(ctx, tok)
	if errors.Is(err, pgx.ErrNoRows) {
		return provider.TelegramLogin{}, false, nil
	}
	if err != nil {
		return provider.TelegramLogin{}, false, fmt.Errorf("pgstate: take a telegram login: %w", err)
	}
	var u token.User
	if err := json.Unmarshal(row.Usr, &u); err != nil {
		return provider.TelegramLogin{}, false, fmt.Errorf("pgstate: take a telegram login: %w", err)
	}
	return provider.TelegramLogin{Aud: row.Aud, Session: row.Session, Expires: row.ExpiresAt, User: &u}, true, nil
}
