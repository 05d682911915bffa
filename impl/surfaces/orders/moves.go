package orders

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/platform/pgtx"
	"github.com/triadhq/triad/impl/surfaces/orders/money"
)

// The moves of an order other than its creation and its acceptance. Each is one statement (take:
// one call of the SQL function order_take) that changes the order only from the state it starts
// from, with the list counters, the reservations, the performer's count under the cap and the
// ledger in the same statement, so concurrent moves of one order leave exactly one winner and
// nothing half done.

// Take makes the calling performer the performer of a WAITING order (→ IN PROGRESS), if the
// performer holds fewer than Limits.MaxInProgress orders IN PROGRESS (else ErrTooManyInProgress).
// Among concurrent takes of one order exactly one wins; the others get ErrInvalidState.
func (s *Service) Take(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Performer {
		return Order{}, refuse(ErrForbidden, "only performers take orders")
	}
	var row db.TakeOrderRow
	err := pgtx.Retry(ctx, func() (err error) {
		row, err = s.q.TakeOrder(ctx, db.TakeOrderParams{OrderID: id, PerformerID: p.ID, MaxHeld: int32(s.limits.MaxInProgress)})
		return err
	})
	if err != nil {
		return Order{}, err
	}
	switch row.Outcome {
	case "taken":
		return Order{ID: id, CustomerID: row.CustomerID, PerformerID: p.ID, PerformerName: p.Username,
			Description: row.Description, Price: money.Kopecks(row.Price), Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
	case "too_many":
		return Order{}, refuse(ErrTooManyInProgress, "you hold %d orders IN PROGRESS, the most one performer may; pass or release one first", row.Held)
	case "not_waiting":
		return Order{}, s.explain(ctx, p, id, "take", Waiting)
	}
	return Order{}, fmt.Errorf("take of order %d: unknown outcome %q", id, row.Outcome)
}

// Pass marks an IN PROGRESS order of the calling performer READY, in one conditional UPDATE that
// also gives back the performer's place under the cap.
func (s *Service) Pass(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Performer {
		return Order{}, refuse(ErrForbidden, "only the order's performer may pass it")
	}
	var row db.PassOrderRow
	err := pgtx.Retry(ctx, func() (err error) {
		row, err = s.q.PassOrder(ctx, db.PassOrderParams{ID: id, PerformerID: pgtype.Int8{Int64: p.ID, Valid: true}})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explain(ctx, p, id, "pass", InProgress)
	}
	if err != nil {
		return Order{}, err
	}
	return Order{ID: row.ID, CustomerID: row.CustomerID, PerformerID: p.ID, PerformerName: p.Username,
		Description: row.Description, Price: money.Kopecks(row.Price), Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
}

// Cancel withdraws a WAITING order of the calling customer (→ CANCELLED): it leaves the new-orders
// list, stays in the customer's, and its reservation returns to the customer's free balance.
func (s *Service) Cancel(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Customer {
		return Order{}, refuse(ErrForbidden, "only the order's customer may cancel it")
	}
	var row db.CancelOrderRow
	err := pgtx.Retry(ctx, func() (err error) {
		row, err = s.q.CancelOrder(ctx, db.CancelOrderParams{ID: id, CustomerID: p.ID})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explain(ctx, p, id, "cancel", Waiting)
	}
	if err != nil {
		return Order{}, err
	}
	return Order{ID: row.ID, CustomerID: row.CustomerID, Description: row.Description, Price: money.Kopecks(row.Price),
		Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
}

// Release hands an IN PROGRESS order of the calling performer back (→ WAITING, no performer): it
// returns to the new-orders list and the performer's place under the cap is free again. The
// customer's reservation stays, as the order is still open.
func (s *Service) Release(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Performer {
		return Order{}, refuse(ErrForbidden, "only the order's performer may release it")
	}
	var row db.ReleaseOrderRow
	err := pgtx.Retry(ctx, func() (err error) {
		row, err = s.q.ReleaseOrder(ctx, db.ReleaseOrderParams{ID: id, PerformerID: p.ID})
		return err
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explain(ctx, p, id, "release", InProgress)
	}
	if err != nil {
		return Order{}, err
	}
	return Order{ID: row.ID, CustomerID: row.CustomerID, Description: row.Description, Price: money.Kopecks(row.Price),
		Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
}

// staleBatch is how many stale orders one statement of ExpireStale returns, so that one sweep
// after a long outage holds its locks only briefly.
const staleBatch = 500

// ExpireStale returns every order that has been IN PROGRESS, untouched, for longer than after to
// WAITING, as if its performer had released it (ledger kind 'expire'); it reports how many. The
// state it reads is the database's (orders.updated_at), so any replica may run it, and several at
// once move each order once.
func (s *Service) ExpireStale(ctx context.Context, after time.Duration) (int64, error) {
	var total int64
	for {
		var n int64
		err := pgtx.Retry(ctx, func() (err error) {
			n, err = s.q.ExpireStaleOrders(ctx, db.ExpireStaleOrdersParams{
				After: pgtype.Interval{Microseconds: after.Microseconds(), Valid: true}, Batch: staleBatch,
			})
			return err
		})
		total += n
		if err != nil || n < staleBatch {
			return total, err
		}
	}
}

// explain turns a conditional UPDATE that matched no row into the reason: no such order, not the
// caller's, or the wrong state.
func (s *Service) explain(ctx context.Context, p Principal, id int64, action string, from Status) error {
	st, err := s.q.GetOrderState(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return refuse(ErrNotFound, "order %d not found", id)
	}
	if err != nil {
		return err
	}
	switch action {
	case "pass", "release":
		if !st.PerformerID.Valid || st.PerformerID.Int64 != p.ID {
			return refuse(ErrForbidden, "only the order's performer may %s it", action)
		}
	case "cancel":
		if st.CustomerID != p.ID {
			return refuse(ErrForbidden, "only the order's customer may cancel it")
		}
	}
	return refuse(ErrInvalidState, "order %d is %s; %s needs %s", id, st.Status, action, from)
}
