package avatarstore_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatarstore"
	"github.com/triadhq/triad/impl/surfaces/auth/avatar/avatartest"
	"github.com/triadhq/triad/impl/testkit/dbtest"
)

func TestMain(m *testing.M) { dbtest.Main(m) }

// TestOpen_ChoosesByScheme: the URI's scheme picks the store kind (the seed's path, file://,
// key-value file and document-database URIs, and PostgreSQL); an empty URI is the site's own
// database when it gives one; an unknown or malformed URI is an error that does not repeat the
// password the URI may carry. Every store opened keeps a picture and gives it back.
func TestOpen_ChoosesByScheme(t *testing.T) {
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
			s, err := avatarstore.Open(context.Background(), tc.uri, avatarstore.Options{Pool: pool})
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
			pic := avatar.Identicon(tc.name)
			id, err := s.Put(context.Background(), "user-"+tc.name, bytes.NewReader(pic))
			if err != nil {
				t.Fatal(err)
			}
			if got := avatartest.Read(t, s, id); !bytes.Equal(got, pic) {
				t.Fatalf("the store gave back %d bytes, not the %d put", len(got), len(pic))
			}
		})
	}
}

// TestOpen_PathsLandWhereTheURISays: a bare path and a file:// URI are directories of files, a
// bolt:// URI one key-value file, at the path given.
func TestOpen_PathsLandWhereTheURISays(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, tc := range []struct{ uri, file string }{
		{filepath.Join(dir, "plain"), filepath.Join(dir, "plain")},
		{"file://" + filepath.Join(dir, "uri"), filepath.Join(dir, "uri")},
		{"bolt://" + filepath.Join(dir, "kv", "avatars.db"), filepath.Join(dir, "kv", "avatars.db")},
	} {
		s, err := avatarstore.Open(context.Background(), tc.uri, avatarstore.Options{})
		if err != nil {
			t.Fatalf("%s: %v", tc.uri, err)
		}
		if _, err := s.Put(context.Background(), "u", bytes.NewReader(avatar.Identicon("u"))); err != nil {
			t.Fatalf("%s: %v", tc.uri, err)
		}
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if _, err := os.Stat(tc.file); err != nil {
			t.Errorf("%s: nothing at %s: %v", tc.uri, tc.file, err)
		}
	}
}

// TestOpen_EmptyNeedsAPool: without the site's own database, an empty URI names no store.
func TestOpen_EmptyNeedsAPool(t *testing.T) {
	t.Parallel()
	if s, err := avatarstore.Open(context.Background(), "", avatarstore.Options{}); !errors.Is(err, avatarstore.ErrNoURI) {
		if s != nil {
			_ = s.Close()
		}
		t.Fatalf("Open(\"\") = %v, want ErrNoURI", err)
	}
}
