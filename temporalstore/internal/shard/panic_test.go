package shard

import (
	"bytes"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
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
						held := key[:0]
						_ = held[len(key)] // out of range: a real runtime panic
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

// A record whose apply panics, live, in a combined batch or in a
// multi-command record, is skipped whole: its writer gets ErrInternal, the
// commands of it that were applied before the panic are undone (the state
// is rebuilt), the writes beside it go on, and every reopen gives the same
// state. A record that panics only when replayed at Open is skipped too.
func TestApplyPanicsSkipTheWholeRecord(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	var armed atomic.Bool
	armed.Store(true)
	fault := func(_ uint64, c *command.Command) {
		if armed.Load() && bytes.HasPrefix(c.Key, []byte("poison")) {
			panic("injected: apply")
		}
	}
	opts := Options{Durable: true, Now: clk.Now, SegmentSize: 1 << 20, applyFault: fault}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	ctx := t.Context()
	const writers, each, counters = 8, 30, 3
	var wg sync.WaitGroup
	var failedBatches atomic.Int64
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Appendf(nil, "n%d", (g+i)%counters)
				require.NoError(t, s.Update(ctx, key, incrDecimal))
				switch i % 3 {
				case 0: // a combined write that panics when applied
					err := s.Update(ctx, fmt.Appendf(nil, "poison-%d-%d", g, i), incrDecimal)
					require.ErrorIs(t, err, ErrInternal)
				case 1: // a record whose second command panics
					cmds := []command.Command{
						StringSet(fmt.Appendf(nil, "batch-%d-%d-a", g, i), []byte("a"), time.Time{}),
						StringSet(fmt.Appendf(nil, "poison-batch-%d-%d", g, i), []byte("p"), time.Time{}),
						StringSet(fmt.Appendf(nil, "batch-%d-%d-c", g, i), []byte("c"), time.Time{}),
					}
					require.ErrorIs(t, s.SetBatch(ctx, cmds), ErrInternal)
					failedBatches.Add(1)
				default: // a plain write beside them
					require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "plain-%d-%d", g, i), []byte("v"), time.Time{}))
				}
			}
		})
	}
	wg.Wait()
	check := func(s *Shard) {
		total := 0
		for k := range counters {
			v, ok, err := s.Get(fmt.Appendf(nil, "n%d", k))
			require.NoError(t, err)
			require.True(t, ok)
			n, err := strconv.Atoi(string(v))
			require.NoError(t, err)
			total += n
		}
		require.Equal(t, writers*each, total)
		for g := range writers {
			for i := range each {
				for _, k := range []string{fmt.Sprintf("poison-%d-%d", g, i), fmt.Sprintf("batch-%d-%d-a", g, i), fmt.Sprintf("batch-%d-%d-c", g, i)} {
					_, ok, err := s.Get([]byte(k))
					require.NoError(t, err)
					require.False(t, ok, "%s was applied", k)
				}
				if i%3 == 2 {
					_, ok, err := s.Get(fmt.Appendf(nil, "plain-%d-%d", g, i))
					require.NoError(t, err)
					require.True(t, ok)
				}
			}
		}
	}
	check(s)
	require.Len(t, s.Skipped(), writers*each/3*2)
	require.NoError(t, s.Update(ctx, []byte("late"), incrDecimal))
	require.NoError(t, s.Close())

	// Replayed with the fault still armed: the skipped records are not
	// applied, so nothing panics.
	s, err = Open(dir, opts)
	require.NoError(t, err)
	check(s)
	require.NoError(t, s.Close())

	// A record that panics only when replayed is skipped at Open.
	opts.applyFault = func(_ uint64, c *command.Command) {
		if string(c.Key) == "late" {
			panic("injected: replay")
		}
	}
	s, err = Open(dir, opts)
	require.NoError(t, err)
	check(s)
	_, ok, err := s.Get([]byte("late"))
	require.NoError(t, err)
	require.False(t, ok)
	require.Len(t, s.Skipped(), writers*each/3*2+1)
	require.NoError(t, s.Close())
}
