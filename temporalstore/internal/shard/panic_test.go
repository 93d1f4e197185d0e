package shard

import (
	"bytes"
	"errors"
	"fmt"
	"math/rand/v2"
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

// A panic inside a maintenance step's locked scan (sweep, compact,
// checkpoint) is that step's error, counted, with no lock left held:
// writes and reads go on, and the step runs again once the bug is gone.
func TestMaintenancePanicsAreContained(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s, err := Open(t.TempDir(), Options{Durable: true, Now: clk.Now, SegmentSize: 64 << 10})
	require.NoError(t, err)
	leaked := false // Close would wait for the lock for good
	defer func() {
		if !leaked {
			s.Close()
		}
	}()
	ctx := t.Context()
	val := make([]byte, 500) // incompressible: the log spans segments
	_, _ = rand.NewChaCha8([32]byte{7}).Read(val)
	for i := range 400 {
		require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), val, clk.Now().Add(time.Hour)))
	}
	for i := range 200 { // garbage for Compact
		require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), val, time.Time{}))
	}
	var armed atomic.Bool
	s.maintFault = func(step string) {
		if armed.Load() {
			panic("injected: " + step)
		}
	}
	steps := []struct {
		name string
		run  func() error
	}{
		{"sweep", func() error { _, err := s.Sweep(ctx, 1000); return err }},
		{"compact", func() error { _, err := s.Compact(ctx, 3); return err }},
		{"checkpoint", func() error { _, err := s.Checkpoint(ctx); return err }},
	}
	for _, st := range steps {
		before := s.Panics()
		armed.Store(true)
		err := st.run()
		require.ErrorIs(t, err, ErrInternal, st.name)
		require.ErrorContains(t, err, "injected: "+st.name)
		require.Equal(t, before+1, s.Panics(), st.name)
		// No lock was left held: a write (the lock) and a read (the read
		// lock) go through.
		done := make(chan error, 1)
		go func() {
			if err := s.Set(ctx, []byte("after-"+st.name), []byte("x"), time.Time{}); err != nil {
				done <- err
				return
			}
			_, _, err := s.Get([]byte("k0"))
			done <- err
		}()
		select {
		case err := <-done:
			require.NoError(t, err, st.name)
		case <-time.After(10 * time.Second):
			leaked = true
			t.Fatalf("%s: the shard's lock was left held", st.name)
		}
		armed.Store(false)
		require.NoError(t, st.run(), st.name)
	}
	clk.Advance(2 * time.Hour)
	_, err = s.Sweep(ctx, 10_000)
	require.NoError(t, err)
	_, ok, err := s.Get([]byte("k300"))
	require.NoError(t, err)
	require.False(t, ok)
}

// A panic in a plain GET's look-up (under the read lock, outside any
// function of the caller's) is its error, and the lock is let go.
func TestGetPanicIsContained(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Durable: true, SegmentSize: 1 << 20})
	require.NoError(t, err)
	// Closed at the end, not deferred: with the lock left held Close would
	// wait for good.
	s.getFault = func(key []byte) {
		if string(key) == "poison" {
			panic("injected: get")
		}
	}
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, []byte("k"), []byte("v"), time.Time{}))
	_, _, _, err = s.AppendString(ctx, nil, []byte("poison"))
	require.ErrorIs(t, err, ErrInternal)
	require.Equal(t, int64(1), s.Panics())
	done := make(chan error, 1)
	go func() { done <- s.Set(ctx, []byte("k"), []byte("w"), time.Time{}) }()
	select {
	case err := <-done:
		require.NoError(t, err)
	case <-time.After(10 * time.Second):
		t.Fatal("the read lock was left held") // Close would wait for good: the test ends here
	}
	out, found, _, err := s.AppendString(ctx, nil, []byte("k"))
	require.NoError(t, err)
	require.True(t, found)
	require.Equal(t, "w", string(out))
	require.NoError(t, s.Close())
}

// A panic in the combiner's own code (not a write function) fails the
// writes of its batch that were not decided, leaves no lock held, and the
// combiner goes on leading the next batches: no write waits for good.
func TestCombinerPanicIsContained(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Durable: true, SegmentSize: 1 << 20})
	require.NoError(t, err)
	s.combineFault = func(key []byte) {
		if string(key) == "poison" {
			panic("injected: combiner")
		}
	}
	ctx := t.Context()
	const writers, each = 8, 40
	var acked [writers]atomic.Int64
	var failed atomic.Int64
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			key := fmt.Appendf(nil, "n%d", g)
			for i := range each {
				if i%10 == 5 {
					require.ErrorIs(t, s.Update(ctx, []byte("poison"), incrDecimal), ErrInternal)
				}
				switch err := s.Update(ctx, key, incrDecimal); {
				case err == nil:
					acked[g].Add(1)
				case errors.Is(err, ErrInternal):
					failed.Add(1) // batched with a poisoned write
				default:
					t.Error(err)
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(60 * time.Second):
		t.Fatal("writes wait for good: the combiner stopped") // Close would wait too
	}
	for g := range writers {
		v, ok, err := s.Get(fmt.Appendf(nil, "n%d", g))
		require.NoError(t, err)
		n := int64(0)
		if ok {
			n, err = strconv.ParseInt(string(v), 10, 64)
			require.NoError(t, err)
		}
		require.Equal(t, acked[g].Load(), n, "an acknowledged write was lost or a failed one applied")
	}
	require.Positive(t, s.Panics())
	require.NoError(t, s.Close())
}
