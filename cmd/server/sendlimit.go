package main

import (
	"context"
	"time"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/throttle"
	"github.com/triadhq/triad/impl/surfaces/auth/provider"
)

// pgSendLimiter is the verified provider's provider.SendLimiter in the server's database: the
// messages are counted in the login throttle's table (under keys of their own, which no login key
// can equal), so every replica counts against the same bounds.
type pgSendLimiter struct {
	recipients, clients *throttle.Limiter
}

// newSendLimiter bounds confirmation messages as the config says: ConfirmPerRecipient to one
// recipient, ConfirmPerClient asked by one client address, in each ConfirmWindow.
func newSendLimiter(conn db.DBTX, c AuthConfig) *pgSendLimiter {
	return &pgSendLimiter{
		recipients: throttle.New(conn, throttle.Options{Max: c.ConfirmPerRecipient, Window: c.ConfirmWindow}),
		clients:    throttle.New(conn, throttle.Options{Max: c.ConfirmPerClient, Window: c.ConfirmWindow}),
	}
}

// Allow counts the message under its recipient, then under its client. The recipient comes first
// and is given back when the client is over its share: a client refused for asking too much then
// takes nothing of its victims' allowance.
func (l *pgSendLimiter) Allow(ctx context.Context, recipient, client string) (time.Duration, error) {
	to, err := l.recipients.Reserve(ctx, "CONFIRM-TO|"+provider.RecipientKey(recipient))
	if err != nil || to.Blocked {
		return to.RetryAfter, err
	}
	from, err := l.clients.Reserve(ctx, "CONFIRM-FROM|"+provider.ClientKey(client))
	if err != nil || from.Blocked {
		_ = to.Release()
		return from.RetryAfter, err
	}
	return 0, nil
}
