package appleid_test

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"testing"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/triadhq/triad/impl/kit/outbound"
	"github.com/triadhq/triad/impl/surfaces/auth/appleid"
)

// TestKeySet_DefaultClientIsGuarded: without a Client, the keys are fetched through the guarded
// outbound client, which refuses a key endpoint on a non-public address (here a loopback server).
func TestKeySet_DefaultClientIsGuarded(t *testing.T) {
	t.Parallel()
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	ts, fetches := jwksServer(t, "k1", &k.PublicKey)
	now := time.Now()
	claims := jwt.MapClaims{"iss": appleid.Issuer, "aud": "cid", "sub": "s1", "exp": now.Add(time.Minute).Unix(), "iat": now.Unix()}
	_, err := (&appleid.KeySet{URL: ts.URL}).Verify(context.Background(), sign(t, k, "k1", claims), appleid.Issuer, "cid")
	if !errors.Is(err, outbound.ErrForbiddenAddress) || fetches.Load() != 0 {
		t.Fatalf("err = %v after %d fetches, want ErrForbiddenAddress and none", err, fetches.Load())
	}
}
