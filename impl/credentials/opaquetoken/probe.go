package opaquetoken

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"

	"github.com/jackc/pgx/v5"
)

// ErrDeaf is a session's failure to hear its own probe: LISTEN succeeded but notifications do not
// reach it, as behind a transaction-mode pooler (PgBouncer hands the LISTEN to a backend the
// session then leaves). Such a session is closed and nothing is cached.
var ErrDeaf = errors.New("the listening session hears no notifications (a transaction-mode pooler between it and PostgreSQL?)")

// verify LISTENs on the Watcher's probe channel and notifies it through the pool: a session that
// does not hear it within watchProbeTimeout fails with ErrDeaf, before any cache is made live. A
// LISTEN through a transaction-mode pooler succeeds and hears nothing, which only this shows.
func (w *Watcher) verify(ctx context.Context, conn *pgx.Conn) error {
	if w.notify == nil {
		return nil
	}
	vctx, cancel := context.WithTimeout(ctx, watchProbeTimeout)
	defer cancel()
	if _, err := conn.Exec(vctx, "LISTEN "+pgx.Identifier{w.probe}.Sanitize()); err != nil {
		return err
	}
	var b [8]byte
	_, _ = rand.Read(b[:])
	nonce := hex.EncodeToString(b[:])
	if err := w.notify(vctx, w.probe, nonce); err != nil {
		return err
	}
	for {
		n, err := conn.WaitForNotification(vctx)
		switch {
		case err != nil && ctx.Err() == nil && errors.Is(vctx.Err(), context.DeadlineExceeded):
			return ErrDeaf
		case err != nil:
			return err
		case n.Channel == w.probe && n.Payload == nonce:
			return nil
		}
	}
}
