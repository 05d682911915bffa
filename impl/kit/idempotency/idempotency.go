// Package idempotency makes the writes that a second run would do again or refuse safe to retry
// (draft-ietf-httpapi-idempotency-key-header): a request carrying an Idempotency-Key header runs
// once per caller and key, and a repeat (from a client that lost the answer, or a balancer retrying
// on another replica) gets the first answer again instead of a second order or user, a take
// refused for its cool-down, or a deletion answered 404.
//
// Exactly once: the answer is stored in the same transaction as the write it answers (a pgtx.Hook
// the domain's write runs, pgtx.Write), so a crash at any point leaves either nothing (a retry
// runs the request) or the write with its answer (a retry replays it). The key's claim is a
// transaction-level advisory lock of that same transaction: a process that dies mid-request loses
// it with its database session, so a retry on another replica proceeds at once, and a repeat that
// arrives while the first still runs is refused with 409 idempotency_key_in_use (the draft's
// "request outstanding"; Retry-After: 1).
//
// The scope is the caller: the authenticated user, whichever of its tokens it presents
// (bearer.UserOf), or, for an anonymous call, its client network (clientkey.Net), so one visitor's
// key never meets another's. The same key with another request (method, path, query without
// access_token, content type, body) is refused with 422 idempotency_key_reused. Only successes are
// kept: a refusal changed nothing, so its repeat runs again. Keys live in PostgreSQL (table
// idempotency_keys) for TTL, so every replica sees them.
//
// Which operations take the header is read from the specs (Operations): those that declare an
// Idempotency-Key header parameter. Each such operation's handler says how its answer is made from
// its write's result (Answer), and its domain write runs through pgtx.Write or pgtx.WriteOne.
package idempotency

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/clientkey"
	"github.com/triadhq/triad/impl/kit/bearer"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/platform/pgtx"
	"github.com/triadhq/triad/impl/platform/sweep"
)

// Header is the request header that carries the key (draft-ietf-httpapi-idempotency-key-header).
const Header = "Idempotency-Key"

// ReplayedHeader marks an answer that repeats the first answer to its key.
const ReplayedHeader = "Idempotent-Replayed"

// CodeReused is the error code of a key sent again with another request.
const CodeReused = "idempotency_key_reused"

// CodeInUse is the error code of a key whose first request is still running.
const CodeInUse = "idempotency_key_in_use"

// MessageInUse is the message of ErrInUse's refusal.
const MessageInUse = "the first request with this Idempotency-Key is still running; retry shortly to get its answer"

// ErrInUse is returned by a write whose key another live request holds: the refusal tables answer
// it 409 idempotency_key_in_use with Retry-After: 1.
var ErrInUse = errors.New("idempotency: the key's first request is still running")

// errAnswered is a write whose key was answered by another request meanwhile: the middleware
// replays that answer instead (a 409 ErrInUse if it somehow cannot).
var errAnswered = fmt.Errorf("%w: answered meanwhile", ErrInUse)

// MaxKeyLen bounds a key (the specs say the same).
const MaxKeyLen = 255

// DefaultTTL is how long a key and its answer are kept: a day covers any client's retries.
const DefaultTTL = 24 * time.Hour

// Hold points (Options.Hold), where a test makes a server die.
const (
	// HoldInTx: the write and its answer are written, not yet committed.
	HoldInTx = "in-tx"
	// HoldBeforeReply: the write and its answer are committed, the response not yet sent.
	HoldBeforeReply = "before-reply"
)

// keptHeaders are the response headers an answer keeps besides its status and body.
var keptHeaders = []string{"Content-Type", "Cache-Control", "Location"}

// Options configure the middleware.
type Options struct {
	// TTL is how long a key is kept; 0 means DefaultTTL.
	TTL time.Duration
	// Log receives the key store failures that do not fail the request (a key not freed, an answer
	// not kept); nil discards them. A failure that does is logged by web.Internal on the request's logger.
	Log *slog.Logger
	// Hold, for tests only, is called at each hold point (HoldInTx, HoldBeforeReply) of a keyed
	// request; a test's Hold blocks there so the process can be killed at that point. nil in
	// production.
	Hold func(ctx context.Context, point string)
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
	if opts.Hold == nil {
		opts.Hold = func(context.Context, string) {}
	}
	return &Keys{q: db.New(conn), ops: ops, opts: opts}
}

// Sweep deletes the expired keys, in batches (sweep.Batches); the server runs it periodically.
func (k *Keys) Sweep(ctx context.Context) (int64, error) {
	return sweep.Batches(ctx, k.q.DeleteExpiredIdempotencyKeys)
}

// Middleware runs the requests of the Keys' operations that carry a key at most once per caller
// and key. It sits after the bearer middleware, whose user it scopes keys by.
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
		k.serve(w, r, next, newRequest(op, key, scopeOf(r), r, body))
	})
}

// scopeOf names whose keys a request's key is among: its user's, or its client network's.
func scopeOf(r *http.Request) string {
	if u, ok := bearer.UserOf(r.Context()); ok {
		return u
	}
	return "client " + clientkey.Net(r.RemoteAddr)
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

// serve answers a keyed request: the kept answer of its key, or the request run with its write's
// transaction keeping the answer.
func (k *Keys) serve(w http.ResponseWriter, r *http.Request, next http.Handler, req request) {
	if done, err := k.replay(w, r, req); err != nil {
		web.Internal(w, r, err)
		return
	} else if done {
		return
	}
	rn := &run{k: k, req: req}
	buf := newBuffer(w.Header())
	ctx := pgtx.WithHook(context.WithValue(r.Context(), runKey{}, rn), rn)
	next.ServeHTTP(buf, r.WithContext(ctx))
	if buf.status >= 400 {
		// A refusal or a failure changed nothing. When another request with the key answered
		// meanwhile (the reason this one lost its claim, or was refused: the first's order took
		// the funds, its user the name), that answer is this request's too.
		if done, err := k.replay(w, r, req); err == nil && done {
			return
		}
		buf.flush(w)
		return
	}
	if !rn.stored {
		// A keyed operation whose write did not run through pgtx.Write: nothing is kept, so a retry
		// would run it again. Tests of every keyed operation keep this from happening.
		k.opts.Log.ErrorContext(r.Context(), "idempotency: an answer was not kept with its write", "operation", req.op.Method+" "+req.op.Path,
			web.LogRequestID, web.RequestID(r.Context()))
	}
	k.opts.Hold(r.Context(), HoldBeforeReply)
	buf.flush(w)
}

// replay answers with the key's kept answer (the same request) or 422 (another request), and
// reports whether it answered; with no live key it writes nothing.
func (k *Keys) replay(w http.ResponseWriter, r *http.Request, req request) (bool, error) {
	row, err := k.q.GetIdempotencyKey(r.Context(), db.GetIdempotencyKeyParams{Scope: req.scope[:], Key: req.key})
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, err
	}
	if !bytes.Equal(row.Request, req.hash[:]) {
		web.WriteError(w, r, http.StatusUnprocessableEntity, web.Error{Code: CodeReused,
			Message: "this Idempotency-Key was used for another request; use a new key for a new request"})
		return true, nil
	}
	a, err := req.open(row.Answer)
	if err != nil {
		return false, err
	}
	a.replay(w)
	return true, nil
}

type runKey struct{}

// run is one keyed request being run: the pgtx.Hook of its write.
type run struct {
	k   *Keys
	req request
	// render makes the answer from the write's result (Answer sets it).
	render func(result any) (answer, error)
	// stored: After kept the answer in the write's transaction (which then committed if the
	// handler answered a success).
	stored bool
}

// Before claims the key for the write's transaction: its transaction-level advisory lock, which
// ends with the transaction or with the session of a process that died. A key another live
// transaction holds is ErrInUse; a key answered meanwhile is errAnswered.
func (rn *run) Before(ctx context.Context, tx pgx.Tx) error {
	c, err := rn.k.q.WithTx(tx).ClaimIdempotencyKey(ctx, db.ClaimIdempotencyKeyParams{
		Lock: rn.req.lock, Scope: rn.req.scope[:], Key: rn.req.key})
	switch {
	case err != nil:
		return err
	case c.Answered != nil:
		return errAnswered
	case !c.Claimed:
		return ErrInUse
	}
	return nil
}

// After keeps the answer made from the write's result, in the write's transaction. The key's row
// is the write's last lock; a row another request committed first (its claim and ours overlapped
// only in time, never in lock) makes this write errAnswered, and it is rolled back.
func (rn *run) After(ctx context.Context, tx pgx.Tx, result any) error {
	if rn.render == nil {
		return fmt.Errorf("idempotency: %s %s ran its write without Answer", rn.req.op.Method, rn.req.op.Path)
	}
	a, err := rn.render(result)
	if err != nil {
		return err
	}
	sealed, err := rn.req.seal(a)
	if err != nil {
		return err
	}
	n, err := rn.k.q.WithTx(tx).AnswerIdempotencyKey(ctx, db.AnswerIdempotencyKeyParams{Scope: rn.req.scope[:], Key: rn.req.key,
		Request: rn.req.hash[:], Answer: sealed, ExpiresAt: time.Now().Add(rn.k.opts.TTL)})
	if err != nil {
		return err
	}
	if n == 0 {
		return errAnswered
	}
	rn.stored = true
	rn.k.opts.Hold(ctx, HoldInTx)
	return nil
}

// Visit writes one response: a generated strict response's Visit<Operation>Response method.
type Visit func(w http.ResponseWriter) error

// Answer tells the keyed request of ctx (if it is one) how its answer is made from the result its
// write passes to the hook: render(result) writes it, as the handler writes its own response from
// the same result. A handler of a keyed operation calls it before its domain write.
func Answer[T any](ctx context.Context, render func(T) Visit) {
	rn, ok := ctx.Value(runKey{}).(*run)
	if !ok {
		return
	}
	rn.render = func(result any) (answer, error) {
		v, ok := result.(T)
		if !ok {
			return answer{}, fmt.Errorf("idempotency: %s %s answers a %T, its write gave a %T", rn.req.op.Method, rn.req.op.Path, v, result)
		}
		b := newBuffer(http.Header{})
		if err := render(v)(b); err != nil {
			return answer{}, err
		}
		a := answer{Status: b.status, Header: map[string]string{}, Body: b.body.Bytes()}
		for _, h := range keptHeaders {
			if v := b.header.Get(h); v != "" {
				a.Header[h] = v
			}
		}
		return a, nil
	}
}

// buffer is a response held back until the middleware knows it is the answer to send.
type buffer struct {
	header http.Header
	status int
	wrote  bool
	body   bytes.Buffer
}

// newBuffer starts with a copy of the headers already set (request id, Cache-Control).
func newBuffer(h http.Header) *buffer { return &buffer{header: h.Clone(), status: http.StatusOK} }

func (b *buffer) Header() http.Header { return b.header }

func (b *buffer) WriteHeader(code int) {
	if !b.wrote {
		b.status, b.wrote = code, true
	}
}

func (b *buffer) Write(p []byte) (int, error) {
	b.wrote = true
	return b.body.Write(p)
}

// flush sends the held response.
func (b *buffer) flush(w http.ResponseWriter) {
	for k, v := range b.header {
		w.Header()[k] = v
	}
	w.WriteHeader(b.status)
	_, _ = w.Write(b.body.Bytes())
}
