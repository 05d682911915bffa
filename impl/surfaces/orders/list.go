package orders

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/platform/pgtx"
	"github.com/triadhq/triad/impl/surfaces/orders/money"
)

// listQuery is the text of the page query of a list, sort key and direction: one static query
// each in db/queries/order_lists.sql (ORDER BY cannot take a parameter, and a CASE there would
// defeat the indexes of 00010_orders.sql under the new-orders list's generic plan); ok is false
// for a sort no list offers. The text is run by listPipelined rather than by the generated
// method so that a page, its settings and its transaction take one round trip.
func listQuery(scope string, f SortField, desc bool) (sql string, ok bool) {
	switch scope {
	case scopeWaiting:
		return pick(f, desc, db.ListWaitingByIDAsc, db.ListWaitingByIDDesc, db.ListWaitingByPriceAsc,
			db.ListWaitingByPriceDesc, db.ListWaitingByCreatedAtAsc, db.ListWaitingByCreatedAtDesc)
	case scopeCustomer:
		return pick(f, desc, db.ListCustomerByIDAsc, db.ListCustomerByIDDesc, db.ListCustomerByPriceAsc,
			db.ListCustomerByPriceDesc, db.ListCustomerByCreatedAtAsc, db.ListCustomerByCreatedAtDesc)
	case scopePerformer:
		return pick(f, desc, db.ListPerformerByIDAsc, db.ListPerformerByIDDesc, db.ListPerformerByPriceAsc,
			db.ListPerformerByPriceDesc, db.ListPerformerByCreatedAtAsc, db.ListPerformerByCreatedAtDesc)
	}
	return "", false
}

// pick chooses among one list's six queries, in the order id, price, created_at, each ascending
// then descending.
func pick(f SortField, desc bool, queries ...string) (string, bool) {
	i := 0
	switch f {
	case SortID:
	case SortPrice:
		i = 2
	case SortCreatedAt:
		i = 4
	default:
		return "", false
	}
	if desc {
		i++
	}
	return queries[i], true
}

// ListWaiting is the page of orders nobody has taken, for performers.
func (s *Service) ListWaiting(ctx context.Context, p Principal, pr PageRequest) (PageOf[Order], error) {
	if p.Type != Performer {
		return PageOf[Order]{}, refuse(domainerr.Forbidden, "only performers list new orders; customers list their own at /users/%d/orders", p.ID)
	}
	return s.list(ctx, p, scopeWaiting, 0, pr)
}

// ListOwn is the page of a user's own orders: published ones for a customer, taken ones for a
// performer. Only the user may list them.
func (s *Service) ListOwn(ctx context.Context, p Principal, userID int64, pr PageRequest) (PageOf[Order], error) {
	if p.ID != userID {
		return PageOf[Order]{}, refuse(domainerr.Forbidden, "you may list only your own orders")
	}
	scope := scopeCustomer
	if p.Type == Performer {
		scope = scopePerformer
	}
	page, err := s.list(ctx, p, scope, userID, pr)
	if scope == scopePerformer {
		for i := range page.Items {
			page.Items[i].PerformerName = p.Username
		}
	}
	return page, err
}

// deepOffset is where a page counts as deep (Service.deep): past a thousand rows, a page's own cost
// (the rows it skips) outweighs the round trip.
const deepOffset = 1000

// list reads one page of a list for caller, holding one of the caller's places in the pool's
// fair share while it does (Limits.ListShare) and bounded in time (Limits.ListTimeout).
func (s *Service) list(ctx context.Context, caller Principal, scope string, owner int64, pr PageRequest) (out PageOf[Order], err error) {
	out = PageOf[Order]{Items: make([]Order, 0, pr.Size), Number: pr.Number, Size: pr.Size}
	sql, ok := listQuery(scope, pr.Sort, pr.Desc)
	if !ok {
		return out, InvalidInput(invalid.OneOf("", "sort", SortValues()))
	}
	release, err := s.share.acquire(ctx, caller.ID, pr.Number*pr.Size <= ShallowOffset)
	if err != nil {
		return out, err
	}
	defer release()
	if pr.Number*pr.Size >= deepOffset {
		// A deep page walks that many index entries and rows first: it waits for a place in the
		// deep lane, which many users paging deep together fill, never the whole pool.
		select {
		case s.deep <- struct{}{}:
			defer func() { <-s.deep }()
		case <-ctx.Done():
			return out, ctx.Err()
		}
	}
	args := []any{scope, owner, pr.Size, pr.Number * pr.Size}
	// A page only reads, and its total comes from the same snapshot, so a standby that has
	// replayed the caller's writes serves it (s.reads).
	err = s.reads.Do(ctx, func(pool *pgxpool.Pool) (err error) {
		out.Items = out.Items[:0]
		found, err := s.listPipelined(ctx, pool, sql, args, genericPlan(scope), &out)
		if err == nil && !found {
			out.TotalElements, err = db.New(pool).OrderListTotal(ctx, db.OrderListTotalParams{Scope: scope, OwnerID: owner})
		}
		return err
	})
	if err != nil && ctx.Err() == nil && pgErrCode(err) == "57014" /* query_canceled */ {
		// Cancelled by the statement timeout (a cancel of the request itself leaves ctx.Err set).
		return out, refuse(ErrListTooSlow, "this page took longer than %s to read; try again shortly", s.limits.ListTimeout)
	}
	return out, err
}

// listPipelined runs a page query on pool in one round trip of two statements, a set_config of
// the page's settings and the query, pipelined before one Sync: PostgreSQL runs the statements of
// a pipeline as one implicit transaction, so the settings (set_config's is_local) hold for the
// query alone and end with it, with no BEGIN or COMMIT and no session state a transaction-mode
// pooler could hand to another client. The settings are the statement timeout Limits.ListTimeout
// (each Execute starts its timer from the setting then in force), so that no page holds a
// connection for longer, and, for the lists genericPlan names, a generic plan. PostgreSQL would
// otherwise plan those statements afresh on every call, which for a 20-row page costs more than
// running it (a customer's page 0 of 20 over 1,000 orders: 1.0-1.4x the throughput of the same SQL
// under PostgreSQL's default plan choice, against 0.7-0.9x with custom plans, docs/scaling.md).
// (A statement's first preparation on a connection runs before the settings, without the timeout.)
func (s *Service) listPipelined(ctx context.Context, pool *pgxpool.Pool, sql string, args []any, generic bool, out *PageOf[Order]) (found bool, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return false, err
	}
	defer conn.Release()
	// Constant texts (the timeout is the Service's, fixed at start), each prepared once per connection.
	settings := s.listSettings
	if generic {
		settings = s.listSettingsGeneric
	}
	b := &pgx.Batch{}
	b.Queue(settings)
	b.Queue(sql, args...)
	br := conn.SendBatch(ctx, b)
	err = func() error {
		if _, err := br.Exec(); err != nil {
			return err
		}
		rows, err := br.Query()
		if err != nil {
			return err
		}
		found, err = scanPage(rows, out)
		return err
	}()
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		pgtx.EndOpen(ctx, conn.Conn())
	}
	return found, err
}

// genericPlan reports whether a list's page query runs with a generic plan (listPipelined): the
// new-orders list, whose filter is a constant (status = 'WAITING'), and a customer's own list,
// filtered by the customer alone; each of their sort orders has its own index starting with the
// filter (00010_orders.sql, 00320), so the best plan, an index walk stopping at the page's end, is
// the same whatever the parameters (TestListQueries_ReadAnIndex). A performer's list keeps custom
// plans: only its order by id has an index, and how many orders one performer holds decides
// between an index walk and a sort.
func genericPlan(scope string) bool { return scope != scopePerformer }

// listSettings are the statements giving a list page its settings for its own implicit
// transaction (listPipelined): the statement timeout, and with generic a generic plan.
func listSettings(timeout time.Duration, generic bool) string {
	set := fmt.Sprintf("SELECT set_config('statement_timeout', '%d', true)", timeout.Milliseconds())
	if generic {
		set += ", set_config('plan_cache_mode', 'force_generic_plan', true)"
	}
	return set
}

// pgErrCode is the SQLSTATE of a PostgreSQL error, "" for any other error.
func pgErrCode(err error) string {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return pgErr.Code
	}
	return ""
}

// scanPage reads the rows of a list query into out and closes them; found reports whether any
// row came (an empty page carries no total).
func scanPage(rows pgx.Rows, out *PageOf[Order]) (found bool, err error) {
	defer rows.Close()
	for rows.Next() {
		// Plain and pgtype targets scan without per-row allocations, unlike pointers.
		var (
			o             Order
			total         pgtype.Int8
			performer     pgtype.Int8
			performerName pgtype.Text
			price         int64
			status        string
		)
		if err := rows.Scan(&total, &o.ID, &o.CustomerID, &performer, &performerName, &o.Description, &price, &status, &o.CreatedAt); err != nil {
			return found, err
		}
		found = true
		out.TotalElements = total.Int64
		o.Price, o.Status = money.Kopecks(price), Status(status)
		o.PerformerID, o.PerformerName = performer.Int64, performerName.String
		out.Items = append(out.Items, o)
	}
	return found, rows.Err()
}
