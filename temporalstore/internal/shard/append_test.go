package shard

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// loggedKeys is the set of keys the commands in s's log name.
func loggedKeys(t *testing.T, s *Shard) map[string]bool {
	t.Helper()
	it := s.log.Iterator(s.log.FirstIndex())
	defer it.Close()
	keys := map[string]bool{}
	for it.Next() {
		cmds, err := command.Decode(it.Value())
		require.NoError(t, err)
		for _, c := range cmds {
			keys[string(c.Key)] = true
		}
	}
	require.NoError(t, it.Err())
	return keys
}

// contents is every live string key of s with its value.
func contents(t *testing.T, s *Shard) map[string]string {
	t.Helper()
	m := map[string]string{}
	var cursor uint64
	for {
		keys, next, err := s.Scan(cursor, 100)
		require.NoError(t, err)
		for _, k := range keys {
			v, ok, err := s.Get(k)
			require.NoError(t, err)
			require.True(t, ok, "key %q", k)
			m[string(k)] = string(v)
		}
		if next == 0 {
			return m
		}
		cursor = next
	}
}

// reopened closes s and returns it reopened, after checking that replay
// rebuilt exactly what s held in memory.
func reopened(t *testing.T, s *Shard, dir string, clk *testclock.Clock, durable bool) *Shard {
	t.Helper()
	before := contents(t, s)
	require.NoError(t, s.Close())
	s = open(t, dir, clk, durable)
	require.Equal(t, before, contents(t, s), "memory before the reopen differs from replay")
	return s
}

// waitUntil polls cond until it holds, failing the test after a second.
func waitUntil(t *testing.T, cond func() bool) {
	t.Helper()
	require.Eventually(t, cond, time.Second, time.Millisecond)
}

// pendingAt reports whether a writer has registered the record at idx and
// waits for its turn.
func (s *Shard) pendingAt(idx uint64) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pending[idx] != nil
}

var errInjected = errors.New("injected log failure")

// A record the log took is applied, and its writer acknowledged, even when
// a later append fails while the record waits for the one before it: the
// log writes nothing after a failure, so the records before it are all in
// the log and their writers apply them. Memory then matches replay.
func TestLoggedRecordIsAppliedWhenALaterAppendFails(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, false)
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, []byte("k0"), []byte("v0"), time.Time{}))

	first := s.log.LastIndex() + 1
	paused, resume := make(chan struct{}), make(chan struct{})
	s.afterAppend = func(idx uint64) {
		if idx == first {
			close(paused)
			<-resume
		}
	}
	errs := make(chan error, 2)
	go func() { errs <- s.Set(ctx, []byte("k1"), []byte("v1"), time.Time{}) }()
	<-paused
	go func() { errs <- s.Set(ctx, []byte("k2"), []byte("v2"), time.Time{}) }()
	waitUntil(t, func() bool { return s.pendingAt(first + 1) })

	// The append after k2's fails once its record has an index, as when
	// the log's write or fsync fails: the shard records the failure.
	s.mu.Lock()
	s.failLocked(fmt.Errorf("shard: append: %w", errInjected), first+2)
	s.mu.Unlock()
	// k2's writer goes on waiting for k1's record, rather than giving up
	// on its own; k1's writer then applies both.
	var results []error
	select {
	case err := <-errs:
		results = append(results, err)
	case <-time.After(50 * time.Millisecond):
	}
	close(resume)
	for len(results) < 2 {
		results = append(results, <-errs)
	}
	require.True(t, loggedKeys(t, s)["k2"])
	require.Equal(t, map[string]string{"k0": "v0", "k1": "v1", "k2": "v2"}, contents(t, s))
	s = reopened(t, s, dir, clk, false)
	require.NoError(t, s.Close())
	require.NoError(t, errors.Join(results...), "a write in the log and applied is acknowledged")
}

// A write whose context ends while its record is in flight leaves the
// shard consistent: the writers after it finish promptly, its value is
// served exactly when its record is in the log, and replay rebuilds what
// memory held.
func TestWriteCanceledInFlight(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, true)
	ctx := t.Context()

	// Canceled once the log gave the record an index, before it is
	// applied, while the next writer waits for it.
	first := s.log.LastIndex() + 1
	cctx, cancel := context.WithCancel(ctx)
	paused, resume := make(chan struct{}), make(chan struct{})
	s.afterAppend = func(idx uint64) {
		if idx == first {
			cancel()
			close(paused)
			<-resume
		}
	}
	canceled := make(chan error, 1)
	go func() { canceled <- s.Set(cctx, []byte("canceled"), []byte("c"), time.Time{}) }()
	<-paused
	next := make(chan error, 1)
	go func() { next <- s.Set(ctx, []byte("next"), []byte("n"), time.Time{}) }()
	waitUntil(t, func() bool { return s.pendingAt(first + 1) })
	close(resume)
	select {
	case err := <-next:
		require.NoError(t, err)
	case <-time.After(time.Second):
		t.Fatal("the write after a canceled one is stranded")
	}
	require.NoError(t, <-canceled, "the record is in the log and applied")
	v, ok, err := s.Get([]byte("canceled"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "c", string(v))
	s.afterAppend = nil

	// Deadlines that end at any point of the group commit.
	rng := rand.New(rand.NewPCG(7, 8))
	var wg sync.WaitGroup
	var mu sync.Mutex
	acked := 0
	for g := range 4 {
		seed := rng.Uint64()
		wg.Go(func() {
			r := rand.New(rand.NewPCG(seed, 0))
			for i := range 50 {
				wctx, cancel := context.WithTimeout(ctx, time.Duration(r.IntN(400))*time.Microsecond)
				err := s.Set(wctx, fmt.Appendf(nil, "w%d-%d", g, i), []byte("x"), time.Time{})
				cancel()
				mu.Lock()
				switch {
				case err == nil:
					acked++
				case !errors.Is(err, context.DeadlineExceeded):
					t.Errorf("write %d-%d: %v", g, i, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	t.Logf("%d of 200 writes went through; the others ended before the log took them", acked)
	tctx, cancel2 := context.WithTimeout(ctx, time.Second)
	defer cancel2()
	require.NoError(t, s.Set(tctx, []byte("after"), []byte("a"), time.Time{}))
	logged := loggedKeys(t, s)
	for g := range 4 {
		for i := range 50 {
			k := fmt.Sprintf("w%d-%d", g, i)
			_, ok, err := s.Get([]byte(k))
			require.NoError(t, err)
			require.Equal(t, logged[k], ok, "key %s: served %v, in the log %v", k, ok, logged[k])
		}
	}
	s = reopened(t, s, dir, clk, true)
	require.NoError(t, s.Close())
}

// A write that cannot pass the append gate before its deadline returns the
// context's error promptly and writes nothing; once the gate is free,
// writes go through again.
func TestWriteGivesUpOnAHeldGate(t *testing.T) {
	writes := []struct {
		name  string
		write func(ctx context.Context, s *Shard) error
	}{
		{"set", func(ctx context.Context, s *Shard) error {
			return s.Set(ctx, []byte("frozen"), []byte("x"), time.Time{})
		}},
		{"delete", func(ctx context.Context, s *Shard) error {
			return s.Delete(ctx, []byte("before"))
		}},
		{"set batch", func(ctx context.Context, s *Shard) error {
			return s.SetBatch(ctx, []command.Command{StringSet([]byte("frozen"), []byte("y"), time.Time{})})
		}},
	}
	for _, tc := range writes {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			clk := testclock.New(time.Unix(1_764_460_800, 0))
			s := open(t, dir, clk, true)
			ctx := t.Context()
			require.NoError(t, s.Set(ctx, []byte("before"), []byte("b"), time.Time{}))
			unfreeze, err := s.Freeze(ctx)
			require.NoError(t, err)
			defer unfreeze()
			last := s.log.LastIndex()

			// Several at once, so that they wait together.
			const writers = 3
			done := make(chan error, writers)
			start := time.Now()
			for range writers {
				go func() {
					wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
					defer cancel()
					done <- tc.write(wctx, s)
				}()
			}
			for range writers {
				select {
				case err := <-done:
					require.ErrorIs(t, err, context.DeadlineExceeded)
				case <-time.After(time.Second):
					t.Fatal("a write waited for the gate past its deadline")
				}
			}
			require.Less(t, time.Since(start), time.Second)
			unfreeze()

			require.Equal(t, last, s.log.LastIndex(), "nothing is written")
			require.False(t, loggedKeys(t, s)["frozen"])
			require.Equal(t, map[string]string{"before": "b"}, contents(t, s))
			require.NoError(t, s.Set(ctx, []byte("after"), []byte("a"), time.Time{}))
			require.Equal(t, map[string]string{"before": "b", "after": "a"}, contents(t, s))
			s = reopened(t, s, dir, clk, true)
			require.NoError(t, s.Close())
		})
	}
}

// Writes waiting for the gate keep sync.RWMutex's order: once an exclusive
// holder waits, writes wait behind it (and give up at their deadline)
// instead of keeping it out, and the writes still waiting when it is let
// in go after it.
func TestWaitingWritesLetExclusiveHoldersFirst(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, true)
	defer s.Close()
	ctx := t.Context()

	// A shared hold, as of an append in flight, and a Freeze waiting for it.
	held, err := s.gate.lockShared(ctx)
	require.NoError(t, err)
	frozen := make(chan func(), 1)
	go func() {
		unfreeze, err := s.Freeze(ctx)
		if err == nil {
			frozen <- unfreeze
		}
	}()
	waitUntil(t, func() bool {
		if s.gate.TryRLock() {
			s.gate.RUnlock()
			return false
		}
		return true
	})

	wctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, s.Set(wctx, []byte("late"), []byte("x"), time.Time{}), context.DeadlineExceeded)
	waiting := make(chan error, 1)
	go func() { waiting <- s.Set(ctx, []byte("patient"), []byte("p"), time.Time{}) }()
	waitUntil(t, func() bool {
		s.gate.mu.Lock()
		defer s.gate.mu.Unlock()
		return s.gate.next != nil && s.gate.next.members == 1
	})

	s.gate.unlockShared(held)
	unfreeze := <-frozen
	select {
	case err := <-waiting:
		t.Fatalf("a write went past a held gate: %v", err)
	case <-time.After(20 * time.Millisecond):
	}
	unfreeze()
	require.NoError(t, <-waiting)
	require.Equal(t, map[string]string{"patient": "p"}, contents(t, s))
	require.False(t, loggedKeys(t, s)["late"])
}
