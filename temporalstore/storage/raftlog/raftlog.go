package raftlog

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"log/slog"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixraft"
	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/internal/valuelog"
)

// Errors of this package, matched with errors.Is.
var (
	// ErrInvalidOptions is returned by New for unusable Options.
	ErrInvalidOptions = errors.New("raftlog: invalid options")
	// ErrStateTransfer is returned by a replica asked to restore a raft
	// snapshot newer than its value log: it fell behind the leader's
	// compacted raft log, and a snapshot carries no state yet.
	ErrStateTransfer = errors.New("raftlog: the replica is behind the group's snapshot; it needs the shard's state sent")
	// ErrCorrupt is returned for a value-log record or a proposal this
	// package did not write.
	ErrCorrupt = errors.New("raftlog: corrupt record")
)

// Options configures the replicated logs of one node.
type Options struct {
	// Host is the node's multi-group raft host: every shard's group shares
	// its log and fsyncs. Required.
	Host *matrixraft.Host
	// NodeID is this node's raft ID, the same in every group. Required.
	NodeID uint64
	// Peers are each group's first voters, this node among them; a group
	// found on disk ignores them. Empty: a new group waits to be added.
	Peers []matrixraft.Peer
	// Transport returns this node's transport for one group. Required.
	Transport func(group uint64) (matrixraft.Transport, error)
	// Group names a shard's raft group. Default: GroupOf.
	Group func(o storage.LogOptions) uint64
	// Raft is the template of every group's node options; ID, Dir, Peers,
	// StateMachine, Transport and Storage.Group are set per group. Its
	// zero fields get matrixraft's defaults.
	Raft matrixraft.Options
	// Logger receives group lifecycle events. Default: discards them.
	Logger *slog.Logger
}

// GroupOf is the default Options.Group: a hash of the shard's namespace,
// table and number, never 0.
func GroupOf(o storage.LogOptions) uint64 {
	h := fnv.New64a()
	h.Write([]byte(o.Namespace))
	h.Write([]byte{0})
	h.Write([]byte(o.Table))
	h.Write([]byte{0})
	h.Write([]byte(strconv.Itoa(o.Shard)))
	return max(h.Sum64()>>1, 1) // within a raft ID's comfortable range
}

func (o Options) withDefaults() Options {
	if o.Group == nil {
		o.Group = GroupOf
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

func (o Options) validate() error {
	switch {
	case o.Host == nil:
		return fmt.Errorf("%w: Host is required", ErrInvalidOptions)
	case o.NodeID == 0:
		return fmt.Errorf("%w: NodeID is required", ErrInvalidOptions)
	case o.Transport == nil:
		return fmt.Errorf("%w: Transport is required", ErrInvalidOptions)
	}
	return nil
}

// Logs opens the replicated logs of one node's shards.
type Logs struct {
	opts Options

	mu   sync.Mutex
	open map[uint64]*Log
}

// New returns the replicated logs of the node opts describes.
func New(opts Options) (*Logs, error) {
	opts = opts.withDefaults()
	if err := opts.validate(); err != nil {
		return nil, err
	}
	return &Logs{opts: opts, open: map[uint64]*Log{}}, nil
}

// Node returns the raft node of an open group, or nil.
func (ls *Logs) Node(group uint64) *matrixraft.Node {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	if l := ls.open[group]; l != nil {
		return l.node
	}
	return nil
}

// Groups returns the open groups' IDs.
func (ls *Logs) Groups() []uint64 {
	ls.mu.Lock()
	defer ls.mu.Unlock()
	out := make([]uint64, 0, len(ls.open))
	for g := range ls.open {
		out = append(out, g)
	}
	return out
}

// valueLogSyncInterval bounds how stale the value log's file may be: it is
// a copy of committed raft entries, synced for certain before each raft
// snapshot, so this is only to keep its dirty pages few.
const valueLogSyncInterval = time.Second

// headerRoom is what a record's header and its proposal framing may add.
const headerRoom = 64

// OpenLog is a storage.OpenLogFunc: it opens the shard's value log in
// o.Dir and starts the node of its raft group.
func (ls *Logs) OpenLog(ctx context.Context, o storage.LogOptions) (storage.Log, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	group := ls.opts.Group(o)
	ls.mu.Lock()
	if ls.open[group] != nil {
		ls.mu.Unlock()
		return nil, fmt.Errorf("%w: group %d", storage.ErrLocked, group)
	}
	l := &Log{logs: ls, group: group, instance: rand.Uint64() | 1, waiting: map[uint64]*waiter{}, appended: make(chan struct{}, 1), attached: make(chan struct{})}
	ls.open[group] = l
	ls.mu.Unlock()
	if err := l.start(o); err != nil {
		ls.mu.Lock()
		delete(ls.open, group)
		ls.mu.Unlock()
		return nil, err
	}
	return l, nil
}

func (l *Log) start(o storage.LogOptions) error {
	opts := l.logs.opts
	vl, err := wal.Open(o.Dir, wal.Options{SegmentSize: o.SegmentBytes, Sync: wal.SyncInterval, SyncInterval: valueLogSyncInterval, Compression: wal.CompressionFast})
	if err != nil {
		return disk.WALError(err)
	}
	l.vl = vl
	if err := l.recover(); err != nil {
		vl.Close()
		return err
	}
	tr, err := opts.Transport(l.group)
	if err != nil {
		vl.Close()
		return err
	}
	inValueLog := l.lastRaft // before the node's applies change it
	ro := opts.Raft
	ro.ID, ro.Dir, ro.Peers = opts.NodeID, "", opts.Peers
	ro.StateMachine, ro.Transport = (*applier)(l), tr
	ro.Storage.Group = l.group
	node, err := opts.Host.StartNode(ro)
	if err != nil {
		vl.Close()
		return err
	}
	l.node = node
	opts.Logger.Info("raftlog: group started", "group", l.group, "namespace", o.Namespace, "table", o.Table, "shard", o.Shard, "value_log_last", vl.LastIndex(), "raft_applied_in_value_log", inValueLog)
	return nil
}

// Log is one shard's replicated log (see the package doc).
type Log struct {
	logs     *Logs
	group    uint64
	instance uint64 // tells this open log's proposals from others'
	vl       *wal.Log
	node     *matrixraft.Node
	appended chan struct{}

	mu sync.Mutex // guards the fields below
	// lastRaft is the raft index of the entry the value log's last record
	// came from: entries up to it are in the value log.
	lastRaft uint64
	seq      uint64
	waiting  map[uint64]*waiter
	// owned are the value-log records applied for Append calls that have
	// not handed them to the shard yet.
	owned valuelog.Owned
	// readyTerm is the term in which a ReadIndex round made this leader
	// sure its value log holds every earlier term's entries.
	readyTerm uint64
	failed    error
	closed    bool
	// images is the shard's state, for snapshots sent to replicas far
	// behind (nil until the shard attaches, which closes attached).
	images   storage.ShardImages
	attached chan struct{}
}

type waiter struct {
	applied bool
	first   uint64
}

var (
	_ storage.Log            = (*Log)(nil)
	_ storage.Replicated     = (*Log)(nil)
	_ matrixraft.StateSender = (*applier)(nil)
)

// Attach implements storage.Replicated.
func (l *Log) Attach(s storage.ShardImages) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.images == nil {
		close(l.attached)
	}
	l.images = s
}

// attachWait bounds how long a state sent before the shard attached waits
// for it: the shard is loading then, and attaches when done.
const attachWait = 30 * time.Second

// Node returns the group's raft node.
func (l *Log) Node() *matrixraft.Node { return l.node }

// Group returns the group's ID.
func (l *Log) Group() uint64 { return l.group }

// Append proposes rec and returns its value-log index once committed and
// applied here.
func (l *Log) Append(ctx context.Context, rec []byte) (uint64, error) {
	return l.propose(ctx, [][]byte{rec})
}

// AppendBatch proposes recs as one entry.
func (l *Log) AppendBatch(ctx context.Context, recs [][]byte) (uint64, error) {
	return l.propose(ctx, recs)
}

// AppendGroup is AppendBatch: an entry is applied whole or, after a crash
// tore it in the value log, cut back and applied again.
func (l *Log) AppendGroup(ctx context.Context, recs [][]byte) (uint64, error) {
	if valuelog.GroupTooLarge(recs, l.MaxGroupSize()) {
		return 0, storage.ErrGroupTooLarge
	}
	return l.propose(ctx, recs)
}

func (l *Log) propose(ctx context.Context, recs [][]byte) (uint64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	for _, r := range recs {
		if len(r) > l.MaxRecordSize() {
			return 0, storage.ErrRecordTooLarge
		}
	}
	l.mu.Lock()
	if err := l.usableLocked(); err != nil {
		l.mu.Unlock()
		return 0, err
	}
	if len(recs) == 0 {
		defer l.mu.Unlock()
		return l.vl.LastIndex() + 1, nil
	}
	ready := l.readyTerm
	l.mu.Unlock()
	if l.node.Leader() != l.logs.opts.NodeID {
		return 0, l.notLeader()
	}
	if term := l.node.Term(); ready != term {
		// A new leader first makes sure every entry of the terms before
		// its own is applied here, so the shard sees them before it
		// decides anything from its state.
		if err := l.node.Read(ctx, matrixraft.ReadLinearizable); err != nil {
			return 0, raftError(err)
		}
		l.mu.Lock()
		l.readyTerm = term
		l.mu.Unlock()
	}
	l.mu.Lock()
	l.seq++
	seq := l.seq
	w := &waiter{}
	l.waiting[seq] = w
	l.mu.Unlock()
	res, err := l.node.Propose(ctx, encodeProposal(l.instance, seq, recs))
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.waiting, seq)
	if w.applied {
		return w.first, nil // applied, whatever Propose said after
	}
	if err == nil {
		// Applied elsewhere than through this open log's state machine:
		// cannot happen, the proposer applies its own entries.
		return 0, fmt.Errorf("%w: proposal %d applied without its record", ErrCorrupt, seq)
	}
	_ = res
	if l.failed != nil {
		return 0, l.failed
	}
	return 0, raftError(err)
}

func (l *Log) notLeader() error {
	return fmt.Errorf("%w: group %d, leader %d", storage.ErrNotLeader, l.group, l.node.Leader())
}

// raftError maps matrixraft's errors onto storage's.
func raftError(err error) error {
	switch {
	case errors.Is(err, matrixraft.ErrNotLeader), errors.Is(err, matrixraft.ErrProposalDropped):
		return fmt.Errorf("%w: %w", storage.ErrNotLeader, err)
	case errors.Is(err, matrixraft.ErrUnknownOutcome):
		return fmt.Errorf("%w: %w", storage.ErrUnknownOutcome, err)
	case errors.Is(err, matrixraft.ErrStopped):
		return fmt.Errorf("%w: %w", storage.ErrClosed, err)
	}
	return err
}

func (l *Log) usableLocked() error {
	switch {
	case l.closed:
		return storage.ErrClosed
	case l.failed != nil:
		return l.failed
	}
	return nil
}

// Appended implements storage.Replicated.
func (l *Log) Appended() <-chan struct{} { return l.appended }

// Foreign implements storage.Replicated.
func (l *Log) Foreign(index uint64) bool {
	if index > l.vl.LastIndex() {
		return false
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.owned.Foreign(index)
}

// Read returns the record at index.
func (l *Log) Read(index uint64) ([]byte, error) {
	rec, err := l.vl.Read(index)
	if err != nil {
		return nil, disk.WALError(err)
	}
	_, body, err := splitHeader(rec)
	return body, err
}

// Iterator returns an iterator over the value log from index from.
func (l *Log) Iterator(from uint64) storage.Iterator {
	return &iterator{it: l.vl.Iterator(from)}
}

// FirstIndex is the value log's first index.
func (l *Log) FirstIndex() uint64 { return l.vl.FirstIndex() }

// LastIndex is the value log's last index.
func (l *Log) LastIndex() uint64 { return l.vl.LastIndex() }

// Segments describes the value log's segments.
func (l *Log) Segments() []storage.Segment { return valuelog.Segments(l.vl) }

// TruncateFront drops value-log segments before index. It is local: each
// replica reclaims its own value log.
func (l *Log) TruncateFront(ctx context.Context, index uint64) error {
	return disk.WALError(l.vl.TruncateFront(ctx, index))
}

// Sync makes the value log durable up to its last record.
func (l *Log) Sync(ctx context.Context) error { return disk.WALError(l.vl.Sync(ctx)) }

// MaxRecordSize is the value log's, less the room its header takes.
func (l *Log) MaxRecordSize() int { return l.vl.MaxRecordSize() - headerRoom }

// MaxGroupSize bounds a group by one raft entry's comfortable size.
func (l *Log) MaxGroupSize() int64 {
	return min(l.vl.MaxGroupSize(), int64(l.vl.MaxRecordSize()))
}

// Stats returns the value log's counters; the raft log's are the Host's.
func (l *Log) Stats() storage.LogStats { return valuelog.Stats(l.vl) }

// Close stops the group's node here and closes the value log.
func (l *Log) Close() error {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return storage.ErrClosed
	}
	l.closed = true
	l.mu.Unlock()
	l.node.Stop()
	err := l.vl.Close()
	l.logs.mu.Lock()
	delete(l.logs.open, l.group)
	l.logs.mu.Unlock()
	return disk.WALError(err)
}

// recover finds the raft index the value log holds entries up to, cutting
// back an entry a crash tore.
func (l *Log) recover() error {
	last := l.vl.LastIndex()
	if last < l.vl.FirstIndex() {
		return nil
	}
	rec, err := l.vl.Read(last)
	if err != nil {
		return disk.WALError(err)
	}
	h, _, err := splitHeader(rec)
	if err != nil {
		return fmt.Errorf("value log record %d: %w", last, err)
	}
	if h.last {
		l.lastRaft = h.raft
		return nil
	}
	// A torn entry: drop its records, raft applies it again.
	cut := last
	for cut >= l.vl.FirstIndex() {
		rec, err := l.vl.Read(cut)
		if err != nil {
			return disk.WALError(err)
		}
		hh, _, err := splitHeader(rec)
		if err != nil {
			return fmt.Errorf("value log record %d: %w", cut, err)
		}
		if hh.raft != h.raft {
			l.lastRaft = hh.raft
			break
		}
		cut--
	}
	l.logs.opts.Logger.Warn("raftlog: cut a torn entry from the value log", "group", l.group, "raft_index", h.raft, "records_after", cut)
	return disk.WALError(l.vl.TruncateBack(context.Background(), cut))
}

// applier is a Log as the group's state machine.
type applier Log

// Apply appends the committed entries' records to the value log; an entry
// the value log holds already (a reopened replica's) is skipped.
func (a *applier) Apply(batch []matrixraft.Command) [][]byte {
	l := (*Log)(a)
	out := make([][]byte, len(batch))
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.failed != nil {
		return out
	}
	type placed struct {
		cmd   int
		first int
		n     int
		seq   uint64
		mine  bool
	}
	var recs [][]byte
	var ps []placed
	for i, c := range batch {
		if c.Index <= l.lastRaft {
			continue
		}
		p, err := decodeProposal(c.Data)
		if err != nil {
			l.failed = fmt.Errorf("raftlog: entry %d: %w", c.Index, err)
			return out
		}
		ps = append(ps, placed{cmd: i, first: len(recs), n: len(p.recs), seq: p.seq, mine: p.instance == l.instance})
		for j, r := range p.recs {
			recs = append(recs, withHeader(header{raft: c.Index, last: j == len(p.recs)-1}, r))
		}
	}
	if len(recs) == 0 {
		return out
	}
	first, err := l.vl.AppendBatch(context.Background(), recs)
	if err != nil {
		// The value log can take no more: this replica stops serving the
		// shard rather than diverge from the others.
		l.failed = fmt.Errorf("raftlog: value log: %w", disk.WALError(err))
		l.logs.opts.Logger.Error("raftlog: value log failed", "group", l.group, "err", err)
		return out
	}
	for _, p := range ps {
		idx := first + uint64(p.first)
		out[p.cmd] = binary.BigEndian.AppendUint64(nil, idx)
		if w := l.waiting[p.seq]; p.mine && w != nil {
			w.applied, w.first = true, idx
			l.owned.Add(idx, idx+uint64(p.n))
		}
	}
	l.lastRaft = batch[len(batch)-1].Index
	select {
	case l.appended <- struct{}{}:
	default:
	}
	return out
}

const snapMagic = "RLS1"

// Snapshot syncs the value log and records how far it goes: the state is
// the value log itself.
func (a *applier) Snapshot(w io.Writer) error {
	l := (*Log)(a)
	if err := l.vl.Sync(context.Background()); err != nil {
		return disk.WALError(err)
	}
	l.mu.Lock()
	last := l.lastRaft
	l.mu.Unlock()
	b := binary.AppendUvarint([]byte(snapMagic), last)
	_, err := w.Write(b)
	return err
}

// Restore accepts a snapshot the value log already covers, and installs
// the shard's state sent with one it does not (SendState).
func (a *applier) Restore(r io.Reader) error {
	l := (*Log)(a)
	b, err := io.ReadAll(r)
	if err != nil {
		return err
	}
	if bytes.HasPrefix(b, []byte(fullMagic)) {
		return l.install(b)
	}
	if len(b) < len(snapMagic) || string(b[:len(snapMagic)]) != snapMagic {
		return fmt.Errorf("%w: snapshot header", ErrCorrupt)
	}
	last, n := binary.Uvarint(b[len(snapMagic):])
	if n <= 0 {
		return fmt.Errorf("%w: snapshot index", ErrCorrupt)
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if last > l.lastRaft {
		return fmt.Errorf("%w: group %d, snapshot holds entries to %d, value log to %d", ErrStateTransfer, l.group, last, l.lastRaft)
	}
	return nil
}

// A state sent to a replica (SendState) is a valuelog state with this
// magic; its records carry their headers.
const fullMagic = "RLF1"

// SendState writes the shard's image and the value-log records from the
// log's front on, which hold every record the image needs and those
// after it.
func (a *applier) SendState(w io.Writer) error {
	l := (*Log)(a)
	l.mu.Lock()
	images := l.images
	l.mu.Unlock()
	if images == nil {
		return fmt.Errorf("%w: group %d: no shard attached", ErrStateTransfer, l.group)
	}
	// The front is read before the checkpoint, whose image needs no
	// record before it; a reclaim that drops it meanwhile fails this
	// send, and raft sends again later.
	first := l.vl.FirstIndex()
	img, err := images.CaptureImage(context.Background())
	if err != nil {
		return err
	}
	return valuelog.WriteState(w, fullMagic, img, l.vl, first, l.vl.LastIndex())
}

// install replaces the value log and the shard's state with a state sent
// by SendState, unless the value log holds it already (a replica
// restarting from a snapshot it installed).
func (l *Log) install(b []byte) error {
	st, err := valuelog.DecodeState(b, fullMagic)
	if err != nil {
		return fmt.Errorf("%w: %w", ErrCorrupt, err)
	}
	recs, count := st.Recs, len(st.Recs)
	var upTo uint64
	if count > 0 {
		h, _, err := splitHeader(recs[count-1])
		if err != nil {
			return err
		}
		upTo = h.raft
	}
	l.mu.Lock()
	images, have := l.images, l.lastRaft
	l.mu.Unlock()
	if upTo <= have {
		return nil // the value log holds it already
	}
	if images == nil {
		// Sent while the shard loads: it attaches when done. A restart
		// that crashed while installing waits in vain, since the shard
		// loads only once this open returns, and fails.
		select {
		case <-l.attached:
		case <-time.After(attachWait):
			return fmt.Errorf("%w: group %d: a state sent to this replica was not installed whole", ErrStateTransfer, l.group)
		}
		l.mu.Lock()
		images = l.images
		l.mu.Unlock()
	}
	reset := func() error {
		if err := valuelog.Reset(l.vl, st); err != nil {
			return err
		}
		l.mu.Lock()
		l.lastRaft = upTo
		l.owned.Reset()
		l.mu.Unlock()
		return nil
	}
	if err := images.InstallImage(st.Image, reset); err != nil {
		return err
	}
	l.logs.opts.Logger.Info("raftlog: installed a shard's state sent by its leader", "group", l.group, "records", count, "first", st.First, "raft_index", upTo)
	return nil
}

type iterator struct {
	it    *wal.Iterator
	value []byte
	err   error
}

func (it *iterator) Next() bool {
	if it.err != nil || !it.it.Next() {
		return false
	}
	_, it.value, it.err = splitHeader(it.it.Value())
	return it.err == nil
}

func (it *iterator) Index() uint64 { return it.it.Index() }
func (it *iterator) Value() []byte { return it.value }

func (it *iterator) Err() error {
	if it.err != nil {
		return it.err
	}
	return disk.WALError(it.it.Err())
}

func (it *iterator) Close() error { return disk.WALError(it.it.Close()) }
