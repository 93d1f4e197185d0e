package keyindex

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// A full scan returns every entry; entries present throughout a scan that
// is interleaved with inserts, deletes and resizes are all returned.
func TestScanReturnsEveryEntryAcrossChanges(t *testing.T) {
	for _, crowd := range []bool{false, true} {
		rng := rand.New(rand.NewPCG(7, 8))
		x := New(0)
		stable := map[uint64]bool{}
		for id := range uint64(2000) {
			x.Put(hashOf(id, crowd), Entry{Addr: addrOf(id, 0), Meta: 1}, matchID(id))
			if id%2 == 0 {
				stable[id] = true
			}
		}
		seen := map[uint64]bool{}
		cursor, calls := uint64(0), 0
		next := uint64(2000)
		for {
			cursor = x.Scan(cursor, 10+rng.IntN(50), func(e Entry) { seen[e.Addr>>20] = true })
			calls++
			// Churn between calls: odd ids leave, new ids arrive (which
			// grows the table several times).
			for range 40 {
				if rng.IntN(2) == 0 {
					id := uint64(rng.IntN(1000))*2 + 1
					x.Delete(hashOf(id, crowd), matchID(id))
				} else {
					x.Put(hashOf(next, crowd), Entry{Addr: addrOf(next, 0), Meta: 1}, matchID(next))
					next++
				}
			}
			if cursor == 0 {
				break
			}
			require.Less(t, calls, 100_000, "the scan must end")
		}
		for id := range stable {
			require.True(t, seen[id], "crowd=%v: stable entry %d not returned", crowd, id)
		}
	}
}

// Without changes, a scan returns each entry exactly once.
func TestScanOfAStillTableReturnsEachOnce(t *testing.T) {
	x := New(0)
	for id := range uint64(5000) {
		x.Put(hashOf(id, false), Entry{Addr: addrOf(id, 0), Meta: 1}, matchID(id))
	}
	counts := map[uint64]int{}
	cursor := uint64(0)
	for {
		cursor = x.Scan(cursor, 100, func(e Entry) { counts[e.Addr>>20]++ })
		if cursor == 0 {
			break
		}
	}
	require.Len(t, counts, 5000)
	for id, c := range counts {
		require.Equal(t, 1, c, "entry %d", id)
	}
	require.Zero(t, New(0).Scan(0, 10, func(Entry) { t.Fatal("empty index") }))
}
