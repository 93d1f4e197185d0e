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
// results. The node calls Apply, Snapshot and Restore from one goroutine,
// never concurrently with each other; reads the application serves itself
// must synchronize with Apply.
type StateMachine interface {
	// Apply applies a batch of committed commands in log order and returns
	// one result per command; a proposer receives its command's result.
	Apply(batch []Command) [][]byte
	// Snapshot writes the whole state to w.
	Snapshot(w io.Writer) error
	// Restore replaces the whole state with one written by Snapshot.
	Restore(r io.Reader) error
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

// encodeSnapshotData writes the node's replicated state, then the user's.
func encodeSnapshotData(rep replicated, sm StateMachine) ([]byte, error) {
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
	b.Write(hdr[:binary.PutUvarint(hdr[:], uint64(len(tmp)))])
	b.Write(tmp)
	if err := sm.Snapshot(&b); err != nil {
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
