// Package boltstore keeps avatars in one bbolt database file (store URI bolt:///path/to/file.db).
package boltstore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sync/atomic"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	bolt "go.etcd.io/bbolt"
)

// boltBucket holds avatar id -> image bytes; etagBucket avatar id -> content id, written in the same
// transaction, so ID (a revalidation's 304) never reads the picture.
var (
	boltBucket = []byte("avatars")
	etagBucket = []byte("avatar_etags")
)

// Store keeps avatars in one bbolt database file. bbolt locks the file, so only one process
// can use it at a time; replicas of the server should share the postgres store instead.
type Store struct {
	db *bolt.DB
	// reads counts the pictures read out of the file (tests check a revalidation reads none).
	reads atomic.Int64
}

var _ avatar.Store = (*Store)(nil)

// Open opens (creating if needed) the bbolt database at path.
func Open(path string) (*Store, error) {
	if path == "" {
		return nil, errors.New("avatar: empty bolt path")
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o750); err != nil {
		return nil, fmt.Errorf("avatar: bolt store: %w", err)
	}
	// The timeout turns "another process holds the file" into an error instead of a hang.
	db, err := bolt.Open(path, 0o600, &bolt.Options{Timeout: 5 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("avatar: bolt store: %w", err)
	}
	if err := db.Update(func(tx *bolt.Tx) error {
		pics, err := tx.CreateBucketIfNotExists(boltBucket)
		if err != nil {
			return err
		}
		etags, err := tx.CreateBucketIfNotExists(etagBucket)
		if err != nil {
			return err
		}
		// A file written before content ids were kept gets them now, once, so that no
		// revalidation ever reads a picture.
		return pics.ForEach(func(k, v []byte) error {
			if etags.Get(k) != nil {
				return nil
			}
			return etags.Put(k, []byte(avatar.ContentID(v)))
		})
	}); err != nil {
		_ = db.Close()
		return nil, fmt.Errorf("avatar: bolt store: %w", err)
	}
	return &Store{db: db}, nil
}

// Put stores the image as userID's avatar.
func (s *Store) Put(ctx context.Context, userID string, r io.Reader) (string, error) {
	return avatar.PutImage(ctx, s, userID, r)
}

// PutID stores b and its content id under the avatar id in one transaction.
// It is the store's avatar.IDPutter, which Migrate uses.
func (s *Store) PutID(ctx context.Context, id string, b []byte) error {
	err := s.db.Update(func(tx *bolt.Tx) error {
		if err := tx.Bucket(boltBucket).Put([]byte(id), b); err != nil {
			return err
		}
		return tx.Bucket(etagBucket).Put([]byte(id), []byte(avatar.ContentID(b)))
	})
	if err != nil {
		return fmt.Errorf("avatar: bolt put: %w", err)
	}
	return nil
}

// get copies the avatar's bytes out of a read transaction (bbolt's slices die with it).
func (s *Store) get(avatarID string) ([]byte, error) {
	if !avatar.ValidID(avatarID) {
		return nil, avatar.ErrNotFound
	}
	var b []byte
	err := s.db.View(func(tx *bolt.Tx) error {
		v := tx.Bucket(boltBucket).Get([]byte(avatarID))
		if v == nil {
			return avatar.ErrNotFound
		}
		b = bytes.Clone(v)
		s.reads.Add(1)
		return nil
	})
	return b, err
}

// Get returns the avatar's bytes.
func (s *Store) Get(ctx context.Context, avatarID string) (io.ReadCloser, int, error) {
	b, err := s.get(avatarID)
	if err != nil {
		return nil, 0, err
	}
	return io.NopCloser(bytes.NewReader(b)), len(b), nil
}

// ID returns the content id stored beside the picture (Open fills in those of pictures stored
// before content ids were kept); the picture itself is read only if that id is missing.
func (s *Store) ID(ctx context.Context, avatarID string) string {
	if !avatar.ValidID(avatarID) {
		return ""
	}
	var etag string
	// PutID and Remove change both buckets in one transaction: an id is in the etag bucket
	// exactly while its picture is stored.
	_ = s.db.View(func(tx *bolt.Tx) error {
		etag = string(tx.Bucket(etagBucket).Get([]byte(avatarID)))
		return nil
	})
	if etag != "" {
		return etag
	}
	b, err := s.get(avatarID)
	if err != nil {
		return ""
	}
	return avatar.ContentID(b)
}

// Remove deletes the avatar.
func (s *Store) Remove(ctx context.Context, avatarID string) error {
	if !avatar.ValidID(avatarID) {
		return avatar.ErrNotFound
	}
	return s.db.Update(func(tx *bolt.Tx) error {
		bk := tx.Bucket(boltBucket)
		if bk.Get([]byte(avatarID)) == nil {
			return avatar.ErrNotFound
		}
		if err := tx.Bucket(etagBucket).Delete([]byte(avatarID)); err != nil {
			return err
		}
		return bk.Delete([]byte(avatarID))
	})
}

// List returns all avatar ids.
func (s *Store) List(ctx context.Context) ([]string, error) {
	ids := []string{}
	err := s.db.View(func(tx *bolt.Tx) error {
		return tx.Bucket(boltBucket).ForEach(func(k, _ []byte) error {
			ids = append(ids, string(k))
			return nil
		})
	})
	if err != nil {
		return nil, fmt.Errorf("avatar: bolt list: %w", err)
	}
	return ids, nil
}

// Close closes the database file.
func (s *Store) Close() error { return s.db.Close() }
