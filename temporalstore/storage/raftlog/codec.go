package raftlog

import (
	"encoding/binary"
	"fmt"
)

// A proposal is one raft entry's data:
//
//	[0]     version (1)
//	uvarint the proposing Log's instance, its sequence number
//	uvarint record count, then per record uvarint length and bytes
const proposalVersion = 1

type proposal struct {
	instance, seq uint64
	recs          [][]byte
}

func encodeProposal(instance, seq uint64, recs [][]byte) []byte {
	n := 1 + 3*binary.MaxVarintLen64
	for _, r := range recs {
		n += binary.MaxVarintLen64 + len(r)
	}
	b := make([]byte, 0, n)
	b = append(b, proposalVersion)
	b = binary.AppendUvarint(b, instance)
	b = binary.AppendUvarint(b, seq)
	b = binary.AppendUvarint(b, uint64(len(recs)))
	for _, r := range recs {
		b = binary.AppendUvarint(b, uint64(len(r)))
		b = append(b, r...)
	}
	return b
}

// decodeProposal reads a proposal; its records alias b.
func decodeProposal(b []byte) (proposal, error) {
	if len(b) == 0 || b[0] != proposalVersion {
		return proposal{}, fmt.Errorf("%w: proposal version", ErrCorrupt)
	}
	b = b[1:]
	var p proposal
	var ok bool
	if p.instance, b, ok = uvarint(b); !ok {
		return proposal{}, fmt.Errorf("%w: proposal instance", ErrCorrupt)
	}
	if p.seq, b, ok = uvarint(b); !ok {
		return proposal{}, fmt.Errorf("%w: proposal sequence", ErrCorrupt)
	}
	n, b, ok := uvarint(b)
	if !ok || n == 0 || n > uint64(len(b)) { // each record takes a byte at least
		return proposal{}, fmt.Errorf("%w: proposal record count", ErrCorrupt)
	}
	p.recs = make([][]byte, n)
	for i := range p.recs {
		var size uint64
		if size, b, ok = uvarint(b); !ok || size > uint64(len(b)) {
			return proposal{}, fmt.Errorf("%w: proposal record %d length", ErrCorrupt, i)
		}
		p.recs[i], b = b[:size:size], b[size:]
	}
	if len(b) != 0 {
		return proposal{}, fmt.Errorf("%w: %d bytes after the proposal's records", ErrCorrupt, len(b))
	}
	return p, nil
}

func uvarint(b []byte) (uint64, []byte, bool) {
	v, n := binary.Uvarint(b)
	if n <= 0 {
		return 0, b, false
	}
	return v, b[n:], true
}

// A value-log record is the engine's record after a header: uvarint of
// the raft index of its entry, shifted left one, its low bit set on the
// entry's last record.
type header struct {
	raft uint64
	last bool
}

func withHeader(h header, rec []byte) []byte {
	v := h.raft << 1
	if h.last {
		v |= 1
	}
	b := make([]byte, 0, binary.MaxVarintLen64+len(rec))
	b = binary.AppendUvarint(b, v)
	return append(b, rec...)
}

func splitHeader(b []byte) (header, []byte, error) {
	v, rest, ok := uvarint(b)
	if !ok || v>>1 == 0 {
		return header{}, nil, fmt.Errorf("%w: value-log record header", ErrCorrupt)
	}
	return header{raft: v >> 1, last: v&1 == 1}, rest, nil
}
