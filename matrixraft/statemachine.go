package matrixraft

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"io"
	"maps"
	"slices"
)

// Command is one committed proposal handed to the state machine.
type Command struct {
	// Index is the command's raft log index.
	Index uint64
	// Data is what was proposed. It must not be retained after Apply
	// returns unless copied.
	Data []byte
}

// StateMachine is the replicated state. Apply must be deterministic: every
// replica applies the same batches and must reach the same state and
// results. The node calls Apply, Snapshot and Restore (and CaptureSnapshot,
// see SnapshotCapturer) from one goroutine, never concurrently with each
// other; reads the application serves itself must synchronize with Apply.
type StateMachine interface {
	// Apply applies a batch of committed commands in log order and returns
	// one result per command; a proposer receives its command's result.
	Apply(batch []Command) [][]byte
	// Snapshot writes the whole state to w.
	Snapshot(w io.Writer) error
	// Restore replaces the whole state with one written by Snapshot.
	Restore(r io.Reader) error
}

// SnapshotCapturer is an optional interface of a StateMachine: one that
// can capture its state cheaply keeps Snapshot's serialisation off the
// node's loop. Without it the node calls Snapshot on the loop, and every
// proposal waits while the whole state is written; with it the loop only
// takes the capture, and the capture is written beside the loop while
// Apply goes on.
type SnapshotCapturer interface {
	// CaptureSnapshot returns the state as it is now. The node calls it
	// on its loop goroutine, between applies, like Snapshot, so it should
	// cost little (marking a copy-on-write structure shared, pinning a
	// version). The capture's WriteTo is then called once, from another
	// goroutine and concurrently with Apply and Restore, and must write
	// exactly what Snapshot would have written at the time of the
	// capture: later Apply and Restore calls must leave it unchanged.
	// WriteTo's writer is an in-memory buffer with a Grow(n int) method;
	// a capture that knows its size can call it first, so the buffer is
	// allocated once rather than grown step by step.
	CaptureSnapshot() (io.WriterTo, error)
}

// StateSender is an optional interface of a StateMachine whose snapshots
// hold little: one that keeps its state in files of its own, whose
// Snapshot records only how far they go. A replica that needs a snapshot
// (it fell behind the compacted log, or just joined) could not restore
// from that, so the node asks a StateSender for its whole state when it
// sends one, and Restore on the replica receives it in place of the
// snapshot's own data.
type StateSender interface {
	// SendState writes the whole state as it is now, applied up to an
	// index at or past the snapshot being sent (Restore's state machine
	// then skips the entries it holds already, as it must on a restart
	// too). The node calls it from a goroutine of its own, concurrently
	// with Apply.
	SendState(w io.Writer) error
}

// session is a client's exactly-once record: the last sequence applied and
// its result.
type session struct {
	seq    uint64
	result []byte
	index  uint64 // log index of that apply, for deterministic eviction
}

// replicated is the state the node keeps beside the user's state machine and
// that every snapshot carries: sessions, removed IDs and peer addresses.
type replicated struct {
	sessions map[uint64]*session
	removed  map[uint64]bool
	addrs    map[uint64]string
}

func newReplicated() replicated {
	return replicated{sessions: map[uint64]*session{}, removed: map[uint64]bool{}, addrs: map[uint64]string{}}
}

const snapDataMagic = "MRSM1"

// snapshotState is a snapshot's state as the loop captured it: a copy of
// the node's replicated state and the user's state, captured or already
// written. encode turns it into snapshot data, off the loop.
type snapshotState struct {
	rep replicated
	sm  io.WriterTo
}

// captureState captures the node's replicated state and the user's. It
// runs on the loop: the maps are copied (a session is replaced on every
// apply, never changed, so sharing them is safe) and the state machine is
// captured when it can be, written here when it cannot.
func captureState(rep replicated, sm StateMachine) (snapshotState, error) {
	st := snapshotState{rep: replicated{
		sessions: maps.Clone(rep.sessions),
		removed:  maps.Clone(rep.removed),
		addrs:    maps.Clone(rep.addrs),
	}}
	if c, ok := sm.(SnapshotCapturer); ok {
		w, err := c.CaptureSnapshot()
		if err != nil {
			return snapshotState{}, fmt.Errorf("state machine capture: %w", err)
		}
		if w == nil {
			// Fail here, on the loop, rather than panic beside it.
			return snapshotState{}, fmt.Errorf("%w: CaptureSnapshot returned no capture", ErrInvalidOptions)
		}
		st.sm = w
		return st, nil
	}
	var b bytes.Buffer
	if err := sm.Snapshot(&b); err != nil {
		return snapshotState{}, fmt.Errorf("state machine snapshot: %w", err)
	}
	st.sm = &b
	return st, nil
}

// encode writes the snapshot data: the node's replicated state, then the
// user's.
func (st snapshotState) encode() ([]byte, error) {
	rep := st.rep
	var b bytes.Buffer
	b.WriteString(snapDataMagic)
	var tmp []byte
	tmp = binary.AppendUvarint(tmp, uint64(len(rep.removed)))
	for _, id := range slices.Sorted(maps.Keys(rep.removed)) {
		tmp = binary.AppendUvarint(tmp, id)
	}
	tmp = binary.AppendUvarint(tmp, uint64(len(rep.addrs)))
	for _, id := range slices.Sorted(maps.Keys(rep.addrs)) {
		tmp = binary.AppendUvarint(tmp, id)
		tmp = binary.AppendUvarint(tmp, uint64(len(rep.addrs[id])))
		tmp = append(tmp, rep.addrs[id]...)
	}
	tmp = binary.AppendUvarint(tmp, uint64(len(rep.sessions)))
	for _, id := range slices.Sorted(maps.Keys(rep.sessions)) {
		s := rep.sessions[id]
		tmp = binary.AppendUvarint(tmp, id)
		tmp = binary.AppendUvarint(tmp, s.seq)
		tmp = binary.AppendUvarint(tmp, s.index)
		tmp = binary.AppendUvarint(tmp, uint64(len(s.result)))
		tmp = append(tmp, s.result...)
	}
	var hdr [binary.MaxVarintLen64]byte
	hn := binary.PutUvarint(hdr[:], uint64(len(tmp)))
	if sb, ok := st.sm.(*bytes.Buffer); ok {
		b.Grow(hn + len(tmp) + sb.Len()) // one copy of a state written on the loop
	}
	b.Write(hdr[:hn])
	b.Write(tmp)
	if _, err := st.sm.WriteTo(&b); err != nil {
		return nil, fmt.Errorf("state machine snapshot: %w", err)
	}
	return b.Bytes(), nil
}

// decodeSnapshotData reads the node's replicated state and returns the rest,
// the user's state.
func decodeSnapshotData(data []byte) (replicated, []byte, error) {
	rep := newReplicated()
	if len(data) < len(snapDataMagic) || string(data[:len(snapDataMagic)]) != snapDataMagic {
		return rep, nil, fmt.Errorf("%w: snapshot data header", ErrCorrupt)
	}
	r := recordReader{b: data[len(snapDataMagic):]}
	body := r.bytes(r.uvarint())
	if r.err != nil {
		return rep, nil, r.err
	}
	rest := r.b
	r = recordReader{b: body}
	n := r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		rep.removed[r.uvarint()] = true
	}
	n = r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		id := r.uvarint()
		rep.addrs[id] = string(r.bytes(r.uvarint()))
	}
	n = r.uvarint()
	for i := uint64(0); i < n && r.err == nil; i++ {
		id := r.uvarint()
		s := &session{seq: r.uvarint(), index: r.uvarint()}
		s.result = bytes.Clone(r.bytes(r.uvarint()))
		rep.sessions[id] = s
	}
	if r.err == nil && len(r.b) != 0 {
		r.err = fmt.Errorf("%w: trailing bytes in snapshot state", ErrCorrupt)
	}
	return rep, rest, r.err
}

// Proposal envelope: every normal entry the node writes starts with it.
//
//	[0]   version (1)
//	uvarint origin node ID, request ID, client ID, sequence
//	rest  the proposed data
const envVersion = 1

type envelope struct {
	origin, req, client, seq uint64
	data                     []byte
}

func encodeEnvelope(e envelope) []byte {
	b := make([]byte, 0, 1+4*binary.MaxVarintLen64+len(e.data))
	b = append(b, envVersion)
	b = binary.AppendUvarint(b, e.origin)
	b = binary.AppendUvarint(b, e.req)
	b = binary.AppendUvarint(b, e.client)
	b = binary.AppendUvarint(b, e.seq)
	return append(b, e.data...)
}

func decodeEnvelope(b []byte) (envelope, error) {
	if len(b) == 0 || b[0] != envVersion {
		return envelope{}, fmt.Errorf("%w: proposal envelope version", ErrCorrupt)
	}
	r := recordReader{b: b[1:]}
	e := envelope{origin: r.uvarint(), req: r.uvarint(), client: r.uvarint(), seq: r.uvarint()}
	e.data = r.b
	return e, r.err
}

// Conf change context: an address for a new member plus the proposer's
// request, so the proposer learns the outcome.
//
//	[0] 0xCC, uvarint origin, request ID, address length, address
const ccMagic = 0xCC

func encodeCCContext(origin, req uint64, addr string) []byte {
	b := []byte{ccMagic}
	b = binary.AppendUvarint(b, origin)
	b = binary.AppendUvarint(b, req)
	b = binary.AppendUvarint(b, uint64(len(addr)))
	return append(b, addr...)
}

// decodeCCContext also accepts a bare address (as raft's bootstrap writes).
func decodeCCContext(b []byte) (origin, req uint64, addr string) {
	if len(b) == 0 || b[0] != ccMagic {
		return 0, 0, string(b)
	}
	r := recordReader{b: b[1:]}
	origin, req = r.uvarint(), r.uvarint()
	addr = string(r.bytes(r.uvarint()))
	if r.err != nil {
		return 0, 0, ""
	}
	return origin, req, addr
}
