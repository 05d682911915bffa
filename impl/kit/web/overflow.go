package web

import (
	"context"

	"github.com/triadhq/triad/impl/kit/invalid"
)

// A JSON number beyond float64 (1e309) where a spec leaves the value free (a brand's products)
// passes the validator, whose schema takes any value there, then fails the generated decoder,
// which holds a free number as a float64; that failure alone reads as a malformed body, though
// the number is well-formed and only out of range. The input screen, which reads every number of
// a JSON body, notes where the first such number is (WithOverflow), and StrictRequestError
// answers a number the decoder could not hold with that place: too_large (too_small for a
// negative number) without a limit, as docs/specs.md's table says of a number that overflows its
// type. Where a spec types the field (orders' price), the validator refuses it first, with the
// field's bound.
type overflowKey struct{}

// WithOverflow returns ctx noting d, the first number of the request's body beyond float64.
func WithOverflow(ctx context.Context, d invalid.Detail) context.Context {
	return context.WithValue(ctx, overflowKey{}, d)
}

// overflowIn is the number WithOverflow noted in ctx.
func overflowIn(ctx context.Context) (invalid.Detail, bool) {
	d, ok := ctx.Value(overflowKey{}).(invalid.Detail)
	return d, ok
}
