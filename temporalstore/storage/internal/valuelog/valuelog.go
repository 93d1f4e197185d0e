package valuelog

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
)

// ErrCorrupt is returned for a state this package did not encode whole.
var ErrCorrupt = errors.New("valuelog: corrupt state")

// Owned are the value-log spans appended for Append calls that have not
// handed them to the shard yet, ascending. The caller guards it.
type Owned struct{ spans []span }

type span struct{ first, end uint64 }

// Add notes that records [first, end) belong to an Append call.
func (o *Owned) Add(first, end uint64) { o.spans = append(o.spans, span{first, end}) }

// Reset forgets every span (the value log was replaced).
func (o *Owned) Reset() { o.spans = nil }

// Foreign reports whether the record at index, one past every record the
// shard applied and present in the value log, is not an Append call's:
// the shard applies it itself.
func (o *Owned) Foreign(index uint64) bool {
	n := 0
	for n < len(o.spans) && o.spans[n].end <= index {
		n++ // the shard applied past these
	}
	o.spans = o.spans[n:]
	return len(o.spans) == 0 || index < o.spans[0].first
}

// GroupTooLarge says whether recs exceed max as an AppendGroup counts.
func GroupTooLarge(recs [][]byte, max int64) bool {
	var n int64
	for _, r := range recs {
		n += int64(len(r)) + storage.FrameOverhead
	}
	return n > max
}

// Segments describes vl's segments.
func Segments(vl *wal.Log) []storage.Segment {
	segs := vl.Segments()
	out := make([]storage.Segment, len(segs))
	for i, s := range segs {
		out[i] = storage.Segment{First: s.First, Bytes: s.Bytes}
	}
	return out
}

// Stats converts vl's counters.
func Stats(vl *wal.Log) storage.LogStats {
	ls := vl.Stats()
	return storage.LogStats{
		Records: ls.Records, Bytes: ls.Bytes, Fsyncs: ls.Fsyncs, RecordsPerFsync: ls.RecordsPerFsync, Segments: ls.Segments,
		FsyncLatency: storage.Histogram{Counts: ls.FsyncLatency.Counts, Sum: ls.FsyncLatency.Sum},
	}
}

// A state is a shard's checkpoint image and the value-log records from
// the log's front on, which hold every record the image needs and those
// after it:
//
//	magic, uvarint image length, the image, uvarint first value-log
//	index, record count, then per record uvarint length and bytes

// WriteState writes to w the state of image and vl's records [first,
// last].
func WriteState(w io.Writer, magic string, image []byte, vl *wal.Log, first, last uint64) error {
	b := []byte(magic)
	b = binary.AppendUvarint(b, uint64(len(image)))
	b = append(b, image...)
	b = binary.AppendUvarint(b, first)
	b = binary.AppendUvarint(b, last+1-first)
	if _, err := w.Write(b); err != nil {
		return err
	}
	it := vl.Iterator(first)
	defer it.Close()
	for n := first; n <= last; n++ {
		if !it.Next() {
			return fmt.Errorf("value log record %d: %w", n, disk.WALError(it.Err()))
		}
		b = binary.AppendUvarint(b[:0], uint64(len(it.Value())))
		if _, err := w.Write(append(b, it.Value()...)); err != nil {
			return err
		}
	}
	return nil
}

// State is a decoded state; its slices alias the bytes decoded.
type State struct {
	Image []byte
	First uint64
	Recs  [][]byte
}

// Last is the index of the state's last record (First-1 with none).
func (s State) Last() uint64 { return s.First + uint64(len(s.Recs)) - 1 }

// DecodeState decodes a state written by WriteState with magic.
func DecodeState(b []byte, magic string) (State, error) {
	if len(b) < len(magic) || string(b[:len(magic)]) != magic {
		return State{}, fmt.Errorf("%w: header", ErrCorrupt)
	}
	b = b[len(magic):]
	var s State
	size, b, ok := uvarint(b)
	if !ok || size > uint64(len(b)) {
		return State{}, fmt.Errorf("%w: image length", ErrCorrupt)
	}
	s.Image, b = b[:size], b[size:]
	first, b, ok1 := uvarint(b)
	count, b, ok2 := uvarint(b)
	if !ok1 || !ok2 || first == 0 || count > uint64(len(b)) {
		return State{}, fmt.Errorf("%w: records", ErrCorrupt)
	}
	s.First = first
	s.Recs = make([][]byte, count)
	for i := range s.Recs {
		var n uint64
		if n, b, ok = uvarint(b); !ok || n > uint64(len(b)) {
			return State{}, fmt.Errorf("%w: record %d", ErrCorrupt, i)
		}
		s.Recs[i], b = b[:n], b[n:]
	}
	if len(b) != 0 {
		return State{}, fmt.Errorf("%w: %d bytes after the state", ErrCorrupt, len(b))
	}
	return s, nil
}

// Reset replaces vl's records with s's, synced.
func Reset(vl *wal.Log, s State) error {
	ctx := context.Background()
	if err := vl.Reset(ctx, s.First); err != nil {
		return disk.WALError(err)
	}
	if len(s.Recs) > 0 {
		if _, err := vl.AppendBatch(ctx, s.Recs); err != nil {
			return disk.WALError(err)
		}
	}
	return disk.WALError(vl.Sync(ctx))
}

func uvarint(b []byte) (uint64, []byte, bool) {
	v, k := binary.Uvarint(b)
	if k <= 0 {
		return 0, b, false
	}
	return v, b[k:], true
}
