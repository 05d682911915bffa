package httpapi

import (
	"sort"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/kit/refusal/refusaltest"
	"github.com/triadhq/triad/impl/surfaces/orders"
)

func spec(t *testing.T) *openapi3.T {
	t.Helper()
	s, err := ordersapi.GetSpec()
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// TestRefusals_CoverTheDomainAndTheSpec: every orders domain error has a documented answer.
func TestRefusals_CoverTheDomainAndTheSpec(t *testing.T) {
	refusaltest.Check(t, refusals, map[string]error{
		"ErrInvalidInput":              orders.ErrInvalidInput,
		"domainerr.Taken":              domainerr.Taken,
		"domainerr.InvalidCredentials": domainerr.InvalidCredentials,
		"domainerr.Forbidden":          domainerr.Forbidden,
		"domainerr.NotFound":           domainerr.NotFound,
		"ErrInvalidState":              orders.ErrInvalidState,
		"ErrInsufficientFunds":         orders.ErrInsufficientFunds,
		"ErrTooManyHeld":               orders.ErrTooManyHeld,
		"ErrCoolingDown":               orders.ErrCoolingDown,
		"ErrListTooSlow":               orders.ErrListTooSlow,
		"ErrTooManyAtOnce":             orders.ErrTooManyAtOnce,
	}, map[string]string{
		"domainerr.InvalidCredentials": "the token endpoint answers it as invalid_grant (RFC 6749 §5.2)",
	}, "..", spec(t))
}

// bound is one integer schema bound; ok is false when the spec states none.
func bound(v *float64) (int64, bool) {
	if v == nil {
		return 0, false
	}
	return int64(*v), true
}

// TestBounds_ParsePageAgreesWithTheSpec: the spec validator checks the page parameters, and
// orders.ParsePage then applies their defaults and the depth bound the spec cannot state; it must
// accept exactly what the embedded spec accepts and default as it does, so a bound or default
// changed in api/orders.yaml and not in Go (or the other way round) fails here.
func TestBounds_ParsePageAgreesWithTheSpec(t *testing.T) {
	s := spec(t)
	checked := map[string]bool{}
	for path, item := range s.Paths.Map() {
		for method, op := range item.Operations() {
			params := append(openapi3.Parameters{}, item.Parameters...)
			params = append(params, op.Parameters...)
			for _, pr := range params {
				p := pr.Value
				sc := p.Schema.Value
				name := method + " " + path + " " + p.In + " " + p.Name
				switch {
				case p.In == "query" && (p.Name == "page" || p.Name == "size"):
					parse := func(v int64) error {
						n := int32(v)
						if p.Name == "page" {
							// Pages of one row: any other size bounds the page lower (page ×
							// size ≤ orders.MaxOffset, TestParsePage_OffsetBound).
							one := int32(1)
							_, err := orders.ParsePage(&n, &one, nil)
							return err
						}
						_, err := orders.ParsePage(nil, &n, nil)
						return err
					}
					lo, okLo := bound(sc.Min)
					hi, okHi := bound(sc.Max)
					if !okLo || !okHi {
						t.Errorf("%s: the spec must bound both ends", name)
						continue
					}
					if parse(lo) != nil || parse(hi) != nil || parse(lo-1) == nil || parse(hi+1) == nil {
						t.Errorf("%s: ParsePage does not accept exactly [%d, %d]", name, lo, hi)
					}
					def, _ := orders.ParsePage(nil, nil, nil)
					want := map[string]int{"page": def.Number, "size": def.Size}[p.Name]
					if d, ok := sc.Default.(float64); !ok || int(d) != want {
						t.Errorf("%s: spec default %v, ParsePage's %d", name, sc.Default, want)
					}
				case p.In == "query" && p.Name == "sort":
					for _, v := range sc.Enum {
						str := v.(string)
						if _, err := orders.ParsePage(nil, nil, &str); err != nil {
							t.Errorf("%s: ParsePage refuses the spec's value %q: %v", name, str, err)
						}
					}
					for _, str := range []string{"name", "id,up", "price,", "ID", "createdAt,desc,x"} {
						if _, err := orders.ParsePage(nil, nil, &str); err == nil {
							t.Errorf("%s: ParsePage accepts %q, which the spec's enum does not list", name, str)
						}
					}
				default:
					continue
				}
				checked[name] = true
			}
		}
	}
	names := make([]string, 0, len(checked))
	for n := range checked {
		names = append(names, n)
	}
	sort.Strings(names)
	if len(names) == 0 {
		t.Fatal("found no page parameters; the walk is broken")
	}
	t.Logf("checked against the spec: %v", names)
}
