package raftlog

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestProposalRoundTrip(t *testing.T) {
	for _, recs := range [][][]byte{
		{[]byte("a")},
		{[]byte("a"), {}, []byte("ccc")},
		{make([]byte, 1<<16)},
	} {
		p, err := decodeProposal(encodeProposal(7, 9, recs))
		require.NoError(t, err)
		require.Equal(t, uint64(7), p.instance)
		require.Equal(t, uint64(9), p.seq)
		require.Len(t, p.recs, len(recs))
		for i := range recs {
			require.Equal(t, len(recs[i]), len(p.recs[i]))
			require.Equal(t, string(recs[i]), string(p.recs[i]))
		}
	}
}

func TestDecodeProposalRefusesDamage(t *testing.T) {
	good := encodeProposal(1, 2, [][]byte{[]byte("abc")})
	for name, b := range map[string][]byte{
		"empty":       nil,
		"version":     append([]byte{2}, good[1:]...),
		"truncated":   good[:len(good)-1],
		"trailing":    append(append([]byte{}, good...), 0),
		"no records":  {proposalVersion, 1, 2, 0},
		"huge length": {proposalVersion, 1, 2, 1, 0xff, 0xff, 0xff, 0xff, 0x0f},
	} {
		_, err := decodeProposal(b)
		require.ErrorIs(t, err, ErrCorrupt, name)
	}
}

func TestHeaderRoundTrip(t *testing.T) {
	for _, h := range []header{{raft: 1}, {raft: 1, last: true}, {raft: 1 << 60, last: true}} {
		got, body, err := splitHeader(withHeader(h, []byte("rec")))
		require.NoError(t, err)
		require.Equal(t, h, got)
		require.Equal(t, "rec", string(body))
	}
	_, _, err := splitHeader([]byte{1}) // raft index 0
	require.ErrorIs(t, err, ErrCorrupt)
	_, _, err = splitHeader(nil)
	require.ErrorIs(t, err, ErrCorrupt)
}

func FuzzDecodeProposal(f *testing.F) {
	f.Add(encodeProposal(1, 2, [][]byte{[]byte("abc"), {}}))
	f.Add([]byte{proposalVersion, 1, 2, 1, 5})
	f.Fuzz(func(t *testing.T, b []byte) {
		p, err := decodeProposal(b)
		if err != nil {
			return
		}
		// What decodes encodes to bytes that decode the same (varints
		// may have been written longer than needed).
		q, err := decodeProposal(encodeProposal(p.instance, p.seq, p.recs))
		require.NoError(t, err)
		require.Equal(t, p, q)
	})
}

func FuzzSplitHeader(f *testing.F) {
	f.Add(withHeader(header{raft: 3, last: true}, []byte("x")))
	f.Fuzz(func(t *testing.T, b []byte) {
		h, body, err := splitHeader(b)
		if err != nil {
			return
		}
		require.Equal(t, b[len(b)-len(body):], body)
		require.NotZero(t, h.raft)
	})
}
