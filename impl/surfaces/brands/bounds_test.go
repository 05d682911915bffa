package brands

import (
	"testing"

	"github.com/triadhq/triad/impl/testkit/apitest"
)

// TestBounds_MatchTheSpec: the input bounds the domain checks are api/brands.yaml's, in every
// schema that states them, so a request the spec validator lets through is judged by the same rule;
// a bound changed on one side only fails here.
func TestBounds_MatchTheSpec(t *testing.T) {
	t.Parallel()
	var bounds []apitest.Bound
	add := func(keyword string, goValue any, schemaProps ...[2]string) {
		for _, sp := range schemaProps {
			bounds = append(bounds, apitest.Bound{Schema: sp[0], Property: sp[1], Keyword: keyword, Go: goValue})
		}
	}
	add("maxLength", MaxNameLen, [2]string{"RegisterRequest", "name"}, [2]string{"EditRequest", "name"})
	add("maxLength", MaxEmailLen, [2]string{"RegisterRequest", "email"}, [2]string{"LoginRequest", "email"},
		[2]string{"EditRequest", "email"})
	add("minLength", MinPasswordLen, [2]string{"RegisterRequest", "password"}, [2]string{"ResetRequest", "newPassword"})
	add("maxLength", MaxPasswordLen, [2]string{"RegisterRequest", "password"}, [2]string{"LoginRequest", "password"},
		[2]string{"ResetRequest", "currentPassword"}, [2]string{"ResetRequest", "newPassword"})
	add("maxLength", MaxBrandNameLen, [2]string{"BrandCreate", "name"}, [2]string{"BrandUpdate", "name"})
	add("maxLength", MaxDescription, [2]string{"BrandCreate", "description"}, [2]string{"BrandUpdate", "description"})
	add("maxLength", MaxURLLen, [2]string{"BrandCreate", "url"}, [2]string{"BrandCreate", "featuredImage"},
		[2]string{"BrandUpdate", "url"}, [2]string{"BrandUpdate", "featuredImage"})
	// ValidID answers 404 without a query for anything that is not an id the API hands out.
	add("pattern", idRE.String(), [2]string{"Brand", "_id"}, [2]string{"User", "_id"}, [2]string{"RegisteredUser", "_id"})
	apitest.CheckBounds(t, apitest.Spec(t, "brands.yaml"), bounds)
}
