package httpapi

import (
	"testing"

	"github.com/triadhq/triad/gen/brandsapi"
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
		"ErrInvalidInput":       brands.ErrInvalidInput,
		"ErrNotFound":           brands.ErrNotFound,
		"ErrEmailTaken":         brands.ErrEmailTaken,
		"ErrInvalidCredentials": brands.ErrInvalidCredentials,
		"ErrUnauthenticated":    brands.ErrUnauthenticated,
		"ErrWrongPassword":      brands.ErrWrongPassword,
		"ErrForbidden":          brands.ErrForbidden,
		"ErrUnavailable":        brands.ErrUnavailable,
	}, nil, "..", spec)
}
