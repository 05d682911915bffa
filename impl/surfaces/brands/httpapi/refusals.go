package httpapi

import (
	"net/http"

	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/refusal"
	"github.com/triadhq/triad/impl/kit/web"
	"github.com/triadhq/triad/impl/surfaces/brands"
)

// refusals maps the brands domain's errors (and the edge's own login limit) to their documented
// answers: the one place where they meet HTTP.
var refusals = refusal.Table{
	refusal.ServerBusy,
	refusal.ClientBusy,
	refusal.IdempotencyKeyInUse,
	refusal.InvalidInput(inOf), // brands.ErrInvalidInput
	{Err: domainerr.Unauthenticated, Refusal: refusal.Refusal{Status: http.StatusUnauthorized, Code: web.CodeUnauthorized,
		Message: web.MessageUnauthorized, Challenge: `Bearer realm="brands", error="invalid_token"`}},
	{Err: domainerr.InvalidCredentials, Refusal: refusal.Refusal{Status: http.StatusUnauthorized, Code: "invalid_credentials",
		Message: "email or password is incorrect", Challenge: `Bearer realm="brands"`}},
	{Err: brands.ErrWrongPassword, Refusal: refusal.Refusal{Status: http.StatusForbidden, Code: "wrong_password",
		Message: "the current password is incorrect"}},
	{Err: domainerr.Forbidden, Refusal: refusal.Refusal{Status: http.StatusForbidden, Code: web.CodeForbidden,
		Message: "only admins may manage brands"}},
	{Err: domainerr.NotFound, Refusal: refusal.Refusal{Status: http.StatusNotFound, Code: web.CodeNotFound,
		Message: "brand not found"}},
	{Err: domainerr.Taken, Refusal: refusal.Refusal{Status: http.StatusConflict, Code: "email_taken",
		Message: "the email is already registered"}},
	{Err: brands.ErrUnavailable, Refusal: refusal.Refusal{Status: http.StatusConflict, Code: "brand_unavailable",
		Message: "the brand is not available"}},
	refusal.TooManyAttempts,
	refusal.TooManySignups,
}
