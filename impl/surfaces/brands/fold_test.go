package brands

import (
	"context"
	"errors"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/triadhq/triad/gen/db"
	"github.com/triadhq/triad/impl/credentials/opaquetoken"
	"github.com/triadhq/triad/impl/credentials/password"
	"github.com/triadhq/triad/impl/kit/domainerr"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

// An email is one account whatever case or compatibility form it is written in: after kate@ the
// KELVIN SIGN (U+212A), upper case, fullwidth letters and the long s are taken (409), and each logs
// in as kate. The database refuses the second row itself, whoever writes it.
func TestRegister_UnicodeCaseVariantsAreOneAccount(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	ctx := context.Background()
	tokens, err := opaquetoken.New(NewTokenStore(db.New(pool), nil), opaquetoken.Options{TTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	svc := NewService(pool, Config{Hasher: password.New(password.Fast), Tokens: tokens})
	kate, err := svc.Register(ctx, "Kate", "kate@brands.test", "kate-password")
	if err != nil {
		t.Fatal(err)
	}
	variants := []string{
		"\u212aate@brands.test",                // KELVIN SIGN
		"KATE@BRANDS.TEST",                     // ASCII upper case
		"\uff4b\uff41\uff54\uff45@brands.test", // fullwidth kate
		"kate@brand\u017f.test",                // LATIN SMALL LETTER LONG S
		"\u212aATE@brand\u017f.TEST",
	}
	for _, email := range variants {
		if _, err := svc.Register(ctx, "Mallory", email, "mallory-password"); !errors.Is(err, domainerr.Taken) {
			t.Errorf("register %q after kate@brands.test: %v, want domainerr.Taken", email, err)
		}
		p, err := svc.Authenticate(ctx, email, "kate-password")
		if err != nil || p.UserID != kate.ID {
			t.Errorf("login as %q: %+v %v, want kate", email, p, err)
		}
	}
	if _, err := db.New(pool).CreateBrandUser(ctx, db.CreateBrandUserParams{Email: "\u212aate@brands.test", Name: "Mallory", PasswordHash: "x"}); !isEmailTaken(err) {
		t.Fatalf("a second row for kate straight into the table: %v, want the unique index to refuse it", err)
	}
	if _, err := svc.Register(ctx, "Kat", "kat@brands.test", "kat-password"); err != nil {
		t.Fatalf("a different email: %v", err)
	}
}

// unicode_fold gives every case variant of every character (each orbit of unicode.SimpleFold, all
// of Unicode) one key, and characters that are not case variants of each other different keys.
func TestUnicodeFold_EveryCaseVariantOneKey(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	var as, bs []string
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !utf8.ValidRune(r) {
			continue
		}
		if f := unicode.SimpleFold(r); f != r {
			as, bs = append(as, string(r)), append(bs, string(f))
		}
	}
	if len(as) < 2800 {
		t.Fatalf("only %d case pairs: the walk is broken", len(as))
	}
	rows, err := pool.Query(context.Background(),
		`SELECT a, b, unicode_fold(a), unicode_fold(b) FROM unnest($1::text[], $2::text[]) AS t(a, b) WHERE unicode_fold(a) <> unicode_fold(b)`, as, bs)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var a, b, fa, fb string
		if err := rows.Scan(&a, &b, &fa, &fb); err != nil {
			t.Fatal(err)
		}
		t.Errorf("%U and %U are case variants, keys %q and %q", []rune(a)[0], []rune(b)[0], fa, fb)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var distinct bool
	if err := pool.QueryRow(context.Background(), `SELECT unicode_fold('kate@x.test') <> unicode_fold('kata@x.test') AND unicode_fold('ß') <> unicode_fold('s')`).Scan(&distinct); err != nil || !distinct {
		t.Fatalf("different letters share a key: %v %v", distinct, err)
	}
}

// NewService needs nothing but the pool, as orders.NewService: without the edge's token store it
// issues tokens of DefaultTokenTTL (it panicked before).
func TestNewService_Defaults(t *testing.T) {
	t.Parallel()
	svc := NewService(dbtest.New(t), Config{Hasher: password.New(password.Fast)})
	reg, err := svc.Register(context.Background(), "Kit", "kit@brands.test", "kit-password")
	if err != nil || reg.Token == "" {
		t.Fatalf("Register = %q, %v", reg.Token, err)
	}
}
