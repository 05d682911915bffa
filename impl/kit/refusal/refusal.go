// Package refusal maps a surface's domain errors to HTTP answers from one table per surface. A
// generated strict handler returns the domain error as it is; the table's ResponseErrorHandler
// (installed as the strict handler's ResponseErrorHandlerFunc) writes the documented status and
// the shared JSON error body, and anything the table does not know becomes an opaque, logged 500.
// Each surface has a test that walks its domain errors and its spec against its table, so an
// unmapped or undocumented error fails at test time rather than answering 500 at run time.
package refusal

import (
	"errors"
	"net/http"
	"strconv"

	"github.com/triadhq/triad/impl/credentials/loginguard"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/kit/idempotency"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/web"
)

// Refusal is one documented error answer.
type Refusal struct {
	// Status is the HTTP status code.
	Status int
	// Code is the Error body's machine-readable code.
	Code string
	// Message is the Error body's sentence; "" uses the domain error's own text, for domain errors
	// whose messages are written for the caller.
	Message string
	// Details, when set, lists the per-field problems the error carries.
	Details func(error) []web.FieldError
	// Challenge is the WWW-Authenticate header of a 401.
	Challenge string
	// RetryAfter, when set, gives the Retry-After seconds the error carries (0 sends none).
	RetryAfter func(error) int
}

// Entry maps one domain error (matched with errors.Is) to its refusal.
type Entry struct {
	Err error
	Refusal
}

// Table is a surface's mapping; the first entry whose error matches wins.
type Table []Entry

// Lookup finds the refusal for err.
func (t Table) Lookup(err error) (Refusal, bool) {
	for _, e := range t {
		if errors.Is(err, e.Err) {
			return e.Refusal, true
		}
	}
	return Refusal{}, false
}

// Errors lists the mapped errors (for the surface's tests).
func (t Table) Errors() []error {
	out := make([]error, len(t))
	for i, e := range t {
		out[i] = e.Err
	}
	return out
}

// Write answers err with its refusal and reports true, or writes nothing and reports false when
// the table does not map err.
func (t Table) Write(w http.ResponseWriter, r *http.Request, err error) bool {
	rf, ok := t.Lookup(err)
	if !ok {
		return false
	}
	body := web.Error{Code: rf.Code, Message: rf.headers(w, err)}
	if rf.Details != nil {
		body.Details = rf.Details(err)
	}
	web.WriteError(w, r, rf.Status, body)
	return true
}

// headers sets the refusal's headers of err (WWW-Authenticate, Retry-After) on w and returns its
// message: Message, or err's own text.
func (rf Refusal) headers(w http.ResponseWriter, err error) string {
	if rf.Challenge != "" {
		w.Header().Set("WWW-Authenticate", rf.Challenge)
	}
	if rf.RetryAfter != nil {
		if secs := rf.RetryAfter(err); secs > 0 {
			w.Header().Set("Retry-After", strconv.Itoa(secs))
		}
	}
	if rf.Message == "" {
		return err.Error()
	}
	return rf.Message
}

// ResponseErrorHandler is the strict handler's ResponseErrorHandlerFunc for this table: mapped
// errors get their refusal, any other error web.StrictResponseError's opaque 500, logged on the
// request's logger (web.WithLogger).
func (t Table) ResponseErrorHandler() func(http.ResponseWriter, *http.Request, error) {
	return func(w http.ResponseWriter, r *http.Request, err error) {
		if !t.Write(w, r, err) {
			web.StrictResponseError(w, r, err)
		}
	}
}

// The refusal of work the password hasher has no room for (password.ErrBusy), on every surface:
// the one server_busy of web.Internal's cancelled statements too.
const (
	CodeServerBusy    = web.CodeServerBusy
	MessageServerBusy = web.MessageServerBusy
)

// ServerBusy is the entry every surface's table carries for password.ErrBusy: a 503 whose
// Retry-After of one second tells the client the shedding is brief.
var ServerBusy = Entry{Err: password.ErrBusy, Refusal: Refusal{Status: http.StatusServiceUnavailable,
	Code: CodeServerBusy, Message: MessageServerBusy, RetryAfter: func(error) int { return 1 }}}

// The refusal of a client over its fair share of the password hasher (password.ErrClientBusy), on
// every surface: that client has its share hashing and a line of calls waiting, while the server
// may well have room for others.
const (
	CodeTooManyRequests    = "too_many_requests"
	MessageTooManyRequests = "too many requests from this client at once; try again shortly"
)

// ClientBusy is the entry every surface's table carries for password.ErrClientBusy: a 429 (RFC
// 6585) whose Retry-After of one second tells the client its earlier requests will be done soon.
var ClientBusy = Entry{Err: password.ErrClientBusy, Refusal: Refusal{Status: http.StatusTooManyRequests,
	Code: CodeTooManyRequests, Message: MessageTooManyRequests, RetryAfter: func(error) int { return 1 }}}

// IdempotencyKeyInUse is the entry every surface with Idempotency-Key carries for
// idempotency.ErrInUse: a repeat arriving while the first request with its key still runs gets 409
// (draft-ietf-httpapi-idempotency-key-header: a request outstanding) with a Retry-After of one
// second, after which the retry gets the first answer, or runs if the first left nothing.
var IdempotencyKeyInUse = Entry{Err: idempotency.ErrInUse, Refusal: Refusal{Status: http.StatusConflict,
	Code: idempotency.CodeInUse, Message: idempotency.MessageInUse, RetryAfter: func(error) int { return 1 }}}

// CodeTooManyAttempts is the code of a login refused by the failed-login limit (loginguard), the
// one 429 code of logins on every surface but the OAuth token endpoint (which answers RFC 6749's
// invalid_grant: OAuthLogin).
const CodeTooManyAttempts = "too_many_attempts"

// TooManyAttempts is the entry of a surface with password logins for loginguard.ErrTooManyAttempts:
// a 429 with the wait until the limit's window ends.
var TooManyAttempts = Entry{Err: loginguard.ErrTooManyAttempts, Refusal: Refusal{Status: http.StatusTooManyRequests,
	Code: CodeTooManyAttempts, RetryAfter: func(err error) int { secs, _, _ := loginguard.Refused(err); return secs }}}

// WriteLoginRefused answers a login the failed-login limit refused (loginguard.Refused) with
// TooManyAttempts, the one rendering of a refused login outside the OAuth token endpoint (the
// auth library's direct logins and basic auth, orders' and brands' refusal tables; the token
// endpoint's is OAuthLogin), and reports whether err was one.
func WriteLoginRefused(w http.ResponseWriter, r *http.Request, err error) bool {
	return Table{TooManyAttempts}.Write(w, r, err)
}

// CodeTooManySignups is the code of a registration refused by the per-address cap.
const CodeTooManySignups = "too_many_signups"

// TooManySignups is the entry of a surface with registrations for loginguard.ErrTooManySignups: a
// 429 with the wait until the address's window ends.
var TooManySignups = Entry{Err: loginguard.ErrTooManySignups, Refusal: Refusal{Status: http.StatusTooManyRequests,
	Code: CodeTooManySignups, RetryAfter: loginguard.RetryAfter}}

// InvalidInput is the entry of a domain's refusal of input (invalid.Problems, matching
// invalid.ErrInput): 400 validation_failed listing every problem, each placed by in (a domain
// names fields; where they were sent is the edge's knowledge).
func InvalidInput(in func(field string) invalid.In) Entry {
	return Entry{Err: invalid.ErrInput, Refusal: Refusal{Status: http.StatusBadRequest, Code: web.CodeValidation,
		Message: web.MessageValidation, Details: func(err error) []web.FieldError {
			problems := invalid.ProblemsOf(err)
			out := make([]web.FieldError, len(problems))
			for i, p := range problems {
				out[i] = p.At(in(p.Field))
			}
			return out
		}}}
}
