package storage

import (
	"context"
	"fmt"
	"slices"
	"sync"
)

// Defaults of the in-memory log.
const (
	// DefaultMemSegmentBytes is a MemLogs log's segment size when
	// LogOptions.SegmentBytes gives none.
	DefaultMemSegmentBytes = 64 << 20
	// MemMaxRecordSize is the largest record a MemLogs log takes.
	MemMaxRecordSize = 16 << 20
)

// MemLogs is a set of in-memory logs, one per LogOptions.Dir: a log closed
// and opened again through the same MemLogs has the records it had, as a
// restarted process finds its files. Its OpenLog is an OpenLogFunc. Sync
// does nothing and nothing outlives the process.
type MemLogs struct {
	mu   sync.Mutex
	logs map[string]*memLog
}

// NewMemLogs returns an empty set of in-memory logs.
func NewMemLogs() *MemLogs { return &MemLogs{logs: map[string]*memLog{}} }

// OpenLog opens the log of o.Dir, creating it empty the first time, and
// returns ErrLocked while it is open.
func (m *MemLogs) OpenLog(ctx context.Context, o LogOptions) (Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	l := m.logs[o.Dir]
	if l == nil {
		l = &memLog{first: 1, segs: []memSegment{{first: 1}}}
		m.logs[o.Dir] = l
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.open {
		return nil, fmt.Errorf("%w: %s", ErrLocked, o.Dir)
	}
	l.open = true
	l.segBytes = o.SegmentBytes
	if l.segBytes <= 0 {
		l.segBytes = DefaultMemSegmentBytes
	}
	l.maxRecord = int(min(MemMaxRecordSize, l.maxGroupLocked()-FrameOverhead))
	l.stats = LogStats{}
	return &memHandle{l: l}, nil
}

// memLog is one log's records, kept across handles.
type memLog struct {
	mu       sync.RWMutex
	open     bool
	first    uint64   // index of recs[0]
	recs     [][]byte // never written once appended
	segs     []memSegment
	segBytes int64
	// maxRecord is the largest record: MemMaxRecordSize, or what a
	// segment holds if less.
	maxRecord int
	stats     LogStats
}

type memSegment struct {
	first uint64
	bytes int64
}

// memHandle is one opening of a memLog; Close ends it alone.
type memHandle struct {
	l      *memLog
	closed bool // under l.mu
}

func (h *memHandle) usableLocked() error {
	if h.closed {
		return ErrClosed
	}
	return nil
}

func (h *memHandle) Append(ctx context.Context, rec []byte) (uint64, error) {
	return h.append(ctx, [][]byte{rec}, false)
}

func (h *memHandle) AppendBatch(ctx context.Context, recs [][]byte) (uint64, error) {
	return h.append(ctx, recs, false)
}

func (h *memHandle) AppendGroup(ctx context.Context, recs [][]byte) (uint64, error) {
	return h.append(ctx, recs, true)
}

func (h *memHandle) append(ctx context.Context, recs [][]byte, group bool) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	l := h.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := h.usableLocked(); err != nil {
		return 0, err
	}
	var total int64
	for _, r := range recs {
		if len(r) > l.maxRecord {
			return 0, fmt.Errorf("%w: %d bytes, at most %d", ErrRecordTooLarge, len(r), l.maxRecord)
		}
		total += int64(len(r)) + FrameOverhead
	}
	if group && total > l.maxGroupLocked() {
		return 0, fmt.Errorf("%w: %d bytes, at most %d", ErrGroupTooLarge, total, l.maxGroupLocked())
	}
	next := l.first + uint64(len(l.recs))
	if group && l.segs[len(l.segs)-1].bytes+total > l.maxGroupLocked() {
		// A group lies in one segment, as in a file-backed log.
		l.segs = append(l.segs, memSegment{first: next})
	}
	for i, r := range recs {
		frame := int64(len(r)) + FrameOverhead
		if seg := &l.segs[len(l.segs)-1]; seg.bytes > 0 && seg.bytes+frame > l.maxGroupLocked() {
			l.segs = append(l.segs, memSegment{first: next + uint64(i)})
		}
		l.segs[len(l.segs)-1].bytes += frame
		l.recs = append(l.recs, slices.Clone(r))
		l.stats.Records++
		l.stats.Bytes += uint64(frame)
	}
	return next, nil
}

// memSegmentHeader is what a segment of a file-backed log spends besides
// its frames, which a MemLogs log spends too, to fit the same groups.
const memSegmentHeader = 32

func (l *memLog) maxGroupLocked() int64 { return l.segBytes - memSegmentHeader }

func (h *memHandle) Read(index uint64) ([]byte, error) {
	l := h.l
	l.mu.RLock()
	defer l.mu.RUnlock()
	if err := h.usableLocked(); err != nil {
		return nil, err
	}
	rec, err := l.atLocked(index)
	return slices.Clone(rec), err
}

func (l *memLog) atLocked(index uint64) ([]byte, error) {
	switch last := l.first + uint64(len(l.recs)) - 1; {
	case index < l.first:
		return nil, fmt.Errorf("%w: index %d, first is %d", ErrCompacted, index, l.first)
	case index > last:
		return nil, fmt.Errorf("%w: index %d, last is %d", ErrNotFound, index, last)
	}
	return l.recs[index-l.first], nil
}

func (h *memHandle) Iterator(from uint64) Iterator { return &memIterator{h: h, next: from} }

func (h *memHandle) FirstIndex() uint64 {
	h.l.mu.RLock()
	defer h.l.mu.RUnlock()
	return h.l.first
}

func (h *memHandle) LastIndex() uint64 {
	h.l.mu.RLock()
	defer h.l.mu.RUnlock()
	return h.l.first + uint64(len(h.l.recs)) - 1
}

func (h *memHandle) Segments() []Segment {
	h.l.mu.RLock()
	defer h.l.mu.RUnlock()
	out := make([]Segment, len(h.l.segs))
	for i, s := range h.l.segs {
		out[i] = Segment{First: s.first, Bytes: s.bytes}
	}
	return out
}

func (h *memHandle) TruncateFront(ctx context.Context, index uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l := h.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := h.usableLocked(); err != nil {
		return err
	}
	if next := l.first + uint64(len(l.recs)); index > next {
		return fmt.Errorf("%w: TruncateFront(%d) past the next index %d", ErrInvalidIndex, index, next)
	}
	n := 0
	for n < len(l.segs)-1 && l.segs[n+1].first <= index {
		n++
	}
	if n == 0 {
		return nil
	}
	cut := l.segs[n].first
	// A new slice, so that the dropped records can be collected.
	l.recs = slices.Clone(l.recs[cut-l.first:])
	l.first = cut
	l.segs = slices.Clone(l.segs[n:])
	return nil
}

func (h *memHandle) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	h.l.mu.Lock()
	defer h.l.mu.Unlock()
	if err := h.usableLocked(); err != nil {
		return err
	}
	h.l.stats.Fsyncs++
	h.l.stats.FsyncLatency.Counts[0]++
	return nil
}

// Recover makes the log a Recoverer. Nothing in memory fails, so it only
// cuts the records after last, which a wrapper that fails appends on
// purpose (a test's) leaves behind.
func (h *memHandle) Recover(ctx context.Context, last uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l := h.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := h.usableLocked(); err != nil {
		return err
	}
	if top := l.first + uint64(len(l.recs)) - 1; last+1 < l.first || last > top {
		return fmt.Errorf("%w: Recover(%d) outside %d..%d", ErrInvalidIndex, last, l.first-1, top)
	}
	l.recs = l.recs[:last+1-l.first]
	k := len(l.segs) - 1
	for k > 0 && l.segs[k].first > last+1 {
		k--
	}
	l.segs = l.segs[:k+1]
	seg := &l.segs[k]
	seg.bytes = 0
	for _, r := range l.recs[seg.first-l.first:] {
		seg.bytes += int64(len(r)) + FrameOverhead
	}
	return nil
}

func (h *memHandle) MaxRecordSize() int {
	h.l.mu.RLock()
	defer h.l.mu.RUnlock()
	return h.l.maxRecord
}

func (h *memHandle) MaxGroupSize() int64 {
	h.l.mu.RLock()
	defer h.l.mu.RUnlock()
	return h.l.maxGroupLocked()
}

func (h *memHandle) Stats() LogStats {
	l := h.l
	l.mu.RLock()
	defer l.mu.RUnlock()
	st := l.stats
	st.Segments = len(l.segs)
	if st.Fsyncs > 0 {
		st.RecordsPerFsync = float64(st.Records) / float64(st.Fsyncs)
	}
	for _, s := range l.segs {
		st.DiskBytes += s.bytes
	}
	return st
}

func (h *memHandle) Close() error {
	l := h.l
	l.mu.Lock()
	defer l.mu.Unlock()
	if h.closed {
		return ErrClosed
	}
	h.closed, l.open = true, false
	return nil
}

// memIterator walks a memLog by index, so that it sees later appends.
type memIterator struct {
	h     *memHandle
	next  uint64
	index uint64
	value []byte
	err   error
}

func (it *memIterator) Next() bool {
	if it.err != nil {
		return false
	}
	l := it.h.l
	l.mu.RLock()
	defer l.mu.RUnlock()
	if err := it.h.usableLocked(); err != nil {
		it.err = err
		return false
	}
	if it.next > l.first+uint64(len(l.recs))-1 {
		return false
	}
	rec, err := l.atLocked(it.next)
	if err != nil {
		it.err = err
		return false
	}
	it.index, it.value = it.next, rec
	it.next++
	return true
}

func (it *memIterator) Index() uint64 { return it.index }
func (it *memIterator) Value() []byte { return it.value }
func (it *memIterator) Err() error    { return it.err }

func (it *memIterator) Close() error {
	it.value, it.err = nil, ErrClosed
	return nil
}
