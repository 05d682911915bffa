package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"golang.org/x/oauth2"

	"github.com/triadhq/triad/gen/ordersapi"
	"github.com/triadhq/triad/impl/testkit/patience"
)

// TestGoDecimalRecipe runs the decimal-money recipe of docs/specs.md exactly as written: a Go
// client generated from the served orders spec with the documented overlay (shopspring/decimal
// for Money and PriceNumber) decodes an order of 999999.99 and computes price × 1.05 exactly
// (1049999.9895, 1049999.99 to the kopeck, where float64 gives 1049999.9895000001), and the
// NewOrder it encodes from a decimal is one the server takes.
func TestGoDecimalRecipe(t *testing.T) {
	t.Parallel()
	doc, err := os.ReadFile(filepath.Join(repoRoot, "docs", "specs.md"))
	if err != nil {
		t.Fatal(err)
	}
	_, section, ok := strings.Cut(string(doc), "**Decimal money in Go.**")
	section, _, ok2 := strings.Cut(section, "`e2e/` drives the real binary")
	if !ok || !ok2 {
		t.Fatal("docs/specs.md has no \"**Decimal money in Go.**\" paragraph")
	}
	blocks := fencedBlocks(section)
	var langs []string
	for _, b := range blocks {
		langs = append(langs, b.lang)
	}
	if strings.Join(langs, ",") != "sh,go,sh" {
		t.Fatalf("the decimal recipe's blocks are %v, want sh (setup), go (main.go), sh (run)", langs)
	}
	setup, program, runIt := blocks[0].body, blocks[1].body, blocks[2].body

	srv := startServerArgs(t, []string{"-orders-client-id", "triad-orders", "-orders-client-secret", "triad-orders-secret"})
	ctx, cancel := context.WithTimeout(context.Background(), patience.Bound(8*time.Minute))
	defer cancel()
	lines := strings.Split(strings.TrimSpace(runRecipe(ctx, t, srv.URL, "decimaldemo", setup, program, runIt)), "\n")
	if len(lines) != 2 || lines[0] != "999999.99 x 1.05 = 1049999.9895 = 1049999.99" {
		t.Fatalf("the recipe printed %q, want \"999999.99 x 1.05 = 1049999.9895 = 1049999.99\" and a NewOrder", lines)
	}
	if lines[1] != `{"description":"Paint the fence","price":"120.5"}` {
		t.Errorf("the NewOrder from a decimal: %s", lines[1])
	}

	// The server takes that NewOrder as it is.
	hc := httpClient(t, loadSpec(t, orders))
	octx := context.WithValue(ctx, oauth2.HTTPClient, hc)
	conf := oauth2.Config{ClientID: "triad-orders", ClientSecret: "triad-orders-secret",
		Endpoint: oauth2.Endpoint{TokenURL: srv.URL + "/oauth/token", AuthStyle: oauth2.AuthStyleInHeader}}
	tok, err := conf.PasswordCredentialsToken(octx, "alice", "alice-password")
	if err != nil {
		t.Fatal(err)
	}
	alice, err := ordersapi.NewClientWithResponses(srv.URL, ordersapi.WithHTTPClient(conf.Client(octx, tok)))
	if err != nil {
		t.Fatal(err)
	}
	created, err := alice.CreateOrderWithBodyWithResponse(octx, nil, "application/json", strings.NewReader(lines[1]))
	if err != nil {
		t.Fatal(err)
	}
	if created.JSON201 == nil || string(created.JSON201.Price) != "120.50" {
		t.Errorf("POST /orders with the recipe's NewOrder: %d %s", created.StatusCode(), created.Body)
	}
}
