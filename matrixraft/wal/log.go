package wal

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// maxDecodedFloor is the least a compressed record may decompress to. It keeps
// records written under a larger MaxRecordSize readable after the option is
// lowered, while bounding what a damaged frame can make the decoder allocate.
const maxDecodedFloor = 64 << 20

// encoderWindow is the zstd window records are compressed with.
const encoderWindow = 256 << 10

// Log is a durable segmented log. Create one with Open.
type Log struct {
	dir  string
	opts Options
	lock *os.File
	enc  *zstd.Encoder // CompressionDefault's
	dec  *zstd.Decoder
	// compress encodes a record into dst's capacity as a frame of type
	// compressed; nil when compression is off.
	compress   func(dst, src []byte) []byte
	compressed byte
	bufs       sync.Pool // *[]byte scratch for compression

	compressMisses atomic.Uint32 // attempts in a row that saved under 1/16
	compressProbe  atomic.Uint32

	// segMu guards segs and each segment's offsets and end. Readers hold it
	// shared; the flusher takes it briefly to publish offsets; truncations
	// hold it exclusively while they remove or cut files.
	segMu sync.RWMutex
	segs  []*segment // nil once closed

	first atomic.Uint64 // first retained index
	last  atomic.Uint64 // last readable index

	mu       sync.Mutex
	closed   bool
	err      error  // sticky write failure
	epoch    uint64 // bumped by TruncateBack and Reset
	next     uint64 // next index to assign
	written  uint64 // last index handed to the OS
	synced   uint64 // last index on stable storage
	flushing bool   // a flusher owns the files; it alone touches active/dirty
	cur      *batch // the batch the pending chunks belong to
	inflight *batch // the batch being written while flushing (nil for a truncation)
	pend     []*chunk
	spare    []*chunk
	free     []*chunk

	// Where the next frame goes: the projected last segment, counting frames
	// already queued or being written.
	tailFirst uint64
	tailOff   int64
	// rollNext: the next record starts a new segment (RollNext).
	rollNext bool

	direct     bool         // write the active segment with O_DIRECT; owned like active
	dw         directWriter // O_DIRECT state for the active segment
	active     *segment     // owned by whoever holds flushing
	dirty      bool         // active has writes not yet synced
	writtenSeg *segment     // segment holding index written; under mu

	// deviceNanos is a moving average of fdatasync times, which decides
	// whether device IO keeps its processor (see deviceNoHandoff). It
	// starts at the bound, so the first sync is an ordinary call.
	deviceNanos atomic.Int64

	// syncMu keeps the interval syncer and the closing of segment files
	// apart; segment.closed is guarded by it.
	syncMu sync.Mutex

	// beforeSync runs before every fdatasync (SetBeforeSync).
	beforeSync atomic.Pointer[func() error]

	stats counters
	stop  chan struct{}
	done  chan struct{}
}

// batch is one group commit: the records queued between two flushes. Its
// waiters sleep on done; wake hands leadership of the next flush to one of
// them, so a finished flush wakes a single goroutine rather than all. Both
// channels are made when first needed (under Log.mu): a batch whose only
// appender leads it, as every batch of a lone writer is, makes neither.
type batch struct {
	done     chan struct{} // closed once written (and synced, if the flush synced)
	wake     chan struct{} // capacity 1: "no flush is running; lead one"
	taken    bool          // a leader is writing it; under Log.mu
	finished bool          // written or failed, err set; under Log.mu
	err      error         // set before finished
}

func newBatch() *batch { return &batch{} }

// doneChan is b's done channel, made (closed already if b is finished)
// when first asked for. Under Log.mu.
func (b *batch) doneChan() chan struct{} {
	if b.done == nil {
		b.done = make(chan struct{})
		if b.finished {
			close(b.done)
		}
	}
	return b.done
}

// wakeChan is b's wake channel, made when first asked for. Under Log.mu.
func (b *batch) wakeChan() chan struct{} {
	if b.wake == nil {
		b.wake = make(chan struct{}, 1)
	}
	return b.wake
}

// finishLocked records the outcome of b's flush and wakes its waiters.
func (b *batch) finishLocked(err error) {
	b.err, b.finished = err, true
	if b.done != nil {
		close(b.done)
	}
}

// chunk is a run of encoded frames bound for one segment.
type chunk struct {
	newSeg bool   // start a new segment whose first index is segFirst
	first  uint64 // index of the first frame in buf
	last   uint64 // index of the last frame in buf
	off    int64  // offset of buf in the segment
	buf    []byte
	offs   []uint32
}

// frame is a record prepared for the log: envelope and stored payload.
type frame struct {
	hdr     [frameHeaderSize]byte
	payload []byte
	scratch *[]byte // pooled compression buffer to return
}

// Open opens the log in dir, creating the directory and an empty log when
// needed. It verifies every segment and recovers from a torn final write; see
// the package documentation for what it refuses.
func Open(dir string, opts Options) (*Log, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("wal: open: %w", err)
	}
	lock, err := lockDir(filepath.Join(dir, "LOCK"))
	if err != nil {
		return nil, err
	}
	l := &Log{dir: dir, opts: opts, lock: lock}
	l.deviceNanos.Store(int64(maxNoHandoffDevice))
	l.cur = newBatch()
	l.bufs.New = func() any { b := make([]byte, 0, 4096); return &b }
	if l.dec, err = zstd.NewReader(nil, zstd.WithDecoderConcurrency(0), zstd.WithDecoderMaxMemory(uint64(max(opts.MaxRecordSize, maxDecodedFloor)))); err != nil {
		lock.Close()
		return nil, fmt.Errorf("wal: zstd decoder: %w", err)
	}
	if opts.Compression == CompressionDefault {
		// A 256 KiB window, not the default 8 MiB: the encoder keeps a history
		// buffer of twice the window for the life of the log once a large
		// record passes, and a record's long-range matches gain little.
		if l.enc, err = zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
			zstd.WithZeroFrames(true), zstd.WithWindowSize(encoderWindow)); err != nil {
			l.dec.Close()
			lock.Close()
			return nil, fmt.Errorf("wal: zstd encoder: %w", err)
		}
		l.compress, l.compressed = func(dst, src []byte) []byte { return l.enc.EncodeAll(src, dst[:0]) }, typeRecordZstd
	}
	if opts.Compression == CompressionFast {
		l.compress, l.compressed = s2Encode, typeRecordS2
	}
	if err := l.load(); err != nil {
		l.closeFiles()
		return nil, err
	}
	if opts.Sync == SyncInterval {
		l.stop, l.done = make(chan struct{}), make(chan struct{})
		go l.syncLoop()
	}
	return l, nil
}

// load reads the directory, verifies the segments and sets up the state.
func (l *Log) load() error {
	entries, err := os.ReadDir(l.dir)
	if err != nil {
		return fmt.Errorf("wal: open: %w", err)
	}
	var names []string
	for _, e := range entries {
		name := e.Name()
		switch {
		case strings.HasSuffix(name, segmentExt+".tmp"):
			// A segment whose creation did not finish; it never held data.
			if err := os.Remove(filepath.Join(l.dir, name)); err != nil {
				return fmt.Errorf("wal: open: %w", err)
			}
		case strings.HasSuffix(name, segmentExt):
			if _, ok := parseSegmentName(name); !ok {
				return &CorruptionError{Segment: name, Reason: "file name is not a segment name"}
			}
			names = append(names, name)
		}
	}
	slices.Sort(names) // zero-padded, so lexical order is index order

	var buf []byte
	for i, name := range names {
		f, err := os.OpenFile(filepath.Join(l.dir, name), os.O_RDWR, 0)
		if err != nil {
			return fmt.Errorf("wal: open segment %s: %w", name, err)
		}
		first, _ := parseSegmentName(name)
		s := &segment{first: first, name: name, f: f}
		l.segs = append(l.segs, s)
		if buf, err = readWhole(f, buf); err != nil {
			return fmt.Errorf("wal: read segment %s: %w", name, err)
		}
		// Frames are bounded by the file, not by today's MaxRecordSize, so
		// lowering the option never makes written records unreadable.
		r, err := scanSegment(buf, len(buf))
		if err != nil {
			if errors.Is(err, ErrUnsupportedFormat) {
				return fmt.Errorf("wal: segment %s: %w", name, err)
			}
			return &CorruptionError{Segment: name, Reason: err.Error()}
		}
		if r.header.first != first {
			return &CorruptionError{Segment: name, Reason: fmt.Sprintf("header says first index %d", r.header.first)}
		}
		if r.header.flags&flagReset != 0 {
			// Reset wrote this segment; older ones are leftovers of a
			// reset that crashed before deleting them.
			if err := l.dropSegments(l.segs[:len(l.segs)-1], ""); err != nil {
				return err
			}
			l.segs = l.segs[len(l.segs)-1:]
		}
		s.offsets, s.end = r.offsets, r.end
		if r.badErr != nil {
			if i < len(names)-1 {
				return &CorruptionError{Segment: name, Offset: r.end, Reason: r.badErr.Error()}
			}
			torn := tornTail(buf, int(r.end), len(buf))
			if !torn && !l.opts.RepairTail {
				return &CorruptionError{Segment: name, Offset: r.end, Reason: r.badErr.Error() + " (and the damage is not a torn final write; Options.RepairTail truncates it)"}
			}
			l.opts.Logger.Warn("wal: truncating damaged tail", "segment", name, "offset", r.end, "reason", r.badErr.Error(), "torn_write", torn)
			if err := cutFile(f, r.end, l.opts.SegmentSize, !l.opts.NoPreallocate); err != nil {
				return fmt.Errorf("wal: truncate segment %s: %w", name, err)
			}
		}
		if i == len(names)-1 && r.openGroup >= 0 {
			// The log ends inside an AppendGroup group: its writer was
			// never answered, and none of it may survive alone.
			cut := int64(r.offsets[r.openGroup])
			l.opts.Logger.Warn("wal: dropping an unfinished group", "segment", name, "offset", cut, "records", len(r.offsets)-r.openGroup)
			s.offsets, s.end = r.offsets[:r.openGroup], cut
			if err := cutFile(f, cut, l.opts.SegmentSize, !l.opts.NoPreallocate); err != nil {
				return fmt.Errorf("wal: truncate segment %s: %w", name, err)
			}
		}
	}
	for i := 1; i < len(l.segs); i++ {
		prev, s := l.segs[i-1], l.segs[i]
		if want := prev.first + uint64(len(prev.offsets)); s.first != want {
			return &CorruptionError{Segment: s.name, Reason: fmt.Sprintf("starts at index %d but %s ends before index %d", s.first, prev.name, want)}
		}
	}
	if len(l.segs) == 0 {
		s, err := createSegmentFile(l.dir, segmentHeader{version: formatVersion, first: l.opts.FirstIndex}, l.opts.SegmentSize, !l.opts.NoPreallocate)
		if err != nil {
			return err
		}
		l.segs = []*segment{s}
	}
	act := l.segs[len(l.segs)-1]
	if !l.opts.NoPreallocate {
		if fi, err := act.f.Stat(); err == nil && fi.Size() < l.opts.SegmentSize {
			if err := preallocate(act.f, l.opts.SegmentSize); err != nil {
				return fmt.Errorf("wal: preallocate %s: %w", act.name, err)
			}
		}
	}
	l.direct = l.opts.Sync == SyncAlways && !l.opts.NoDirectIO
	l.setActive(act)
	l.writtenSeg = act
	l.tailFirst, l.tailOff = act.first, act.end
	l.next = act.first + uint64(len(act.offsets))
	l.written, l.synced = l.next-1, l.next-1
	l.first.Store(l.segs[0].first)
	l.last.Store(l.next - 1)
	return nil
}

// dropSegments closes and deletes segs in the order given, then syncs the
// directory; a file named keepName is closed but kept (Reset has just
// renamed its new segment over it). Callers order segs so that an
// interrupted drop leaves a contiguous log.
func (l *Log) dropSegments(segs []*segment, keepName string) error {
	if len(segs) == 0 {
		return nil
	}
	l.syncMu.Lock()
	for _, s := range segs {
		s.f.Close()
		if s.df != nil {
			s.df.Close()
			s.df = nil
		}
		s.closed = true
	}
	l.syncMu.Unlock()
	for _, s := range segs {
		if s.name == keepName {
			continue
		}
		if err := os.Remove(filepath.Join(l.dir, s.name)); err != nil && !os.IsNotExist(err) {
			return fmt.Errorf("wal: remove segment %s: %w", s.name, err)
		}
	}
	if err := syncDir(l.dir); err != nil {
		return fmt.Errorf("wal: sync dir: %w", err)
	}
	return nil
}

// Append adds one record and returns its index. Under SyncAlways it returns
// once the record is on stable storage. ctx is checked before the record is
// queued; once queued the call waits for the write, because the record will
// be written whether or not the caller waits. data is not retained.
func (l *Log) Append(ctx context.Context, data []byte) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := l.checkSize(data); err != nil {
		return 0, err
	}
	var fr frame
	l.prepare(&fr, data)
	l.mu.Lock()
	if err := l.usableLocked(); err != nil {
		l.mu.Unlock()
		l.release(&fr)
		return 0, err
	}
	idx := l.enqueueLocked(&fr, int64(frameHeaderSize+len(fr.payload)))
	l.release(&fr)
	l.stats.payloadBytes.Add(uint64(len(data)))
	return idx, l.awaitLocked(l.cur, true)
}

// AppendBatch adds records in order and returns the index of the first. The
// batch is written in one write, but it is not atomic: after a crash a prefix
// of an unacknowledged batch may survive. An empty batch appends nothing and
// returns the index the next record will get.
func (l *Log) AppendBatch(ctx context.Context, data [][]byte) (uint64, error) {
	return l.appendFrames(ctx, data, false)
}

// AppendGroup is AppendBatch made crash-atomic: after a crash either every
// record of the group is in the log or none is (Open drops a group the log
// ends inside). The group is written into one segment, so its frames may
// take at most MaxGroupSize bytes; a larger group returns ErrGroupTooLarge
// and appends nothing. A TruncateBack that cuts a group leaves its prefix
// marked as unfinished: Open drops it unless a record was appended after.
func (l *Log) AppendGroup(ctx context.Context, data [][]byte) (uint64, error) {
	return l.appendFrames(ctx, data, true)
}

// MaxGroupSize is the most bytes an AppendGroup group's frames may take:
// a segment less its header. Each frame is its record, compressed when
// that is smaller, and a 9-byte envelope.
func (l *Log) MaxGroupSize() int64 { return l.opts.SegmentSize - segmentHeaderSize }

func (l *Log) appendFrames(ctx context.Context, data [][]byte, group bool) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	var total uint64
	for _, d := range data {
		if err := l.checkSize(d); err != nil {
			return 0, err
		}
		total += uint64(len(d))
	}
	// A few frames, the usual batch, stay on the stack.
	var stack [8]frame
	frames := stack[:]
	if len(data) > len(stack) {
		frames = make([]frame, len(data))
	}
	frames = frames[:len(data)]
	var stored int64
	for i, d := range data {
		var flags byte
		if group && i < len(data)-1 {
			flags = typeGroupMore
		}
		l.prepareFrame(&frames[i], d, flags)
		stored += int64(frameHeaderSize + len(frames[i].payload))
	}
	releaseAll := func() {
		for i := range frames {
			l.release(&frames[i])
		}
	}
	if group && stored > l.MaxGroupSize() {
		releaseAll()
		return 0, fmt.Errorf("%w: %d bytes in %d records, limit %d", ErrGroupTooLarge, stored, len(data), l.MaxGroupSize())
	}
	l.mu.Lock()
	if err := l.usableLocked(); err != nil {
		l.mu.Unlock()
		releaseAll()
		return 0, err
	}
	first := l.next
	for i := range frames {
		need := int64(frameHeaderSize + len(frames[i].payload))
		if group && i == 0 {
			// The whole group goes into the segment of its first record.
			need = stored
		}
		l.enqueueLocked(&frames[i], need)
		l.release(&frames[i])
	}
	if len(data) == 0 {
		l.mu.Unlock()
		return first, nil
	}
	l.stats.payloadBytes.Add(total)
	// A group's writer usually holds its other writers back until the
	// group is written (a transaction), so none would join: it leads
	// without waiting for them.
	return first, l.awaitLocked(l.cur, !group)
}

// RollNext makes the next record appended start a new segment (unless the
// segment being written holds none yet): for a caller whose records stand
// for more than their bytes, such as pointers to data kept elsewhere, so
// that a segment of them is sealed, and can be reclaimed, once they stand
// for a segment's worth.
func (l *Log) RollNext() {
	l.mu.Lock()
	l.rollNext = true
	l.mu.Unlock()
}

// MaxRecordSize is the largest record Append accepts (Options.MaxRecordSize
// after defaults), for a caller that must know before it appends.
func (l *Log) MaxRecordSize() int { return l.opts.MaxRecordSize }

func (l *Log) checkSize(data []byte) error {
	if len(data) > l.opts.MaxRecordSize {
		return fmt.Errorf("%w: %d bytes, limit %d", ErrRecordTooLarge, len(data), l.opts.MaxRecordSize)
	}
	return nil
}

// prepare compresses (when worth it) and checksums a record outside the lock,
// so concurrent appenders do this work in parallel.
func (l *Log) prepare(fr *frame, data []byte) { l.prepareFrame(fr, data, 0) }

// prepareFrame is prepare with flags or'ed into the frame's type.
func (l *Log) prepareFrame(fr *frame, data []byte, flags byte) {
	fr.payload = data
	typ := typeRecord
	if l.compress != nil && len(data) >= l.opts.CompressMinSize && l.shouldTryCompress() {
		scratch := l.bufs.Get().(*[]byte)
		out := l.compress(*scratch, data)
		*scratch = out
		if len(out) < len(data) {
			fr.payload, typ, fr.scratch = out, l.compressed, scratch
		} else {
			l.bufs.Put(scratch)
		}
		if len(out) <= len(data)-len(data)/16 {
			l.compressMisses.Store(0)
		} else {
			l.compressMisses.Add(1)
		}
	}
	putFrameHeader(fr.hdr[:], typ|flags, fr.payload)
}

// s2Encode is CompressionFast's encoder: S2 needs room for its worst case
// up front.
func s2Encode(dst, src []byte) []byte {
	if n := s2.MaxEncodedLen(len(src)); cap(dst) < n {
		dst = make([]byte, n)
	}
	return s2.Encode(dst[:cap(dst)], src)
}

// Compression is skipped for records that will not shrink: after
// compressGiveUp attempts in a row save less than 1/16, only every
// compressProbeEvery-th record is tried, and one that shrinks turns it back
// on. Incompressible data (already compressed or encrypted payloads) then
// costs almost nothing.
const (
	compressGiveUp     = 16
	compressProbeEvery = 64
)

func (l *Log) shouldTryCompress() bool {
	if l.compressMisses.Load() < compressGiveUp {
		return true
	}
	return l.compressProbe.Add(1)%compressProbeEvery == 0
}

func (l *Log) release(fr *frame) {
	if fr.scratch != nil {
		l.bufs.Put(fr.scratch)
		fr.scratch = nil
	}
}

func (l *Log) usableLocked() error {
	if l.closed {
		return ErrClosed
	}
	return l.err
}

// enqueueLocked copies fr into the pending chunks and assigns its index. A
// new segment starts with fr when need bytes (fr's frame, and for a
// group's first record the whole group) do not fit in the current one.
func (l *Log) enqueueLocked(fr *frame, need int64) uint64 {
	size := int64(frameHeaderSize + len(fr.payload))
	idx := l.next
	var c *chunk
	if (l.tailOff+need > l.opts.SegmentSize || l.rollNext) && idx > l.tailFirst {
		l.rollNext = false
		l.tailFirst, l.tailOff = idx, segmentHeaderSize
		c = l.newChunkLocked(idx)
		c.newSeg = true
	} else if n := len(l.pend); n > 0 {
		c = l.pend[n-1]
	} else {
		c = l.newChunkLocked(idx)
	}
	c.offs = append(c.offs, uint32(l.tailOff))
	c.buf = append(c.buf, fr.hdr[:]...)
	c.buf = append(c.buf, fr.payload...)
	c.last = idx
	l.tailOff += size
	l.next++
	return idx
}

func (l *Log) newChunkLocked(first uint64) *chunk {
	var c *chunk
	if n := len(l.free); n > 0 {
		c, l.free = l.free[n-1], l.free[:n-1]
	} else {
		c = &chunk{}
	}
	c.newSeg, c.first, c.last, c.off = false, first, first, l.tailOff
	l.pend = append(l.pend, c)
	return c
}

// needSync says whether a wait or flush must reach stable storage.
func (l *Log) needSync(force bool) bool {
	return l.opts.Sync == SyncAlways || (force && l.opts.Sync != SyncNever)
}

// awaitLocked waits until batch b is written (and synced under
// SyncAlways), leading the flush itself when no flush is running (after
// gatherLocked, when gather is set). It is called with mu held and returns
// with it released.
func (l *Log) awaitLocked(b *batch, gather bool) error {
	for {
		if b.finished {
			l.mu.Unlock()
			return b.err
		}
		if b.taken {
			done := b.doneChan()
			l.mu.Unlock()
			<-done
			return b.err
		}
		if !l.flushing {
			if gather {
				l.gatherLocked()
			}
			l.leadLocked(l.needSync(false))
			continue
		}
		done, wake := b.doneChan(), b.wakeChan()
		l.mu.Unlock()
		select {
		case <-done:
			return b.err
		case <-wake:
		}
		l.mu.Lock()
	}
}

// maxGatherRounds bounds how often a leader yields to let more appenders
// join its batch before writing it.
const maxGatherRounds = 16

// gatherLocked lets appenders that are already runnable join the batch
// before its leader writes it: typically the callers the previous flush just
// released, coming straight back. It yields the processor as long as the
// batch keeps growing, so with one appender it costs a single yield, and with
// many it turns two half-size batches per fsync cycle into one full one.
// flushing is held meanwhile so arrivals queue rather than lead.
func (l *Log) gatherLocked() {
	l.flushing, l.inflight = true, l.cur
	for range maxGatherRounds {
		n := l.next
		l.mu.Unlock()
		runtime.Gosched()
		l.mu.Lock()
		if l.next == n {
			break
		}
	}
	l.flushing, l.inflight = false, nil
}

// leadLocked takes the current batch and writes it, fdatasyncing if doSync.
// The caller holds mu and no flush is running; mu is released during IO and
// held again on return.
func (l *Log) leadLocked(doSync bool) {
	b := l.cur
	b.taken = true
	l.cur = newBatch()
	l.flushing, l.inflight = true, b
	chunks := l.pend
	l.pend = l.spare[:0]
	target := l.next - 1
	failed := l.err
	l.mu.Unlock()

	// After a failure nothing more is written: the batch just fails.
	err := failed
	if err == nil {
		err = l.writeChunks(chunks)
	}
	if err == nil && doSync && l.dirty {
		err = l.syncActive(true)
	}

	l.mu.Lock()
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("wal: write failed; the log refuses further writes: %w", err)
		l.opts.Logger.Error("wal: write failed", "err", err)
	}
	if err == nil {
		l.written, l.writtenSeg = target, l.active
		if doSync {
			l.synced = target
		}
	}
	for _, c := range chunks {
		c.buf, c.offs = c.buf[:0], c.offs[:0]
		l.free = append(l.free, c)
	}
	clear(chunks)
	l.spare = chunks[:0]
	b.finishLocked(l.err)
	l.releaseLocked()
}

// releaseLocked ends a flush or truncation and, if records queued up
// meanwhile, hands the next flush to one of their waiters.
func (l *Log) releaseLocked() {
	l.flushing, l.inflight = false, nil
	if len(l.pend) > 0 {
		select {
		case l.cur.wakeChan() <- struct{}{}:
		default:
		}
	}
}

// awaitFlushLocked waits for the running flush, if any, to finish. Called
// and returns with mu held.
func (l *Log) awaitFlushLocked() {
	for l.flushing {
		done := l.inflight.doneChan()
		l.mu.Unlock()
		<-done
		l.mu.Lock()
	}
}

func (l *Log) writeChunks(chunks []*chunk) error {
	direct := l.deviceNoHandoff() // direct writes, decided once a flush
	for _, c := range chunks {
		if c.newSeg {
			if err := l.roll(c.first); err != nil {
				return err
			}
		}
		s := l.active
		var err error
		if s.df != nil {
			err = l.dw.write(s, c.buf, c.off, direct)
		} else {
			err = writeAt(s.f, c.buf, c.off, len(c.buf) <= maxNoHandoffWrite)
		}
		if err != nil {
			return fmt.Errorf("write segment %s: %w", s.name, err)
		}
		l.dirty = true
		l.stats.bytes.Add(uint64(len(c.buf)))
		l.stats.records.Add(uint64(len(c.offs)))
		l.segMu.Lock()
		s.offsets = append(s.offsets, c.offs...)
		s.end = c.off + int64(len(c.buf))
		l.segMu.Unlock()
		l.last.Store(c.last)
	}
	return nil
}

// roll seals the active segment (syncing it, so only the last segment can
// ever hold a torn write) and starts a new one at index first.
func (l *Log) roll(first uint64) error {
	if l.dirty && l.opts.Sync != SyncNever {
		// A seal promises no record durable (the synced index stays), so
		// it does not run SetBeforeSync's function.
		if err := l.syncActive(false); err != nil {
			return err
		}
	}
	s, err := createSegmentFile(l.dir, segmentHeader{version: formatVersion, first: first}, l.opts.SegmentSize, !l.opts.NoPreallocate)
	if err != nil {
		return err
	}
	l.stats.bytes.Add(segmentHeaderSize)
	l.segMu.Lock()
	l.segs = append(l.segs, s)
	l.segMu.Unlock()
	l.setActive(s)
	l.dirty = false
	return nil
}

// setActive makes s the segment appends go to, opening it for direct writes
// when they are on. Only the flusher role (or Open) calls it.
func (l *Log) setActive(s *segment) {
	if old := l.active; old != nil && old.df != nil {
		old.df.Close()
		old.df = nil
	}
	l.active = s
	if !l.direct {
		return
	}
	if err := l.dw.open(l.dir, s); err != nil {
		l.direct = false
		l.opts.Logger.Info("wal: direct I/O unavailable; using buffered writes", "err", err)
	}
}

func (l *Log) syncActive(hook bool) error {
	if err := l.syncSegment(l.active, hook); err != nil {
		return err
	}
	l.dirty = false
	return nil
}

// syncSegment fdatasyncs s, with hook after running SetBeforeSync's
// function.
func (l *Log) syncSegment(s *segment, hook bool) error {
	if f := l.beforeSync.Load(); f != nil && hook {
		if err := (*f)(); err != nil {
			return fmt.Errorf("before fdatasync of segment %s: %w", s.name, err)
		}
	}
	start := time.Now()
	var err error
	if l.deviceNoHandoff() {
		err = fdatasyncNoHandoff(s.f)
	} else {
		err = fdatasync(s.f)
	}
	took := time.Since(start)
	l.stats.fsyncLatency.observe(took)
	avg := l.deviceNanos.Load()
	l.deviceNanos.Store(avg + (took.Nanoseconds()-avg)/8)
	l.stats.fsyncs.Add(1)
	if err != nil {
		return fmt.Errorf("fdatasync segment %s: %w", s.name, err)
	}
	return nil
}

// SetBeforeSync has f called before every fdatasync that makes records
// durable as the policy promises them: the interval's, Sync's, a group
// commit's, Close's, Recover's; not a roll's, which seals a segment and
// promises nothing. An error from f fails the sync as the fdatasync's own
// would. A log whose records name data kept elsewhere (files written
// without a sync of their own) syncs that data in f, so that no record a
// sync promised names data that is not durable. f may run beside appends,
// and under the log's lock (Recover): it must not call the log's methods
// that take it; nil removes it.
func (l *Log) SetBeforeSync(f func() error) {
	if f == nil {
		l.beforeSync.Store(nil)
		return
	}
	l.beforeSync.Store(&f)
}

// syncLoop is SyncInterval's background syncer. It fdatasyncs without taking
// the flusher's role, so appends keep being written during the sync.
func (l *Log) syncLoop() {
	defer close(l.done)
	t := time.NewTicker(l.opts.SyncInterval)
	defer t.Stop()
	for {
		select {
		case <-l.stop:
			return
		case <-t.C:
		}
		_ = l.syncWritten()
	}
}

// syncWritten fdatasyncs the records written so far without taking the
// flusher's role, so appends keep being written during the sync. It
// returns the log's error, if any, after it.
func (l *Log) syncWritten() error {
	l.mu.Lock()
	if err := l.usableLocked(); err != nil || l.synced >= l.written {
		l.mu.Unlock()
		return err
	}
	// Every record up to written is in seg or in a segment before it,
	// and a roll syncs the segment it seals.
	target, seg, epoch := l.written, l.writtenSeg, l.epoch
	l.mu.Unlock()

	var err error
	l.syncMu.Lock()
	if !seg.closed { // closed by a truncation: sealed (so synced) or gone
		err = l.syncSegment(seg, true)
	}
	l.syncMu.Unlock()

	l.mu.Lock()
	defer l.mu.Unlock()
	if err != nil && l.err == nil {
		l.err = fmt.Errorf("wal: sync failed; the log refuses further writes: %w", err)
		l.opts.Logger.Error("wal: sync failed", "err", err)
	}
	if err == nil && l.epoch == epoch && target > l.synced {
		l.synced = target
	}
	return l.usableLocked()
}

// Sync writes everything queued and fdatasyncs it, whatever the policy
// (except SyncNever, where it only writes). Under SyncInterval the fdatasync
// runs as the interval syncer's does, beside the appends that keep coming,
// so a checkpoint's Sync does not hold up writers for a disk flush.
func (l *Log) Sync(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	if err := l.usableLocked(); err != nil {
		l.mu.Unlock()
		return err
	}
	// Whatever is running may not sync (SyncInterval), so after it finishes
	// lead a flush that does.
	l.awaitFlushLocked()
	if err := l.usableLocked(); err != nil {
		l.mu.Unlock()
		return err
	}
	interval := l.opts.Sync == SyncInterval
	l.leadLocked(l.needSync(true) && !interval)
	err := l.err
	l.mu.Unlock()
	if err != nil || !interval {
		return err
	}
	return l.syncWritten()
}

// quiesceLocked writes and syncs everything queued, then takes ownership of
// the files (flushing = true) for a truncation. The caller must call
// releaseLocked.
func (l *Log) quiesceLocked() error {
	for {
		if err := l.usableLocked(); err != nil {
			return err
		}
		if l.flushing {
			l.awaitFlushLocked()
			continue
		}
		if len(l.pend) > 0 || (l.dirty && l.opts.Sync != SyncNever) {
			l.leadLocked(l.opts.Sync != SyncNever)
			continue
		}
		l.flushing = true
		return nil
	}
}

// resetTailLocked points appends at the end of s after a truncation.
func (l *Log) resetTailLocked(s *segment, last uint64) {
	l.setActive(s)
	l.dirty, l.writtenSeg = false, s
	l.tailFirst, l.tailOff = s.first, s.end
	l.next, l.written, l.synced = last+1, last, last
	l.last.Store(last)
	l.epoch++
}

// TruncateFront discards records before index, whole segments at a time:
// a segment goes once every record in it is below index. The last segment is
// always kept, so FirstIndex may stay below index. index may be at most
// LastIndex()+1.
func (l *Log) TruncateFront(ctx context.Context, index uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	err := l.usableLocked()
	next := l.next
	l.mu.Unlock()
	if err != nil {
		return err
	}
	if index > next {
		return fmt.Errorf("%w: TruncateFront(%d) past the next index %d", ErrInvalidIndex, index, next)
	}
	l.segMu.Lock()
	if l.segs == nil {
		l.segMu.Unlock()
		return ErrClosed
	}
	n := 0
	for n < len(l.segs)-1 && l.segs[n+1].first <= index {
		n++
	}
	dropped := slices.Clone(l.segs[:n])
	clear(l.segs[:n])
	l.segs = l.segs[n:]
	l.first.Store(l.segs[0].first)
	l.segMu.Unlock()
	// The files are closed and removed after segMu is let go, so that a
	// flush publishing offsets, and the appends waiting on it, do not wait
	// for the unlinks and the directory sync. No reader can reach them.
	return l.dropSegments(dropped, "")
}

// TruncateBack discards every record after index, so that index becomes the
// last; appends continue at index+1. It is durable when it returns. index may
// be from FirstIndex()-1 (empty the log) up; at or past LastIndex() it does
// nothing. If interrupted by a crash, the log reopens holding a prefix of its
// old records no shorter than index.
func (l *Log) TruncateBack(ctx context.Context, index uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.quiesceLocked(); err != nil {
		return err
	}
	defer l.releaseLocked()
	if index >= l.next-1 {
		return nil
	}
	l.segMu.RLock()
	first := l.segs[0].first
	l.segMu.RUnlock()
	if index+1 < first {
		return fmt.Errorf("%w: TruncateBack(%d) before the first index %d", ErrInvalidIndex, index, first)
	}
	if err := l.cutAfter(index); err != nil {
		return l.failLocked(err)
	}
	return nil
}

// Reset discards every record and restarts the log empty, with next as the
// index of the next record (as a Raft log does after installing a snapshot).
// It is durable when it returns; if interrupted, the log reopens either as it
// was or reset.
func (l *Log) Reset(ctx context.Context, next uint64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if next == 0 {
		return fmt.Errorf("%w: Reset(0): indexes start at 1", ErrInvalidIndex)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if err := l.quiesceLocked(); err != nil {
		return err
	}
	defer l.releaseLocked()
	s, err := createSegmentFile(l.dir, segmentHeader{version: formatVersion, flags: flagReset, first: next}, l.opts.SegmentSize, !l.opts.NoPreallocate)
	if err != nil {
		return l.failLocked(err)
	}
	l.stats.bytes.Add(segmentHeaderSize)
	l.segMu.Lock()
	defer l.segMu.Unlock()
	old := l.segs
	l.segs = []*segment{s}
	l.first.Store(next)
	l.resetTailLocked(s, next-1)
	if err := l.dropSegments(old, s.name); err != nil {
		return l.failLocked(err)
	}
	return nil
}

// failLocked makes a failed truncation sticky: the in-memory view may no
// longer match the files, so the log must be reopened.
func (l *Log) failLocked(err error) error {
	if l.err == nil {
		l.err = fmt.Errorf("wal: truncation failed; reopen the log: %w", err)
		l.opts.Logger.Error("wal: truncation failed", "err", err)
	}
	return l.err
}

// FirstIndex returns the index of the first retained record. In an empty log
// it is the index the next record will get.
func (l *Log) FirstIndex() uint64 { return l.first.Load() }

// LastIndex returns the index of the last readable record, or FirstIndex()-1
// when the log is empty.
func (l *Log) LastIndex() uint64 { return l.last.Load() }

// Read returns a copy of the record at index. It returns ErrCompacted before
// FirstIndex and ErrNotFound after LastIndex.
func (l *Log) Read(index uint64) ([]byte, error) {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	s, pos, err := l.locateLocked(index)
	if err != nil {
		return nil, err
	}
	off := int64(s.offsets[pos])
	buf := make([]byte, s.recordEnd(pos)-off)
	if _, err := s.f.ReadAt(buf, off); err != nil {
		return nil, fmt.Errorf("wal: read %s: %w", s.name, err)
	}
	v, _, err := l.decodeRecord(s, off, buf, nil)
	return v, err
}

// decodeRecord checks one frame and returns its record. A plain record
// aliases buf; a compressed one is decompressed into dst's storage, and
// decompressed reports that.
func (l *Log) decodeRecord(s *segment, off int64, buf, dst []byte) (rec []byte, decompressed bool, err error) {
	typ, payload, _, err := decodeFrame(buf, len(buf))
	if err != nil {
		return nil, false, &CorruptionError{Segment: s.name, Offset: off, Reason: err.Error()}
	}
	switch typ &^ typeGroupMore {
	case typeRecord:
		return payload, false, nil
	case typeRecordS2:
		n, err := s2.DecodedLen(payload)
		if err == nil && n > max(l.opts.MaxRecordSize, maxDecodedFloor) {
			err = fmt.Errorf("record of %d bytes", n)
		}
		if err != nil {
			return nil, false, &CorruptionError{Segment: s.name, Offset: off, Reason: "s2: " + err.Error()}
		}
		if cap(dst) < n {
			dst = make([]byte, n)
		}
		out, err := s2.Decode(dst[:cap(dst)], payload)
		if err != nil {
			return nil, false, &CorruptionError{Segment: s.name, Offset: off, Reason: "s2: " + err.Error()}
		}
		return out, true, nil
	}
	out, err := l.dec.DecodeAll(payload, dst[:0])
	if err != nil {
		return nil, false, &CorruptionError{Segment: s.name, Offset: off, Reason: "zstd: " + err.Error()}
	}
	return out, true, nil
}

// locateLocked finds the segment and position of index. segMu must be held.
func (l *Log) locateLocked(index uint64) (*segment, int, error) {
	if l.segs == nil {
		return nil, 0, ErrClosed
	}
	if index < l.segs[0].first {
		return nil, 0, fmt.Errorf("%w: index %d, first is %d", ErrCompacted, index, l.segs[0].first)
	}
	i, found := slices.BinarySearchFunc(l.segs, index, func(s *segment, idx uint64) int {
		switch {
		case s.first < idx:
			return -1
		case s.first > idx:
			return 1
		}
		return 0
	})
	if !found {
		i--
	}
	// Only the last segment can be empty, so firsts are distinct.
	s := l.segs[i]
	pos := int(index - s.first)
	if pos >= len(s.offsets) {
		return nil, 0, fmt.Errorf("%w: index %d, last is %d", ErrNotFound, index, l.last.Load())
	}
	return s, pos, nil
}

// Stats returns a snapshot of the log's counters.
func (l *Log) Stats() Stats {
	st := Stats{
		Records:      l.stats.records.Load(),
		Bytes:        l.stats.bytes.Load(),
		PayloadBytes: l.stats.payloadBytes.Load(),
		Fsyncs:       l.stats.fsyncs.Load(),
		FsyncLatency: l.stats.fsyncLatency.snapshot(),
		FirstIndex:   l.FirstIndex(),
		LastIndex:    l.LastIndex(),
	}
	if st.Fsyncs > 0 {
		st.RecordsPerFsync = float64(st.Records) / float64(st.Fsyncs)
	}
	l.segMu.RLock()
	st.Segments = len(l.segs)
	l.segMu.RUnlock()
	return st
}

// SegmentInfo describes one segment file.
type SegmentInfo struct {
	// First is the index of the segment's first record.
	First uint64
	// Bytes is how far the segment is written (its records' frames and
	// header), not its preallocated size.
	Bytes int64
}

// Segments describes the log's segments, oldest first. A caller that
// reclaims space picks a TruncateFront index from their First indexes.
func (l *Log) Segments() []SegmentInfo {
	l.segMu.RLock()
	defer l.segMu.RUnlock()
	out := make([]SegmentInfo, len(l.segs))
	for i, s := range l.segs {
		out[i] = SegmentInfo{First: s.first, Bytes: s.end}
	}
	return out
}

// Close writes and syncs everything queued (except under SyncNever), then
// releases the files and the directory lock. Calls after Close return
// ErrClosed.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return ErrClosed
	}
	l.awaitFlushLocked()
	if l.err == nil && (len(l.pend) > 0 || (l.dirty && l.opts.Sync != SyncNever)) {
		l.leadLocked(l.opts.Sync != SyncNever)
	}
	err := l.err
	l.closed = true
	l.mu.Unlock()
	if l.stop != nil {
		close(l.stop)
		<-l.done
	}
	if cerr := l.closeFiles(); err == nil {
		err = cerr
	}
	return err
}

func (l *Log) closeFiles() error {
	var err error
	l.segMu.Lock()
	for _, s := range l.segs {
		if cerr := s.f.Close(); err == nil {
			err = cerr
		}
		if s.df != nil {
			s.df.Close()
		}
	}
	l.segs = nil
	l.segMu.Unlock()
	if l.enc != nil {
		l.enc.Close()
	}
	if l.dec != nil {
		l.dec.Close()
	}
	if cerr := l.lock.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxNoHandoffDevice bounds the average fdatasync time under which the
// flusher's device IO (fdatasync, and direct writes under SyncAlways) goes
// out as raw system calls, keeping the thread's processor while the device
// works. Issued as ordinary calls, each one outlasts the runtime monitor's
// 20 µs tick: the monitor hands the processor to another thread, the
// caller must win one back when the call returns, and the monitor, finding
// work on every tick, never slows down; on two cores those wakeups and
// handoffs cost a tenth of a durable server's CPU. Kept, the processor's
// queued goroutines are taken by the other processors meanwhile, and a
// garbage collection waits for the call to return: acceptable for calls
// of a fraction of a millisecond, not on a slow disk. With one processor
// the calls stay ordinary, so that nothing else stops for them.
const maxNoHandoffDevice = time.Millisecond

// deviceNoHandoff reports whether device IO goes out as raw system calls
// now (see maxNoHandoffDevice).
func (l *Log) deviceNoHandoff() bool {
	return l.deviceNanos.Load() < int64(maxNoHandoffDevice) && runtime.GOMAXPROCS(0) > 1
}

// writeAt writes b at f's offset off, as a raw system call when noHandoff
// (writeAtNoHandoff).
func writeAt(f *os.File, b []byte, off int64, noHandoff bool) error {
	if noHandoff {
		return writeAtNoHandoff(f, b, off)
	}
	_, err := f.WriteAt(b, off)
	return err
}

// maxNoHandoffWrite is the largest buffered write issued without telling the
// scheduler (writeAtNoHandoff): a page-cache copy this size takes a few
// microseconds, far under the 20 µs after which the runtime would hand the
// processor away.
const maxNoHandoffWrite = 64 << 10
