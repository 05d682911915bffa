package orders

import (
	"testing"

	"github.com/triadhq/triad/impl/surfaces/orders/money"
	"github.com/triadhq/triad/impl/testkit/apitest"
)

// TestBounds_MatchTheSpec: the input bounds the domain checks are api/orders.yaml's, so a request
// the spec validator lets through is judged by the same rule; a bound changed on one side only
// fails here.
func TestBounds_MatchTheSpec(t *testing.T) {
	t.Parallel()
	apitest.CheckBounds(t, apitest.Spec(t, "orders.yaml"), []apitest.Bound{
		{Schema: "NewUser", Property: "username", Keyword: "minLength", Go: MinUsername},
		{Schema: "NewUser", Property: "username", Keyword: "maxLength", Go: MaxUsername},
		{Schema: "NewUser", Property: "username", Keyword: "pattern", Go: usernameRE.String()},
		{Schema: "NewUser", Property: "password", Keyword: "minLength", Go: MinPassword},
		{Schema: "NewUser", Property: "password", Keyword: "maxLength", Go: MaxPassword},
		{Schema: "NewOrder", Property: "description", Keyword: "maxLength", Go: MaxDescription},
		// The spec states the price in rubles, Go in kopecks.
		{Schema: "PriceNumber", Keyword: "maximum", Go: float64(money.MaxPrice) / 100},
	})
}
