package httpapi

import (
	"testing"

	"github.com/triadhq/triad/gen/brandsapi"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/refusal/refusaltest"
	"github.com/triadhq/triad/impl/surfaces/brands"
)

// TestRefusals_CoverTheDomainAndTheSpec: every brands domain error has a documented answer.
func TestRefusals_CoverTheDomainAndTheSpec(t *testing.T) {
	spec, err := brandsapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	refusaltest.Check(t, refusals, map[string]error{
		"ErrInvalidInput":              brands.ErrInvalidInput,
		"domainerr.NotFound":           domainerr.NotFound,
		"domainerr.Taken":              domainerr.Taken,
		"domainerr.InvalidCredentials": domainerr.InvalidCredentials,
		"domainerr.Unauthenticated":    domainerr.Unauthenticated,
		"ErrWrongPassword":             brands.ErrWrongPassword,
		"domainerr.Forbidden":          domainerr.Forbidden,
		"ErrUnavailable":               brands.ErrUnavailable,
	}, nil, "..", spec)
}
