// Package domainerr is the vocabulary of refusals every domain shares: what orders, brands and a
// scaffolded surface mean alike by "not found", "forbidden", "invalid credentials", "taken" and
// "unauthenticated", declared once. A domain returns them (or wraps them with a message for the
// caller) and declares only the refusals of its own; each surface's refusal table (impl/kit/refusal)
// gives them its status, code and message. Like invalid.ErrInput, the input refusal, they know no
// HTTP.
package domainerr

import "errors"

var (
	// NotFound: the thing asked for does not exist (or the caller may not know it does).
	NotFound = errors.New("not found")
	// Forbidden: the caller's role or relation to the thing does not allow the action.
	Forbidden = errors.New("forbidden")
	// InvalidCredentials: an unknown account or a wrong password, deliberately one error so a
	// caller cannot tell which (every password login's, through the login guard).
	InvalidCredentials = errors.New("invalid credentials")
	// Taken: a registration with an account name (a user name, an e-mail) already in use.
	Taken = errors.New("taken")
	// Unauthenticated: the access token is missing, unknown, expired or revoked.
	Unauthenticated = errors.New("unauthenticated")
)
