package sharedlog

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
)

// Store is the shared medium every member of a shard reaches: append
// blobs for the log's segments, whole objects for its front and
// snapshot. Names are slash-separated paths.
type Store interface {
	// AppendAt appends p to the append blob name, creating it, on the
	// condition that it is off bytes long (0 for one that does not exist);
	// otherwise it fails with ErrConflict and appends nothing. The bytes
	// are durable when it returns.
	AppendAt(ctx context.Context, name string, off int64, p []byte) error
	// ReadAt reads the append blob name from off, like io.ReaderAt; a
	// blob that does not exist fails with ErrNotExist.
	ReadAt(ctx context.Context, name string, off int64, p []byte) (int, error)
	// Size is the append blob's length, ErrNotExist when there is none.
	Size(ctx context.Context, name string) (int64, error)
	// Put replaces the object name with p, atomically and durably.
	Put(ctx context.Context, name string, p []byte) error
	// Get returns the object name, ErrNotExist when there is none.
	Get(ctx context.Context, name string) ([]byte, error)
	// Delete removes the append blob or object name; an absent one is no
	// error.
	Delete(ctx context.Context, name string) error
	// Cut shortens the append blob name to size, on the condition that it
	// is ifSize long (ErrConflict otherwise): it removes the torn tail a
	// writer that crashed mid-append may leave. A store whose appends
	// cannot tear returns ErrUnsupported.
	Cut(ctx context.Context, name string, size, ifSize int64) error
}

// DirStore is a Store in a directory every member mounts: a local
// directory for members on one machine, or a shared filesystem (NFS v4,
// CephFS, EFS) whose advisory locks are honoured across machines. An
// append holds an exclusive flock on the blob's file while it checks the
// size, writes and fdatasyncs.
type DirStore struct {
	dir string

	mu    sync.Mutex
	files map[string]*os.File
}

var _ Store = (*DirStore)(nil)

// NewDirStore returns the Store in dir, creating the directory.
func NewDirStore(dir string) (*DirStore, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("sharedlog: store directory: %w", err)
	}
	return &DirStore{dir: dir, files: map[string]*os.File{}}, nil
}

// Dir returns the store's directory.
func (s *DirStore) Dir() string { return s.dir }

// Close closes the files the store keeps open.
func (s *DirStore) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	var err error
	for n, f := range s.files {
		err = errors.Join(err, f.Close())
		delete(s.files, n)
	}
	return err
}

func (s *DirStore) path(name string) (string, error) {
	if name == "" || strings.Contains(name, "..") || strings.HasPrefix(name, "/") {
		return "", fmt.Errorf("%w: name %q", ErrInvalidOptions, name)
	}
	return filepath.Join(s.dir, filepath.FromSlash(name)), nil
}

// file returns the blob's open file, creating it (and its directory)
// when create is set.
func (s *DirStore) file(name string, create bool) (*os.File, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.files[name]; f != nil {
		return f, nil
	}
	p, err := s.path(name)
	if err != nil {
		return nil, err
	}
	flag := os.O_RDWR
	if create {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			return nil, err
		}
		flag |= os.O_CREATE
	}
	f, err := os.OpenFile(p, flag, 0o644)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotExist, name)
	}
	if err != nil {
		return nil, err
	}
	if create {
		if err := syncDir(filepath.Dir(p)); err != nil {
			f.Close()
			return nil, err
		}
	}
	s.files[name] = f
	return f, nil
}

// forget drops a blob's open file (after a delete).
func (s *DirStore) forget(name string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.files[name]; f != nil {
		f.Close()
		delete(s.files, name)
	}
}

// AppendAt implements Store.
func (s *DirStore) AppendAt(ctx context.Context, name string, off int64, p []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := s.file(name, true)
	if err != nil {
		return err
	}
	return ifSize(f, name, off, func() error {
		if _, err := f.WriteAt(p, off); err != nil {
			return err
		}
		return datasync(f)
	})
}

// ReadAt implements Store.
func (s *DirStore) ReadAt(ctx context.Context, name string, off int64, p []byte) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	f, err := s.file(name, false)
	if err != nil {
		return 0, err
	}
	return f.ReadAt(p, off)
}

// Size implements Store.
func (s *DirStore) Size(ctx context.Context, name string) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	p, err := s.path(name)
	if err != nil {
		return 0, err
	}
	st, err := os.Stat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, fmt.Errorf("%w: %s", ErrNotExist, name)
	}
	if err != nil {
		return 0, err
	}
	return st.Size(), nil
}

// Put implements Store: a temporary file, synced, renamed over the name.
func (s *DirStore) Put(ctx context.Context, name string, b []byte) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := s.path(name)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(p), ".put-*")
	if err != nil {
		return err
	}
	defer os.Remove(f.Name())
	if _, err := f.Write(b); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := os.Rename(f.Name(), p); err != nil {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// Get implements Store.
func (s *DirStore) Get(ctx context.Context, name string) ([]byte, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	p, err := s.path(name)
	if err != nil {
		return nil, err
	}
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrNotExist, name)
	}
	return b, err
}

// Delete implements Store.
func (s *DirStore) Delete(ctx context.Context, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	p, err := s.path(name)
	if err != nil {
		return err
	}
	s.forget(name)
	if err := os.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return syncDir(filepath.Dir(p))
}

// Cut implements Store.
func (s *DirStore) Cut(ctx context.Context, name string, size, want int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	f, err := s.file(name, false)
	if err != nil {
		return err
	}
	return ifSize(f, name, want, func() error {
		if err := f.Truncate(size); err != nil {
			return err
		}
		return datasync(f)
	})
}

// ifSize runs fn holding f's lock, if f is size bytes long (ErrConflict
// otherwise).
func ifSize(f *os.File, name string, size int64, fn func() error) error {
	return withLock(f, func() error {
		st, err := f.Stat()
		if err != nil {
			return err
		}
		if st.Size() != size {
			return fmt.Errorf("%w: %s is %d bytes, not %d", ErrConflict, name, st.Size(), size)
		}
		return fn()
	})
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	if err := d.Sync(); err != nil && !errors.Is(err, io.EOF) {
		return err
	}
	return nil
}
