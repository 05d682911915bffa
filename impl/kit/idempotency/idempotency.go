// Package idempotency makes the POSTs that create something safe to retry: a request carrying an
// Idempotency-Key header is run once per caller and key, and a repeat (from a client that lost the
// answer, or a balancer retrying on another replica) gets the first answer again instead of a
// second order or user. The same key with another request is refused with 422
// idempotency_key_reused. Only successes are kept: a refusal changed nothing, so its repeat runs. Keys live in PostgreSQL (table idempotency_keys), so every replica sees
// them, for TTL.
//
// Which operations take the header is read from the specs (Operations): those that declare an
// Idempotency-Key header parameter.
package idempotency

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/kit/web"
)

// Header is the request header that carries the key (draft-ietf-httpapi-idempotency-key-header).
const Header = "Idempotency-Key"

// ReplayedHeader marks an answer that repeats the first answer to its key.
const ReplayedHeader = "Idempotent-Replayed"

// CodeReused is the error code of a key sent again with another request.
const CodeReused = "idempotency_key_reused"

// MaxKeyLen bounds a key (the specs say the same).
const MaxKeyLen = 255

// Timings.
const (
	// DefaultTTL is how long a key and its answer are kept: a day covers any client's retries.
	DefaultTTL = 24 * time.Hour
	// runFor is how long a request may hold its key unanswered: a repeat meanwhile waits for the
	// answer; after it (the first run's process died), a repeat runs the request again.
	runFor = 30 * time.Second
	// waitEvery is how often a repeat looks for the first run's answer.
	waitEvery = 25 * time.Millisecond
)

// keptHeaders are the response headers an answer keeps besides its status and body.
var keptHeaders = []string{"Content-Type", "Cache-Control", "Location"}

// Options configure the middleware.
type Options struct {
	// TTL is how long a key is kept; 0 means DefaultTTL.
	TTL time.Duration
	// Log receives the failures of the key store; nil discards them.
	Log *slog.Logger
}

// Keys is the middleware over the keys' table.
type Keys struct {
	q    *db.Queries
	ops  []Operation
	opts Options
}

// New returns the middleware for ops (Operations of the specs) over conn.
func New(conn db.DBTX, ops []Operation, opts Options) *Keys {
	if opts.TTL <= 0 {
		opts.TTL = DefaultTTL
	}
	if opts.Log == nil {
		opts.Log = slog.New(slog.DiscardHandler)
	}
	return &Keys{q: db.New(conn), ops: ops, opts: opts}
}

// Sweep deletes the expired keys; the server runs it periodically.
func (k *Keys) Sweep(ctx context.Context) (int64, error) {
	return k.q.DeleteExpiredIdempotencyKeys(ctx)
}

// Middleware runs the requests of the Keys' operations that carry a key at most once per key.
func (k *Keys) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(Header)
		op, ok := match(k.ops, r)
		// A malformed key goes on to the spec's validator, which refuses it with the usual 400.
		if key == "" || !ok || !validKey(key) {
			next.ServeHTTP(w, r)
			return
		}
		body, err := io.ReadAll(r.Body)
		if err != nil {
			// Too large or cut off: the handler answers that, and nothing is kept.
			r.Body = io.NopCloser(io.MultiReader(bytes.NewReader(body), errReader{err}))
			next.ServeHTTP(w, r)
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		req := newRequest(op, key, r, body)
		k.serve(w, r, next, req)
	})
}

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// KeyPattern is the specs' pattern of a key: visible ASCII characters (1 to MaxKeyLen of them).
const KeyPattern = `^[!-~]+$`

// validKey: 1 to MaxKeyLen visible ASCII characters.
func validKey(key string) bool {
	if len(key) > MaxKeyLen {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

// serve claims the key and runs the request, or answers as its first run did.
func (k *Keys) serve(w http.ResponseWriter, r *http.Request, next http.Handler, req request) {
	ctx := r.Context()
	for {
		now := time.Now()
		n, err := k.q.ClaimIdempotencyKey(ctx, db.ClaimIdempotencyKeyParams{Scope: req.scope[:], Key: req.key,
			Request: req.hash[:], RunningUntil: now.Add(runFor), ExpiresAt: now.Add(k.opts.TTL)})
		if err != nil {
			web.Internal(w, r, k.opts.Log, err)
			return
		}
		if n == 1 {
			k.run(w, r, next, req)
			return
		}
		row, err := k.q.GetIdempotencyKey(ctx, db.GetIdempotencyKeyParams{Scope: req.scope[:], Key: req.key})
		if errors.Is(err, pgx.ErrNoRows) {
			continue // released or expired meanwhile: claim it again
		}
		if err != nil {
			web.Internal(w, r, k.opts.Log, err)
			return
		}
		if !bytes.Equal(row.Request, req.hash[:]) {
			web.WriteError(w, r, http.StatusUnprocessableEntity, web.Error{Code: CodeReused,
				Message: "this Idempotency-Key was used for another request; use a new key for a new request"})
			return
		}
		if row.Answer != nil {
			a, err := req.open(row.Answer)
			if err != nil {
				web.Internal(w, r, k.opts.Log, err)
				return
			}
			a.replay(w)
			return
		}
		// The first run is still going (here or on another replica): wait for its answer.
		select {
		case <-ctx.Done():
			return
		case <-time.After(waitEvery):
		}
	}
}

// run runs the request as the key's first and keeps its answer when it succeeded (below 400). A
// refusal (4xx: nothing was done), a failure of the server's own (5xx) or a panic frees the key
// instead, so a repeat runs the request again: after a top-up, an order refused for want of funds
// is created by its retry.
func (k *Keys) run(w http.ResponseWriter, r *http.Request, next http.Handler, req request) {
	rec := &recorder{ResponseWriter: w, status: http.StatusOK}
	kept := false
	defer func() {
		if kept {
			return
		}
		// On a context of its own: the request's may be cancelled (a client that hung up).
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		defer cancel()
		if err := k.q.ReleaseIdempotencyKey(ctx, db.ReleaseIdempotencyKeyParams{Scope: req.scope[:], Key: req.key, Request: req.hash[:]}); err != nil {
			k.opts.Log.Warn("idempotency: freeing a key", "err", err)
		}
	}()
	next.ServeHTTP(rec, r)
	if rec.status >= 400 {
		return
	}
	a := answer{Status: rec.status, Header: map[string]string{}, Body: rec.body.Bytes()}
	for _, h := range keptHeaders {
		if v := rec.Header().Get(h); v != "" {
			a.Header[h] = v
		}
	}
	sealed, err := req.seal(a)
	if err == nil {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), 5*time.Second)
		err = k.q.AnswerIdempotencyKey(ctx, db.AnswerIdempotencyKeyParams{Scope: req.scope[:], Key: req.key, Request: req.hash[:], Answer: sealed})
		cancel()
	}
	if err != nil {
		k.opts.Log.Warn("idempotency: keeping an answer", "err", err)
		return
	}
	kept = true
}

// recorder passes the response through and keeps a copy of its status and body.
type recorder struct {
	http.ResponseWriter
	status int
	body   bytes.Buffer
	wrote  bool
}

func (r *recorder) WriteHeader(code int) {
	if !r.wrote {
		r.status, r.wrote = code, true
	}
	r.ResponseWriter.WriteHeader(code)
}

func (r *recorder) Write(b []byte) (int, error) {
	r.wrote = true
	r.body.Write(b)
	return r.ResponseWriter.Write(b)
}

func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

// request is what identifies a request under a key.
type request struct {
	key   string
	scope [sha256.Size]byte // the operation and the caller's credentials
	hash  [sha256.Size]byte // the whole request
	seal0 [sha256.Size]byte // the key sealing its answer, derived from the request and the key
}
