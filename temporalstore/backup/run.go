package backup

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// Options configures Run, Restore and Verify.
type Options struct {
	// Progress, when set, is called as files are copied, at most every
	// ProgressEvery and once at the end.
	Progress func(Progress)
	// ProgressEvery bounds how often Progress is called. Default: 100 ms.
	ProgressEvery time.Duration
	// Workers copy files at once. Default: 2.
	Workers int
}

// Progress is how far a backup, restore or verification is.
type Progress struct {
	Files, FilesDone int
	Bytes, BytesDone int64
	Elapsed          time.Duration
}

func (o Options) withDefaults() Options {
	if o.ProgressEvery <= 0 {
		o.ProgressEvery = 100 * time.Millisecond
	}
	if o.Workers <= 0 {
		o.Workers = 2
	}
	return o
}

// copyBuf is the copy buffer size: large reads and writes.
const copyBuf = 1 << 20

// tracker adds up a job's progress and reports it.
type tracker struct {
	o         Options
	start     time.Time
	files     int
	bytes     int64
	filesDone atomic.Int64
	bytesDone atomic.Int64
	mu        sync.Mutex
	last      time.Time
}

func newTracker(o Options, files []File) *tracker {
	t := &tracker{o: o, start: time.Now(), files: len(files)}
	for _, f := range files {
		t.bytes += f.Size
	}
	return t
}

func (t *tracker) add(n int64) {
	t.bytesDone.Add(n)
	t.report(false)
}

func (t *tracker) report(final bool) {
	if t.o.Progress == nil {
		return
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	now := time.Now()
	if !final && now.Sub(t.last) < t.o.ProgressEvery {
		return
	}
	t.last = now
	t.o.Progress(Progress{Files: t.files, FilesDone: int(t.filesDone.Load()), Bytes: t.bytes, BytesDone: t.bytesDone.Load(), Elapsed: now.Sub(t.start)})
}

// countingWriter reports what passes through it.
type countingWriter struct {
	w io.Writer
	t *tracker
}

func (c countingWriter) Write(p []byte) (int, error) {
	n, err := c.w.Write(p)
	c.t.add(int64(n))
	return n, err
}

// parallel runs do(i) for i in [0, n) on workers goroutines, stopping at
// the first error.
func parallel(ctx context.Context, n, workers int, do func(ctx context.Context, i int) error) error {
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	var next atomic.Int64
	var wg sync.WaitGroup
	for range min(workers, n) {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil {
					return
				}
				if err := do(ctx, i); err != nil {
					cancel(err)
					return
				}
			}
		})
	}
	wg.Wait()
	if err := context.Cause(ctx); err != nil {
		return err
	}
	return nil
}

// Component is a part of a data directory that a backup copies: the
// engine (Engine) or another store that keeps its files alike (the
// server's streams). Its files go under its Name in the backup and in
// the restored data directory.
type Component interface {
	// Name is the component's directory in the data directory.
	Name() string
	// Hold returns the files to copy, each with the prefix of it that
	// belongs to the backup; until release the component removes none of
	// them.
	Hold(ctx context.Context) (Held, error)
}

// Held is what a Component holds for a backup.
type Held struct {
	// Dir is the component's directory, which Files are relative to.
	Dir string
	// Files are paths relative to Dir (slash separated) and sizes;
	// Contents are files given whole, in memory (the engine's catalog).
	Files    []File
	Contents map[string][]byte
	// MayVanish says Files may be removed between Hold and their opening
	// (a component that does not hold its files, such as the blob store,
	// whose deletes go on): a file gone by then is left out, as deleted
	// before the backup's cut, where otherwise it fails the backup.
	MayVanish bool
	// Shards, for the engine, are its shards' backup points.
	Shards  []temporalstore.BackupShard
	Release func()
}

// Engine is e as a Component named "engine".
func Engine(e *temporalstore.Engine) Component { return engineComponent{e} }

type engineComponent struct{ e *temporalstore.Engine }

func (engineComponent) Name() string { return "engine" }

func (c engineComponent) Hold(ctx context.Context) (Held, error) {
	set, err := c.e.HoldForBackup(ctx)
	if err != nil {
		return Held{}, err
	}
	h := Held{Dir: set.Dir, Shards: set.Shards, Release: set.Release, Contents: set.Files}
	for _, sh := range set.Shards {
		h.Files = append(h.Files, File{Path: path.Join(sh.Dir, sh.Image), Size: -1})
		for _, f := range sh.Files {
			h.Files = append(h.Files, File{Path: path.Join(sh.Dir, f.Name), Size: f.Size})
		}
	}
	return h, nil
}

// Run backs up comps into t, which must hold no finished backup, while
// they serve writes. It returns the manifest it wrote last.
func Run(ctx context.Context, t Target, o Options, comps ...Component) (*Manifest, error) {
	o = o.withDefaults()
	if empty, err := t.Empty(ctx); err != nil {
		return nil, err
	} else if !empty {
		return nil, fmt.Errorf("%w: %s holds a backup", ErrNotEmpty, t)
	}
	began := time.Now()
	// Every component is held before any is copied, so that they are cut
	// at nearly the same moment. Files are opened while held, then the
	// components reclaim again: an open file stays readable if a
	// reclamation deletes it.
	type source struct {
		f    *os.File // nil: contents
		data []byte
		file File
	}
	var srcs []source
	defer func() {
		for _, s := range srcs {
			if s.f != nil {
				s.f.Close()
			}
		}
	}()
	m := &Manifest{Format: manifestFormat, Created: began.UTC()}
	for _, c := range comps {
		h, err := c.Hold(ctx)
		if err != nil {
			return nil, fmt.Errorf("backup: %s: %w", c.Name(), err)
		}
		m.Components = append(m.Components, c.Name())
		m.Shards = append(m.Shards, h.Shards...)
		for name, b := range h.Contents {
			srcs = append(srcs, source{data: b, file: File{Path: path.Join(c.Name(), name), Size: int64(len(b))}})
		}
		for _, f := range h.Files {
			fd, err := os.Open(filepath.Join(h.Dir, filepath.FromSlash(f.Path)))
			if h.MayVanish && errors.Is(err, fs.ErrNotExist) {
				continue
			}
			if err == nil && f.Size < 0 {
				var fi os.FileInfo
				if fi, err = fd.Stat(); err == nil {
					f.Size = fi.Size()
				} else {
					fd.Close()
				}
			}
			if err != nil {
				h.Release()
				return nil, fmt.Errorf("backup: %s: %w", c.Name(), err)
			}
			srcs = append(srcs, source{f: fd, file: File{Path: path.Join(c.Name(), f.Path), Size: f.Size}})
		}
		h.Release()
	}
	files := make([]File, len(srcs))
	for i, s := range srcs {
		files[i] = s.file
	}
	tr := newTracker(o, files)
	err := parallel(ctx, len(files), o.Workers, func(ctx context.Context, i int) error {
		var r io.Reader = bytes.NewReader(srcs[i].data)
		if srcs[i].f != nil {
			r = io.NewSectionReader(srcs[i].f, 0, files[i].Size)
		}
		sum, n, err := copyTo(ctx, t, files[i].Path, r, tr)
		if err != nil {
			return fmt.Errorf("backup: %s: %w", files[i].Path, err)
		}
		if n != files[i].Size {
			return fmt.Errorf("backup: %s: read %d bytes of %d", files[i].Path, n, files[i].Size)
		}
		files[i].XXH64 = sum
		tr.filesDone.Add(1)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if err := t.Sync(ctx); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	m.Took, m.Files = time.Since(began), files
	for _, f := range files {
		m.Bytes += f.Size
	}
	b, err := json.MarshalIndent(m, "", "  ")
	if err != nil {
		return nil, err
	}
	if _, _, err := copyTo(ctx, t, ManifestName, bytes.NewReader(b), nil); err != nil {
		return nil, fmt.Errorf("backup: manifest: %w", err)
	}
	if err := t.Sync(ctx); err != nil {
		return nil, fmt.Errorf("backup: %w", err)
	}
	tr.report(true)
	return m, nil
}

// copyTo copies r into the target's file name and returns its XXH64
// and length.
func copyTo(ctx context.Context, t Target, name string, r io.Reader, tr *tracker) (string, int64, error) {
	w, err := t.Create(ctx, name)
	if err != nil {
		return "", 0, err
	}
	h := xxhash.New()
	var dst io.Writer = io.MultiWriter(w, h)
	if tr != nil {
		dst = countingWriter{dst, tr}
	}
	n, err := io.CopyBuffer(dst, ctxReader{ctx, r}, make([]byte, copyBuf))
	if cerr := w.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return "", n, err
	}
	return hex.EncodeToString(h.Sum(nil)), n, nil
}

// ctxReader stops a copy once its context is done.
type ctxReader struct {
	ctx context.Context
	r   io.Reader
}

func (c ctxReader) Read(p []byte) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, err
	}
	return c.r.Read(p)
}

// ReadManifest reads and checks src's manifest: ErrIncomplete when it has
// none.
func ReadManifest(ctx context.Context, src Source) (*Manifest, error) {
	r, err := src.Open(ctx, ManifestName)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%w: %s", ErrIncomplete, src)
	}
	if err != nil {
		return nil, err
	}
	defer r.Close()
	b, err := io.ReadAll(io.LimitReader(r, 256<<20))
	if err != nil {
		return nil, err
	}
	return parseManifest(b)
}

// Verify reads every file of the backup in src and checks its size and
// hash against the manifest. It returns the manifest, or an error naming
// every file that does not match (ErrChecksum).
func Verify(ctx context.Context, src Source, o Options) (*Manifest, error) {
	o = o.withDefaults()
	m, err := ReadManifest(ctx, src)
	if err != nil {
		return nil, err
	}
	tr := newTracker(o, m.Files)
	var mu sync.Mutex
	var bad []error
	err = parallel(ctx, len(m.Files), o.Workers, func(ctx context.Context, i int) error {
		err := check(ctx, src, m.Files[i], io.Discard, tr)
		if errors.Is(err, ErrChecksum) || errors.Is(err, fs.ErrNotExist) {
			mu.Lock()
			bad = append(bad, err)
			mu.Unlock()
			return nil
		}
		return err
	})
	tr.report(true)
	if err != nil {
		return nil, err
	}
	if len(bad) > 0 {
		return m, errors.Join(bad...)
	}
	return m, nil
}

// check copies f from src to w and compares its size and hash.
func check(ctx context.Context, src Source, f File, w io.Writer, tr *tracker) error {
	r, err := src.Open(ctx, f.Path)
	if err != nil {
		return fmt.Errorf("backup: %s: %w", f.Path, err)
	}
	defer r.Close()
	h := xxhash.New()
	// One byte past the size shows a file longer than recorded.
	n, err := io.CopyBuffer(countingWriter{io.MultiWriter(w, h), tr}, ctxReader{ctx, io.LimitReader(r, f.Size+1)}, make([]byte, copyBuf))
	if err != nil {
		return fmt.Errorf("backup: %s: %w", f.Path, err)
	}
	if n != f.Size {
		return fmt.Errorf("%w: %s is %d bytes, the manifest says %d", ErrChecksum, f.Path, n, f.Size)
	}
	if got := hex.EncodeToString(h.Sum(nil)); got != f.XXH64 {
		return fmt.Errorf("%w: %s has XXH64 %s, the manifest says %s", ErrChecksum, f.Path, got, f.XXH64)
	}
	tr.filesDone.Add(1)
	return nil
}

// Restore fills the data directory dataDir with the backup in src,
// checking every file's size and hash as it is written. Each component's
// directory (dataDir/engine, ...) must be empty or absent; the rest of
// dataDir is left alone. Until every file is written, synced and checked,
// each component's directory holds temporalstore.RestoreMarker, which the
// engine and the streams refuse to open; a restore that fails removes
// what it wrote.
func Restore(ctx context.Context, src Source, dataDir string, o Options) (*Manifest, error) {
	o = o.withDefaults()
	m, err := ReadManifest(ctx, src)
	if err != nil {
		return nil, err
	}
	for _, c := range m.Components {
		dir := filepath.Join(dataDir, c)
		if entries, err := os.ReadDir(dir); err == nil && len(entries) > 0 {
			return nil, fmt.Errorf("%w: %s", ErrNotEmpty, dir)
		} else if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
	}
	existed := map[string]bool{}
	for _, c := range m.Components {
		_, err := os.Stat(filepath.Join(dataDir, c))
		existed[c] = err == nil
	}
	undo := func() {
		// Every component directory was empty or absent: all in it is
		// the restore's.
		for _, c := range m.Components {
			dir := filepath.Join(dataDir, c)
			if !existed[c] {
				os.RemoveAll(dir)
				continue
			}
			if entries, err := os.ReadDir(dir); err == nil {
				for _, e := range entries {
					os.RemoveAll(filepath.Join(dir, e.Name()))
				}
			}
		}
	}
	for _, c := range m.Components {
		dir := filepath.Join(dataDir, c)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			undo()
			return nil, err
		}
		if err := os.WriteFile(filepath.Join(dir, temporalstore.RestoreMarker), []byte("restore of "+src.String()+"\n"), 0o644); err != nil {
			undo()
			return nil, err
		}
		if err := syncDir(dir); err != nil {
			undo()
			return nil, err
		}
	}
	if err := restoreFiles(ctx, src, dataDir, m, o); err != nil {
		undo()
		return nil, err
	}
	for _, c := range m.Components {
		dir := filepath.Join(dataDir, c)
		if err := os.Remove(filepath.Join(dir, temporalstore.RestoreMarker)); err != nil {
			return nil, err
		}
		if err := syncDir(dir); err != nil {
			return nil, err
		}
	}
	return m, nil
}

func restoreFiles(ctx context.Context, src Source, dir string, m *Manifest, o Options) error {
	tr := newTracker(o, m.Files)
	t := NewDir(dir)
	err := parallel(ctx, len(m.Files), o.Workers, func(ctx context.Context, i int) error {
		w, err := t.Create(ctx, m.Files[i].Path)
		if err != nil {
			return err
		}
		err = check(ctx, src, m.Files[i], w, tr)
		return errors.Join(err, w.Close())
	})
	if err != nil {
		return err
	}
	tr.report(true)
	return t.Sync(ctx)
}
