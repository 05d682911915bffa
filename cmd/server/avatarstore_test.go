package main

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/dbtest"
)

// TestOpenAvatarStore_ChoosesByScheme: AUTH_AVATAR_STORE's scheme picks the store kind; the
// server's own database is the default; an unknown or malformed URI stops the start with an error
// that does not repeat the password the URI may carry.
func TestOpenAvatarStore_ChoosesByScheme(t *testing.T) {
	t.Parallel()
	pool := dbtest.New(t)
	dir := t.TempDir()
	tests := []struct {
		name, uri string
		want      string // the store's type, or "" for a refusal
		errHas    string // a word the refusal must name
	}{
		{"default: own database", "", "*pgstore.Store", ""},
		{"bare path", filepath.Join(dir, "a"), "*filestore.Store", ""},
		{"file URI", "file://" + filepath.Join(dir, "b", "c"), "*filestore.Store", ""},
		{"bolt", "bolt://" + filepath.Join(dir, "d", "x.db"), "*boltstore.Store", ""},
		{"postgres", dbtest.NewURL(t), "*pgstore.Store", ""},
		{"mongodb, unreachable", "mongodb://bob:s3cret@127.0.0.1:1/?authMechanism=BOGUS", "", "mongo"},
		{"mongodb bad port", "mongodb://bob:s3cret@host:badport/?ava_db=x", "", "port"},
		{"postgres bad port", "postgres://bob:s3cret@host:badport/db", "", "port"},
		{"postgres bad option", "postgres://bob:s3cret@127.0.0.1:1/db?sslmode=bogus", "", "sslmode"},
		{"postgres refused", "postgres://bob:s3cret@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", "", "postgres"},
		{"bolt bad port", "bolt://bob:s3cret@host:badport/x.db", "", "port"},
		{"file without a path", "file://", "", "path"},
		{"unknown scheme", "s3://bucket", "", "s3"},
		{"ftp", "ftp://host/x", "", "ftp"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s, err := openAvatarStore(context.Background(), tc.uri, pool)
			if tc.want == "" {
				if err == nil {
					_ = s.Close()
					t.Fatalf("accepted")
				}
				if !strings.Contains(err.Error(), tc.errHas) || strings.Contains(err.Error(), "s3cret") {
					t.Fatalf("error %q: want it to name %q and never the password", err, tc.errHas)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if got := fmt.Sprintf("%T", s); got != tc.want {
				t.Fatalf("store %s, want %s", got, tc.want)
			}
		})
	}
}
