// Package filestore keeps avatars as files in a directory, one file per avatar (store URI: a path
// or file:///path). Only one server should use a directory.
package filestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/triadhq/triad/impl/avatar"
)

// Store keeps one file per avatar in a directory. Names are validated avatar ids, never joined
// from raw request input, so a request cannot reach outside the directory.
type Store struct {
	dir string
}

var _ avatar.Store = (*Store)(nil)

// New opens (creating if needed) the directory dir as a store.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("avatar: empty file store path")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("avatar: file store: %w", err)
	}
	return &Store{dir: dir}, nil
}

// Dir is the directory holding the avatars.
func (s *Store) Dir() string { return s.dir }

// Put stores the image as userID's avatar.
func (s *Store) Put(ctx context.Context, userID string, r io.Reader) (string, error) {
	return avatar.PutImage(ctx, s, userID, r)
}

// PutID writes through a temporary file and a rename, so a concurrent Get sees the old or the new
// picture, never half of one.
func (s *Store) PutID(ctx context.Context, id string, b []byte) error {
	f, err := os.CreateTemp(s.dir, ".tmp-*")
	if err != nil {
		return fmt.Errorf("avatar: file store: %w", err)
	}
	tmp := f.Name()
	if _, err := io.Copy(f, bytes.NewReader(b)); err != nil {
		_ = f.Close()
		_ = os.Remove(tmp)
		return fmt.Errorf("avatar: file store write: %w", err)
	}
	if err := f.Close(); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("avatar: file store write: %w", err)
	}
	if err := os.Rename(tmp, filepath.Join(s.dir, id)); err != nil {
		_ = os.Remove(tmp)
		return fmt.Errorf("avatar: file store rename: %w", err)
	}
	return nil
}

// Get opens the avatar file.
func (s *Store) Get(ctx context.Context, avatarID string) (io.ReadCloser, int, error) {
	if !avatar.ValidID(avatarID) {
		return nil, 0, avatar.ErrNotFound
	}
	f, err := os.Open(filepath.Join(s.dir, avatarID))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, 0, avatar.ErrNotFound
	}
	if err != nil {
		return nil, 0, fmt.Errorf("avatar: file store: %w", err)
	}
	st, err := f.Stat()
	if err != nil {
		_ = f.Close()
		return nil, 0, fmt.Errorf("avatar: file store: %w", err)
	}
	return f, int(st.Size()), nil
}

// ID hashes the file's content; avatars are small, and a content hash stays right when a file is
// replaced within the same second (a modification-time id would not).
func (s *Store) ID(ctx context.Context, avatarID string) string {
	if !avatar.ValidID(avatarID) {
		return ""
	}
	b, err := os.ReadFile(filepath.Join(s.dir, avatarID))
	if err != nil {
		return ""
	}
	return avatar.ContentID(b)
}

// Remove deletes the avatar file.
func (s *Store) Remove(ctx context.Context, avatarID string) error {
	if !avatar.ValidID(avatarID) {
		return avatar.ErrNotFound
	}
	err := os.Remove(filepath.Join(s.dir, avatarID))
	if errors.Is(err, fs.ErrNotExist) {
		return avatar.ErrNotFound
	}
	if err != nil {
		return fmt.Errorf("avatar: file store: %w", err)
	}
	return nil
}

// List returns the ids of the avatar files, ignoring anything else in the directory.
func (s *Store) List(ctx context.Context) ([]string, error) {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return nil, fmt.Errorf("avatar: file store: %w", err)
	}
	ids := []string{}
	for _, e := range entries {
		if e.Type().IsRegular() && avatar.ValidID(e.Name()) {
			ids = append(ids, e.Name())
		}
	}
	return ids, nil
}

// Close does nothing; the file store holds no open resources.
func (s *Store) Close() error { return nil }
