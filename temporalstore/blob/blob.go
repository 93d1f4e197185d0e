package blob

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"slices"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// DefaultMaxSize is the largest blob by default: 512 MiB, as the RESP and
// HTTP surfaces' largest value.
const DefaultMaxSize = 512 << 20

// DefaultUploadExpiry is how long an upload may stay uncommitted before
// Sweep removes it, by default.
const DefaultUploadExpiry = 24 * time.Hour

// MaxKey is the longest key, in bytes; MaxNamespace the longest namespace.
const (
	MaxKey       = 1024
	MaxNamespace = 255
)

// Errors. Bad input changes nothing.
var (
	// ErrInvalid is returned for an empty or over-long namespace or key,
	// a malformed digest or upload id, or a part number out of 1..10000.
	ErrInvalid = errors.New("blob: invalid argument")
	// ErrNotFound is returned for a blob that does not exist.
	ErrNotFound = errors.New("blob: not found")
	// ErrNoSuchUpload is returned for an upload that does not exist: never
	// begun, committed, aborted or expired; or one of another key.
	ErrNoSuchUpload = errors.New("blob: no such upload")
	// ErrNoSuchPart is returned by Commit for a part that was not appended.
	ErrNoSuchPart = errors.New("blob: no such part")
	// ErrTooLarge is returned for content over Options.MaxSize.
	ErrTooLarge = errors.New("blob: too large")
	// ErrBadDigest is returned when content does not match the SHA-256
	// the caller gave.
	ErrBadDigest = errors.New("blob: content does not match its digest")
	// ErrRange is returned by Open for a range that selects nothing.
	ErrRange = errors.New("blob: range not satisfiable")
	// ErrClosed is returned after Close.
	ErrClosed = errors.New("blob: closed")
)

// Options configure a Store. The zero value is usable.
type Options struct {
	// MaxSize is the largest blob, in bytes. Default: DefaultMaxSize.
	MaxSize int64
	// UploadExpiry is the age after which Sweep removes an uncommitted
	// upload. Default: DefaultUploadExpiry.
	UploadExpiry time.Duration
	// Logger receives the store's notices. Default: slog.Default().
	Logger *slog.Logger
	// Now is the clock uploads are aged by. Default: time.Now.
	Now func() time.Time
}

func (o Options) withDefaults() (Options, error) {
	if o.MaxSize < 0 || o.UploadExpiry < 0 {
		return o, fmt.Errorf("%w: negative MaxSize or UploadExpiry", ErrInvalid)
	}
	if o.MaxSize == 0 {
		o.MaxSize = DefaultMaxSize
	}
	if o.UploadExpiry == 0 {
		o.UploadExpiry = DefaultUploadExpiry
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o, nil
}

// Store keeps named blobs in a directory.
type Store struct {
	obj  *matrixobject.Store
	opts Options
}

// Open opens (creating it if needed) the blob store in dir. One Store
// holds a directory at a time.
func Open(dir string, opts Options) (*Store, error) {
	o, err := opts.withDefaults()
	if err != nil {
		return nil, err
	}
	obj, err := matrixobject.Open(dir, matrixobject.Options{
		MaxPutSize: o.MaxSize, MaxPartSize: o.MaxSize, MaxObjectSize: o.MaxSize,
		// A part of a blob upload may be any size: an append is the
		// caller's unit, not a network's.
		MinPartSize:  1,
		UploadExpiry: o.UploadExpiry, Logger: o.Logger, Now: o.Now,
	})
	if err != nil {
		return nil, err
	}
	return &Store{obj: obj, opts: o}, nil
}

// Close closes the store; readers already open stay readable.
func (s *Store) Close() error { return s.obj.Close() }

// Info describes a blob.
type Info struct {
	Namespace string `json:"namespace"`
	Key       string `json:"key"`
	Size      int64  `json:"size"`
	// SHA256 is the hex SHA-256 of the content.
	SHA256 string `json:"sha256,omitempty"`
	// ETag is the first 32 hex digits of the SHA-256 for a blob put in one
	// piece, and for one committed from parts the hex MD5 of its parts'
	// ETags (as bytes), "-" and the part count, as S3 forms it. No MD5 of
	// the content is computed: it would be the slower of two hashes.
	ETag     string    `json:"etag"`
	Modified time.Time `json:"modified"`
}

// Part describes an appended part of an upload.
type Part struct {
	Number int   `json:"part"`
	Size   int64 `json:"size"`
	// ETag is the first 32 hex digits of the part's SHA-256.
	ETag string `json:"etag"`
}

// Range selects bytes of a blob, with HTTP's rules: Start to End
// inclusive (End negative: to the end; past the end: cut to it), or the
// last Suffix bytes when Suffix is positive.
type Range = matrixobject.Range

// ParseRange parses an HTTP Range header: the one byte range it asks
// for; nil when there is none to honour (no header, several ranges, a
// bad one: RFC 9110 lets a server ignore them); unsatisfiable for one
// that selects nothing whatever the blob ("bytes=-0").
func ParseRange(h string) (r *Range, unsatisfiable bool) {
	switch sel, kind := matrixobject.ParseRangeHeader(h); kind {
	case matrixobject.RangeOne:
		return &sel, false
	case matrixobject.RangeUnsatisfiable:
		return nil, true
	}
	return nil, false
}

// bucket is the namespace's bucket: a digest, so that any namespace name
// maps to a valid bucket name and none to another's.
func bucket(ns string) string {
	d := sha256.Sum256([]byte(ns))
	return "ns-" + hex.EncodeToString(d[:20])
}

func checkName(ns, key string) error {
	switch {
	case ns == "" || len(ns) > MaxNamespace:
		return fmt.Errorf("%w: namespace must be 1 to %d bytes", ErrInvalid, MaxNamespace)
	case key == "" || len(key) > MaxKey:
		return fmt.Errorf("%w: key must be 1 to %d bytes", ErrInvalid, MaxKey)
	}
	return nil
}

func checkDigest(sum string) error {
	if sum == "" {
		return nil
	}
	b, err := hex.DecodeString(sum)
	if err != nil || len(b) != sha256.Size {
		return fmt.Errorf("%w: %q is not a hex SHA-256", ErrInvalid, sum)
	}
	return nil
}

// ensureBucket creates ns's bucket unless it exists.
func (s *Store) ensureBucket(ctx context.Context, ns string) error {
	err := s.obj.CreateBucket(ctx, bucket(ns), matrixobject.Quota{})
	if errors.Is(err, matrixobject.ErrBucketExists) {
		return nil
	}
	return mapErr(err)
}

// mapErr turns the object store's errors into this package's.
func mapErr(err error) error {
	pairs := []struct{ from, to error }{
		{matrixobject.ErrNoSuchKey, ErrNotFound},
		{matrixobject.ErrNoSuchBucket, ErrNotFound},
		{matrixobject.ErrNoSuchUpload, ErrNoSuchUpload},
		{matrixobject.ErrInvalidPart, ErrNoSuchPart},
		{matrixobject.ErrTooLarge, ErrTooLarge},
		{matrixobject.ErrBadDigest, ErrBadDigest},
		{matrixobject.ErrInvalidRange, ErrRange},
		{matrixobject.ErrInvalidKey, ErrInvalid},
		{matrixobject.ErrInvalidArgument, ErrInvalid},
		{matrixobject.ErrClosed, ErrClosed},
	}
	for _, p := range pairs {
		if errors.Is(err, p.from) {
			return fmt.Errorf("%w: %w", p.to, err)
		}
	}
	return err
}

func info(ns string, o matrixobject.ObjectInfo) Info {
	return Info{Namespace: ns, Key: o.Key, Size: o.Size, SHA256: o.SHA256, ETag: o.ETag, Modified: o.ModTime}
}

// Put stores the content read from r as ns/key, replacing any blob there,
// once it is whole and durable. With sum (a hex SHA-256) the content must
// match it, else ErrBadDigest and nothing changes.
func (s *Store) Put(ctx context.Context, ns, key string, r io.Reader, sum string) (Info, error) {
	if err := checkName(ns, key); err != nil {
		return Info{}, err
	}
	if err := checkDigest(sum); err != nil {
		return Info{}, err
	}
	if err := s.ensureBucket(ctx, ns); err != nil {
		return Info{}, err
	}
	o, err := s.obj.PutObject(ctx, bucket(ns), key, r, matrixobject.PutOptions{ExpectedSHA256: sum, NoMD5: true})
	if err != nil {
		return Info{}, mapErr(err)
	}
	return info(ns, o), nil
}

// Reader reads a blob, or the range of it Open was given. Close it.
type Reader struct {
	Info Info
	// Offset and Length are the bytes Read returns.
	Offset, Length int64
	r              *matrixobject.ObjectReader
}

// Read reads the selected bytes.
func (r *Reader) Read(p []byte) (int, error) { return r.r.Read(p) }

// WriteTo copies the rest of the selected bytes to w, handing w the file
// so that a TCP connection or an http.ResponseWriter sends it with
// sendfile(2), without copying it through user space.
func (r *Reader) WriteTo(w io.Writer) (int64, error) { return r.r.WriteTo(w) }

// Close releases the blob's file.
func (r *Reader) Close() error { return r.r.Close() }

// Open opens ns/key for reading, whole or the bytes rng selects.
func (s *Store) Open(ctx context.Context, ns, key string, rng *Range) (*Reader, error) {
	if err := checkName(ns, key); err != nil {
		return nil, err
	}
	or, err := s.obj.GetObject(ctx, bucket(ns), key, matrixobject.GetOptions{Range: rng})
	if err != nil {
		return nil, mapErr(err)
	}
	return &Reader{Info: info(ns, or.Info), Offset: or.Offset, Length: or.Length, r: or}, nil
}

// Stat describes ns/key.
func (s *Store) Stat(ctx context.Context, ns, key string) (Info, error) {
	if err := checkName(ns, key); err != nil {
		return Info{}, err
	}
	o, err := s.obj.HeadObject(ctx, bucket(ns), key)
	if err != nil {
		return Info{}, mapErr(err)
	}
	return info(ns, o), nil
}

// Delete removes ns/key; ErrNotFound when there is none.
func (s *Store) Delete(ctx context.Context, ns, key string) error {
	if err := checkName(ns, key); err != nil {
		return err
	}
	return mapErr(s.obj.DeleteObject(ctx, bucket(ns), key))
}

// Listing is a page of List.
type Listing struct {
	Blobs []Info `json:"blobs"`
	// Next, when not empty, is the After that lists the next page.
	Next string `json:"next,omitempty"`
}

// DefaultListLimit is the most blobs a List page holds when no limit is
// given, and the most it holds at all.
const DefaultListLimit = 1000

// List lists ns's blobs whose keys begin with prefix, in key order, after
// the key after, at most limit (DefaultListLimit when 0 or more).
func (s *Store) List(ctx context.Context, ns, prefix, after string, limit int) (Listing, error) {
	if ns == "" || len(ns) > MaxNamespace {
		return Listing{}, fmt.Errorf("%w: namespace must be 1 to %d bytes", ErrInvalid, MaxNamespace)
	}
	if limit < 0 {
		return Listing{}, fmt.Errorf("%w: negative limit", ErrInvalid)
	}
	if limit == 0 || limit > DefaultListLimit {
		limit = DefaultListLimit
	}
	res, err := s.obj.ListObjects(ctx, bucket(ns), matrixobject.ListOptions{Prefix: prefix, StartAfter: after, MaxKeys: limit})
	if errors.Is(err, matrixobject.ErrNoSuchBucket) {
		return Listing{Blobs: []Info{}}, nil
	}
	if err != nil {
		return Listing{}, mapErr(err)
	}
	out := Listing{Blobs: make([]Info, 0, len(res.Objects))}
	for _, o := range res.Objects {
		out.Blobs = append(out.Blobs, info(ns, o))
	}
	if res.IsTruncated && len(out.Blobs) > 0 {
		out.Next = out.Blobs[len(out.Blobs)-1].Key
	}
	return out, nil
}

// Begin starts a multipart upload of ns/key and returns its id.
func (s *Store) Begin(ctx context.Context, ns, key string) (string, error) {
	if err := checkName(ns, key); err != nil {
		return "", err
	}
	if err := s.ensureBucket(ctx, ns); err != nil {
		return "", err
	}
	id, err := s.obj.CreateMultipartUpload(ctx, bucket(ns), key, matrixobject.PutOptions{})
	return id, mapErr(err)
}

// MaxParts is the most parts an upload has; part numbers are 1..MaxParts.
const MaxParts = 10000

// Append stores part number n of the upload, replacing an earlier part of
// that number; parts may come in any order. With sum the part's content
// must match it.
func (s *Store) Append(ctx context.Context, ns, key, upload string, n int, r io.Reader, sum string) (Part, error) {
	if err := checkName(ns, key); err != nil {
		return Part{}, err
	}
	if n < 1 || n > MaxParts {
		return Part{}, fmt.Errorf("%w: part number %d is not 1 to %d", ErrInvalid, n, MaxParts)
	}
	if err := checkDigest(sum); err != nil {
		return Part{}, err
	}
	p, err := s.obj.UploadPart(ctx, bucket(ns), key, upload, n, r, matrixobject.PutOptions{ExpectedSHA256: sum, NoMD5: true})
	if err != nil {
		return Part{}, mapErr(err)
	}
	return Part{Number: p.PartNumber, Size: p.Size, ETag: p.ETag}, nil
}

// Parts lists the upload's parts, by number.
func (s *Store) Parts(ctx context.Context, ns, key, upload string) ([]Part, error) {
	if err := checkName(ns, key); err != nil {
		return nil, err
	}
	ps, err := s.obj.ListParts(ctx, bucket(ns), key, upload)
	if err != nil {
		return nil, mapErr(err)
	}
	out := make([]Part, 0, len(ps))
	for _, p := range ps {
		out = append(out, Part{Number: p.PartNumber, Size: p.Size, ETag: p.ETag})
	}
	slices.SortFunc(out, func(a, b Part) int { return a.Number - b.Number })
	return out, nil
}

// Commit makes the upload's parts ns/key, in ascending order of the
// numbers given (every part appended when parts is empty), replacing any
// blob there, once whole and durable. The upload ends.
func (s *Store) Commit(ctx context.Context, ns, key, upload string, parts []int) (Info, error) {
	have, err := s.Parts(ctx, ns, key, upload)
	if err != nil {
		return Info{}, err
	}
	byNumber := make(map[int]Part, len(have))
	for _, p := range have {
		byNumber[p.Number] = p
	}
	if len(parts) == 0 {
		for _, p := range have {
			parts = append(parts, p.Number)
		}
	}
	parts = slices.Sorted(slices.Values(parts))
	done := make([]matrixobject.CompletedPart, 0, len(parts))
	for i, n := range parts {
		if i > 0 && parts[i-1] == n {
			return Info{}, fmt.Errorf("%w: part %d named twice", ErrInvalid, n)
		}
		p, ok := byNumber[n]
		if !ok {
			return Info{}, fmt.Errorf("%w: %d", ErrNoSuchPart, n)
		}
		// An empty part adds nothing, and the object store takes an
		// empty part only last: it is left out unless it is all there is.
		if p.Size > 0 || (i == len(parts)-1 && len(done) == 0) {
			done = append(done, matrixobject.CompletedPart{PartNumber: n, ETag: p.ETag})
		}
	}
	if len(done) == 0 {
		return Info{}, fmt.Errorf("%w: the upload has no parts", ErrNoSuchPart)
	}
	o, err := s.obj.CompleteMultipartUpload(ctx, bucket(ns), key, upload, done)
	if err != nil {
		return Info{}, mapErr(err)
	}
	return info(ns, o), nil
}

// Abort ends the upload and removes its parts.
func (s *Store) Abort(ctx context.Context, ns, key, upload string) error {
	if err := checkName(ns, key); err != nil {
		return err
	}
	return mapErr(s.obj.AbortMultipartUpload(ctx, bucket(ns), key, upload))
}

// SweepReport says what Sweep removed.
type SweepReport struct {
	// Uploads is how many uploads past their expiry were removed.
	Uploads int `json:"uploads"`
	// Blobs and Bytes are the stored contents no blob pointed at any
	// more, removed.
	Blobs int   `json:"blobs"`
	Bytes int64 `json:"bytes"`
}

// Sweep removes the uploads left uncommitted past Options.UploadExpiry
// and any stored content no blob points at.
func (s *Store) Sweep(ctx context.Context) (SweepReport, error) {
	var rep SweepReport
	n, err := s.obj.SweepUploads(ctx)
	rep.Uploads = n
	if err != nil {
		return rep, mapErr(err)
	}
	sw, err := s.obj.SweepBlobs(ctx, false)
	rep.Blobs, rep.Bytes = len(sw.Blobs), sw.Bytes
	return rep, mapErr(err)
}
