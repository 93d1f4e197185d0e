package wal

import (
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// headerCRC is the byte-at-a-time form of crc32.Update from zero: frames
// written with it must verify with the library's checksum, and the other
// way round.
func TestHeaderCRCMatchesLibrary(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	for n := range 40 {
		p := make([]byte, n)
		for i := range p {
			p[i] = byte(rng.UintN(256))
		}
		require.Equal(t, crc32.Update(0, crcTable, p), headerCRC(p), "%x", p)
	}
}

// An Append of one record and an AppendBatch of a few allocate nothing
// per record on the way into the log: the frames stay on the stack.
func TestAppendFramesStayOnStack(t *testing.T) {
	l, err := Open(t.TempDir(), Options{Sync: SyncNever})
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, l.Close()) })
	rec := []byte("0123456789abcdef0123456789abcdef")
	batch := [][]byte{rec, rec, rec}
	one := testing.AllocsPerRun(200, func() {
		_, err := l.Append(t.Context(), rec)
		require.NoError(t, err)
	})
	three := testing.AllocsPerRun(200, func() {
		_, err := l.AppendBatch(t.Context(), batch)
		require.NoError(t, err)
	})
	t.Logf("allocations: %v per Append, %v per AppendBatch of three", one, three)
	require.LessOrEqual(t, one, 1.0, "one append: the next batch, nothing per record")
	require.Equal(t, one, three, "a batch of three allocates what a single append does")
}
