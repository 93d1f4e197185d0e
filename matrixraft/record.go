package matrixraft

import (
	"encoding/binary"
	"fmt"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// Log record kinds. Every record starts with its kind byte and the group
// ID as a uvarint, so several groups can share one log.
const (
	recState    byte = 1 // optional HardState plus a run of entries
	recSnapshot byte = 2 // a snapshot became durable (installed or local)
)

// logRecord is one decoded log record.
type logRecord struct {
	kind    byte
	group   uint64
	hasHS   bool
	hs      hardState
	entries []*pb.Entry
	// Snapshot records only.
	installed bool // received from a leader: it replaces the whole log
	snapIndex uint64
	snapTerm  uint64
}

// hardState is raft's HardState without pointers.
type hardState struct{ term, vote, commit uint64 }

func hsFrom(h *pb.HardState) hardState {
	return hardState{h.GetTerm(), h.GetVote(), h.GetCommit()}
}

func (h hardState) proto() *pb.HardState {
	return &pb.HardState{Term: new(h.term), Vote: new(h.vote), Commit: new(h.commit)}
}

func (h hardState) empty() bool { return h == hardState{} }

// encodeState appends a state record to dst.
func encodeState(dst []byte, group uint64, hs *hardState, ents []*pb.Entry) ([]byte, error) {
	dst = append(dst, recState)
	dst = binary.AppendUvarint(dst, group)
	if hs != nil {
		dst = append(dst, 1)
		dst = binary.AppendUvarint(dst, hs.term)
		dst = binary.AppendUvarint(dst, hs.vote)
		dst = binary.AppendUvarint(dst, hs.commit)
	} else {
		dst = append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, uint64(len(ents)))
	for _, e := range ents {
		n := proto.Size(e)
		dst = binary.AppendUvarint(dst, uint64(n))
		var err error
		dst, err = proto.MarshalOptions{}.MarshalAppend(dst, e)
		if err != nil {
			return nil, fmt.Errorf("marshal entry %d: %w", e.GetIndex(), err)
		}
	}
	return dst, nil
}

// encodeSnapshotMarker appends a snapshot record to dst.
func encodeSnapshotMarker(dst []byte, group uint64, installed bool, index, term uint64, hs hardState) []byte {
	dst = append(dst, recSnapshot)
	dst = binary.AppendUvarint(dst, group)
	if installed {
		dst = append(dst, 1)
	} else {
		dst = append(dst, 0)
	}
	dst = binary.AppendUvarint(dst, index)
	dst = binary.AppendUvarint(dst, term)
	dst = binary.AppendUvarint(dst, hs.term)
	dst = binary.AppendUvarint(dst, hs.vote)
	dst = binary.AppendUvarint(dst, hs.commit)
	return dst
}

// recordReader decodes the fields of a record, remembering the first error.
type recordReader struct {
	b   []byte
	err error
}

func (r *recordReader) uvarint() uint64 {
	if r.err != nil {
		return 0
	}
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err = fmt.Errorf("%w: bad varint in log record", ErrCorrupt)
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *recordReader) byte() byte {
	if r.err != nil {
		return 0
	}
	if len(r.b) == 0 {
		r.err = fmt.Errorf("%w: short log record", ErrCorrupt)
		return 0
	}
	c := r.b[0]
	r.b = r.b[1:]
	return c
}

func (r *recordReader) bytes(n uint64) []byte {
	if r.err != nil {
		return nil
	}
	if n > uint64(len(r.b)) {
		r.err = fmt.Errorf("%w: log record field of %d bytes overruns the record", ErrCorrupt, n)
		return nil
	}
	v := r.b[:n]
	r.b = r.b[n:]
	return v
}

func (r *recordReader) flag() bool {
	switch c := r.byte(); c {
	case 0:
		return false
	case 1:
		return true
	default:
		if r.err == nil {
			r.err = fmt.Errorf("%w: bad flag %d in log record", ErrCorrupt, c)
		}
		return false
	}
}

// decodeRecord decodes one log record. Entries are copied out of b.
func decodeRecord(b []byte) (logRecord, error) {
	r := recordReader{b: b}
	var rec logRecord
	rec.kind = r.byte()
	rec.group = r.uvarint()
	switch rec.kind {
	case recState:
		if rec.hasHS = r.flag(); rec.hasHS {
			rec.hs = hardState{r.uvarint(), r.uvarint(), r.uvarint()}
		}
		n := r.uvarint()
		if r.err == nil && n > uint64(len(r.b)) { // every entry takes at least one byte
			return rec, fmt.Errorf("%w: %d entries in a record of %d bytes", ErrCorrupt, n, len(b))
		}
		rec.entries = make([]*pb.Entry, 0, n)
		for i := uint64(0); i < n && r.err == nil; i++ {
			raw := r.bytes(r.uvarint())
			if r.err != nil {
				break
			}
			e := &pb.Entry{}
			if err := proto.Unmarshal(raw, e); err != nil {
				return rec, fmt.Errorf("%w: entry: %v", ErrCorrupt, err)
			}
			if len(rec.entries) > 0 && e.GetIndex() != rec.entries[len(rec.entries)-1].GetIndex()+1 {
				return rec, fmt.Errorf("%w: entries out of order in a record", ErrCorrupt)
			}
			rec.entries = append(rec.entries, e)
		}
	case recSnapshot:
		rec.installed = r.flag()
		rec.snapIndex = r.uvarint()
		rec.snapTerm = r.uvarint()
		rec.hs = hardState{r.uvarint(), r.uvarint(), r.uvarint()}
		rec.hasHS = true
	default:
		if r.err == nil {
			return rec, fmt.Errorf("%w: unknown log record kind %d", ErrCorrupt, rec.kind)
		}
	}
	if r.err != nil {
		return rec, r.err
	}
	if len(r.b) != 0 {
		return rec, fmt.Errorf("%w: %d trailing bytes in a log record", ErrCorrupt, len(r.b))
	}
	return rec, nil
}
