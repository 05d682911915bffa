// Package devdata loads the orders API's prepared data for development mode: demo users of both
// roles (credentials in docs/orders.md) and orders in every state. Loading is idempotent: a marker
// row in platform_info records that it ran, so restarting the server adds nothing. Reset puts it
// back as at the first start (dev mode's POST /dev/reset).
package devdata

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/platform/pgtx"
	"github.com/triadhq/triad/impl/surfaces/orders"
	"github.com/triadhq/triad/impl/surfaces/orders/money"
)

// Users are the demo accounts, documented in docs/orders.md. Hash is the argon2id hash of Password
// (password.Default's cost, fixed salts), computed once and stored here, so that a dev start
// creates them without hashing (most of a second per hash under -race, six per start);
// TestUsers_HashesArePublishedPasswords holds each to its password.
var Users = []struct {
	Username, Password, Hash string
	Type                     orders.UserType
}{
	{"alice", "alice-password", "$argon2id$v=19$m=19456,t=2,p=1$faNzrV26CW2v32zDqq/Gag$PZM+nWuC3xlTfroxanMw9ybb26BTLGbuoXiTyzS/vqs", orders.Customer},
	{"carol", "carol-password", "$argon2id$v=19$m=19456,t=2,p=1$tki5WMrJkFFyy8Iw/jHcdQ$ivQRmG5maHWq8ba+m5qC4UxdvPkT5enKIS4S50O5u3E", orders.Customer},
	{"bob", "bob-password", "$argon2id$v=19$m=19456,t=2,p=1$7AzeviVXxEX/QVSez7tp2A$pyOdyQZv8hxw8hxkxTxwOsBl09TiEltjmrXAdtoyY/Y", orders.Performer},
	{"dave", "dave-password", "$argon2id$v=19$m=19456,t=2,p=1$Jh04XCySC5JgzI7VzSWpKg$AMDmnZNjMuJw2xDPbcwSAAvm6H/s+wq/e72O4c/89nM", orders.Performer},
}

const marker = "orders.devdata"

// Load creates the demo data unless it was loaded before. It returns whether it created it.
func Load(ctx context.Context, pool *pgxpool.Pool, svc *orders.Service) (bool, error) {
	q := db.New(pool)
	if _, err := q.GetPlatformInfo(ctx, marker); err == nil {
		return false, nil
	} else if !errors.Is(err, pgx.ErrNoRows) {
		return false, err
	}
	users := map[string]orders.Principal{}
	for _, u := range Users {
		got, err := svc.RegisterWithHash(ctx, u.Username, u.Hash, u.Type)
		if errors.Is(err, domainerr.Taken) {
			// A previous run stopped half-way, or someone registered the name: reuse the account.
			got, err = svc.Authenticate(ctx, u.Username, u.Password)
		}
		if err != nil {
			return false, fmt.Errorf("dev user %s: %w", u.Username, err)
		}
		users[u.Username] = orders.Principal{ID: got.ID, Username: got.Username, Type: got.Type}
	}
	alice, carol, bob, dave := users["alice"], users["carol"], users["bob"], users["dave"]
	steps := []struct {
		customer    orders.Principal
		description string
		price       money.Kopecks
		performer   orders.Principal
		take, pass  bool
		accept      bool
	}{
		{customer: alice, description: "Paint the garden fence", price: 12050},
		{customer: alice, description: "Assemble a bookshelf", price: 4000},
		{customer: carol, description: "Translate a two-page letter", price: 7599},
		// The completed order first: bob then holds at most two at once (IN PROGRESS and READY
		// count under the cap), so dev mode starts with a cap as low as 2.
		{customer: carol, description: "Deliver a parcel", price: 1500, performer: bob, take: true, pass: true, accept: true},
		{customer: alice, description: "Fix a leaking tap", price: 3500, performer: bob, take: true},
		{customer: carol, description: "Walk the dog for a week", price: 9000, performer: dave, take: true, pass: true},
		{customer: alice, description: "Mow the lawn", price: 2500, performer: bob, take: true, pass: true},
	}
	for _, s := range steps {
		o, err := svc.CreateOrder(ctx, s.customer, s.description, s.price)
		if err != nil {
			return false, fmt.Errorf("dev order: %w", err)
		}
		if s.take {
			if _, err := svc.Take(ctx, s.performer, o.ID); err != nil {
				return false, fmt.Errorf("dev order %d take: %w", o.ID, err)
			}
		}
		if s.pass {
			if _, err := svc.Pass(ctx, s.performer, o.ID); err != nil {
				return false, fmt.Errorf("dev order %d pass: %w", o.ID, err)
			}
		}
		if s.accept {
			if _, err := svc.Accept(ctx, s.customer, o.ID); err != nil {
				return false, fmt.Errorf("dev order %d accept: %w", o.ID, err)
			}
		}
	}
	return true, q.PutPlatformInfo(ctx, db.PutPlatformInfoParams{Key: marker, Value: "loaded"})
}

// Reset puts the demo data back as Load made it on an empty database, under the same ids (the
// spec's examples name them): every user, token, order and ledger row of the orders API is
// removed, with every remembered Idempotency-Key answer, and Load runs again. Tokens issued before
// are refused from then on, on every replica. Dev mode only (POST /dev/reset): it destroys what
// every visitor did.
func Reset(ctx context.Context, pool *pgxpool.Pool, svc *orders.Service) error {
	err := pgtx.Run(ctx, pool, pgx.TxOptions{}, func(tx pgx.Tx) error {
		q := db.New(tx)
		if err := q.ResetOrdersData(ctx); err != nil {
			return err
		}
		if err := q.SeedOrderCounters(ctx); err != nil {
			return err
		}
		if err := q.ResetOrderPlatformSlots(ctx); err != nil {
			return err
		}
		if err := q.DeleteAllIdempotencyKeys(ctx); err != nil {
			return err
		}
		return q.DeletePlatformInfo(ctx, marker)
	})
	if err != nil {
		return fmt.Errorf("orders dev data: reset: %w", err)
	}
	_, err = Load(ctx, pool, svc)
	return err
}
