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
	"sync"
	"sync/atomic"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
)

// Store keeps one file per avatar in a directory. Names are validated avatar ids, never joined
// from raw request input, so a request cannot reach outside the directory.
type Store struct {
	dir string
	// reads counts the pictures opened or read (tests check a revalidation reads none).
	reads atomic.Int64

	mu  sync.Mutex
	ids map[string]knownID // content ids of files as this process last saw them
}

// knownID is the content id of one avatar file, valid while the file is that same file (inode,
// size and modification time): PutID replaces a file by renaming a new one over it, which is
// another inode.
type knownID struct {
	file os.FileInfo
	etag string
}

// maxKnownIDs bounds the content ids kept; past it one is dropped per new one (and computed again
// from the file when next asked).
const maxKnownIDs = 10000

var _ avatar.Store = (*Store)(nil)

// New opens (creating if needed) the directory dir as a store.
func New(dir string) (*Store, error) {
	if dir == "" {
		return nil, errors.New("avatar: empty file store path")
	}
	if err := os.MkdirAll(dir, 0o750); err != nil {
		return nil, fmt.Errorf("avatar: file store: %w", err)
	}
	return &Store{dir: dir, ids: map[string]knownID{}}, nil
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
	// The file's identity before the rename is its identity after: a concurrent Put that renames
	// another file over it in between leaves this entry matching nothing.
	if fi, err := f.Stat(); err == nil {
		s.remember(id, fi, avatar.ContentID(b))
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
	s.reads.Add(1)
	return f, int(st.Size()), nil
}

// ID returns the content id of the avatar file. The id of a file this process wrote or hashed
// before is answered from a stat alone, so a revalidation does not read the picture; another file
// (written by an earlier process, or replaced) is hashed once. A content hash stays right when a
// file is replaced within the same second, which a modification-time id would not.
func (s *Store) ID(ctx context.Context, avatarID string) string {
	if !avatar.ValidID(avatarID) {
		return ""
	}
	path := filepath.Join(s.dir, avatarID)
	fi, err := os.Stat(path)
	if err != nil {
		return ""
	}
	s.mu.Lock()
	k, ok := s.ids[avatarID]
	s.mu.Unlock()
	if ok && os.SameFile(k.file, fi) && k.file.Size() == fi.Size() && k.file.ModTime().Equal(fi.ModTime()) {
		return k.etag
	}
	f, err := os.Open(path)
	if err != nil {
		return ""
	}
	defer f.Close()
	fi, err = f.Stat() // the identity of the bytes read below, whatever replaced the path since
	if err != nil {
		return ""
	}
	b, err := io.ReadAll(io.LimitReader(f, avatar.MaxStoreBytes+1))
	if err != nil {
		return ""
	}
	s.reads.Add(1)
	etag := avatar.ContentID(b)
	s.remember(avatarID, fi, etag)
	return etag
}

// remember keeps the content id of the file fi under avatarID.
func (s *Store) remember(avatarID string, fi os.FileInfo, etag string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, ok := s.ids[avatarID]; !ok && len(s.ids) >= maxKnownIDs {
		for k := range s.ids {
			delete(s.ids, k)
			break
		}
	}
	s.ids[avatarID] = knownID{file: fi, etag: etag}
}

// Remove deletes the avatar file.
func (s *Store) Remove(ctx context.Context, avatarID string) error {
	if !avatar.ValidID(avatarID) {
		return avatar.ErrNotFound
	}
	s.mu.Lock()
	delete(s.ids, avatarID)
	s.mu.Unlock()
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
