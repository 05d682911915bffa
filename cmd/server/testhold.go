package main

import (
	"context"
	"fmt"

	"github.com/triadhq/triad/impl/kit/idempotency"
)

// testHoldEnv is a setting for tests only, never for production: a keyed request (Idempotency-Key)
// that reaches the named hold point stops there, logging "idempotency test hold", until its
// client hangs up, so a test can kill the server at that very point and check what a retry on
// another server finds (e2e/exactlyonce_test.go). The points: in-tx (the write and its answer
// written, not committed) and before-reply (both committed, the answer not yet sent). A held
// request keeps its database connection; the server warns at start when the setting is on.
const testHoldEnv = "TRIAD_TEST_IDEMPOTENCY_HOLD"

// checkTestHold refuses a value that names no hold point, so a typo cannot silently test nothing.
func checkTestHold(v string) error {
	switch v {
	case "", idempotency.HoldInTx, idempotency.HoldBeforeReply:
		return nil
	}
	return fmt.Errorf("%s=%q: want %s or %s (tests only)", testHoldEnv, v, idempotency.HoldInTx, idempotency.HoldBeforeReply)
}

// idempotencyHold is the idempotency.Options.Hold of the configured test hold point, or nil.
func (a *app) idempotencyHold() func(context.Context, string) {
	point := a.cfg.TestIdempotencyHold
	if point == "" {
		return nil
	}
	return func(ctx context.Context, at string) {
		if at != point {
			return
		}
		a.Log.Warn("idempotency test hold", "point", at, "env", testHoldEnv)
		<-ctx.Done()
	}
}
