package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

// AccessSlot and AdmitSlot behave exactly as Access and Admit, whether the
// slot is fresh, stale (its node freed or reused by another key) or NoSlot:
// two policies fed the same operations, one through each, evict the same
// keys in the same order; and the slot AdmitSlot returns is Slot's, pinned
// keys included.
func TestAccessSlotIsAccess(t *testing.T) {
	for _, tc := range []struct {
		name string
		mk   func() Policy
	}{
		{"tinylfu", func() Policy { return NewTinyLFU(64) }},
		{"slru", func() Policy { return NewSLRU(64, SLRUOptions{}) }},
		{"fifo", func() Policy { return NewFIFO(64) }},
		{"arc", func() Policy { return NewARC(64) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			byKey, bySlot := tc.mk(), tc.mk()
			slots := map[uint64]int32{}
			r := rand.New(rand.NewPCG(1, 2))
			var v1, v2 []uint64
			for range 20_000 {
				k := uint64(r.IntN(200)) + 1
				switch op := r.IntN(10); {
				case op < 5:
					s, ok := slots[k]
					if !ok {
						s = NoSlot
					}
					require.Equal(t, byKey.Access(k), bySlot.AccessSlot(k, s))
				case op < 8:
					cost := int64(r.IntN(3) + 1)
					s, ok := slots[k]
					if !ok {
						s = NoSlot
					}
					var e1, e2 error
					v1, e1 = byKey.Admit(k, cost, v1[:0])
					v2, s, e2 = bySlot.AdmitSlot(k, s, cost, v2[:0])
					require.Equal(t, e1, e2)
					require.Equal(t, v1, v2)
					require.Equal(t, bySlot.Slot(k), s)
					// Slots are kept after eviction on purpose: stale.
					slots[k] = s
				case op < 9:
					if r.IntN(2) == 0 {
						require.Equal(t, byKey.Pin(k), bySlot.Pin(k))
					} else {
						require.Equal(t, byKey.Unpin(k), bySlot.Unpin(k))
					}
				default:
					require.Equal(t, byKey.Remove(k), bySlot.Remove(k))
				}
				require.Equal(t, byKey.Len(), bySlot.Len())
				require.Equal(t, byKey.Cost(), bySlot.Cost())
			}
		})
	}
}
