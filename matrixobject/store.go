package matrixobject

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"
)

// Store is an object store in one directory. Create it with Open; it is safe
// for concurrent use.
type Store struct {
	dir    string
	opts   Options
	lock   *os.File
	chunks chunkPool

	mu      sync.RWMutex // guards buckets and closed
	buckets map[string]*bucket
	closed  bool

	// uploadLocks serialize the operations of one multipart upload,
	// striped by upload ID.
	uploadLocks [64]sync.Mutex

	cas *casState
}

// Directory layout under Store.dir.
const (
	lockName    = "LOCK"
	tmpDir      = "tmp"
	bucketsDir  = "buckets"
	uploadsDir  = "uploads"
	casDir      = "cas"
	bucketMeta  = "bucket.json"
	objectsDir  = "objects"
	appendDir   = "append"
	uploadMeta  = "upload.json"
	refsLogName = "refs.log"
)

// BucketInfo describes a bucket.
type BucketInfo struct {
	Name    string
	Created time.Time
	Quota   Quota
}

// Quota limits what a bucket may hold. Zero fields mean no limit.
type Quota struct {
	// MaxBytes bounds the total size of the bucket's objects and append
	// blobs. Default: 0, no limit.
	MaxBytes int64 `json:"max_bytes,omitempty"`
	// MaxObjects bounds the number of objects and append blobs. Default: 0,
	// no limit.
	MaxObjects int64 `json:"max_objects,omitempty"`
}

// Usage is what a bucket holds.
type Usage struct {
	Bytes   int64 // object bytes plus append-blob bytes
	Objects int64 // objects plus append blobs
}

type bucketFile struct {
	Name    string    `json:"name"`
	Created time.Time `json:"created"`
	Quota   Quota     `json:"quota"`
}

// bucket is one bucket's in-memory state.
//
// commitMu serializes every change to the bucket's contents (object
// renames, deletes, append-blob creation and quota reservations) together
// with the directory fsync that makes it durable. mu guards the index for
// readers; writers hold both. Under commitMu the index may be read without mu.
type bucket struct {
	name    string
	dir     string
	created time.Time

	commitMu sync.Mutex
	mu       sync.RWMutex
	deleted  bool
	quota    Quota
	objects  map[string]entry
	keys     []string // sorted keys of objects
	usage    Usage
	blobs    map[string]*appendBlob
}

// entry is what the index keeps of an object; the rest is read from its
// file.
type entry struct {
	size    int64
	etag    string
	modTime time.Time
}

// Open opens (creating if needed) the store in dir. It takes a lock on the
// directory, removes every temporary file a crashed writer left, and loads
// the index of every bucket, checking each object's trailer; a damaged file
// makes Open fail.
func Open(dir string, opts Options) (*Store, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	for _, d := range []string{dir, filepath.Join(dir, tmpDir), filepath.Join(dir, bucketsDir), filepath.Join(dir, uploadsDir), filepath.Join(dir, casDir)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return nil, err
		}
	}
	lock, err := lockDir(filepath.Join(dir, lockName))
	if err != nil {
		return nil, err
	}
	s := &Store{dir: dir, opts: opts, lock: lock, buckets: map[string]*bucket{}}
	if err := s.recover(); err != nil {
		s.closeFiles()
		lock.Close()
		return nil, err
	}
	return s, nil
}

// recover clears tmp/ and loads buckets and the CAS reference counts.
func (s *Store) recover() error {
	tmp := filepath.Join(s.dir, tmpDir)
	ents, err := os.ReadDir(tmp)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if err := os.RemoveAll(filepath.Join(tmp, e.Name())); err != nil {
			return err
		}
		s.opts.Logger.Info("removed temporary file", "name", e.Name())
	}
	if len(ents) > 0 {
		if err := syncDir(tmp); err != nil {
			return err
		}
	}
	ents, err = os.ReadDir(filepath.Join(s.dir, bucketsDir))
	if err != nil {
		return err
	}
	for _, e := range ents {
		b, err := s.loadBucket(e.Name())
		if err != nil {
			return fmt.Errorf("load bucket %s: %w", e.Name(), err)
		}
		s.buckets[b.name] = b
	}
	s.cas, err = openCAS(s)
	return err
}

func (s *Store) loadBucket(name string) (*bucket, error) {
	dir := filepath.Join(s.dir, bucketsDir, name)
	raw, err := os.ReadFile(filepath.Join(dir, bucketMeta))
	if err != nil {
		return nil, err
	}
	var bf bucketFile
	if err := json.Unmarshal(raw, &bf); err != nil {
		return nil, fmt.Errorf("%w: %s: %v", ErrCorrupt, bucketMeta, err)
	}
	b := &bucket{name: name, dir: dir, created: bf.Created, quota: bf.Quota, objects: map[string]entry{}, blobs: map[string]*appendBlob{}}
	// A copy of the store that carries files alone (a backup's) has no
	// empty directories: an empty bucket's are made again.
	for _, d := range []string{objectsDir, appendDir} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o755); err != nil {
			return nil, err
		}
	}
	ents, err := os.ReadDir(filepath.Join(dir, objectsDir))
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		f, err := os.Open(filepath.Join(dir, objectsDir, e.Name()))
		if err != nil {
			return nil, err
		}
		m, err := readMeta(f)
		f.Close()
		if err != nil {
			return nil, err
		}
		if fileName(m.Key) != e.Name() {
			return nil, fmt.Errorf("%w: object file %s holds key %q", ErrCorrupt, e.Name(), m.Key)
		}
		b.objects[m.Key] = entry{size: m.Size, etag: m.ETag, modTime: m.ModTime}
		b.keys = append(b.keys, m.Key)
		b.usage.Bytes += m.Size
		b.usage.Objects++
	}
	slices.Sort(b.keys)
	ents, err = os.ReadDir(filepath.Join(dir, appendDir))
	if err != nil {
		return nil, err
	}
	for _, e := range ents {
		ab, err := s.loadAppendBlob(filepath.Join(dir, appendDir, e.Name()))
		if err != nil {
			return nil, err
		}
		if fileName(ab.key) != e.Name() {
			ab.f.Close()
			return nil, fmt.Errorf("%w: append blob file %s holds key %q", ErrCorrupt, e.Name(), ab.key)
		}
		b.blobs[ab.key] = ab
		b.usage.Bytes += ab.state.Load().size
		b.usage.Objects++
	}
	return b, nil
}

// Close releases the directory lock and closes open files. Calls in progress
// may fail; every call after Close returns ErrClosed.
func (s *Store) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return ErrClosed
	}
	s.closed = true
	s.mu.Unlock()
	s.closeFiles()
	return s.lock.Close()
}

func (s *Store) closeFiles() {
	for _, b := range s.buckets {
		b.mu.RLock()
		blobs := slices.Collect(maps.Values(b.blobs))
		b.mu.RUnlock()
		for _, ab := range blobs {
			ab.mu.Lock()
			if ab.failed == nil {
				ab.f.Close()
				ab.failed = ErrClosed
			}
			ab.mu.Unlock()
		}
	}
	if s.cas != nil {
		s.cas.close()
	}
}

// Limits returns the size limits the store enforces (Options after
// defaults): MaxPutSize, MaxObjectSize, MaxPartSize, MinPartSize, MaxParts
// and MaxAppendSize are set; the rest is zero.
func (s *Store) Limits() Options {
	o := s.opts
	return Options{MaxPutSize: o.MaxPutSize, MaxObjectSize: o.MaxObjectSize, MaxPartSize: o.MaxPartSize,
		MinPartSize: o.MinPartSize, MaxParts: o.MaxParts, MaxAppendSize: o.MaxAppendSize}
}

// Dir returns the store's directory.
func (s *Store) Dir() string { return s.dir }

// bucket returns the named bucket.
func (s *Store) bucket(name string) (*bucket, error) {
	if err := ValidateBucketName(name); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	b, ok := s.buckets[name]
	if !ok {
		return nil, fmt.Errorf("%w: %s", ErrNoSuchBucket, name)
	}
	return b, nil
}

func (s *Store) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return ErrClosed
	}
	return nil
}

// CreateBucket creates a bucket with an optional quota. The bucket is
// durable when it returns.
func (s *Store) CreateBucket(ctx context.Context, name string, quota Quota) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := ValidateBucketName(name); err != nil {
		return err
	}
	if quota.MaxBytes < 0 || quota.MaxObjects < 0 {
		return fmt.Errorf("%w: negative quota", ErrInvalidArgument)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return ErrClosed
	}
	if _, ok := s.buckets[name]; ok {
		return fmt.Errorf("%w: %s", ErrBucketExists, name)
	}
	// Build the bucket under tmp/ and rename it into place in one step.
	tmp, err := os.MkdirTemp(filepath.Join(s.dir, tmpDir), "bucket-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	now := s.opts.Now().UTC()
	for _, d := range []string{objectsDir, appendDir} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			return err
		}
	}
	bf := bucketFile{Name: name, Created: now, Quota: quota}
	if err := writeFileSync(filepath.Join(tmp, bucketMeta), mustJSON(bf)); err != nil {
		return err
	}
	if err := syncDir(tmp); err != nil {
		return err
	}
	dst := filepath.Join(s.dir, bucketsDir, name)
	if err := os.Rename(tmp, dst); err != nil {
		return err
	}
	if err := syncDir(filepath.Join(s.dir, bucketsDir)); err != nil {
		return err
	}
	s.buckets[name] = &bucket{name: name, dir: dst, created: now, quota: quota, objects: map[string]entry{}, blobs: map[string]*appendBlob{}}
	return nil
}

// SetQuota replaces a bucket's quota. A quota below the current usage is
// allowed; it refuses new growth until usage falls under it.
func (s *Store) SetQuota(ctx context.Context, name string, quota Quota) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if quota.MaxBytes < 0 || quota.MaxObjects < 0 {
		return fmt.Errorf("%w: negative quota", ErrInvalidArgument)
	}
	b, err := s.bucket(name)
	if err != nil {
		return err
	}
	b.commitMu.Lock()
	defer b.commitMu.Unlock()
	if b.deleted {
		return fmt.Errorf("%w: %s", ErrNoSuchBucket, name)
	}
	bf := bucketFile{Name: name, Created: b.created, Quota: quota}
	if err := s.replaceFile(filepath.Join(b.dir, bucketMeta), mustJSON(bf)); err != nil {
		return err
	}
	b.mu.Lock()
	b.quota = quota
	b.mu.Unlock()
	return nil
}

// DeleteBucket removes an empty bucket. It fails with ErrBucketNotEmpty
// while the bucket holds objects or append blobs.
func (s *Store) DeleteBucket(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := s.bucket(name)
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	b.commitMu.Lock()
	defer b.commitMu.Unlock()
	if b.deleted {
		return fmt.Errorf("%w: %s", ErrNoSuchBucket, name)
	}
	if len(b.objects) > 0 || len(b.blobs) > 0 {
		return fmt.Errorf("%w: %s holds %d objects and %d append blobs", ErrBucketNotEmpty, name, len(b.objects), len(b.blobs))
	}
	grave := filepath.Join(s.dir, tmpDir, "deleted-"+name+"-"+randomHex(8))
	if err := os.Rename(b.dir, grave); err != nil {
		return err
	}
	if err := syncDir(filepath.Join(s.dir, bucketsDir)); err != nil {
		return err
	}
	b.mu.Lock()
	b.deleted = true
	b.mu.Unlock()
	delete(s.buckets, name)
	return os.RemoveAll(grave)
}

// HeadBucket returns a bucket's description.
func (s *Store) HeadBucket(ctx context.Context, name string) (BucketInfo, error) {
	if err := ctx.Err(); err != nil {
		return BucketInfo{}, err
	}
	b, err := s.bucket(name)
	if err != nil {
		return BucketInfo{}, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return BucketInfo{Name: b.name, Created: b.created, Quota: b.quota}, nil
}

// BucketUsage returns what a bucket holds.
func (s *Store) BucketUsage(ctx context.Context, name string) (Usage, error) {
	if err := ctx.Err(); err != nil {
		return Usage{}, err
	}
	b, err := s.bucket(name)
	if err != nil {
		return Usage{}, err
	}
	b.mu.RLock()
	defer b.mu.RUnlock()
	return b.usage, nil
}

// ListBuckets returns every bucket, sorted by name.
func (s *Store) ListBuckets(ctx context.Context) ([]BucketInfo, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, ErrClosed
	}
	out := make([]BucketInfo, 0, len(s.buckets))
	for _, b := range s.buckets {
		b.mu.RLock()
		out = append(out, BucketInfo{Name: b.name, Created: b.created, Quota: b.quota})
		b.mu.RUnlock()
	}
	slices.SortFunc(out, func(a, b BucketInfo) int { return strings.Compare(a.Name, b.Name) })
	return out, nil
}

// fileName is the file name of a key: the hex SHA-256 of the key, so any key
// maps to one flat, safe name.
func fileName(key string) string {
	h := sha256.Sum256([]byte(key))
	return hex.EncodeToString(h[:])
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err)
	}
	return b
}

// syncDir fsyncs a directory, making the entries created, renamed or
// removed in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	return err
}

// writeFileSync creates path with data and fsyncs it.
func writeFileSync(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// replaceFile atomically replaces path with data: a synced temporary file
// renamed over it, then the directory synced.
func (s *Store) replaceFile(path string, data []byte) error {
	tmp := filepath.Join(s.dir, tmpDir, "replace-"+randomHex(8))
	if err := writeFileSync(tmp, data); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(filepath.Dir(path))
}

// isNotExist reports whether err says a file does not exist.
func isNotExist(err error) bool { return errors.Is(err, fs.ErrNotExist) }
