// Package mongostore keeps avatars in a MongoDB GridFS bucket (store URI
// mongodb://host:port/?ava_db=db&ava_coll=coll).
package mongostore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
	"time"

	"github.com/triadhq/triad/impl/surfaces/auth/avatar"
	"go.mongodb.org/mongo-driver/v2/bson"
	"go.mongodb.org/mongo-driver/v2/mongo"
	"go.mongodb.org/mongo-driver/v2/mongo/options"
)

// Defaults for the database and bucket of a mongodb:// store URI without ava_db / ava_coll.
const (
	DefaultDB   = "triad"
	DefaultColl = "avatars"
)

// mongoTimeout bounds each store call, as pgstore does for PostgreSQL.
const mongoTimeout = 10 * time.Second

// Store keeps avatars in a GridFS bucket. Each avatar is a GridFS file named by its avatar
// id with its content id in metadata.etag. A new picture is uploaded as a new revision and the
// older revisions are deleted afterwards, so a reader always finds a complete picture: the
// previous one until the new upload is finished, the new one after.
type Store struct {
	client *mongo.Client
	db     *mongo.Database
	coll   string
	// bucket serves reads and deletes, which keep no state in the bucket; uploads use their own
	// (see PutID).
	bucket *mongo.GridFSBucket
	// reads counts the pictures downloaded (tests check a revalidation downloads none).
	reads atomic.Int64
}

var _ avatar.Store = (*Store)(nil)

// mongoFile is the part of a GridFS files document the store reads.
type mongoFile struct {
	ID       bson.ObjectID `bson:"_id"`
	Length   int64         `bson:"length"`
	Metadata struct {
		Etag string `bson:"etag"`
	} `bson:"metadata"`
}

// Open connects to uri ("mongodb://host:port/?ava_db=db&ava_coll=coll"); the ava_*
// parameters choose the database and the GridFS bucket name and are removed before the URI goes
// to the driver.
func Open(ctx context.Context, uri string) (*Store, error) {
	u, err := avatar.ParseStoreURI(uri)
	if err != nil {
		return nil, err
	}
	q := u.Query()
	dbName, coll := q.Get("ava_db"), q.Get("ava_coll")
	if dbName == "" {
		dbName = DefaultDB
	}
	if coll == "" {
		coll = DefaultColl
	}
	q.Del("ava_db")
	q.Del("ava_coll")
	u.RawQuery = q.Encode()
	client, err := mongo.Connect(options.Client().ApplyURI(u.String()).SetTimeout(mongoTimeout))
	if err != nil {
		return nil, fmt.Errorf("avatar: mongo store: %w", err)
	}
	ctx, cancel := context.WithTimeout(ctx, mongoTimeout)
	defer cancel()
	if err := client.Ping(ctx, nil); err != nil {
		_ = client.Disconnect(context.Background())
		return nil, fmt.Errorf("avatar: mongo store: %w", err)
	}
	s := &Store{client: client, db: client.Database(dbName), coll: coll}
	s.bucket = s.newBucket()
	return s, nil
}

// newBucket returns a handle on the store's GridFS bucket; it costs no round trip.
func (s *Store) newBucket() *mongo.GridFSBucket {
	return s.db.GridFSBucket(options.GridFSBucket().SetName(s.coll))
}

// mongoCtx bounds a call by mongoTimeout on top of the caller's context.
func mongoCtx(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, mongoTimeout)
}

// Put stores the image as userID's avatar.
func (s *Store) Put(ctx context.Context, userID string, r io.Reader) (string, error) {
	return avatar.PutImage(ctx, s, userID, r)
}

// PutID stores b under the avatar id as a new GridFS revision and then drops the older ones.
// It is the store's avatar.IDPutter, which Migrate uses.
func (s *Store) PutID(ctx context.Context, id string, b []byte) error {
	ctx, cancel := mongoCtx(ctx)
	defer cancel()
	// A bucket of its own per upload: the driver's GridFSBucket reads the source through one
	// buffer shared by all its uploads and sets a first-write flag without a lock, so concurrent
	// logins through a shared bucket race and can store one user's bytes in another's picture.
	meta := options.GridFSUpload().SetMetadata(bson.D{{Key: "etag", Value: avatar.ContentID(b)}})
	newID, err := s.newBucket().UploadFromStream(ctx, id, bytes.NewReader(b), meta)
	if err != nil {
		return fmt.Errorf("avatar: mongo put: %w", err)
	}
	// Drop the revisions older than ours, and only those: if every Put deleted all revisions but
	// its own, two concurrent Puts of one user could delete each other's and leave none. The
	// newest revision is older than no other, so nobody deletes it. A leftover from a failed
	// delete is harmless because readers take the newest revision, and the next Put or Remove
	// cleans it up.
	revs, err := s.files(ctx, id)
	if err != nil {
		return nil
	}
	for i, f := range revs {
		if f.ID == newID {
			for _, old := range revs[i+1:] {
				_ = s.bucket.Delete(ctx, old.ID)
			}
			break
		}
	}
	return nil
}

// files returns the revisions of an avatar, newest first.
func (s *Store) files(ctx context.Context, id string) ([]mongoFile, error) {
	cur, err := s.bucket.Find(ctx, bson.D{{Key: "filename", Value: bson.D{{Key: "$eq", Value: id}}}},
		options.GridFSFind().SetSort(bson.D{{Key: "uploadDate", Value: -1}, {Key: "_id", Value: -1}}))
	if err != nil {
		return nil, err
	}
	var out []mongoFile
	if err := cur.All(ctx, &out); err != nil {
		return nil, err
	}
	return out, nil
}

// latest returns the newest revision of an avatar.
func (s *Store) latest(ctx context.Context, id string) (mongoFile, error) {
	if !avatar.ValidID(id) {
		return mongoFile{}, avatar.ErrNotFound
	}
	fs, err := s.files(ctx, id)
	if err != nil {
		return mongoFile{}, fmt.Errorf("avatar: mongo find: %w", err)
	}
	if len(fs) == 0 {
		return mongoFile{}, avatar.ErrNotFound
	}
	return fs[0], nil
}

// Get downloads the newest revision of the avatar.
func (s *Store) Get(ctx context.Context, avatarID string) (io.ReadCloser, int, error) {
	ctx, cancel := mongoCtx(ctx)
	defer cancel()
	// The newest revision is only deleted by a Put of a newer one, so when it vanishes between the
	// find and the download, looking again finds that newer one.
	for attempt := 0; ; attempt++ {
		f, err := s.latest(ctx, avatarID)
		if err != nil {
			return nil, 0, err
		}
		var buf bytes.Buffer
		s.reads.Add(1)
		_, err = s.bucket.DownloadToStream(ctx, f.ID, &buf)
		if errors.Is(err, mongo.ErrFileNotFound) && attempt < 3 {
			continue
		}
		if errors.Is(err, mongo.ErrFileNotFound) {
			return nil, 0, avatar.ErrNotFound
		}
		if err != nil {
			return nil, 0, fmt.Errorf("avatar: mongo get: %w", err)
		}
		return io.NopCloser(&buf), buf.Len(), nil
	}
}

// ID returns the content id saved in the newest revision's metadata.
func (s *Store) ID(ctx context.Context, avatarID string) string {
	ctx, cancel := mongoCtx(ctx)
	defer cancel()
	f, err := s.latest(ctx, avatarID)
	if err != nil {
		return ""
	}
	return f.Metadata.Etag
}

// Remove deletes every revision of the avatar.
func (s *Store) Remove(ctx context.Context, avatarID string) error {
	ctx, cancel := mongoCtx(ctx)
	defer cancel()
	if !avatar.ValidID(avatarID) {
		return avatar.ErrNotFound
	}
	fs, err := s.files(ctx, avatarID)
	if err != nil {
		return fmt.Errorf("avatar: mongo remove: %w", err)
	}
	if len(fs) == 0 {
		return avatar.ErrNotFound
	}
	for _, f := range fs {
		if err := s.bucket.Delete(ctx, f.ID); err != nil && !errors.Is(err, mongo.ErrFileNotFound) {
			return fmt.Errorf("avatar: mongo remove: %w", err)
		}
	}
	return nil
}

// List returns the ids of all stored avatars.
func (s *Store) List(ctx context.Context) ([]string, error) {
	ctx, cancel := mongoCtx(ctx)
	defer cancel()
	// A plain find rather than distinct: it works the same on MongoDB and on compatible servers
	// such as FerretDB, and a revision left over by an interrupted Put is simply deduplicated.
	cur, err := s.bucket.Find(ctx, bson.D{}, options.GridFSFind().SetSort(bson.D{{Key: "filename", Value: 1}}))
	if err != nil {
		return nil, fmt.Errorf("avatar: mongo list: %w", err)
	}
	var docs []struct {
		Filename string `bson:"filename"`
	}
	if err := cur.All(ctx, &docs); err != nil {
		return nil, fmt.Errorf("avatar: mongo list: %w", err)
	}
	ids := []string{}
	for _, d := range docs {
		if avatar.ValidID(d.Filename) && (len(ids) == 0 || ids[len(ids)-1] != d.Filename) {
			ids = append(ids, d.Filename)
		}
	}
	return ids, nil
}

// Close disconnects from the server.
func (s *Store) Close() error {
	ctx, cancel := mongoCtx(context.Background())
	defer cancel()
	return s.client.Disconnect(ctx)
}
