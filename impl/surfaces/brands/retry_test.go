package brands

import (
	"context"
	"testing"

	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// TestWrites_RetryASerializationFailure: a single-statement write goes through the one retry
// policy (pgtx) as every other write does: PostgreSQL aborting the first attempt with SQLSTATE
// 40001 (raised here by a trigger, once) costs the caller nothing.
func TestWrites_RetryASerializationFailure(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	svc := NewService(pool, Config{Hasher: password.New(password.Fast)})
	admin := Principal{UserID: "admin", IsAdmin: true}
	b, err := svc.CreateBrand(ctx, admin, BrandInput{Name: "Retry", Description: "d", URL: "https://retry.example",
		FeaturedImage: "https://retry.example/i.png", Availability: true})
	if err != nil {
		t.Fatal(err)
	}
	u, err := svc.Register(ctx, "Kit", "kit@retry.test", "kit-password")
	if err != nil {
		t.Fatal(err)
	}
	// A sequence is not rolled back with the failed statement, so the trigger fails only the first.
	if _, err := pool.Exec(ctx, `
		CREATE SEQUENCE fail_once;
		CREATE FUNCTION fail_once() RETURNS trigger LANGUAGE plpgsql AS $$
		BEGIN
			IF nextval('fail_once') = 1 THEN
				RAISE EXCEPTION 'injected conflict' USING ERRCODE = '40001';
			END IF;
			RETURN NEW;
		END $$;
		CREATE TRIGGER fail_once BEFORE INSERT ON brand_subscriptions FOR EACH ROW EXECUTE FUNCTION fail_once();`); err != nil {
		t.Fatal(err)
	}
	created, err := svc.Subscribe(ctx, Principal{UserID: u.ID}, b.ID)
	if err != nil || !created {
		t.Fatalf("Subscribe = %v, %v; want the subscription after one retry", created, err)
	}
	var attempts int64
	if err := pool.QueryRow(ctx, "SELECT last_value FROM fail_once").Scan(&attempts); err != nil || attempts != 2 {
		t.Fatalf("attempts = %d (%v), want 2", attempts, err)
	}
}
