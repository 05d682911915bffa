package orders

import (
	"context"
	"fmt"
	"time"

	"github.com/triadhq/triad/impl/orders/money"
)

// The list queries are written here rather than in db/queries because ORDER BY cannot take a
// parameter: each allowed sort maps to a fixed SQL fragment that the indexes of 00010_orders.sql
// serve (a CASE expression in one sqlc query would defeat them). Nothing from the request is
// pasted into SQL except these constants.
var orderBy = map[SortField][2]string{
	SortID:        {"o.id", "o.id DESC"},
	SortPrice:     {"o.price, o.id", "o.price DESC, o.id DESC"},
	SortCreatedAt: {"o.created_at, o.id", "o.created_at DESC, o.id DESC"},
}

// listSQL reads the exact total from the list's counter row and the page in one round trip: the
// counter CTE always yields one row, joined to the (possibly empty) page.
const listSQL = `
WITH total AS (
    SELECT coalesce((SELECT n FROM order_counters WHERE scope = $1 AND owner_id = $2), 0) AS n
)
SELECT total.n, o.id, o.customer_id, o.performer_id, u.username, o.description, o.price, o.status, o.created_at
FROM total
LEFT JOIN LATERAL (
    SELECT o.id, o.customer_id, o.performer_id, o.description, o.price, o.status, o.created_at
    FROM orders o WHERE %s ORDER BY %s LIMIT $3 OFFSET $4
) o ON true
LEFT JOIN order_users u ON u.id = o.performer_id
ORDER BY %s`

var listQueries = func() map[string]string {
	filters := map[string]string{
		scopeWaiting:   "o.status = 'WAITING' AND $2::bigint = 0",
		scopeCustomer:  "o.customer_id = $2",
		scopePerformer: "o.performer_id = $2",
	}
	m := map[string]string{}
	for scope, where := range filters {
		for field, dirs := range orderBy {
			for i, ob := range dirs {
				m[listKey(scope, field, i == 1)] = fmt.Sprintf(listSQL, where, ob, ob)
			}
		}
	}
	return m
}()

func listKey(scope string, f SortField, desc bool) string {
	return fmt.Sprintf("%s/%s/%t", scope, f, desc)
}

// ListWaiting is the page of orders nobody has taken, for performers.
func (s *Service) ListWaiting(ctx context.Context, p Principal, pr PageRequest) (PageOf[Order], error) {
	if p.Type != Performer {
		return PageOf[Order]{}, refuse(ErrForbidden, "only performers list new orders; customers list their own at /users/%d/orders", p.ID)
	}
	return s.list(ctx, scopeWaiting, 0, pr)
}

// ListOwn is the page of a user's own orders: published ones for a customer, taken ones for a
// performer. Only the user may list them.
func (s *Service) ListOwn(ctx context.Context, p Principal, userID int64, pr PageRequest) (PageOf[Order], error) {
	if p.ID != userID {
		return PageOf[Order]{}, refuse(ErrForbidden, "you may list only your own orders")
	}
	scope := scopeCustomer
	if p.Type == Performer {
		scope = scopePerformer
	}
	return s.list(ctx, scope, userID, pr)
}

func (s *Service) list(ctx context.Context, scope string, owner int64, pr PageRequest) (PageOf[Order], error) {
	out := PageOf[Order]{Items: make([]Order, 0, pr.Size), Number: pr.Number, Size: pr.Size}
	sql, ok := listQueries[listKey(scope, pr.Sort, pr.Desc)]
	if !ok {
		return out, invalid("sort", "sort field %q is not one of id, price, createdAt", pr.Sort)
	}
	rows, err := s.pool.Query(ctx, sql, scope, owner, pr.Size, pr.Number*pr.Size)
	if err != nil {
		return out, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			total                int64
			id, customer         *int64
			performer            *int64
			performerName, descr *string
			price                *int64
			status               *string
			created              *time.Time
		)
		if err := rows.Scan(&total, &id, &customer, &performer, &performerName, &descr, &price, &status, &created); err != nil {
			return out, err
		}
		out.TotalElements = total
		if id == nil {
			continue // an empty page: only the total came back
		}
		o := Order{ID: *id, CustomerID: *customer, Description: *descr, Price: money.Kopecks(*price), Status: Status(*status), CreatedAt: *created}
		if performer != nil {
			o.PerformerID = *performer
		}
		if performerName != nil {
			o.PerformerName = *performerName
		}
		out.Items = append(out.Items, o)
	}
	return out, rows.Err()
}
