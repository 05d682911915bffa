package orders

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgtype"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/platform/pgtx"
	"github.com/triadhq/triad/impl/surfaces/orders/money"
)

// The moves of an order other than its creation and its acceptance. Each is one statement (take:
// one call of the SQL function order_take), run through pgtx.WriteOne (under an Idempotency-Key,
// in one transaction with its kept answer; a refusal is an error inside the write, so none is
// kept), that changes the order only from the state it starts from, with the list counters, the
// reservations, the performer's count under the cap, the cool-downs and the ledger in the same
// statement, so concurrent moves of one order leave exactly one winner and nothing half done.
// Every one locks its rows in the one order docs/orders.md writes down (the order, its customer,
// its performer, its cool-down rows, the counter slots, a platform slot), so no two wait on each
// other in a cycle.

// Take makes the calling performer the performer of a WAITING order (→ IN PROGRESS), if the
// performer holds fewer than Limits.MaxHeld orders IN PROGRESS or READY (else ErrTooManyHeld) and
// has no running cool-down on it (else ErrCoolingDown). Among concurrent takes of one order
// exactly one wins; the others get ErrInvalidState.
func (s *Service) Take(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Performer {
		return Order{}, refuse(domainerr.Forbidden, "only performers take orders")
	}
	release, err := s.writes.acquire(ctx, p.ID)
	if err != nil {
		return Order{}, err
	}
	defer release()
	// Every outcome but "taken" is an error inside the write, so that under an Idempotency-Key
	// no answer is kept for a refusal (nothing moved).
	o, err := pgtx.WriteOne(ctx, s.pool, func(c pgtx.Conn) (Order, error) {
		row, err := db.New(c).TakeOrder(ctx, db.TakeOrderParams{OrderID: id, PerformerID: p.ID, MaxHeld: int32(s.limits.MaxHeld)})
		if err != nil {
			return Order{}, err
		}
		switch row.Outcome {
		case "taken":
			return Order{ID: id, CustomerID: row.CustomerID, PerformerID: p.ID, PerformerName: p.Username,
				Description: row.Description, Price: money.Kopecks(row.Price), Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
		case "too_many":
			return Order{}, refuse(ErrTooManyHeld, "you hold %d orders IN PROGRESS or READY, the most one performer may; release one, or wait for a customer to accept or reject one", row.Held)
		case "cooling_down":
			return Order{}, refuse(ErrCoolingDown, "order %d was taken from you (rejected, released or expired); you may take it again from %s",
				id, row.Until.UTC().Format(time.RFC3339))
		case "not_waiting":
			return Order{}, pgx.ErrNoRows
		}
		return Order{}, fmt.Errorf("take of order %d: unknown outcome %q", id, row.Outcome)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explain(ctx, p, id, "take", Waiting)
	}
	return o, err
}

// Pass marks an IN PROGRESS order of the calling performer READY, in one conditional UPDATE. The
// order stays one of the performer's held orders until its customer accepts or rejects it.
func (s *Service) Pass(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Performer {
		return Order{}, refuse(domainerr.Forbidden, "only the order's performer may pass it")
	}
	release, err := s.writes.acquire(ctx, p.ID)
	if err != nil {
		return Order{}, err
	}
	defer release()
	o, err := pgtx.WriteOne(ctx, s.pool, func(c pgtx.Conn) (Order, error) {
		row, err := db.New(c).PassOrder(ctx, db.PassOrderParams{ID: id, PerformerID: pgtype.Int8{Int64: p.ID, Valid: true}})
		if err != nil {
			return Order{}, err
		}
		return Order{ID: row.ID, CustomerID: row.CustomerID, PerformerID: p.ID, PerformerName: p.Username,
			Description: row.Description, Price: money.Kopecks(row.Price), Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explain(ctx, p, id, "pass", InProgress)
	}
	return o, err
}

// Cancel withdraws a WAITING order of the calling customer (→ CANCELLED): it leaves the new-orders
// list, stays in the customer's, and its reservation returns to the customer's free balance.
func (s *Service) Cancel(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Customer {
		return Order{}, refuse(domainerr.Forbidden, "only the order's customer may cancel it")
	}
	release, err := s.writes.acquire(ctx, p.ID)
	if err != nil {
		return Order{}, err
	}
	defer release()
	o, err := pgtx.WriteOne(ctx, s.pool, func(c pgtx.Conn) (Order, error) {
		row, err := db.New(c).CancelOrder(ctx, db.CancelOrderParams{ID: id, CustomerID: p.ID})
		if err != nil {
			return Order{}, err
		}
		return Order{ID: row.ID, CustomerID: row.CustomerID, Description: row.Description, Price: money.Kopecks(row.Price),
			Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explain(ctx, p, id, "cancel", Waiting)
	}
	return o, err
}

// Release hands an IN PROGRESS order of the calling performer back (→ WAITING, no performer): it
// returns to the new-orders list, the performer's place under the cap is free again and the
// performer may not take it again for Limits.RetakeCooldown. The customer's reservation stays,
// as the order is still open.
func (s *Service) Release(ctx context.Context, p Principal, id int64) (Order, error) {
	if p.Type != Performer {
		return Order{}, refuse(domainerr.Forbidden, "only the order's performer may release it")
	}
	release, err := s.writes.acquire(ctx, p.ID)
	if err != nil {
		return Order{}, err
	}
	defer release()
	o, err := pgtx.WriteOne(ctx, s.pool, func(c pgtx.Conn) (Order, error) {
		row, err := db.New(c).ReleaseOrder(ctx, db.ReleaseOrderParams{ID: id, PerformerID: p.ID, Cooldown: s.cooldown()})
		if err != nil {
			return Order{}, err
		}
		return Order{ID: row.ID, CustomerID: row.CustomerID, Description: row.Description, Price: money.Kopecks(row.Price),
			Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explain(ctx, p, id, "release", InProgress)
	}
	return o, err
}

// Reject sends a READY order of the calling customer back (→ WAITING, no performer): the work was
// not accepted, so nobody is paid; the order returns to the new-orders list with its reservation,
// the performer's place under the cap is free again and that performer may not take it again for
// Limits.RetakeCooldown. With cancel it is rejected and cancelled in one statement (→ CANCELLED):
// the performer is removed alike, the reservation freed as by Cancel, and the order is never
// WAITING in between, so no performer can take it before the cancel.
func (s *Service) Reject(ctx context.Context, p Principal, id int64, cancel bool) (Order, error) {
	if p.Type != Customer {
		return Order{}, refuse(domainerr.Forbidden, "only the order's customer may reject it")
	}
	release, err := s.writes.acquire(ctx, p.ID)
	if err != nil {
		return Order{}, err
	}
	defer release()
	o, err := pgtx.WriteOne(ctx, s.pool, func(c pgtx.Conn) (Order, error) {
		q := db.New(c)
		var row db.RejectOrderRow
		var err error
		if cancel {
			var r db.RejectCancelOrderRow
			r, err = q.RejectCancelOrder(ctx, db.RejectCancelOrderParams{ID: id, CustomerID: p.ID})
			row = db.RejectOrderRow{ID: r.ID, CustomerID: r.CustomerID, Description: r.Description, Price: r.Price,
				Status: r.Status, CreatedAt: r.CreatedAt}
		} else {
			row, err = q.RejectOrder(ctx, db.RejectOrderParams{ID: id, CustomerID: p.ID, Cooldown: s.cooldown()})
		}
		if err != nil {
			return Order{}, err
		}
		return Order{ID: row.ID, CustomerID: row.CustomerID, Description: row.Description, Price: money.Kopecks(row.Price),
			Status: Status(row.Status), CreatedAt: row.CreatedAt}, nil
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return Order{}, s.explain(ctx, p, id, "reject", Ready)
	}
	return o, err
}

// cooldown is Limits.RetakeCooldown as the interval the moves that start one write.
func (s *Service) cooldown() pgtype.Interval {
	return pgtype.Interval{Microseconds: s.limits.RetakeCooldown.Microseconds(), Valid: true}
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
				After: pgtype.Interval{Microseconds: after.Microseconds(), Valid: true}, Batch: staleBatch, Cooldown: s.cooldown(),
			})
			return err
		})
		total += n
		if err != nil || n < staleBatch {
			return total, err
		}
	}
}

// AcceptStale accepts, as their customers would, the orders that have been READY for longer than
// after without an answer, and reports how many it paid. A customer has that whole time to
// accept or reject the work; past it the performer is paid rather than held hostage (the order
// counts under the performer's cap while READY, and the money was reserved at creation). Each
// acceptance is order_accept in a transaction of its own, so it locks as any acceptance does;
// one refused (another replica or the customer answered first, or an order from before
// reservations that its customer cannot pay) is left as it is.
func (s *Service) AcceptStale(ctx context.Context, after time.Duration) (int64, error) {
	stale, err := s.q.StaleReadyOrders(ctx, db.StaleReadyOrdersParams{
		After: pgtype.Interval{Microseconds: after.Microseconds(), Valid: true}, Batch: staleBatch,
	})
	if err != nil {
		return 0, err
	}
	var paid int64
	for _, o := range stale {
		r, err := pgtx.Do(ctx, func() (db.AcceptOrderRow, error) {
			return s.q.AcceptOrder(ctx, db.AcceptOrderParams{OrderID: o.ID, CallerID: o.CustomerID})
		})
		if err != nil {
			return paid, err
		}
		if r.Outcome == "completed" {
			paid++
		}
	}
	return paid, nil
}

// SweepCooldowns deletes the cool-downs that have ended (an ended one refuses nothing; this only
// keeps the table small).
func (s *Service) SweepCooldowns(ctx context.Context) (int64, error) {
	var total int64
	for {
		n, err := s.q.SweepOrderCooldowns(ctx, staleBatch)
		total += n
		if err != nil || n < staleBatch {
			return total, err
		}
	}
}

// MaintainLedger has pg_partman make the ledger's monthly partitions ahead of need (4 months) and
// reports how many future months have one; the sweep leader runs it hourly.
func (s *Service) MaintainLedger(ctx context.Context) (int64, error) {
	return s.q.MaintainOrderLedger(ctx)
}

// explain turns a conditional UPDATE that matched no row into the reason: no such order, not the
// caller's, or the wrong state.
func (s *Service) explain(ctx context.Context, p Principal, id int64, action string, from Status) error {
	st, err := s.q.GetOrderState(ctx, id)
	if errors.Is(err, pgx.ErrNoRows) {
		return refuse(domainerr.NotFound, "order %d not found", id)
	}
	if err != nil {
		return err
	}
	switch action {
	case "pass", "release":
		if !st.PerformerID.Valid || st.PerformerID.Int64 != p.ID {
			return refuse(domainerr.Forbidden, "only the order's performer may %s it", action)
		}
	case "cancel", "reject":
		if st.CustomerID != p.ID {
			return refuse(domainerr.Forbidden, "only the order's customer may %s it", action)
		}
	}
	return refuse(ErrInvalidState, "order %d is %s; %s needs %s", id, st.Status, action, from)
}
