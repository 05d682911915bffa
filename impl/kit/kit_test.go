package kit_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/kit"
	"github.com/triadhq/triad/impl/kit/bearer"
)

// TestSources_ResolvedByNameWhateverTheMountOrder: a surface may use a source before the surface
// that provides it is mounted; the name is resolved once all are (Seal).
func TestSources_ResolvedByNameWhateverTheMountOrder(t *testing.T) {
	s := kit.NewSources()
	use := s.Use("notes", "orders") // notes mounts first
	s.Provide("orders", func(_ context.Context, tok string) (kit.Caller, error) {
		if tok != "good" {
			return kit.Caller{}, bearer.ErrInvalid
		}
		return kit.Caller{Source: "orders", UserID: "7", Role: "Customer"}, nil
	})
	if err := s.Seal(); err != nil {
		t.Fatal(err)
	}
	c, err := use(context.Background(), "good")
	if err != nil || c.UserID != "7" || c.Source != "orders" {
		t.Fatalf("resolved %+v, %v", c, err)
	}
	if _, err := use(context.Background(), "bad"); !errors.Is(err, bearer.ErrInvalid) {
		t.Fatalf("a bad token: %v, want bearer.ErrInvalid", err)
	}
}

// TestSources_MissingSourceStopsStartUp: a name no surface provides fails Seal, naming it and its
// user, instead of refusing every request at run time.
func TestSources_MissingSourceStopsStartUp(t *testing.T) {
	s := kit.NewSources()
	s.Provide("brands", func(context.Context, string) (kit.Caller, error) { return kit.Caller{}, nil })
	s.Use("notes", "ordres")
	err := s.Seal()
	if err == nil || !strings.Contains(err.Error(), `"ordres" (used by notes)`) || !strings.Contains(err.Error(), "provided: brands") {
		t.Fatalf("Seal = %v, want the missing source named", err)
	}
}
