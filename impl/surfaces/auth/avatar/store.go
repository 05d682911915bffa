// Package avatar is the avatar proxy of the auth service: it fetches a user's picture at login
// (refusing hostile URLs and hostile images), stores it in a pluggable Store, generates identicons
// for users without a picture, and serves the stored pictures over HTTP.
//
// Each kind of Store lives in a package of its own: filestore (a directory), boltstore (a bbolt
// file), mongostore (a GridFS bucket) and pgstore (a PostgreSQL table several server replicas
// share); the server picks one by the URI it is configured with. This package holds what they
// share: the Store contract, avatar ids, the image check every Put runs, and Migrate.
package avatar

import (
	"bytes"
	"context"
	"crypto/sha1"
	"encoding/hex"
	"errors"
	"fmt"
	"image"
	"io"
	"net/http"
	"net/url"
	"regexp"
	"strings"

	"github.com/triadhq/triad/impl/kit/outbound"
)

// Store keeps avatar images under avatar ids. Implementations are safe for concurrent use. Every
// method but Close takes the caller's context: a cancelled request stops its store call (and
// releases a database connection) instead of holding it to a timeout.
type Store interface {
	// Put stores the image read from r as the avatar of userID, replacing the previous one, and
	// returns its avatar id ("<sha1 of userID>.image"). It refuses bytes that are not an image
	// (ErrNotImage) or larger than MaxStoreBytes (ErrTooLarge). Resizing is done by the Proxy before
	// Put, so a store keeps exactly what it is given.
	Put(ctx context.Context, userID string, r io.Reader) (avatarID string, err error)
	// Get returns the avatar's bytes and their size; ErrNotFound if there is none.
	Get(ctx context.Context, avatarID string) (r io.ReadCloser, size int, err error)
	// ID returns a content id of the avatar, usable as an ETag; "" when the avatar does not exist.
	ID(ctx context.Context, avatarID string) string
	// Remove deletes the avatar; ErrNotFound if there is none.
	Remove(ctx context.Context, avatarID string) error
	// List returns the ids of all stored avatars.
	List(ctx context.Context) (ids []string, err error)
	// Close releases the store's resources.
	Close() error
}

// Errors returned by stores and the proxy.
var (
	// ErrNotFound means no avatar has the given id (or the id is malformed).
	ErrNotFound = errors.New("avatar: not found")
	// ErrNotImage means the bytes are not an image the proxy can decode.
	ErrNotImage = errors.New("avatar: not an image")
	// ErrTooLarge means the picture exceeds the byte cap.
	ErrTooLarge = errors.New("avatar: too large")
	// ErrTooManyPixels means the picture's declared dimensions exceed the pixel cap.
	ErrTooManyPixels = errors.New("avatar: too many pixels")
	// ErrBadURL means the picture URL is not an absolute http(s) URL.
	ErrBadURL = errors.New("avatar: picture URL must be http or https")
	// ErrForbiddenAddress means the picture's host resolved to a private, loopback, link-local or
	// otherwise non-public address.
	ErrForbiddenAddress = outbound.ErrForbiddenAddress
)

// MaxStoreBytes caps what a store accepts in one Put. The proxy's own cap (ProxyOptions.MaxBytes)
// is smaller; this one protects stores used directly or by Migrate.
const MaxStoreBytes = 8 << 20

// idSuffix ends every avatar id; the HTTP route serves "<id>" with it included.
const idSuffix = ".image"

// validID matches the ids this package creates. Every store checks ids against it before touching
// a file, key or row, which is what keeps "../" and other path tricks out of the file store.
var validID = regexp.MustCompile(`^[0-9a-f]{40}\.image$`)

// ValidID reports whether id has the shape of an avatar id.
func ValidID(id string) bool { return validID.MatchString(id) }

// AvatarID returns the avatar id of a user: a hash of the user id, so the id is stable per user (a
// new login replaces the picture) and does not reveal the user id.
func AvatarID(userID string) string {
	h := sha1.Sum([]byte(userID))
	return hex.EncodeToString(h[:]) + idSuffix
}

// ContentID is the ETag-style id of stored bytes.
func ContentID(b []byte) string {
	h := sha1.Sum(b)
	return hex.EncodeToString(h[:])
}

// ReadImage reads at most MaxStoreBytes from r and checks the bytes are an image, so no store
// ever holds something the handler would refuse to serve. Every store's Put runs it.
func ReadImage(r io.Reader) ([]byte, error) {
	b, err := io.ReadAll(io.LimitReader(r, MaxStoreBytes+1))
	if err != nil {
		return nil, fmt.Errorf("avatar: read: %w", err)
	}
	if len(b) > MaxStoreBytes {
		return nil, ErrTooLarge
	}
	if imageType(b) == "" {
		return nil, ErrNotImage
	}
	return b, nil
}

// isImageType reports whether a sniffed content type is an image type.
func isImageType(ct string) bool { return strings.HasPrefix(ct, "image/") }

// imageType returns the sniffed image/* content type of b, or "" unless b both sniffs as an image
// and has a header that a registered decoder parses into a non-empty picture. Stores check it on
// every Put and the handler on every response: a signature alone (an HTML page behind
// "\x89PNG") is not an image. It reads only the header, so it is cheap enough for each request;
// the full decode happens once, in the proxy, before a picture is stored.
func imageType(b []byte) string {
	ct := http.DetectContentType(b)
	if !isImageType(ct) {
		return ""
	}
	cfg, _, err := image.DecodeConfig(bytes.NewReader(b))
	if err != nil || cfg.Width <= 0 || cfg.Height <= 0 {
		return ""
	}
	return ct
}

// ParseStoreURI parses a store URI. A parse error names the reason but not the URI: store URIs
// carry passwords (postgres://user:pass@..., mongodb://user:pass@...) and the error ends up in logs.
func ParseStoreURI(uri string) (*url.URL, error) {
	u, err := url.Parse(uri)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, fmt.Errorf("avatar: store URI: %w", err)
	}
	return u, nil
}

// Migrate copies every avatar of src into dst and returns how many it copied. Ids are preserved,
// because they are derived from user ids which tokens already reference.
func Migrate(ctx context.Context, dst, src Store) (int, error) {
	ids, err := src.List(ctx)
	if err != nil {
		return 0, fmt.Errorf("avatar: migrate list: %w", err)
	}
	n := 0
	for _, id := range ids {
		rc, _, err := src.Get(ctx, id)
		if errors.Is(err, ErrNotFound) {
			continue // removed meanwhile
		}
		if err != nil {
			return n, fmt.Errorf("avatar: migrate get %s: %w", id, err)
		}
		b, err := io.ReadAll(rc)
		_ = rc.Close()
		if err != nil {
			return n, fmt.Errorf("avatar: migrate read %s: %w", id, err)
		}
		if err := putID(ctx, dst, id, b); err != nil {
			return n, fmt.Errorf("avatar: migrate put %s: %w", id, err)
		}
		n++
	}
	return n, nil
}

// IDPutter is implemented by stores that can store bytes under a known avatar id; Migrate needs it
// because the user id behind an avatar id is not recoverable. PutID gets a valid id and bytes that
// ReadImage accepted.
type IDPutter interface {
	PutID(ctx context.Context, avatarID string, b []byte) error
}

// PutImage is every store's Put: it checks the bytes (ReadImage), derives the avatar id from the
// user id and stores the bytes through the store's PutID.
func PutImage(ctx context.Context, s IDPutter, userID string, r io.Reader) (string, error) {
	b, err := ReadImage(r)
	if err != nil {
		return "", err
	}
	id := AvatarID(userID)
	return id, s.PutID(ctx, id, b)
}

// putID stores b under avatarID in dst.
func putID(ctx context.Context, dst Store, avatarID string, b []byte) error {
	p, ok := dst.(IDPutter)
	if !ok {
		return fmt.Errorf("avatar: store %T cannot be a migration target", dst)
	}
	if !ValidID(avatarID) {
		return ErrNotFound
	}
	b, err := ReadImage(bytes.NewReader(b))
	if err != nil {
		return err
	}
	return p.PutID(ctx, avatarID, b)
}
