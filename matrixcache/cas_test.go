package matrixcache

import (
	"bytes"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// CompareAndSwap replaces only the current value, in any tier; a mismatch,
// an absent or expired key, or a value no tier can hold changes nothing.
func TestCompareAndSwap(t *testing.T) {
	opts, clk := testOptions(t, 1)
	opts.MaxSSDBlockBytes = 64
	c := newTestCache(t, opts)
	ctx := t.Context()
	read := func(i int) []byte {
		t.Helper()
		v, _, ok, err := c.Peek(ctx, skey(i))
		require.NoError(t, err)
		if !ok {
			return nil
		}
		return v
	}
	require.NoError(t, c.Put(ctx, skey(1), val("a"), PutOptions{}))
	require.NoError(t, c.CompareAndSwap(ctx, skey(1), val("a"), val("b"), PutOptions{}))
	require.Equal(t, val("b"), read(1))

	for _, tc := range []struct {
		name    string
		key     int
		old     []byte
		value   []byte
		wantErr error
	}{
		{"the current value is another", 1, val("a"), val("c"), ErrReplaceMismatch},
		{"an empty expectation of a value", 1, nil, val("c"), ErrReplaceMismatch},
		{"absent key", 7, nil, val("c"), ErrNotFound},
		{"a value no tier holds", 1, val("b"), bytes.Repeat([]byte("x"), 65), ErrTooLarge},
	} {
		t.Run(tc.name, func(t *testing.T) {
			before := c.Stats()
			err := c.CompareAndSwap(ctx, skey(tc.key), tc.old, tc.value, PutOptions{})
			require.ErrorIs(t, err, tc.wantErr)
			require.Equal(t, val("b"), read(1), "nothing changed")
			require.Nil(t, read(7))
			after := c.Stats()
			require.Equal(t, before.DRAM, after.DRAM)
			require.Equal(t, before.SSD.Puts, after.SSD.Puts)
			require.Equal(t, before.Rejected, after.Rejected)
		})
	}

	// The current value may live on SSD only; the read for the
	// comparison counts no hit and refills nothing.
	require.NoError(t, c.Put(ctx, skey(2), val("x"), PutOptions{})) // skey(1) now SSD only
	before := c.Stats()
	require.ErrorIs(t, c.CompareAndSwap(ctx, skey(1), val("z"), val("c"), PutOptions{}), ErrReplaceMismatch)
	after := c.Stats()
	require.Equal(t, before.SSD.Hits, after.SSD.Hits)
	require.Equal(t, before.DRAM.Promotions, after.DRAM.Promotions)
	require.NoError(t, c.CompareAndSwap(ctx, skey(1), val("b"), val("c"), PutOptions{TTL: time.Second}))
	v, tier, ok, err := c.Get(ctx, skey(1))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, TierDRAM, tier)
	require.Equal(t, val("c"), v)

	// The new value's TTL applies; an expired value is not current.
	clk.Advance(2 * time.Second)
	require.ErrorIs(t, c.CompareAndSwap(ctx, skey(1), val("c"), val("d"), PutOptions{}), ErrNotFound)

	require.NoError(t, c.Close())
	require.ErrorIs(t, c.CompareAndSwap(ctx, skey(2), val("x"), val("y"), PutOptions{}), ErrClosed)
}

// Concurrent read-modify-CompareAndSwap loops lose no update.
func TestCompareAndSwapIsAtomicWithOtherWrites(t *testing.T) {
	opts, _ := testOptions(t, 1) // the counter is evicted now and then
	c := newTestCache(t, opts)
	ctx := t.Context()
	require.NoError(t, c.Put(ctx, skey(0), []byte("0"), PutOptions{}))
	const workers, incs = 3, 40
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := 0; i < incs; {
				cur, _, ok, err := c.Peek(ctx, skey(0))
				require.NoError(t, err)
				require.True(t, ok)
				n, err := strconv.Atoi(string(cur))
				require.NoError(t, err)
				err = c.CompareAndSwap(ctx, skey(0), cur, []byte(strconv.Itoa(n+1)), PutOptions{})
				if errors.Is(err, ErrReplaceMismatch) {
					continue
				}
				require.NoError(t, err)
				i++
				// Other keys push the counter out of DRAM.
				require.NoError(t, c.Put(ctx, skey(w+1), val("o"), PutOptions{}))
			}
		})
	}
	wg.Wait()
	v, _, ok, err := c.Get(ctx, skey(0))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, strconv.Itoa(workers*incs), string(v))
}
