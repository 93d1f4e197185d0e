package backup

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

// Target is where Run writes a backup.
type Target interface {
	// Empty reports whether the target holds no finished backup.
	Empty(ctx context.Context) (bool, error)
	// Create makes the file name (slash separated). Close ends the
	// writing; Sync makes the file durable and reports a failure to.
	Create(ctx context.Context, name string) (io.WriteCloser, error)
	// Sync makes every file closed so far durable.
	Sync(ctx context.Context) error
	// String names the target in logs and statuses.
	String() string
}

// Source is where Restore and Verify read a backup.
type Source interface {
	// Open opens the file name; a missing one fails with fs.ErrNotExist.
	Open(ctx context.Context, name string) (io.ReadCloser, error)
	String() string
}

// Dir is a backup in a local directory: a Target and a Source.
type Dir struct {
	root string
	mu   sync.Mutex
	dirs map[string]bool // directories with entries created, to sync
	// Closed files are fsynced in the background, syncers at a time,
	// while later files are copied; Sync waits for them.
	syncs   sync.WaitGroup
	slots   chan struct{}
	syncErr error
}

// NewDir is the backup in the directory root.
func NewDir(root string) *Dir {
	return &Dir{root: root, dirs: map[string]bool{}, slots: make(chan struct{}, syncers)}
}

func (d *Dir) String() string { return d.root }

// Empty is true when root does not exist or holds no manifest.
func (d *Dir) Empty(context.Context) (bool, error) {
	_, err := os.Stat(filepath.Join(d.root, ManifestName))
	if errors.Is(err, fs.ErrNotExist) {
		return true, nil
	}
	return false, err
}

// Create creates root/name and its directories.
func (d *Dir) Create(_ context.Context, name string) (io.WriteCloser, error) {
	p := filepath.Join(d.root, filepath.FromSlash(name))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(p, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	for dir := filepath.Dir(p); ; dir = filepath.Dir(dir) {
		d.dirs[dir] = true
		if rel, err := filepath.Rel(d.root, dir); err != nil || rel == "." {
			break
		}
	}
	d.dirs[filepath.Dir(d.root)] = true
	d.mu.Unlock()
	return &dirFile{f: f, d: d}, nil
}

// syncers is how many files are fsynced at once: the device takes them
// together, as one sync(1) of everything would.
const syncers = 8

// Sync waits for the fsyncs of the files closed so far, then fsyncs every
// directory a file was created in.
func (d *Dir) Sync(context.Context) error {
	d.syncs.Wait()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.syncErr != nil {
		return d.syncErr
	}
	for dir := range d.dirs {
		if err := syncDir(dir); err != nil {
			return err
		}
	}
	return nil
}

// Open opens root/name.
func (d *Dir) Open(_ context.Context, name string) (io.ReadCloser, error) {
	return os.Open(filepath.Join(d.root, filepath.FromSlash(name)))
}

// dirFile is a file of a Dir: closing it starts its fsync, which Sync
// waits for.
type dirFile struct {
	f *os.File
	d *Dir
}

func (w *dirFile) Write(p []byte) (int, error) { return w.f.Write(p) }

func (w *dirFile) Close() error {
	d := w.d
	d.syncs.Add(1)
	go func() {
		defer d.syncs.Done()
		d.slots <- struct{}{}
		err := errors.Join(w.f.Sync(), w.f.Close())
		<-d.slots
		if err != nil {
			d.mu.Lock()
			d.syncErr = errors.Join(d.syncErr, err)
			d.mu.Unlock()
		}
	}()
	return nil
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// DefaultPartBytes is the size of the objects an S3 backup splits a file
// into.
const DefaultPartBytes = 16 << 20

// S3Options configures an S3 backup.
type S3Options struct {
	// Endpoint, Bucket, AccessKey, SecretKey and Region are the S3
	// service's, as sharedlog.S3Options has them (path-style, SigV4); the
	// bucket is created if missing.
	Endpoint, Bucket, AccessKey, SecretKey, Region string
	// Prefix is the backup's name in the bucket, each file an object
	// under it. Required.
	Prefix string
	// PartBytes is the size of the objects a file is split into, so that
	// neither end holds a whole large file in memory. Default:
	// DefaultPartBytes.
	PartBytes int
}

// S3 is a backup under a prefix of an S3 bucket (matrixobject's S3 API or
// any S3): a Target and a Source. A file is stored as objects
// <prefix>/<file>.part-00000, -00001, ... of PartBytes each.
type S3 struct {
	st   *sharedlog.S3Store
	opts S3Options
}

// NewS3 connects to the bucket, creating it if missing.
func NewS3(ctx context.Context, o S3Options) (*S3, error) {
	o.Prefix = path.Clean("/" + o.Prefix)[1:]
	if o.Prefix == "" {
		return nil, fmt.Errorf("%w: an S3 backup needs a prefix", ErrManifest)
	}
	if o.PartBytes <= 0 {
		o.PartBytes = DefaultPartBytes
	}
	st, err := sharedlog.NewS3Store(ctx, sharedlog.S3Options{Endpoint: o.Endpoint, Bucket: o.Bucket, AccessKey: o.AccessKey, SecretKey: o.SecretKey, Region: o.Region})
	if err != nil {
		return nil, err
	}
	return &S3{st: st, opts: o}, nil
}

func (s *S3) String() string { return "s3://" + s.opts.Bucket + "/" + s.opts.Prefix }

// Close releases the connections.
func (s *S3) Close() error { return s.st.Close() }

func (s *S3) part(name string, i int) string {
	return fmt.Sprintf("%s/%s.part-%05d", s.opts.Prefix, name, i)
}

// Empty is true when the prefix holds no manifest.
func (s *S3) Empty(ctx context.Context) (bool, error) {
	_, err := s.st.Get(ctx, s.part(ManifestName, 0))
	if errors.Is(err, sharedlog.ErrNotExist) {
		return true, nil
	}
	return false, err
}

// Create returns a writer that puts a part each PartBytes and the last at
// Close; an empty file is one empty part.
func (s *S3) Create(ctx context.Context, name string) (io.WriteCloser, error) {
	return &s3Writer{ctx: ctx, s: s, name: name, buf: make([]byte, 0, s.opts.PartBytes)}, nil
}

// Sync does nothing: a PutObject is durable when answered.
func (s *S3) Sync(context.Context) error { return nil }

type s3Writer struct {
	ctx  context.Context
	s    *S3
	name string
	buf  []byte
	n    int
}

func (w *s3Writer) Write(p []byte) (int, error) {
	total := len(p)
	for len(p) > 0 {
		k := min(len(p), cap(w.buf)-len(w.buf))
		w.buf = append(w.buf, p[:k]...)
		p = p[k:]
		if len(w.buf) == cap(w.buf) {
			if err := w.flush(); err != nil {
				return total - len(p), err
			}
		}
	}
	return total, nil
}

func (w *s3Writer) flush() error {
	if err := w.s.st.Put(w.ctx, w.s.part(w.name, w.n), w.buf); err != nil {
		return err
	}
	w.n++
	w.buf = w.buf[:0]
	return nil
}

func (w *s3Writer) Close() error {
	if len(w.buf) > 0 || w.n == 0 {
		return w.flush()
	}
	return nil
}

// Open returns a reader of the file's parts in turn.
func (s *S3) Open(ctx context.Context, name string) (io.ReadCloser, error) {
	first, err := s.st.Get(ctx, s.part(name, 0))
	if errors.Is(err, sharedlog.ErrNotExist) {
		return nil, fmt.Errorf("%s: %w", name, fs.ErrNotExist)
	}
	if err != nil {
		return nil, err
	}
	return &s3Reader{ctx: ctx, s: s, name: name, cur: bytes.NewReader(first), next: 1}, nil
}

type s3Reader struct {
	ctx  context.Context
	s    *S3
	name string
	cur  *bytes.Reader
	next int
	done bool
}

func (r *s3Reader) Read(p []byte) (int, error) {
	for {
		if n, _ := r.cur.Read(p); n > 0 || len(p) == 0 {
			return n, nil
		}
		if r.done {
			return 0, io.EOF
		}
		b, err := r.s.st.Get(r.ctx, r.s.part(r.name, r.next))
		if errors.Is(err, sharedlog.ErrNotExist) {
			r.done = true
			continue
		}
		if err != nil {
			return 0, err
		}
		r.next++
		r.cur = bytes.NewReader(b)
	}
}

func (r *s3Reader) Close() error { return nil }
