package httpapi

import (
	"net/http"

	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/invalid"
	"github.com/triadhq/triad/impl/kit/refusal"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

// refusals maps the orders domain's errors to their documented answers: the one place where they
// meet HTTP. A refusal's message is the domain's (orders.Refusal messages are written for the
// caller). domainerr.InvalidCredentials is answered by the token endpoint in RFC 6749 form instead.
var refusals = refusal.Table{
	refusal.ServerBusy,
	refusal.ClientBusy,
	refusal.IdempotencyKeyInUse,
	refusal.TooManySignups,
	refusal.InvalidInput(inOf), // orders.ErrInvalidInput
	{Err: domainerr.Forbidden, Refusal: refusal.Refusal{Status: http.StatusForbidden, Code: web.CodeForbidden}},
	{Err: domainerr.NotFound, Refusal: refusal.Refusal{Status: http.StatusNotFound, Code: web.CodeNotFound}},
	{Err: domainerr.Taken, Refusal: refusal.Refusal{Status: http.StatusConflict, Code: "username_taken"}},
	{Err: orders.ErrInvalidState, Refusal: refusal.Refusal{Status: http.StatusConflict, Code: "invalid_state"}},
	{Err: orders.ErrInsufficientFunds, Refusal: refusal.Refusal{Status: http.StatusConflict, Code: "insufficient_funds"}},
	// The code predates READY orders counting under the cap; clients match on it, so it stays.
	{Err: orders.ErrTooManyHeld, Refusal: refusal.Refusal{Status: http.StatusConflict, Code: "too_many_in_progress"}},
	{Err: orders.ErrCoolingDown, Refusal: refusal.Refusal{Status: http.StatusConflict, Code: "retake_cooldown"}},
	// A user over its share of the pool for writes: its earlier requests are running and its line
	// is full; the client may retry once they are answered (a second is plenty).
	{Err: orders.ErrTooManyAtOnce, Refusal: refusal.Refusal{Status: http.StatusTooManyRequests, Code: refusal.CodeTooManyRequests,
		RetryAfter: func(error) int { return 1 }}},
	// A page cancelled by its statement timeout: the server declined the work, as when the
	// password hasher is full, so the same code and a short Retry-After.
	{Err: orders.ErrListTooSlow, Refusal: refusal.Refusal{Status: http.StatusServiceUnavailable, Code: refusal.CodeServerBusy,
		Message: refusal.MessageServerBusy, RetryAfter: func(error) int { return 1 }}},
}

// fieldOf lists the details of an input refusal (invalid.Problems), each placed by inOf.
func fieldOf(err error) []web.FieldError {
	all := invalid.ProblemsOf(err)
	out := make([]web.FieldError, len(all))
	for i, d := range all {
		out[i] = d.At(inOf(d.Field))
	}
	return out
}
