package disk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// The two histograms must stay alike for Stats to copy one into the other.
var _ [storage.HistogramBuckets]uint64 = wal.Histogram{}.Counts

// OpenLog is a storage.OpenLogFunc: it opens (creating if needed) a wal log
// in o.Dir, fsyncing every acknowledged append when o.Durable, every
// o.SyncInterval otherwise, with records compressed by S2 (zstd's fastest
// level cost a quarter of a pipelined SET's CPU on the write's path).
func OpenLog(ctx context.Context, o storage.LogOptions) (storage.Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	wo := wal.Options{SegmentSize: o.SegmentBytes, Sync: wal.SyncInterval, SyncInterval: o.SyncInterval, Compression: wal.CompressionFast}
	if o.Durable {
		wo.Sync = wal.SyncAlways
	}
	l, err := wal.Open(o.Dir, wo)
	if err != nil {
		return nil, WALError(err)
	}
	return &walLog{l: l, dir: o.Dir}, nil
}

// walLog is a wal.Log as a storage.Log: the same calls, its errors matched
// by storage's as well.
type walLog struct {
	l   *wal.Log
	dir string
}

// WALError wraps err, a wal log's, in the storage error it stands for,
// keeping it (and so the wal's own) in the chain: for other storage.Logs
// kept in a wal log (storage/raftlog's value log).
func WALError(err error) error {
	var as error
	switch {
	case err == nil:
		return nil
	case errors.Is(err, wal.ErrClosed):
		as = storage.ErrClosed
	case errors.Is(err, wal.ErrRecordTooLarge):
		as = storage.ErrRecordTooLarge
	case errors.Is(err, wal.ErrGroupTooLarge):
		as = storage.ErrGroupTooLarge
	case errors.Is(err, wal.ErrCompacted):
		as = storage.ErrCompacted
	case errors.Is(err, wal.ErrNotFound):
		as = storage.ErrNotFound
	case errors.Is(err, wal.ErrInvalidIndex):
		as = storage.ErrInvalidIndex
	case errors.Is(err, wal.ErrLocked):
		as = storage.ErrLocked
	default:
		return err
	}
	return fmt.Errorf("%w: %w", as, err)
}

func (w *walLog) Append(ctx context.Context, rec []byte) (uint64, error) {
	i, err := w.l.Append(ctx, rec)
	return i, WALError(err)
}

func (w *walLog) AppendBatch(ctx context.Context, recs [][]byte) (uint64, error) {
	i, err := w.l.AppendBatch(ctx, recs)
	return i, WALError(err)
}

func (w *walLog) AppendGroup(ctx context.Context, recs [][]byte) (uint64, error) {
	i, err := w.l.AppendGroup(ctx, recs)
	return i, WALError(err)
}

func (w *walLog) Read(index uint64) ([]byte, error) {
	rec, err := w.l.Read(index)
	return rec, WALError(err)
}

func (w *walLog) Iterator(from uint64) storage.Iterator { return walIterator{w.l.Iterator(from)} }

func (w *walLog) FirstIndex() uint64 { return w.l.FirstIndex() }
func (w *walLog) LastIndex() uint64  { return w.l.LastIndex() }

func (w *walLog) Segments() []storage.Segment {
	segs := w.l.Segments()
	out := make([]storage.Segment, len(segs))
	for i, s := range segs {
		out[i] = storage.Segment{First: s.First, Bytes: s.Bytes}
	}
	return out
}

func (w *walLog) TruncateFront(ctx context.Context, index uint64) error {
	return WALError(w.l.TruncateFront(ctx, index))
}

// Files makes the log a storage.FileLog: its segment files' prefixes.
func (w *walLog) Files(last uint64) ([]storage.File, error) {
	spans, err := w.l.Files(last)
	if err != nil {
		return nil, WALError(err)
	}
	out := make([]storage.File, len(spans))
	for i, sp := range spans {
		out[i] = storage.File{Name: sp.Name, Size: sp.Size}
	}
	return out, nil
}

// RollNext makes the next record start a new segment (wal.Log.RollNext).
func (w *walLog) RollNext() { w.l.RollNext() }

// SetBeforeSync implements storage.SyncHook.
func (w *walLog) SetBeforeSync(f func() error) { w.l.SetBeforeSync(f) }

func (w *walLog) Sync(ctx context.Context) error { return WALError(w.l.Sync(ctx)) }
func (w *walLog) MaxRecordSize() int             { return w.l.MaxRecordSize() }
func (w *walLog) MaxGroupSize() int64            { return w.l.MaxGroupSize() }
func (w *walLog) Close() error                   { return WALError(w.l.Close()) }

func (w *walLog) Stats() storage.LogStats {
	ls := w.l.Stats()
	return storage.LogStats{
		Records: ls.Records, Bytes: ls.Bytes, Fsyncs: ls.Fsyncs, RecordsPerFsync: ls.RecordsPerFsync, Segments: ls.Segments,
		FsyncLatency: storage.Histogram{Counts: ls.FsyncLatency.Counts, Sum: ls.FsyncLatency.Sum},
		DiskBytes:    diskBytes(w.dir, func(name string) bool { return strings.HasSuffix(name, ".wal") }),
	}
}

type walIterator struct{ it *wal.Iterator }

func (i walIterator) Next() bool    { return i.it.Next() }
func (i walIterator) Index() uint64 { return i.it.Index() }
func (i walIterator) Value() []byte { return i.it.Value() }
func (i walIterator) Err() error    { return WALError(i.it.Err()) }
func (i walIterator) Close() error  { return i.it.Close() }

// diskBytes is the allocated size of the files in dir that keep selects.
func diskBytes(dir string, keep func(string) bool) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return 0
	}
	var n int64
	for _, e := range ents {
		if !keep(e.Name()) {
			continue
		}
		fi, err := os.Stat(filepath.Join(dir, e.Name()))
		if err == nil {
			n += allocated(fi)
		}
	}
	return n
}

// roundBlock rounds n up to whole 4 KiB blocks.
func roundBlock(n int64) int64 { return (n + 4095) &^ 4095 }
