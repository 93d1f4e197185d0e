package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/keyindex"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// Ops of the records this package applies. Numbers are stable: they are
// stored. Collection ops carry the effect, never the request: an SPOP logs
// the SREM of the members it chose, an HINCRBY the HSET of the result, so
// replay is deterministic. Each is documented with its arguments.
const (
	// OpSet: Args[0] is the string value; Expiry its expiry.
	OpSet command.Op = 1
	// OpDelete removes the key, whatever its type.
	OpDelete command.Op = 2
	// OpExpireAt sets a collection's expiry to Expiry (0: none).
	OpExpireAt command.Op = 3
	// OpRename moves the collection at Key to Args[0], replacing what is
	// there.
	OpRename command.Op = 4
	// OpImage spills a collection: Args[0] is its image (package object's
	// encoding, key and expiry included), Args[1] its version (uvarint);
	// Expiry is its expiry. The key's index entry then points at this
	// record, and the collection is decoded from it when read and made
	// resident again when written. It carries state, not an effect, so
	// replay puts the key exactly where the spill left it.
	OpImage command.Op = 5
	// OpHSet: field, value pairs. OpHDel: fields.
	OpHSet command.Op = 10
	OpHDel command.Op = 11
	// OpSAdd, OpSRem: members.
	OpSAdd command.Op = 20
	OpSRem command.Op = 21
	// OpZAdd: member, score pairs (a score is a float64's bits, 8 bytes
	// little endian). OpZRem: members.
	OpZAdd command.Op = 30
	OpZRem command.Op = 31
	// OpLPush, OpRPush: values, pushed in order. OpLPop, OpRPop: Args[0]
	// is the count (uvarint). OpLSet: index (varint, from the head),
	// value. OpLTrim: start, stop (varints, within the list; start > stop
	// empties it). OpLRem: count (varint), value, as LREM. OpLInsert:
	// Args[0] is "b" (before) or "a" (after), then pivot, value.
	OpLPush   command.Op = 40
	OpRPush   command.Op = 41
	OpLPop    command.Op = 42
	OpRPop    command.Op = 43
	OpLSet    command.Op = 44
	OpLTrim   command.Op = 45
	OpLRem    command.Op = 46
	OpLInsert command.Op = 47
	// OpFUpsert and OpFReplace write a feature series. Args[0] is the
	// retention (uvarint; 0: none): after the write the oldest points are
	// dropped while more remain. OpFUpsert: then timestamp (varint),
	// value pairs, upserted in order. OpFReplace: then start, end
	// (varints) and pairs: the points in [start, end] are removed, then
	// the pairs upserted.
	OpFUpsert  command.Op = 50
	OpFReplace command.Op = 51
	// OpFTrimBefore drops a series' points older than Args[0] (varint,
	// Unix ms): age retention, decided when the record was made.
	OpFTrimBefore command.Op = 52
	// OpCAdd adds to a control state's counter: bucket (varint), amount
	// (varint), and optionally a request id and the time until which it
	// is remembered (varint). OpCChange adds Args[1] to the distinct
	// values of bucket Args[0]. OpCSelect sets the selection: value,
	// occurrence (varint), "l" for last or "f" for first.
	OpCAdd    command.Op = 60
	OpCChange command.Op = 61
	OpCSelect command.Op = 62
	// OpCPace sets a pacer's theoretical arrival time to Args[0]
	// (varint, Unix ms).
	OpCPace command.Op = 63
	// OpCTrimBefore drops a control state's counter buckets that start
	// before Args[0] (varint, Unix ms): a quota's take drops what its
	// window no longer sees.
	OpCTrimBefore command.Op = 64
)

// Errors.
var (
	// ErrClosed is returned by calls on a closed shard.
	ErrClosed = errors.New("shard: closed")
	// ErrEmptyKey is returned for an empty key.
	ErrEmptyKey = errors.New("shard: empty key")
	// ErrTooLarge is returned for a write whose record exceeds the log's
	// record size limit (16 MiB by default). Nothing is written.
	ErrTooLarge = errors.New("shard: record too large")
	// ErrNoImage is returned by Open when the log's front has been
	// reclaimed and no checkpoint that covers it can be read: the shard
	// cannot be rebuilt without it, and refuses to start empty.
	ErrNoImage = errors.New("shard: no usable checkpoint for a reclaimed log")
	// ErrWrongType is returned by the string reads for a key that holds a
	// collection.
	ErrWrongType = errors.New("shard: key holds another type")
)

// Options configures a shard.
type Options struct {
	// OpenLog opens the shard's log. Required.
	OpenLog storage.OpenLogFunc
	// Namespace, Table and ShardIndex name the shard to OpenLog.
	Namespace, Table string
	ShardIndex       int
	// Durable acknowledges a write once the log has made it durable;
	// otherwise once it is written, with a sync every SyncInterval.
	// Default: false (the zero value); the engine sets it per table.
	Durable bool
	// SyncInterval is the async mode's sync period. Default: the log's.
	SyncInterval time.Duration
	// SegmentSize is the log's segment size. Default: the log's.
	SegmentSize int64
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// Stamp is the shard's id and routing range, written into its
	// checkpoints; Open refuses a checkpoint stamped otherwise. Default:
	// shard 0, range 0..0.
	Stamp Stamp
	// Cache, when set, holds log records in memory in front of the log,
	// under log id CacheID; the engine shares one among its shards.
	// Records are immutable, so cached ones never go stale. Default: nil,
	// every read goes to the log.
	Cache   storage.RecordCache
	CacheID uint64
	// RecentBytes bounds the newest string records the shard holds in
	// memory from their write until no key points at them (recent.go),
	// in front of Cache, which takes those pushed out while still
	// pointed at. Default: 0, none: records go to Cache as written.
	RecentBytes int64
	// RecentPool, when set, also bounds the recent records of every
	// shard sharing it. Default: nil, each shard bounded alone.
	RecentPool *RecentPool
	// Collections, when set, is the memory budget the shard's resident
	// collections count against (shared with other shards): past it, a
	// write spills the collections least recently used to the log (see
	// Spill). Default: nil, collections stay resident.
	Collections *Budget

	// Logger receives the shard's storage faults and recoveries. Default:
	// slog.Default().
	Logger *slog.Logger
	// RecoverWait is how long after a storage fault the shard first tries
	// to recover its log, and RecoverMaxWait the longest it waits between
	// tries, the wait doubling from one to the other (fault.go). Defaults:
	// 100 ms, 2 s.
	RecoverWait, RecoverMaxWait time.Duration

	// applyFault, when set (tests), runs before each command is applied,
	// live or replayed: a panic in it is a bug in the apply.
	applyFault func(idx uint64, c *command.Command)
}

// Shard is a handle on one shard's log, index and state. Open returns the
// shard's own; Exclusive hands its callback one that holds the shard, and
// WithAlso one whose writes carry more records. A handle says explicitly
// what a call runs inside of; nothing travels in its context.
type Shard struct {
	*shardState
	// held: calls through this handle run inside an Exclusive of the
	// shard, whose gate and lock are held already.
	held bool
	// also are records every write through this handle appends with its
	// own, in the same record (WithAlso).
	also []command.Command
}

// shardState is a shard's log, index and state, shared by its handles.
type shardState struct {
	opts Options
	dir  string
	log  storage.Log
	// panics counts the panics contained in write and read functions.
	panics atomic.Int64
	// damagedImages counts checkpoints Open skipped as damaged, and
	// replayed the log records it applied.
	damagedImages, replayed int
	// reached is the last record the load's replay came to: a replicated
	// log may have grown since, by records the tail applies.
	reached uint64
	// tailDone ends the goroutine that applies a replicated log's foreign
	// records (tail.go); nil for a log of the shard's own.
	tailDone chan struct{}
	// reclaimMu keeps a backup's hold and the log's reclamation apart;
	// while backupHolds is above zero no segment or checkpoint is
	// removed (backup.go).
	reclaimMu   sync.Mutex
	backupHolds atomic.Int32

	mu    sync.RWMutex
	index *keyindex.Index
	// strs counts the index's string entries by log index (under mu, as
	// the index): every change to the index goes through indexPut and
	// indexDelete.
	strs stringAddrs
	// snapEpoch numbers the checkpoints' snapshots of objs, and
	// snapActive counts those still being encoded: while one is, an
	// object is copied before its first change since the snapshot
	// (writableLocked), so the encoder reads objects nobody writes.
	snapEpoch  atomic.Uint64
	snapActive atomic.Int32
	// afterSnapshot, when set (tests), runs when a checkpoint has taken
	// its snapshot and let the writers go.
	afterSnapshot func()
	closed        bool
	// applied is the index of the last record applied; turn (on mu)
	// wakes writers waiting to apply theirs in log order.
	applied uint64
	turn    *sync.Cond
	// gate is held shared by appends and exclusively by Update, so that a
	// read-modify-write sees every append before it (gate.go).
	gate appendGate
	// failed is the log's permanent failure, once an append met it. lost
	// is the lowest index the log gave a record that is never applied
	// here (its append failed after taking it); 0 when none is.
	failed error
	lost   uint64
	// faults is the storage fault failed may be and its recovery
	// (fault.go).
	faults faultState
	// objs holds the collections; an object's index entry has its slot as
	// Addr. free lists the empty slots.
	objs []*object.Object
	free []uint32
	// sweepCursor is where the next expiry sweep resumes.
	sweepCursor uint64
	// checkpointed is the applied index of the last checkpoint written or
	// opened from.
	checkpointed uint64
	// pending holds the records appended and not yet applied, by index;
	// waiting counts the writers waiting on turn (see appendApply).
	pending map[uint64]*pendingRecord
	waiting int
	// watched are the keys WATCHed, and the last write of each (watch.go).
	// Under mu.
	watched map[string]*watchedKey
	// applying is the index of the record being applied: a collection's
	// version once the record changes it.
	applying uint64
	// payload is the key and argument bytes of the commands written
	// since open: write amplification's denominator.
	payload int64
	// liveBytes is the log bytes the index's strings point at (their
	// records' shares): what compaction must keep.
	liveBytes int64
	// recordRefs counts the index entries pointing at each record that
	// more than one entry points at (a record absent from it has one),
	// and lastPointed is the record the latest entry was pointed at: a
	// record nothing points at any more leaves the record cache at once
	// instead of crowding out live ones until evicted. Only a hint for
	// the cache: a count that is off costs a cache miss, nothing else.
	// lastRefs is the entries pointed at lastPointed beyond its first
	// that recordRefs does not hold yet: a pipeline's record takes one
	// map update when the next record is pointed at (or one of its own
	// entries goes), not one per command.
	recordRefs  map[uint64]int32
	lastPointed uint64
	lastRefs    int32
	// sparse are the records queued for RelocateSparse
	// (queueSparseLocked).
	sparse map[uint64]struct{}
	// recent holds the newest string records (nil when
	// Options.RecentBytes is 0).
	recent *recentRecords
	// probe coalesces concurrent Probes.
	probe probes
	// spill is the state of collection spilling (spill.go).
	spill spillState
	// comb queues read-modify-writes (combine.go).
	comb combiner
	// skipped are the records left out of the state: each panicked when
	// applied (skipped.go). Under mu once open.
	skipped map[uint64]struct{}
	// tx is the running Exclusive's records, applied and not yet in the
	// log (txgroup.go); nil outside one. Set under mu; loaded without it by
	// readRecord.
	tx atomic.Pointer[txGroup]
	// combineFault, when set (by tests), is called by the combiner for
	// each mutation it decides, outside the mutation's function.
	combineFault func(key []byte)
	// getFault, when set (by tests), is called by AppendString's look-up
	// under the read lock.
	getFault func(key []byte)
	// maintFault, when set (by tests), is called inside the maintenance
	// steps' locked scans, with the step's name.
	maintFault func(step string)
	// groupFault, when set (by tests), fails an Exclusive's group append
	// with its error instead of appending.
	groupFault func() error
	// afterAppend, when set (by tests), is called by a plain write once
	// the log has given its record an index, before it is applied.
	afterAppend func(idx uint64)
	// beforeRelocate, when set (by tests), is called by Compact between
	// reading a batch of values and moving them.
	beforeRelocate func()
}

// Entry metadata: the entry's type in the low 4 bits; metaTTL when the key
// has an expiry (so an expiry sweep reads only those); and, for a string,
// where its command lies in its record from bit 8: the offset of its first
// byte when metaOffset is set (a batch's command, found without skipping
// the ones before it), else its position (a one-command record, or an
// offset too large for 24 bits).
const (
	metaString   = 1
	metaObject   = 2
	metaSpilled  = 3 // a collection whose image is in the log
	metaTypeMask = 0xf
	metaTTL      = 0x10
	metaOffset   = 0x20
	metaPosShift = 8
	metaPosMax   = 1<<(32-metaPosShift) - 1
)

// loc is where e's command lies in its record.
func loc(e keyindex.Entry) command.Loc {
	if e.Meta&metaOffset != 0 {
		return command.Loc{Offset: int(e.Meta >> metaPosShift)}
	}
	return command.Loc{Pos: int(e.Meta >> metaPosShift)}
}

// isObject reports whether e names a resident collection's slot; every
// other entry (a string, a spilled collection) points at a log record.
func isObject(e keyindex.Entry) bool { return e.Meta&metaTypeMask == metaObject }

func isSpilled(e keyindex.Entry) bool { return e.Meta&metaTypeMask == metaSpilled }

// Open opens (creating if needed) the shard in dir, its log through
// opts.OpenLog, and replays the log.
func Open(dir string, opts Options) (*Shard, error) {
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.OpenLog == nil {
		opts.OpenLog = testOpenLog
	}
	if opts.OpenLog == nil {
		return nil, errors.New("shard: Options.OpenLog is required")
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.RecoverWait <= 0 {
		opts.RecoverWait = defaultRecoverWait
	}
	if opts.RecoverMaxWait <= 0 {
		opts.RecoverMaxWait = defaultRecoverMaxWait
	}
	l, err := opts.OpenLog(context.Background(), storage.LogOptions{
		Dir: dir, Namespace: opts.Namespace, Table: opts.Table, Shard: opts.ShardIndex,
		Durable: opts.Durable, SyncInterval: opts.SyncInterval, SegmentBytes: opts.SegmentSize,
	})
	if err != nil {
		return nil, fmt.Errorf("shard: open log: %w", err)
	}
	skipped, err := readSkipped(dir)
	if err != nil {
		l.Close()
		return nil, err
	}
	for {
		s := newShard(opts, dir, l, skipped)
		err := s.load(0)
		var rp *replayPanic
		if errors.As(err, &rp) {
			// A record that panics when applied is skipped, as it was
			// when it panicked live (its writer got an error), and the
			// load starts again without it: each pass skips one more.
			s.objDelta(-s.spill.bytes)
			skipped[rp.index] = struct{}{}
			if err := writeSkipped(dir, skipped); err != nil {
				l.Close()
				return nil, err
			}
			continue
		}
		if err != nil {
			s.objDelta(-s.spill.bytes)
			l.Close()
			return nil, err
		}
		s.applied = l.LastIndex()
		if r, ok := l.(storage.Replicated); ok {
			s.applied = s.reached
			s.startTail(r)
		}
		return s, nil
	}
}

// newShard is a shard over log l with nothing loaded.
func newShard(opts Options, dir string, l storage.Log, skipped map[uint64]struct{}) *Shard {
	s := &Shard{shardState: &shardState{opts: opts, dir: dir, log: l, index: keyindex.New(0), pending: map[uint64]*pendingRecord{}, recordRefs: map[uint64]int32{}, sparse: map[uint64]struct{}{}, skipped: skipped}}
	s.turn = sync.NewCond(&s.mu)
	if opts.RecentBytes > 0 {
		s.recent = newRecentRecords(opts.RecentBytes, opts.RecentPool)
	}
	return s
}

// load fills s from its newest usable image and the log's records after
// it, up to record upTo (0: to the log's end), records in skipped left out.
func (s *Shard) load(upTo uint64) error {
	st, err := s.loadImage()
	if err != nil {
		return err
	}
	from := s.log.FirstIndex()
	if st == nil && from > 1 {
		return fmt.Errorf("%w: the log starts at record %d", ErrNoImage, from)
	}
	if st != nil {
		s.index, from, s.liveBytes, s.checkpointed = st.index, st.applied+1, st.live, st.applied
		s.objs = st.objs
		for i, o := range s.objs {
			if o == nil {
				s.free = append(s.free, uint32(i))
			} else {
				o.Ver = st.applied
				s.recount(o)
			}
		}
		for e := range s.index.All() {
			if isSpilled(e) {
				s.spill.spilled++
			}
			if !isObject(e) {
				s.strs.add(e.Addr)
			}
		}
	}
	return s.replay(from, upTo)
}

func hashKey(key []byte) uint64 { return xxhash.Sum64(key) }

// replay applies the log's records from index from on, in order, up to
// upTo (0: the last), leaving out the skipped ones. A record whose apply
// panics ends it with a *replayPanic.
func (s *Shard) replay(from, upTo uint64) (err error) {
	it := s.log.Iterator(from)
	defer it.Close()
	var at uint64
	defer func() {
		if r := recover(); r != nil {
			s.panics.Add(1)
			err = &replayPanic{index: at, value: r}
		}
	}()
	s.reached = from - 1
	for it.Next() {
		at = it.Index()
		if upTo != 0 && at > upTo {
			break
		}
		s.reached = at
		if _, skip := s.skipped[at]; skip {
			continue
		}
		cmds, err := command.Decode(it.Value())
		if err != nil {
			return fmt.Errorf("shard: record %d: %w", at, err)
		}
		share := recordShare(len(it.Value()), len(cmds))
		for pos := range cmds {
			if f := s.opts.applyFault; f != nil {
				f(at, &cmds[pos].Command)
			}
			s.applyLocked(at, command.Loc{Pos: pos, Offset: cmds[pos].Offset}, share, &cmds[pos].Command)
		}
		s.replayed++
	}
	if err := it.Err(); err != nil {
		return fmt.Errorf("shard: replay: %w", err)
	}
	return nil
}

// applyLocked applies the command at l of the record at index (l holds
// both its position and, in a batch, its offset). A string's entry points
// at the record; a collection op changes the object in memory.
func (s *Shard) applyLocked(index uint64, l command.Loc, share int64, c *command.Command) {
	s.applying = index
	if len(s.watched) != 0 && c.Op != OpImage && (c.Op != OpDelete || s.presentLocked(c.Key)) {
		// A delete of an absent key (a STORE of nothing, say) changes
		// nothing, and Redis does not count it.
		s.touchWatchedLocked(index, c.Key)
		if c.Op == OpRename && len(c.Args) > 0 {
			s.touchWatchedLocked(index, c.Args[0])
		}
	}
	switch c.Op {
	case OpSet:
		s.pointAtRecord(c, metaString, index, l, share)
	case OpDelete:
		s.deleteLocked(c.Key)
	case OpImage:
		s.pointAtRecord(c, metaSpilled, index, l, share)
		s.spill.spilled++
	default:
		s.applyObjectLocked(c)
	}
}

// pointAtRecord points c's key at the command at l of the record at index,
// as an entry of type typ (a string or a spilled collection).
func (s *Shard) pointAtRecord(c *command.Command, typ uint32, index uint64, l command.Loc, share int64) {
	meta := typ | uint32(l.Pos)<<metaPosShift
	if l.Offset > 0 && l.Offset <= metaPosMax {
		meta = typ | metaOffset | uint32(l.Offset)<<metaPosShift
	}
	if c.Expiry != 0 {
		meta |= metaTTL
	}
	// Counted before the put, which may drop an entry of this same
	// record (a batch writing one key twice).
	if index == s.lastPointed {
		s.lastRefs++
	} else {
		s.flushRefsLocked()
		s.lastPointed = index
	}
	s.putLocked(c.Key, keyindex.Entry{Addr: index, Meta: meta})
	s.liveBytes += share
}

// keyMatch tells whether an index entry is key's: a collection by its key
// in memory, a string by the record it points at. cmd and share are the
// last record entry's command and recordShare (so the matching one's once
// a lookup found key), err a failed read's error. fill says when reading a
// record fills the record cache.
type keyMatch struct {
	s    *Shard
	key  []byte
	fill fillMode
	// keyOnly: the caller needs the match and share, not cmd, so only
	// the key is decoded (no allocation).
	keyOnly bool
	// valueOnly: the caller reads a string, so only its key, expiry and
	// value are decoded, into val (no allocation).
	valueOnly bool
	cmd       command.Decoded
	val       command.Value
	share     int64
	err       error
	// held is the recent record at a log index, already looked up.
	held heldRecord
}

// heldRecord is a recent record and its command count, at log index addr.
type heldRecord struct {
	addr uint64
	rec  []byte
	cmds int
}

// fillMode says whether a record read on a cache miss fills the cache.
type fillMode uint8

const (
	// fillNever: scans, sweeps and compaction, which must not push the
	// records readers want out of the cache.
	fillNever fillMode = iota
	// fillAlways: reads that serve a value.
	fillAlways
	// fillBatches: a write replacing a key reads its old record to match
	// the key; a record of several commands is cached, since the next
	// writes to its other keys read it too (a pipeline's SETs are one
	// record), while a record of one command, now dead, is not.
	fillBatches
)

func (m *keyMatch) match(e keyindex.Entry) bool {
	if isObject(e) {
		return bytes.Equal(m.s.objs[e.Addr].Key, m.key)
	}
	var key []byte
	var err error
	switch {
	case m.keyOnly:
		key, m.share, err = keyEntry(m.s, e, m.fill)
	case m.valueOnly && m.held.rec != nil && m.held.addr == e.Addr:
		// The recent record a batched read found for this entry: the
		// same bytes readRecord would return, which never change.
		m.val, _, m.share, err = decodeRecord(e, m.held.rec, m.held.cmds, command.StringAt)
		key = m.val.Key
	case m.valueOnly:
		m.val, m.share, err = decodeEntry(m.s, e, m.fill, command.StringAt)
		key = m.val.Key
	default:
		m.cmd, m.share, err = m.s.recordAt(e, m.fill)
		key = m.cmd.Key
	}
	if err != nil {
		m.err = err
		return false
	}
	return bytes.Equal(key, m.key)
}

// matcher returns keyMatch's function for key, without filling the cache.
func (s *Shard) matcher(key []byte) func(keyindex.Entry) bool {
	return (&keyMatch{s: s, key: key}).match
}

// setsKeys reports whether cmds point a key at their record.
func setsKeys(cmds []command.Command) bool {
	for i := range cmds {
		if cmds[i].Op == OpSet || cmds[i].Op == OpImage {
			return true
		}
	}
	return false
}

// recordShare is the log bytes a command of a record of n bytes holding
// cmds commands accounts for: the live-bytes count adds it when a string
// points at the record and takes it away when the string goes.
func recordShare(n, cmds int) int64 { return int64(n) / int64(max(cmds, 1)) }

// putLocked points key's entry at e, accounting for the entry it replaces.
func (s *Shard) putLocked(key []byte, e keyindex.Entry) {
	m := &keyMatch{s: s, key: key, fill: fillBatches, keyOnly: true}
	if old, ok := s.indexPut(hashKey(key), e, m.match); ok {
		s.dropped(old, m.share)
	}
}

// deleteLocked removes key's entry, if any, accounting for it.
func (s *Shard) deleteLocked(key []byte) {
	m := &keyMatch{s: s, key: key, fill: fillBatches, keyOnly: true}
	if old, ok := s.indexDelete(hashKey(key), m.match); ok {
		s.dropped(old, m.share)
	}
}

// indexPut is index.Put, counting string entries in strs.
func (s *Shard) indexPut(h uint64, e keyindex.Entry, match func(keyindex.Entry) bool) (keyindex.Entry, bool) {
	old, ok := s.index.Put(h, e, match)
	if ok && !isObject(old) {
		s.strs.remove(old.Addr)
	}
	if !isObject(e) {
		s.strs.add(e.Addr)
	}
	return old, ok
}

// indexDelete is index.Delete, counting string entries in strs.
func (s *Shard) indexDelete(h uint64, match func(keyindex.Entry) bool) (keyindex.Entry, bool) {
	old, ok := s.index.Delete(h, match)
	if ok && !isObject(old) {
		s.strs.remove(old.Addr)
	}
	return old, ok
}

// dropped accounts for an entry that left the index: a collection's slot
// is freed, a string's log bytes are no longer live.
func (s *Shard) dropped(old keyindex.Entry, share int64) {
	if isObject(old) {
		s.freeObject(old.Addr)
		return
	}
	if isSpilled(old) {
		s.spill.spilled--
	}
	s.liveBytes -= share
	s.releaseRecordLocked(old.Addr)
}

// releaseRecordLocked notes that one entry less points at the record at
// addr, and drops the record from the cache once none does.
func (s *Shard) releaseRecordLocked(addr uint64) {
	if addr == s.lastPointed {
		s.flushRefsLocked()
	}
	// A recent record counts its entries itself (in the slot a read of
	// it touches anyway); recordRefs holds the others'.
	if s.recent != nil && s.recent.release(addr) {
		return
	}
	if n, ok := s.recordRefs[addr]; ok {
		if n > 2 {
			s.recordRefs[addr] = n - 1
		} else {
			delete(s.recordRefs, addr)
		}
		if n-1 <= sparseRefs {
			s.queueSparseLocked(addr)
		}
		return
	}
	if s.opts.Cache != nil {
		s.opts.Cache.Delete(s.opts.CacheID, addr)
	}
}

// flushRefsLocked adds the entries pointed at lastPointed that recordRefs
// does not count yet.
func (s *Shard) flushRefsLocked() {
	if s.lastRefs > 0 {
		if s.recent == nil || !s.recent.addRefs(s.lastPointed, s.lastRefs) {
			s.recordRefs[s.lastPointed] = max(s.recordRefs[s.lastPointed], 1) + s.lastRefs
		}
		s.lastRefs = 0
	}
}

// commandAt reads the command an entry points at, without filling the
// record cache: for scans, sweeps and writes, which must not push the
// records readers want out of it.
func (s *Shard) commandAt(e keyindex.Entry) (command.Decoded, error) {
	c, _, err := s.recordAt(e, fillNever)
	return c, err
}

// readRecord reads the record at addr through the recent records and the
// cache, if any, and reports whether either had it, and the record's
// command count when the recent records know it (0 otherwise).
// It looks as heldRecord does, written out: a read's path, where the call
// cost a GET of a batched record 1.5 %.
func (s *Shard) readRecord(addr uint64) (rec []byte, cmds int, hit bool, err error) {
	if rec, ok := s.txRecord(addr); ok {
		return rec, 0, true, nil
	}
	if s.recent != nil {
		if rec, cmds, ok := s.recent.get(addr); ok {
			return rec, cmds, true, nil
		}
	}
	c := s.opts.Cache
	if c == nil {
		rec, err := s.log.Read(addr)
		return rec, 0, false, err
	}
	// The cache's own buffer, not a copy: it is never written again, and
	// what this package returns from it is read-only to its callers.
	if v, ok := c.GetShared(s.opts.CacheID, addr); ok {
		return v, 0, true, nil
	}
	rec, err = s.log.Read(addr)
	return rec, 0, false, err
}

// heldRecord is the record at addr when memory holds it (a running
// transaction's, the recent records, the cache), with its command count
// when the recent records know it (0 otherwise).
func (s *Shard) heldRecord(addr uint64) (rec []byte, cmds int, ok bool) {
	if rec, ok := s.txRecord(addr); ok {
		return rec, 0, true
	}
	if s.recent != nil {
		if rec, cmds, ok := s.recent.get(addr); ok {
			return rec, cmds, true
		}
	}
	if c := s.opts.Cache; c != nil {
		if v, ok := c.GetShared(s.opts.CacheID, addr); ok {
			return v, 0, true
		}
	}
	return nil, 0, false
}

// recordAt is commandAt that also returns the command's recordShare, and
// fills the cache on a miss as fill says. Only the entry's command is
// decoded, not the rest of its record.
func (s *Shard) recordAt(e keyindex.Entry, fill fillMode) (command.Decoded, int64, error) {
	return decodeEntry(s, e, fill, command.DecodeOne)
}

// decodeEntry reads the record e points at and decodes the entry's
// command in it with decode (command.DecodeOne, or command.KeyAt for the
// key alone), returning the command's recordShare too. A record read from
// the log fills the cache as fill says: always, or for a record of
// several commands.
func decodeEntry[T any](s *Shard, e keyindex.Entry, fill fillMode, decode func([]byte, command.Loc) (T, int, error)) (T, int64, error) {
	rec, cmds, hit, err := s.readRecord(e.Addr)
	if err != nil {
		var zero T
		return zero, 0, err
	}
	v, n, share, err := decodeRecord(e, rec, cmds, decode)
	if err == nil && !hit && (fill == fillAlways || fill == fillBatches && n > 1) {
		s.cacheRecord(e.Addr, rec)
	}
	return v, share, err
}

// keyEntry is decodeEntry with command.KeyAt, reading a record the log
// keeps in a file of its own only as far as its head: a write's check of
// the key it replaces, or a delete's, does not read a large value whole.
func keyEntry(s *Shard, e keyindex.Entry, fill fillMode) ([]byte, int64, error) {
	rf, files := s.log.(storage.RecordFiles)
	if !files {
		return decodeEntry(s, e, fill, command.KeyAt)
	}
	if rec, cmds, ok := s.heldRecord(e.Addr); ok {
		key, _, share, err := decodeRecord(e, rec, cmds, command.KeyAt)
		return key, share, err
	}
	rec, size, err := rf.ReadHead(e.Addr)
	if err != nil {
		return nil, 0, err
	}
	if int64(len(rec)) < size {
		key, n, err := command.KeyAt(rec, loc(e))
		if err != nil {
			// The key is past the head, or the command past it in a
			// batch: read whole.
			return decodeEntry(s, e, fill, command.KeyAt)
		}
		return key, recordShare(int(size), n), nil
	}
	key, n, share, err := decodeRecord(e, rec, 0, command.KeyAt)
	if err == nil && (fill == fillAlways || fill == fillBatches && n > 1) {
		s.cacheRecord(e.Addr, rec)
	}
	return key, share, err
}

// decodeRecord decodes e's command in rec, the record e points at, of cmds
// commands (0: unknown), returning the record's command count and the
// command's recordShare.
func decodeRecord[T any](e keyindex.Entry, rec []byte, cmds int, decode func([]byte, command.Loc) (T, int, error)) (T, int, int64, error) {
	l := loc(e)
	l.Count = cmds // known for a recent record: its header is not read
	v, n, err := decode(rec, l)
	if err != nil {
		var zero T
		return zero, 0, 0, fmt.Errorf("shard: record %d: %w", e.Addr, err)
	}
	return v, n, recordShare(len(rec), n), nil
}

// Set stores value under key, expiring at expiry (zero: never). It returns
// once the write is durable (or written, in async mode) and applied.
func (s *Shard) Set(ctx context.Context, key, value []byte, expiry time.Time) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	// The command and its argument list are one allocation: the record
	// pending apply holds them until it is applied.
	w := &struct {
		cmds [1]command.Command
		args [1][]byte
	}{}
	w.args[0] = value
	w.cmds[0] = command.Command{Op: OpSet, Time: s.opts.Now().UnixMilli(), Key: key, Args: w.args[:]}
	if !expiry.IsZero() {
		w.cmds[0].Expiry = expiry.UnixMilli()
	}
	return s.write(ctx, w.cmds[:])
}

// Delete removes key. It reports no error when key is absent.
func (s *Shard) Delete(ctx context.Context, key []byte) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	return s.write(ctx, []command.Command{{Op: OpDelete, Time: s.opts.Now().UnixMilli(), Key: key}})
}

// write appends cmds as one record and applies it. The append runs
// outside the shard's lock, so that the log batches concurrent writers into
// one write and one fsync; records are then applied in log order, each
// writer waiting for the records before its own. ctx bounds the wait for
// the append gate, not the append: see the package documentation.
func (s *Shard) write(ctx context.Context, cmds []command.Command) error {
	return s.appendApply(ctx, cmds, true)
}

func (s *Shard) appendApply(ctx context.Context, cmds []command.Command, shareGate bool) error {
	if also := slices.Clone(s.also); len(also) > 0 {
		now := s.opts.Now().UnixMilli()
		for i := range also {
			also[i].Time = now
		}
		cmds = append(cmds, also...)
	}
	rec := encodeRecord(cmds)
	tx := s.held
	if !tx {
		s.mu.RLock()
	}
	closed, failed := s.closed, s.failed
	if !tx {
		s.mu.RUnlock()
	}
	if closed {
		return ErrClosed
	}
	if failed != nil {
		return failed
	}
	if tx && s.tx.Load() != nil {
		return s.applyInTxLocked(cmds, rec)
	}
	// Inside Exclusive the gate and the lock are held already: this
	// goroutine's writes are the only ones.
	shareGate = shareGate && !tx
	var held *gateGroup
	if shareGate {
		var err error
		if held, err = s.gate.lockShared(ctx); err != nil {
			return err
		}
	}
	// ctx is honoured up to here and not passed to the log: once the log
	// gives the record an index it writes it whatever the caller does, and
	// replay applies it, so this writer must apply it too (and the writers
	// after it wait for that), however long the log takes.
	err := ctx.Err()
	var idx uint64
	if err == nil {
		idx, err = s.log.Append(context.Background(), rec)
	}
	if shareGate {
		s.gate.unlockShared(held)
	}
	if s.afterAppend != nil {
		s.afterAppend(idx)
	}
	if err != nil {
		switch {
		case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
			return err
		case errors.Is(err, storage.ErrClosed):
			return ErrClosed
		case errors.Is(err, storage.ErrRecordTooLarge):
			return fmt.Errorf("%w: %w", ErrTooLarge, err)
		case refused(err):
			return err
		}
		// The log refuses further writes (a failed write or fsync). A
		// record it gave an index to may or may not be in it: it is not
		// applied, the writers after it stop waiting for it, and the
		// recovery cuts it (fault.go).
		if !tx {
			s.mu.Lock()
		}
		err = s.logFaultLocked(err, idx, idx)
		if !tx {
			s.mu.Unlock()
		}
		return err
	}
	if !tx {
		s.mu.Lock()
		defer s.mu.Unlock()
	}
	// Records are applied in log order. Whoever holds the lock applies
	// every record that is ready in order, its own and those of writers
	// still waiting for the lock, so a group of writers committed by one
	// fsync is applied in one pass instead of each waking the others in
	// turn. A writer whose record is not next waits until a pass applied
	// it.
	if setsKeys(cmds) {
		// A record that strings point at is kept as written: the
		// reads of its keys and the key matching of the writes that
		// replace them find it (a pipeline's SETs are one record,
		// read by all of them). It is let go once no key points at it
		// (releaseRecordLocked).
		s.keepWrittenLocked(idx, rec, len(cmds))
	}
	p := &pendingRecord{cmds: cmds, share: recordShare(len(rec), len(cmds))}
	s.pending[idx] = p
	s.applyReadyLocked()
	// A failure of the log after this record does not end the wait: the
	// log writes nothing after a failed write, so every record before this
	// one is in the log too and its writer applies it.
	for !p.applied && !s.closed && (s.lost == 0 || s.lost > idx) {
		s.waiting++
		s.turn.Wait()
		s.waiting--
	}
	if !p.applied {
		delete(s.pending, idx)
		if s.closed {
			return ErrClosed
		}
		return s.failed
	}
	return p.err
}

// failLocked records the log's permanent failure err, met by an append
// that the log gave index idx (0: none), and wakes the writers waiting:
// those whose records come after idx stop waiting, since the record at
// idx is never applied, and so does a read-modify-write settling.
func (s *Shard) failLocked(err error, idx uint64) {
	if s.failed == nil {
		s.failed = err
	}
	// Not a storage fault: the state may not be what the log replays.
	s.faults.recoverable = false
	s.noteLostLocked(idx)
}

// noteLostLocked records that the record at idx (0: none) may or may not
// be in the log and will not be applied, and wakes the writers waiting
// their turn, who stop waiting for it.
func (s *Shard) noteLostLocked(idx uint64) {
	if idx != 0 && (s.lost == 0 || idx < s.lost) {
		s.lost = idx
	}
	s.turn.Broadcast()
}

// pendingRecord is a record appended to the log and not yet applied.
type pendingRecord struct {
	cmds    []command.Command
	share   int64
	applied bool
	// err is the apply's error: the record panicked and was skipped.
	err error
}

// applyRecordLocked applies the commands of the record at idx, counts
// their payload, and makes idx the applied index.
func (s *Shard) applyRecordLocked(idx uint64, share int64, cmds []command.Command) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = s.applyPanickedLocked(idx, r)
		}
	}()
	off := 0 // a one-command record's command has no offset
	if len(cmds) > 1 {
		off = command.BatchOffset(len(cmds)) // encodeRecord's layout
	}
	for pos := range cmds {
		if pos%stringBatch == 0 && len(cmds) >= touchMinCommands {
			s.touchKeysLocked(cmds[pos:min(len(cmds), pos+stringBatch)])
		}
		if f := s.opts.applyFault; f != nil {
			f(idx, &cmds[pos])
		}
		s.applyLocked(idx, command.Loc{Pos: pos, Offset: off}, share, &cmds[pos])
		if off > 0 {
			off += command.Size(&cmds[pos])
		}
		s.payload += int64(len(cmds[pos].Key))
		for _, a := range cmds[pos].Args {
			s.payload += int64(len(a))
		}
	}
	s.applied = idx
	return nil
}

// touchMinCommands is the fewest commands of a record whose keys are
// touched before it is applied: a record of two or three (a write and its
// expiry, say) mostly names one key, whose misses nothing would overlap.
const touchMinCommands = 4

// touchKeysLocked touches what applying cmds (at most stringBatch) will
// read to find the entries their keys replace (touchEntriesLocked): a
// pipeline's writes then wait for their cache misses together instead of
// one after another.
func (s *Shard) touchKeysLocked(cmds []command.Command) {
	var hs [stringBatch]uint64
	var held [stringBatch]heldRecord
	for i := range cmds {
		hs[i] = hashKey(cmds[i].Key)
	}
	s.touchEntriesLocked(hs[:len(cmds)], held[:len(cmds)], false)
}

// keepWrittenLocked keeps rec, a record strings point at, just written at
// idx: among the recent records when the shard has them, else in the
// record cache.
func (s *Shard) keepWrittenLocked(idx uint64, rec []byte, cmds int) {
	if s.recent != nil {
		s.recent.add(idx, rec, cmds, s.pushedOutLocked)
		return
	}
	s.cacheRecord(idx, rec)
}

// pushedOutLocked takes a record the recent records let go while keys
// still point at it: its entry count moves to recordRefs, the record to
// the record cache, and a sparse one to the queue of RelocateSparse.
func (s *Shard) pushedOutLocked(idx uint64, slot recentSlot) {
	if slot.refs > 1 {
		s.recordRefs[idx] = slot.refs
	}
	if slot.refs <= sparseRefs && slot.cmds >= sparseMinCommands {
		s.queueSparseLocked(idx)
	}
	s.cacheRecord(idx, slot.rec)
}

// A record of at least sparseMinCommands commands that at most one in
// sparseLiveShare of them point at is sparse: the record cache spends a
// whole record's bytes on each of its few live values, and a read of one
// that is not cached reads the whole record. A pipeline's SETs over many
// keys leave such records as later writes overwrite their keys. A record
// the recent records let go with sparseRefs entries or fewer, or whose
// count falls to sparseRefs or below after, is queued (once while queued,
// up to maxSparse) for RelocateSparse, which checks its share.
const (
	sparseMinCommands = 8
	sparseLiveShare   = 4
	sparseRefs        = 4
	maxSparse         = 1 << 14
)

// queueSparseLocked queues the record at addr for RelocateSparse.
func (s *Shard) queueSparseLocked(addr uint64) {
	if len(s.sparse) < maxSparse {
		s.sparse[addr] = struct{}{}
	}
}

// cacheRecord puts the record at idx in the record cache, if any. A cache
// that cannot take it costs a later read, not correctness.
func (s *Shard) cacheRecord(idx uint64, rec []byte) {
	if s.opts.Cache != nil {
		s.opts.Cache.Put(s.opts.CacheID, idx, rec)
	}
}

// encodeRecord is cmds as one log record.
func encodeRecord(cmds []command.Command) []byte {
	return appendRecord(nil, cmds)
}

// appendRecord appends cmds, as one log record, to dst.
func appendRecord(dst []byte, cmds []command.Command) []byte {
	// Sized first: appending into a growing buffer reallocated it a
	// dozen times for a pipeline's record.
	n := 2 // a one-command record's version and kind
	if len(cmds) > 1 {
		n = command.BatchOffset(len(cmds))
	}
	for i := range cmds {
		n += command.Size(&cmds[i])
	}
	dst = slices.Grow(dst, n)
	if len(cmds) == 1 {
		return command.Append(dst, &cmds[0])
	}
	return command.AppendBatch(dst, cmds)
}

// applyReadyLocked applies the pending records that come next in log
// order, and wakes the writers waiting if it applied any.
func (s *Shard) applyReadyLocked() {
	n := 0
	for {
		idx := s.applied + 1
		p := s.pending[idx]
		if p == nil {
			if s.applyForeignLocked(idx) {
				n++
				continue
			}
			break
		}
		if s.lost != 0 && idx >= s.lost {
			break // never applied: a failure came before it
		}
		delete(s.pending, idx)
		p.err = s.applyRecordLocked(idx, p.share, p.cmds)
		p.applied = true
		n++
	}
	if n > 0 && s.waiting > 0 {
		s.turn.Broadcast()
	}
}

// Get returns key's value, or false when it is absent or expired. The
// value may be the record cache's own buffer: the caller must not modify
// it.
func (s *Shard) Get(key []byte) ([]byte, bool, error) {
	v, _, ok, err := s.GetWithExpiry(key)
	return v, ok, err
}

// GetWithExpiry is Get that also returns the key's expiry (zero: none).
func (s *Shard) GetWithExpiry(key []byte) ([]byte, time.Time, bool, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, time.Time{}, false, ErrClosed
	}
	return s.getLocked(key)
}

// getLocked returns key's live string value and its expiry (zero: none);
// ErrWrongType when key holds a collection.
func (s *Shard) getLocked(key []byte) ([]byte, time.Time, bool, error) {
	it, err := s.lookupLocked(key, s.opts.Now().UnixMilli())
	switch {
	case err != nil || !it.Exists:
		return nil, time.Time{}, false, err
	case it.Obj != nil:
		return nil, time.Time{}, false, ErrWrongType
	}
	return it.Value, it.Expiry, true, nil
}

// Action is what an UpdateFunc decides.
type Action int

// Actions.
const (
	// Keep stores nothing.
	Keep Action = iota
	// Write stores the returned value and expiry.
	Write
	// Remove deletes the key.
	Remove
)

// UpdateFunc computes a key's new state from its current one (found is
// false when it is absent or expired): the value to store and its expiry
// (zero: none), and what to do. An error aborts the update, changes
// nothing, and is returned by Update.
type UpdateFunc func(old []byte, expiry time.Time, found bool) (value []byte, newExpiry time.Time, act Action, err error)

// Update is a read-modify-write of key: fn sees the value as every write
// appended before it left it, and no write lands between that read and
// Update's own. It holds the shard's append gate exclusively: new appends
// wait, those in flight are applied first. The stored record holds the
// resulting value, so the index points at bytes in the log as for Set.
func (s *Shard) Update(ctx context.Context, key []byte, fn UpdateFunc) error {
	if len(key) == 0 {
		return ErrEmptyKey
	}
	return s.MutateKey(ctx, key, func(v *View) ([]command.Command, error) {
		it, err := v.Get(key)
		if err != nil {
			return nil, err
		}
		if it.Obj != nil {
			return nil, ErrWrongType
		}
		val, newExp, act, err := fn(it.Value, it.Expiry, it.Exists)
		if err != nil {
			return nil, err
		}
		switch act {
		case Write:
			return []command.Command{StringSet(key, val, newExp)}, nil
		case Remove:
			if it.Exists {
				return []command.Command{{Op: OpDelete, Key: key}}, nil
			}
		}
		return nil, nil
	})
}

// StringSet is the command that stores a string value with an expiry
// (zero: none).
func StringSet(key, value []byte, expiry time.Time) command.Command {
	c := command.Command{Op: OpSet, Key: key, Args: [][]byte{value}}
	if !expiry.IsZero() {
		c.Expiry = expiry.UnixMilli()
	}
	return c
}

// Len is the number of keys the index holds (expired ones included until
// they are removed).
func (s *Shard) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.index.Len()
}

// IndexBytes is the resident index's memory.
func (s *Shard) IndexBytes() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.index.Bytes()
}

// Close syncs and closes the log.
func (s *Shard) Close() error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil
	}
	s.closed = true
	if s.tailDone != nil {
		close(s.tailDone)
	}
	s.stopRecoveryLocked()
	s.turn.Broadcast() // an Update waiting for appends to apply gives up
	// The budgets are shared with the shards still open.
	s.objDelta(-s.spill.bytes)
	if s.recent != nil {
		s.recent.clear()
	}
	err := s.log.Sync(context.Background())
	return errors.Join(err, s.log.Close())
}

// LogStats returns the shard's log statistics (bytes written, fsyncs).
func (s *Shard) LogStats() storage.LogStats { return s.log.Stats() }

// Scan returns live keys from the resident index in scan order, at least
// count of them unless the shard ends first, and the cursor to continue
// from (0 when done). It has SCAN's guarantee: a key present for the whole
// scan is returned at least once; a key may be returned twice.
func (s *Shard) Scan(cursor uint64, count int) ([][]byte, uint64, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, 0, ErrClosed
	}
	now := s.opts.Now().UnixMilli()
	var keys [][]byte
	var err error
	next := s.index.Scan(cursor, count, func(e keyindex.Entry) {
		key, expired, kerr := s.entryKeyLocked(e, now)
		switch {
		case kerr != nil:
			err = kerr
		case !expired:
			keys = append(keys, key)
		}
	})
	return keys, next, err
}

// SetBatch stores the OpSet commands cmds (StringSet's) as one record,
// applied in order, with Set's guarantees: it returns once the record is
// durable (or written, in async mode) and applied.
func (s *Shard) SetBatch(ctx context.Context, cmds []command.Command) error {
	now := s.opts.Now().UnixMilli()
	for i := range cmds {
		if cmds[i].Op != OpSet || len(cmds[i].Args) != 1 {
			return fmt.Errorf("shard: SetBatch takes string sets, got op %d", cmds[i].Op)
		}
		if len(cmds[i].Key) == 0 {
			return ErrEmptyKey
		}
		cmds[i].Time = now
	}
	return s.write(ctx, cmds)
}

// testOpenLog is the OpenLog of shards opened without one, set by this
// package's tests alone (to the disk log or the in-memory one).
var testOpenLog storage.OpenLogFunc
