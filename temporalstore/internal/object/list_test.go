package object

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestListAgainstSlice(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	var l List
	var ref [][]byte
	for step := range 5000 {
		v := []byte(fmt.Sprint(rng.IntN(20)))
		switch rng.IntN(8) {
		case 0, 1:
			l.PushFront(v)
			ref = append([][]byte{v}, ref...)
		case 2, 3:
			l.PushBack(v)
			ref = append(ref, v)
		case 4:
			got := l.PopFront()
			if len(ref) == 0 {
				require.Nil(t, got)
			} else {
				require.Equal(t, ref[0], got)
				ref = ref[1:]
			}
		case 5:
			got := l.PopBack()
			if len(ref) == 0 {
				require.Nil(t, got)
			} else {
				require.Equal(t, ref[len(ref)-1], got)
				ref = ref[:len(ref)-1]
			}
		case 6:
			count := rng.IntN(5) - 2
			n := 0
			var out [][]byte
			if count >= 0 {
				for _, e := range ref {
					if string(e) == string(v) && (count == 0 || n < count) {
						n++
						continue
					}
					out = append(out, e)
				}
			} else {
				for i := len(ref) - 1; i >= 0; i-- {
					if string(ref[i]) == string(v) && n < -count {
						n++
						continue
					}
					out = append(out, ref[i])
				}
				slices.Reverse(out)
			}
			require.Equal(t, n, l.Remove(count, v))
			ref = out
		case 7:
			before := rng.IntN(2) == 0
			pivot := []byte(fmt.Sprint(rng.IntN(20)))
			i := slices.IndexFunc(ref, func(e []byte) bool { return string(e) == string(pivot) })
			got := l.Insert(before, pivot, v)
			if i < 0 {
				require.Equal(t, -1, got)
			} else {
				if !before {
					i++
				}
				ref = slices.Insert(ref, i, v)
				require.Equal(t, len(ref), got)
			}
		}
		require.Equal(t, len(ref), l.Len(), "step %d", step)
		if len(ref) > 0 {
			require.Equal(t, ref, l.Slice())
		}
	}
	l.Trim(1, 3)
	require.Equal(t, ref[1:min(4, len(ref))], l.Slice())
	l.Trim(5, 2)
	require.Zero(t, l.Len())
}
