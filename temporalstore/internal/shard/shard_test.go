package shard

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
)

func open(t *testing.T, dir string, clk *testclock.Clock, durable bool) *Shard {
	t.Helper()
	s, err := Open(dir, Options{Durable: durable, Now: clk.Now, SegmentSize: 1 << 20})
	require.NoError(t, err)
	return s
}

// The shard agrees with a map under random sets, overwrites and deletes,
// and again after every reopen (the index rebuilt by replaying the log).
func TestShardMatchesAMapAcrossReopens(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, false)
	ctx := t.Context()
	model := map[string]string{}
	rng := rand.New(rand.NewPCG(3, 4))
	check := func() {
		t.Helper()
		requireStringAddrs(t, s)
		require.Equal(t, len(model), s.Len())
		for k, v := range model {
			got, ok, err := s.Get([]byte(k))
			require.NoError(t, err)
			require.True(t, ok, "key %q", k)
			require.Equal(t, v, string(got))
		}
	}
	for step := range 3000 {
		k := fmt.Sprintf("key-%d", rng.IntN(300))
		switch rng.IntN(4) {
		case 0:
			require.NoError(t, s.Delete(ctx, []byte(k)))
			delete(model, k)
		default:
			v := strings.Repeat(strconv.Itoa(step), 1+rng.IntN(40))
			require.NoError(t, s.Set(ctx, []byte(k), []byte(v), time.Time{}))
			model[k] = v
		}
		if step%1000 == 999 {
			check()
			require.NoError(t, s.Close())
			s = open(t, dir, clk, false)
			check()
		}
	}
	require.NoError(t, s.Close())
}

// An expired key is not served, before or after a reopen; a key live when
// written stays in the index through replay and is judged at read time.
func TestExpiryIsJudgedAtReadTime(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, true)
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, []byte("short"), []byte("s"), clk.Now().Add(time.Minute)))
	require.NoError(t, s.Set(ctx, []byte("long"), []byte("l"), clk.Now().Add(time.Hour)))
	_, ok, err := s.Get([]byte("short"))
	require.NoError(t, err)
	require.True(t, ok)
	clk.Advance(2 * time.Minute)
	_, ok, _ = s.Get([]byte("short"))
	require.False(t, ok)
	require.NoError(t, s.Close())
	s = open(t, dir, clk, true)
	defer s.Close()
	_, ok, _ = s.Get([]byte("short"))
	require.False(t, ok)
	v, ok, _ := s.Get([]byte("long"))
	require.True(t, ok)
	require.Equal(t, "l", string(v))
}

// Bad input changes nothing; a closed shard refuses calls.
func TestBadInputAndClose(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, t.TempDir(), clk, true)
	require.ErrorIs(t, s.Set(t.Context(), nil, []byte("v"), time.Time{}), ErrEmptyKey)
	require.ErrorIs(t, s.Delete(t.Context(), []byte{}), ErrEmptyKey)
	require.Zero(t, s.Len())
	require.NoError(t, s.Close())
	require.ErrorIs(t, s.Set(t.Context(), []byte("k"), []byte("v"), time.Time{}), ErrClosed)
	_, _, err := s.Get([]byte("k"))
	require.ErrorIs(t, err, ErrClosed)
}

const crashChildEnv = "SHARD_CRASH_CHILD_DIR"

// crashSegment is small, so that the crash test's log has many segments
// for compaction to drop.
const crashSegment = 64 << 10

// TestMain lets the test binary act as the crash test's child.
func TestMain(m *testing.M) {
	if dir := os.Getenv(crashChildEnv); dir != "" {
		crashChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashChild writes keys in a durable shard and prints each acknowledged
// write, until killed.
func crashChild(dir string) {
	s, err := Open(dir, Options{Durable: true, SegmentSize: crashSegment})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	// Compaction runs all along, so kills land in the middle of it too:
	// rewriting values, checkpointing, dropping segments.
	go func() {
		for {
			if _, err := s.Compact(context.Background(), 2); err != nil {
				fmt.Println("compact:", err)
				os.Exit(2)
			}
			time.Sleep(2 * time.Millisecond)
		}
	}()
	w := bufio.NewWriter(os.Stdout)
	for i := 0; ; i++ {
		k := fmt.Sprintf("k%d", i%500)
		v := fmt.Sprintf("v%d-%s", i, strings.Repeat("x", i%300))
		if err := s.Set(context.Background(), []byte(k), []byte(v), time.Time{}); err != nil {
			fmt.Println("set:", err)
			os.Exit(2)
		}
		fmt.Fprintf(w, "%s %s\n", k, v)
		w.Flush()
	}
}

// A durable shard killed with SIGKILL at random moments keeps every
// acknowledged write: after reopening, each key holds its last acknowledged
// value or a later one that was written but not yet acknowledged.
func TestCrashKeepsAcknowledgedWrites(t *testing.T) {
	teststorage.SkipOnMem(t, "a killed process and its files")
	if testing.Short() {
		t.Skip("crash test")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	compacted := false
	for round := range 12 {
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
		out, err := cmd.StdoutPipe()
		require.NoError(t, err)
		require.NoError(t, cmd.Start())
		acked := map[string]string{}
		sc := bufio.NewScanner(out)
		sc.Buffer(make([]byte, 1<<20), 1<<20)
		target := 50 + rng.IntN(400)
		for n := 0; n < target && sc.Scan(); n++ {
			k, v, _ := strings.Cut(sc.Text(), " ")
			acked[k] = v
		}
		require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
		for sc.Scan() {
			k, v, _ := strings.Cut(sc.Text(), " ")
			acked[k] = v
		}
		_ = cmd.Wait()
		s, err := Open(dir, Options{Durable: true, SegmentSize: crashSegment})
		require.NoError(t, err, "round %d", round)
		for k, v := range acked {
			got, ok, err := s.Get([]byte(k))
			require.NoError(t, err)
			require.True(t, ok, "round %d key %s", round, k)
			// The write after the last acknowledged one may have landed.
			want, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(v, "-", 2)[0], "v"))
			gotN, _ := strconv.Atoi(strings.TrimPrefix(strings.SplitN(string(got), "-", 2)[0], "v"))
			require.GreaterOrEqual(t, gotN, want, "round %d key %s: %s older than acknowledged %s", round, k, got, v)
		}
		compacted = compacted || s.log.FirstIndex() > 1
		require.NoError(t, s.Close())
	}
	require.True(t, compacted, "compaction never dropped a segment: the test did not cover it")
}

// Concurrent writers share fsyncs, and the index applies their records in
// log order: what a key holds before a reopen is what replay rebuilds.
func TestConcurrentWritersShareFsyncsAndApplyInLogOrder(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, true)
	ctx := t.Context()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 100 {
				k := fmt.Sprintf("shared-%d", i%5)
				require.NoError(t, s.Set(ctx, []byte(k), fmt.Appendf(nil, "g%d-%d", g, i), time.Time{}))
			}
		})
	}
	wg.Wait()
	st := s.LogStats()
	require.Equal(t, uint64(800), st.Records)
	require.Less(t, st.Fsyncs, uint64(800), "concurrent durable writes share fsyncs")
	before := map[string]string{}
	for i := range 5 {
		k := fmt.Sprintf("shared-%d", i)
		v, ok, err := s.Get([]byte(k))
		require.NoError(t, err)
		require.True(t, ok)
		before[k] = string(v)
	}
	require.NoError(t, s.Close())
	s = open(t, dir, clk, true)
	defer s.Close()
	for k, v := range before {
		got, ok, err := s.Get([]byte(k))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, v, string(got), "key %s", k)
	}
}

// Updates are read-modify-writes without lost updates, interleaved with
// plain writes to the same shard, and keep the key's expiry when asked.
func TestUpdateLosesNoIncrement(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, false)
	ctx := t.Context()
	incr := func(old []byte, exp time.Time, found bool) ([]byte, time.Time, Action, error) {
		n := 0
		if found {
			var err error
			if n, err = strconv.Atoi(string(old)); err != nil {
				return nil, time.Time{}, Keep, err
			}
		}
		return []byte(strconv.Itoa(n + 1)), exp, Write, nil
	}
	var wg sync.WaitGroup
	for g := range 6 {
		wg.Go(func() {
			for i := range 50 {
				if g%2 == 0 {
					require.NoError(t, s.Update(ctx, []byte("counter"), incr))
				} else {
					require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "other-%d", i), []byte("x"), time.Time{}))
				}
			}
		})
	}
	wg.Wait()
	v, ok, err := s.Get([]byte("counter"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "150", string(v))

	// An error from the function changes nothing.
	require.Error(t, s.Update(ctx, []byte("counter"), func([]byte, time.Time, bool) ([]byte, time.Time, Action, error) {
		return nil, time.Time{}, Write, fmt.Errorf("not an integer")
	}))
	// Remove deletes the key.
	require.NoError(t, s.Set(ctx, []byte("gone"), []byte("x"), time.Time{}))
	require.NoError(t, s.Update(ctx, []byte("gone"), func([]byte, time.Time, bool) ([]byte, time.Time, Action, error) {
		return nil, time.Time{}, Remove, nil
	}))
	_, ok, _ = s.Get([]byte("gone"))
	require.False(t, ok)
	// The expiry is kept when the function passes it on.
	require.NoError(t, s.Set(ctx, []byte("ttl"), []byte("1"), clk.Now().Add(time.Minute)))
	require.NoError(t, s.Update(ctx, []byte("ttl"), incr))
	clk.Advance(2 * time.Minute)
	_, ok, _ = s.Get([]byte("ttl"))
	require.False(t, ok)

	require.NoError(t, s.Close())
	s = open(t, dir, clk, false)
	defer s.Close()
	v, _, _ = s.Get([]byte("counter"))
	require.Equal(t, "150", string(v))
}

// The keys of a batch record point at their commands by offset — written
// live and replayed alike — and every one reads back; a one-command
// record's key points at it by position.
func TestBatchEntriesByOffset(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, false)
	ctx := t.Context()
	var cmds []command.Command
	for i := range 40 {
		cmds = append(cmds, StringSet(fmt.Appendf(nil, "k%d", i), bytes.Repeat([]byte{'v'}, i*7), time.Time{}))
	}
	require.NoError(t, s.SetBatch(ctx, cmds))
	require.NoError(t, s.Set(ctx, []byte("single"), []byte("s"), time.Time{}))
	metas := func(s *Shard) map[string]uint32 {
		m := map[string]uint32{}
		s.mu.RLock()
		defer s.mu.RUnlock()
		for i := range 40 {
			k := fmt.Appendf(nil, "k%d", i)
			e, ok := s.index.Get(hashKey(k), s.matcher(k))
			require.True(t, ok)
			require.NotZero(t, e.Meta&metaOffset, "key %s", k)
			m[string(k)] = e.Meta
		}
		e, ok := s.index.Get(hashKey([]byte("single")), s.matcher([]byte("single")))
		require.True(t, ok)
		require.Zero(t, e.Meta&metaOffset)
		return m
	}
	check := func(s *Shard) {
		for i := range 40 {
			v, ok, err := s.Get(fmt.Appendf(nil, "k%d", i))
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, bytes.Repeat([]byte{'v'}, i*7), v)
		}
	}
	live := metas(s)
	check(s)
	require.NoError(t, s.Close())
	s = open(t, dir, clk, false)
	defer s.Close()
	require.Equal(t, live, metas(s), "replay locates each command where the write did")
	check(s)
}
