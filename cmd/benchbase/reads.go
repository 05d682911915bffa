package main

import (
	"context"
	"crypto/md5"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/triadhq/triad/gen/db"
)

// The same-SQL read baselines of `make bench`: what a careful engineer would write by hand with chi
// and pgx for each read route of the orders and brands APIs, running the very statements triad
// runs (the texts sqlc generated, through gen/db), against the same database. What they leave out
// is what triad keeps on purpose: the spec validator, the shared middleware (request ids, metrics,
// CORS, access log, recovery, outage reporting, body limit, input screening, idempotency), the
// per-user list share, the statement timeout and the standby routing. The ratio of a triad route
// over its baseline is what those cost.

// order is an order as both APIs answer it.
type order struct {
	ID          int64    `json:"id"`
	CustomerID  int64    `json:"customerId"`
	Performer   *userRef `json:"performer,omitempty"`
	Description string   `json:"description"`
	Price       string   `json:"price"`
	Status      string   `json:"status"`
	CreatedAt   string   `json:"createdAt"`
}

type userRef struct {
	ID       int64  `json:"id"`
	Username string `json:"username"`
}

type pageMeta struct {
	Number        int   `json:"number"`
	Size          int   `json:"size"`
	TotalElements int64 `json:"totalElements"`
	TotalPages    int64 `json:"totalPages"`
}

type orderPage struct {
	Content []order  `json:"content"`
	Page    pageMeta `json:"page"`
}

// caller is a resolved orders token.
type caller struct {
	id        int64
	username  string
	performer bool
}

// tokenCache maps a token's SHA-256 to what it resolved to, as triad's token caches do (without
// their expiry and revocation bookkeeping: a baseline need not be correct past a bench run).
type tokenCache[P any] struct {
	mu      sync.RWMutex
	byHash  map[[sha256.Size]byte]P
	resolve func(ctx context.Context, hash []byte) (P, error)
}

func (c *tokenCache[P]) get(ctx context.Context, tok string) (P, error) {
	h := sha256.Sum256([]byte(tok))
	c.mu.RLock()
	p, ok := c.byHash[h]
	c.mu.RUnlock()
	if ok {
		return p, nil
	}
	p, err := c.resolve(ctx, h[:])
	if err == nil {
		c.mu.Lock()
		c.byHash[h] = p
		c.mu.Unlock()
	}
	return p, err
}

// kopecks formats an amount in kopecks as the APIs do ("120.50").
func kopecks(n int64) string {
	s := strconv.FormatInt(n/100, 10) + "." + strconv.FormatInt(100+n%100, 10)[1:]
	return s
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// mountReads adds the same-SQL baselines of the read routes to r, under the triad paths.
func mountReads(r chi.Router, pool *pgxpool.Pool) {
	q := db.New(pool)
	orderTokens := &tokenCache[caller]{byHash: map[[sha256.Size]byte]caller{},
		resolve: func(ctx context.Context, hash []byte) (caller, error) {
			u, err := q.GetOrderUserByToken(ctx, db.GetOrderUserByTokenParams{TokenHash: hash, Now: time.Now()})
			return caller{id: u.ID, username: u.Username, performer: u.UserType == "Performer"}, err
		}}
	authed := func(next func(http.ResponseWriter, *http.Request, caller)) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
			if !ok {
				http.Error(w, "no token", http.StatusUnauthorized)
				return
			}
			c, err := orderTokens.get(r.Context(), tok)
			if err != nil {
				http.Error(w, "bad token", http.StatusUnauthorized)
				return
			}
			next(w, r, c)
		}
	}
	// page reads page and size by hand, with the APIs' defaults and bounds.
	page := func(r *http.Request) (number, size int, ok bool) {
		number, size = 0, 20
		var err error
		if v := r.URL.Query().Get("page"); v != "" {
			if number, err = strconv.Atoi(v); err != nil || number < 0 {
				return 0, 0, false
			}
		}
		if v := r.URL.Query().Get("size"); v != "" {
			if size, err = strconv.Atoi(v); err != nil || size < 1 || size > 100 {
				return 0, 0, false
			}
		}
		return number, size, number*size <= 10000
	}
	// list runs one list's page query (total and rows in one statement) and answers the page.
	list := func(w http.ResponseWriter, r *http.Request, sql, scope string, owner int64) {
		number, size, ok := page(r)
		if !ok {
			http.Error(w, "bad page", http.StatusBadRequest)
			return
		}
		rows, err := pool.Query(r.Context(), sql, scope, owner, size, number*size)
		if err != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		out := orderPage{Content: make([]order, 0, size), Page: pageMeta{Number: number, Size: size}}
		for rows.Next() {
			var row db.ListWaitingByIDAscRow
			if err := rows.Scan(&row.Total, &row.ID, &row.CustomerID, &row.PerformerID, &row.PerformerName,
				&row.Description, &row.Price, &row.Status, &row.CreatedAt); err != nil {
				break
			}
			out.Page.TotalElements = row.Total
			o := order{ID: row.ID, CustomerID: row.CustomerID, Description: row.Description, Price: kopecks(row.Price),
				Status: row.Status, CreatedAt: row.CreatedAt.UTC().Format(time.RFC3339Nano)}
			if row.PerformerID.Valid {
				o.Performer = &userRef{ID: row.PerformerID.Int64, Username: row.PerformerName.String}
			}
			out.Content = append(out.Content, o)
		}
		if rows.Err() != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		out.Page.TotalPages = (out.Page.TotalElements + int64(size) - 1) / int64(size)
		writeJSON(w, out)
	}
	r.Get("/orders", authed(func(w http.ResponseWriter, r *http.Request, c caller) {
		if !c.performer {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		list(w, r, db.ListWaitingByIDAsc, "waiting", 0)
	}))
	r.Get("/users/{id}/orders", authed(func(w http.ResponseWriter, r *http.Request, c caller) {
		id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
		if err != nil || id != c.id {
			http.Error(w, "forbidden", http.StatusForbidden)
			return
		}
		if c.performer {
			list(w, r, db.ListPerformerByIDAsc, "performer", id)
		} else {
			list(w, r, db.ListCustomerByIDAsc, "customer", id)
		}
	}))
	r.Get("/orders/{id}", authed(func(w http.ResponseWriter, r *http.Request, c caller) {
		id, err := strconv.ParseInt(chi.URLParam(r, "id"), 10, 64)
		if err != nil {
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		row, err := q.GetVisibleOrder(r.Context(), db.GetVisibleOrderParams{ID: id, CallerID: c.id, CallerIsPerformer: c.performer})
		if errors.Is(err, pgx.ErrNoRows) {
			http.Error(w, "not found", http.StatusNotFound)
			return
		} else if err != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		o := order{ID: row.ID, CustomerID: row.CustomerID, Description: row.Description, Price: kopecks(row.Price),
			Status: row.Status, CreatedAt: row.CreatedAt.UTC().Format(time.RFC3339Nano)}
		if row.PerformerID.Valid {
			o.Performer = &userRef{ID: row.PerformerID.Int64, Username: row.PerformerName}
		}
		writeJSON(w, o)
	}))
	r.Get("/authenticated", authed(func(w http.ResponseWriter, r *http.Request, c caller) {
		u, err := q.GetOrderUser(r.Context(), c.id)
		if err != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		writeJSON(w, struct {
			ID       int64  `json:"id"`
			Username string `json:"username"`
			UserType string `json:"userType"`
			Balance  string `json:"balance"`
		}{u.ID, u.Username, u.UserType, kopecks(u.Balance)})
	}))
	mountBrandReads(r, q)
}

// brand is a brand as the brands API answers it.
type brand struct {
	ID              string          `json:"_id"`
	Name            string          `json:"name"`
	Description     string          `json:"description"`
	URL             string          `json:"url"`
	FeaturedImage   string          `json:"featuredImage"`
	Availability    bool            `json:"availability"`
	IsFeatured      bool            `json:"isFeatured"`
	Products        json.RawMessage `json:"products"`
	SubscriberCount int32           `json:"subscriberCount"`
}

func mountBrandReads(r chi.Router, q *db.Queries) {
	brandTokens := &tokenCache[string]{byHash: map[[sha256.Size]byte]string{},
		resolve: func(ctx context.Context, hash []byte) (string, error) {
			u, err := q.GetBrandUserByToken(ctx, db.GetBrandUserByTokenParams{TokenHash: hash, Now: time.Now()})
			return u.ID, err
		}}
	r.Get("/api/user/me", func(w http.ResponseWriter, r *http.Request) {
		tok := r.URL.Query().Get("access_token")
		if tok == "" {
			tok, _ = strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		}
		id, err := brandTokens.get(r.Context(), tok)
		if err != nil {
			http.Error(w, "bad token", http.StatusUnauthorized)
			return
		}
		rows, err := q.GetBrandMeRows(r.Context(), id)
		if err != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		// A user without subscriptions has no row: its profile is a second query, as the server's.
		var u db.GetBrandProfileRow
		if len(rows) > 0 {
			u = db.GetBrandProfileRow{ID: rows[0].ID, Email: rows[0].Email, Name: rows[0].Name, IsAdmin: rows[0].IsAdmin, CreatedAt: rows[0].CreatedAt}
		} else if u, err = q.GetBrandProfile(r.Context(), id); err != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		subs := make([]brand, len(rows))
		for i, row := range rows {
			b := row.BrandsCounted
			subs[i] = brand{ID: b.ID, Name: b.Name, Description: b.Description, URL: b.Url, FeaturedImage: b.FeaturedImage,
				Availability: b.Availability, IsFeatured: b.IsFeatured, Products: b.Products, SubscriberCount: b.SubscriberCount}
		}
		w.Header().Set("Cache-Control", "no-store")
		writeJSON(w, struct {
			ID            string  `json:"_id"`
			Name          string  `json:"name"`
			Email         string  `json:"email"`
			IsAdmin       bool    `json:"isAdmin"`
			CreatedAt     string  `json:"created_at"`
			Subscriptions []brand `json:"subscriptions"`
			Token         string  `json:"token"`
		}{u.ID, u.Name, u.Email, u.IsAdmin, u.CreatedAt.UTC().Format("2006-01-02T15:04:05.000Z"), subs, tok})
	})
	// The list: its row versions hashed (one query), the rendering cached under that digest.
	var mu sync.Mutex
	var cachedDigest string
	var cached []byte
	r.Get("/api/brand/list", func(w http.ResponseWriter, r *http.Request) {
		versions, err := q.ListAvailableBrandVersions(r.Context())
		if err != nil {
			http.Error(w, "db", http.StatusInternalServerError)
			return
		}
		h := md5.New()
		var num [20]byte
		for i, v := range versions {
			if i > 0 {
				h.Write([]byte{','})
			}
			h.Write(strconv.AppendInt(num[:0], v, 10))
		}
		d := hex.EncodeToString(h.Sum(nil))
		mu.Lock()
		body := cached
		if d != cachedDigest {
			body = nil
		}
		mu.Unlock()
		if body == nil {
			rows, err := q.ListAvailableBrandRows(r.Context())
			if err != nil {
				http.Error(w, "db", http.StatusInternalServerError)
				return
			}
			out := make([]brand, len(rows))
			for i, b := range rows {
				out[i] = brand{ID: b.ID, Name: b.Name, Description: b.Description, URL: b.Url, FeaturedImage: b.FeaturedImage,
					Availability: b.Availability, IsFeatured: b.IsFeatured, Products: b.Products, SubscriberCount: b.SubscriberCount}
			}
			body, _ = json.Marshal(out)
			body = append(body, '\n')
			mu.Lock()
			cachedDigest, cached = d, body
			mu.Unlock()
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	})
}
