package shard

import (
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// A write function that panics fails its own call with ErrInternal and
// changes nothing; the writes combined with it in the same batches, and
// the reads and writes after it, go on. A read function's panic lets go of
// the read lock. The state after reopening is the same.
func TestPanicsAreContainedPerCall(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, true)
	ctx := t.Context()
	const writers, each, keys = 16, 50, 4
	var wg sync.WaitGroup
	var mu sync.Mutex
	panicked := 0
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Appendf(nil, "k%d", (g+i)%keys)
				if (g+i)%3 == 0 {
					// It decides a write, then panics before returning it.
					err := s.MutateKey(ctx, key, func(v *View) ([]command.Command, error) {
						if _, err := v.Get(key); err != nil {
							return nil, err
						}
						var m map[string]int
						m["boom"]++ // a nil map: a real runtime panic
						return []command.Command{StringSet(key, []byte("never"), time.Time{})}, nil
					})
					require.ErrorIs(t, err, ErrInternal)
					var pe *PanicError
					require.ErrorAs(t, err, &pe)
					require.Contains(t, string(pe.Stack), "panic_test.go")
					mu.Lock()
					panicked++
					mu.Unlock()
					continue
				}
				require.NoError(t, s.Update(ctx, key, incrDecimal))
				if i%7 == 0 {
					err := s.Read(ctx, func(*View) error { panic("a read's bug") })
					require.ErrorIs(t, err, ErrInternal)
				}
			}
		})
	}
	wg.Wait()
	require.Positive(t, panicked)
	require.GreaterOrEqual(t, s.Panics(), int64(panicked))
	dump := func(s *Shard) map[string]string {
		out := map[string]string{}
		for k := range keys {
			v, ok, err := s.Get(fmt.Appendf(nil, "k%d", k))
			require.NoError(t, err)
			if ok {
				out[fmt.Sprint("k", k)] = string(v)
			}
		}
		return out
	}
	before := dump(s)
	total := 0
	for _, v := range before {
		require.NotEqual(t, "never", v)
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		total += n
	}
	require.Equal(t, writers*each-panicked, total)
	// Writes after the panics take the shard's gate and lock as usual.
	require.NoError(t, s.Update(ctx, []byte("after"), incrDecimal))
	require.NoError(t, s.Close())
	s = open(t, dir, clk, true)
	defer s.Close()
	require.Equal(t, before, dump(s))
}
