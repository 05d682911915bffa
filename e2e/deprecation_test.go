package e2e

import (
	"context"
	"os"
	"path/filepath"
	"regexp"
	"testing"
	"time"

	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestDeprecation_SDKTypesMarkIt: the SDK's generator (openapi-typescript, pinned in package.json,
// as `make sdk` runs it) marks what a spec deprecates with @deprecated, so an editor strikes it out
// in a TypeScript client: here the operation, the query and header parameters and the body
// property that impl/kit/deprecation's test spec deprecates (its tests serve the same spec and
// read the Deprecation and Sunset headers it yields).
func TestDeprecation_SDKTypesMarkIt(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(2*time.Minute))
	defer cancel()
	out := filepath.Join(t.TempDir(), "deprecated.d.ts")
	run(t, ctx, repoRoot, nil, filepath.Join(repoRoot, "node_modules", ".bin", "openapi-typescript"),
		filepath.Join(repoRoot, "impl", "kit", "deprecation", "testdata", "deprecated.yaml"),
		"--redocly", filepath.Join(repoRoot, "clients", "ts", "redocly.yaml"), "-o", out)
	types, err := os.ReadFile(out)
	if err != nil {
		t.Fatal(err)
	}
	// Each mark is the JSDoc right above the member it marks.
	for what, member := range map[string]string{
		"the operation getOld":              `get: operations\["getOld"\]`,
		"the query parameter legacy":        `legacy\?: string`,
		"the header parameter X-Old-Client": `"X-Old-Client"\?: string`,
		"the body property details.colour":  `colour\?: string`,
	} {
		re := regexp.MustCompile(`@deprecated[^/]*\*/\s*` + member)
		if !re.Match(types) {
			t.Errorf("%s is not marked @deprecated in the generated types:\n%s", what, types)
		}
	}
	if regexp.MustCompile(`@deprecated[^/]*\*/\s*color\?: string`).Match(types) {
		t.Errorf("the property color, not deprecated, is marked @deprecated:\n%s", types)
	}
}
