package object

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// Counter buckets sum per bucket and read by window; distinct values are
// exact up to DistinctExactMax and estimated within a few percent above;
// selections keep the earliest (first) or latest (last); the ledger
// answers until its time; and the image round-trips all of it.
func TestControlState(t *testing.T) {
	o := New(KindControl, []byte("c"))
	c := o.Control
	c.Add(2000, 5)
	c.Add(1000, 1)
	c.Add(2000, -2)
	c.Add(3000, 7)
	lo, hi := c.Window(1500, 3000)
	var got []string
	for i := lo; i < hi; i++ {
		ts, sum := c.Bucket(i)
		got = append(got, fmt.Sprintf("%d=%d", ts, sum))
	}
	require.Equal(t, []string{"2000=3", "3000=7"}, got)

	for i := range 100 {
		c.AddChange(1000, []byte(fmt.Sprint("v", i%10)))
		c.AddChange(2000, []byte(fmt.Sprint("v", i%20)))
	}
	require.Equal(t, int64(10), c.DistinctIn(0, 1000))
	require.Equal(t, int64(20), c.DistinctIn(0, 5000))
	for i := range 20000 {
		c.AddChange(4000, []byte(fmt.Sprint("big", i)))
	}
	require.NotNil(t, c.changes[4000].hll)
	est := c.DistinctIn(4000, 4000)
	require.InDelta(t, 20000, est, 20000*0.05)
	// A window with a sketched bucket merges the exact ones into it.
	require.InDelta(t, 20020, c.DistinctIn(0, 5000), 20020*0.05)

	c.Select([]byte("a"), 50, false)
	c.Select([]byte("b"), 60, false) // later: a first selection keeps a
	c.Select([]byte("c"), 40, false)
	require.Equal(t, "c", string(c.Sel.Value))
	c.Select([]byte("d"), 10, true) // another kind replaces it
	c.Select([]byte("e"), 5, true)
	require.Equal(t, "d", string(c.Sel.Value))

	c.Pace = 12345
	c.Record("u1", 500, 0)
	require.True(t, c.Seen("u1", 499))
	require.False(t, c.Seen("u1", 500))
	require.False(t, c.Seen("u2", 0))

	img := Append(nil, o)
	back, rest, err := Decode(img)
	require.NoError(t, err)
	require.Empty(t, rest)
	require.Equal(t, img, Append(nil, back))
	require.Equal(t, o.Size(), back.Size())
	require.Equal(t, c.DistinctIn(0, 5000), back.Control.DistinctIn(0, 5000))
	require.True(t, back.Control.Seen("u1", 499))
	require.Equal(t, int64(12345), back.Control.Pace)
}

// Clone copies a control state whole: its image is that of the state it
// copies, and changing either afterwards (buckets, distinct values exact
// and sketched, selection, ledger, pace) leaves the other as it was.
func TestControlClone(t *testing.T) {
	o := New(KindControl, []byte("c"))
	o.Expiry, o.Ver = 99, 7
	c := o.Control
	for i := range 50 {
		c.Add(int64(i%7)*1000, int64(i))
		c.AddChange(1000, []byte(fmt.Sprint("v", i%10)))
	}
	for i := range 5000 {
		c.AddChange(9000, []byte(fmt.Sprint("big", i)))
	}
	c.Select([]byte("sel"), 5, true)
	c.Record("u1", 500, 0)
	c.Pace = 42
	img := Append(nil, o)

	cp, err := o.Clone()
	require.NoError(t, err)
	require.Equal(t, img, Append(nil, cp))
	require.Equal(t, o.Size(), cp.Size())
	require.Equal(t, uint64(7), cp.Ver)

	d := cp.Control
	d.Add(0, 1000)
	d.Add(50_000, 1)
	d.AddChange(1000, []byte("new"))
	d.AddChange(9000, []byte("new"))
	d.Select([]byte("later"), 6, true)
	d.Sel.Value[0] = 'X'
	d.Record("u2", 600, 0)
	d.Pace = 43
	require.Equal(t, img, Append(nil, o), "the original is untouched")
	require.NotEqual(t, img, Append(nil, cp))

	c.Add(0, 1)
	c.AddChange(1000, []byte("other"))
	require.False(t, d.Seen("u3", 0))
	require.Equal(t, int64(11), d.DistinctIn(1000, 1000), "its 10 values and new, not the original's other")
	require.Equal(t, int64(11), c.DistinctIn(1000, 1000), "its 10 values and other, not the copy's new")
}
