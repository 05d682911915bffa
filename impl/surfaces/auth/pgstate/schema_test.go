package pgstate_test

import (
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/triadhq/triad/db/schema"
	"github.com/triadhq/triad/impl/surfaces/auth/pgstate"
)

// TestSchema_IsTheServersMigration: the package's own tables (schema.sql, sessions_schema.sql,
// offsets_schema.sql:
// what New creates for an embedder, and what sqlc generates gen/authstatedb from) are the ones
// triad's migrations create, statement for statement, both ways: a column, an index or a table
// added to either side and not the other fails here, so pgstate.Open on triad's database always
// finds what pgstate.New would have made. Each migration's Down drops exactly the tables its Up
// creates.
func TestSchema_IsTheServersMigration(t *testing.T) {
	t.Parallel()
	for file, own := range map[string]string{"00040_auth_state.sql": pgstate.Schema,
		"00210_auth_revoked_sessions.sql": pgstate.SessionsSchema, "00360_auth_telegram_offsets.sql": pgstate.OffsetsSchema} {
		b, err := schema.FS.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		up, down, ok := strings.Cut(string(b), "-- +goose Down")
		if !ok || !strings.Contains(up, "-- +goose Up") {
			t.Fatalf("db/schema/%s: no goose Up and Down sections", file)
		}
		want, got := statements(own), statements(up)
		if !slices.Equal(got, want) {
			t.Errorf("db/schema/%s creates\n%s\nbut pgstate's schema file\n%s", file, strings.Join(got, ";\n"), strings.Join(want, ";\n"))
		}
		var created, dropped []string
		for _, m := range regexp.MustCompile(`CREATE TABLE IF NOT EXISTS (\w+)`).FindAllStringSubmatch(strings.Join(want, ";"), -1) {
			created = append(created, m[1])
		}
		for _, m := range regexp.MustCompile(`DROP TABLE (\w+)`).FindAllStringSubmatch(strings.Join(statements(down), ";"), -1) {
			dropped = append(dropped, m[1])
		}
		slices.Sort(created)
		slices.Sort(dropped)
		if len(created) == 0 || !slices.Equal(created, dropped) {
			t.Errorf("db/schema/%s: Up creates %v, Down drops %v", file, created, dropped)
		}
	}
}

// statements are sql's statements without comments, white space folded, in order.
func statements(sql string) []string {
	var keep []string
	for _, line := range strings.Split(sql, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			keep = append(keep, line)
		}
	}
	var out []string
	for _, stmt := range strings.Split(strings.Join(keep, "\n"), ";") {
		if stmt = strings.Join(strings.Fields(stmt), " "); stmt != "" {
			out = append(out, stmt)
		}
	}
	return out
}
