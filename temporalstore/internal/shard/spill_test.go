package shard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func openBudget(t *testing.T, dir string, clk *testclock.Clock, b *Budget) *Shard {
	t.Helper()
	s, err := Open(dir, Options{Now: clk.Now, SegmentSize: 256 << 10, Collections: b})
	require.NoError(t, err)
	return s
}

// readAll reads every key of the shard through Read, as the engine's read
// commands do, so spilled collections are decoded (and promoted when the
// budget has room).
func readAll(t *testing.T, s *Shard) {
	t.Helper()
	keys := dump(t, s)
	for k := range keys {
		require.NoError(t, s.Read(t.Context(), func(v *View) error {
			_, err := v.Get([]byte(k))
			return err
		}))
	}
}

// A shard whose collections far exceed its budget holds the same state as
// one that keeps them all resident, under random ops, reads, reopens,
// checkpoints and compaction, while its resident collections stay near
// the budget.
func TestSpilledCollectionsMatchResidentOnes(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	const limit = 16 << 10
	budget := NewBudget(limit)
	dir := t.TempDir()
	s := openBudget(t, dir, clk, budget)
	ref := openBudget(t, t.TempDir(), clk, nil)
	defer func() { require.NoError(t, ref.Close()) }()
	rng := rand.New(rand.NewPCG(7, 8))
	run := func(n int) {
		for i := range n {
			c := randomOp(rng, clk, 300)
			mutate(t, s, c)
			mutate(t, ref, c)
			if i%500 == 0 {
				readAll(t, s)
			}
			clk.Advance(time.Duration(rng.IntN(20)) * time.Millisecond)
		}
		requireSameDump(t, dump(t, ref), dump(t, s))
		// A little over: a write lands before the spill it triggers.
		require.LessOrEqual(t, budget.Used(), int64(limit+limit/2))
		requireSizes(t, s)
		requireSizes(t, ref)
	}
	reopen := func() {
		want := dump(t, ref)
		require.NoError(t, s.Close())
		require.Zero(t, budget.Used(), "a closed shard gives its share back")
		s = openBudget(t, dir, clk, budget)
		requireSameDump(t, want, dump(t, s))
	}

	run(4000)
	st := s.Stats()
	require.Positive(t, st.Spilled)
	require.Positive(t, st.Spills)
	require.Positive(t, st.Loads)
	require.Positive(t, st.Promotions)
	live := 0
	for _, v := range dump(t, s) {
		if !strings.HasPrefix(v, "string:") {
			live++
		}
	}
	// Expired ones count until swept (the spill deletes those it meets).
	require.GreaterOrEqual(t, st.Collections, live)
	require.Positive(t, st.CollectionBytes)
	require.Less(t, st.CollectionBytes, ref.Stats().CollectionBytes/2)
	reopen() // the whole log
	_, err := s.Checkpoint(t.Context())
	require.NoError(t, err)
	reopen() // the checkpoint alone
	run(2000)
	reopen() // checkpoint and tail

	// Compaction moves spilled images, and the log front they lived in
	// can go.
	dropped, moved := 0, 0
	for range 3 {
		run(2000)
		cs, err := s.Compact(t.Context(), 100)
		require.NoError(t, err)
		dropped, moved = dropped+cs.Segments, moved+cs.Moved
		requireSameDump(t, dump(t, ref), dump(t, s))
	}
	require.Positive(t, dropped)
	require.Positive(t, moved)
	reopen()
	require.NoError(t, s.Close())
}

// Spilling keeps a collection's version (WATCH sees no change) and its
// expiry; a spilled collection expires on time and a sweep removes it.
func TestSpillKeepsVersionAndExpiry(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := openBudget(t, t.TempDir(), clk, nil)
	defer s.Close()
	ctx := t.Context()
	mutate(t, s,
		command.Command{Op: OpHSet, Key: []byte("h"), Args: args("f", "v")},
		command.Command{Op: OpSAdd, Key: []byte("s"), Args: args("a")},
	)
	mutate(t, s, command.Command{Op: OpExpireAt, Key: []byte("s"), Expiry: clk.Now().Add(time.Second).UnixMilli()})
	vh, err := s.Version(ctx, []byte("h"))
	require.NoError(t, err)
	vs, err := s.Version(ctx, []byte("s"))
	require.NoError(t, err)

	// Untouched since the hand passed: the first pass clears the marks,
	// so ask for more than there is.
	st, err := s.Spill(ctx, 1<<30)
	require.NoError(t, err)
	require.Equal(t, 2, st.Spilled)
	require.Equal(t, 2, s.Stats().Spilled)
	require.Zero(t, s.Stats().CollectionBytes)

	for k, want := range map[string]uint64{"h": vh, "s": vs} {
		s.mu.RLock()
		e, ok := s.index.Get(hashKey([]byte(k)), s.matcher([]byte(k)))
		s.mu.RUnlock()
		require.True(t, ok)
		require.True(t, isSpilled(e))
		got, err := s.Version(ctx, []byte(k))
		require.NoError(t, err)
		require.Equal(t, want, got, k)
	}
	// Version read them, with no budget to stop it: resident again, and
	// spilled again by the next Spill.
	require.Equal(t, uint64(2), s.Stats().Promotions)
	_, err = s.Spill(ctx, 1<<30)
	require.NoError(t, err)

	it := getItem(t, s, "s")
	require.True(t, it.Exists)
	require.Equal(t, clk.Now().Add(time.Second).UnixMilli(), it.Expiry.UnixMilli())
	clk.Advance(2 * time.Second)
	require.False(t, getItem(t, s, "s").Exists)
	sw, err := s.Sweep(ctx, 100)
	require.NoError(t, err)
	require.Equal(t, 1, sw.Expired)
	require.Equal(t, 1, s.Stats().Spilled)
	require.Equal(t, 1, s.Stats().Collections)

	// A write to a spilled hash loads it, then applies.
	mutate(t, s, command.Command{Op: OpHSet, Key: []byte("h"), Args: args("g", "w")})
	it = getItem(t, s, "h")
	require.Equal(t, map[string][]byte{"f": []byte("v"), "g": []byte("w")}, it.Obj.Hash)
	require.Zero(t, s.Stats().Spilled)
	require.Equal(t, uint64(1), s.Stats().Loads)
}

func getItem(t *testing.T, s *Shard, key string) Item {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	it, err := s.lookupLocked([]byte(key), s.opts.Now().UnixMilli())
	require.NoError(t, err)
	return it
}

// A read of a spilled collection is not promoted past the budget: the
// collection is served from its record, and memory stays within bounds.
func TestReadsDoNotPromotePastTheBudget(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	budget := NewBudget(4 << 10)
	s := openBudget(t, t.TempDir(), clk, budget)
	defer s.Close()
	for i := range 200 {
		mutate(t, s, command.Command{Op: OpRPush, Key: fmt.Appendf(nil, "l%d", i), Args: args("a", "b", "c")})
	}
	require.Positive(t, s.Stats().Spilled)
	for range 3 {
		for i := range 200 {
			require.NoError(t, s.Read(t.Context(), func(v *View) error {
				it, err := v.Get(fmt.Appendf(nil, "l%d", i))
				require.True(t, it.Exists)
				require.Equal(t, args("a", "b", "c"), it.Obj.List.Slice())
				return err
			}))
		}
		require.LessOrEqual(t, budget.Used(), int64(4<<10))
	}
}

// A spilled record that does not decode is an error on read, not a panic
// or an empty collection.
func TestMalformedSpilledRecordIsAnError(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := openBudget(t, t.TempDir(), clk, nil)
	defer s.Close()
	mutate(t, s, command.Command{Op: OpImage, Key: []byte("x"), Args: args("not an image", "\x01")})
	err := s.Read(context.Background(), func(v *View) error {
		_, err := v.Get([]byte("x"))
		return err
	})
	require.ErrorIs(t, err, errSpilledRecord)
	// A write to it does not apply (damaged state is not replaced by an
	// empty collection).
	mutate(t, s, command.Command{Op: OpHSet, Key: []byte("x"), Args: args("f", "v")})
	require.Equal(t, 1, s.Stats().Spilled)
}

// requireSizes checks the shard's resident-collection accounting: each
// object's Size, kept as it changed, equals that of a copy built afresh,
// and the shard's total is their sum.
func requireSizes(t *testing.T, s *Shard) {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	var total int64
	for _, o := range s.objs {
		if o == nil {
			continue
		}
		fresh, _, err := object.Decode(object.Append(nil, o))
		require.NoError(t, err)
		require.Equal(t, fresh.Size(), o.Size(), "%s", o.Key)
		total += o.Size()
	}
	require.Equal(t, total, s.spill.bytes)
}

func FuzzDecodeSpilled(f *testing.F) {
	o := object.New(object.KindHash, []byte("k"))
	o.HSet("f", []byte("v"))
	f.Add(object.Append(nil, o), Uvarint(7))
	f.Add([]byte{}, []byte{})
	f.Fuzz(func(t *testing.T, img, ver []byte) {
		c := command.Decoded{Command: command.Command{Op: OpImage, Key: []byte("k"), Args: [][]byte{img, ver}}}
		o, err := decodeSpilled(&c)
		if err != nil {
			require.ErrorIs(t, err, errSpilledRecord)
			return
		}
		again, _, err := object.Decode(object.Append(nil, o))
		require.NoError(t, err)
		require.Equal(t, object.Append(nil, o), object.Append(nil, again))
	})
}

// requireSameDump compares two dumps key by key, naming only the keys that
// differ.
func requireSameDump(t *testing.T, want, got map[string]string) {
	t.Helper()
	var diff []string
	for k, v := range want {
		if g, ok := got[k]; !ok || g != v {
			diff = append(diff, fmt.Sprintf("%s: want %q, got %q (present %v)", k, v, g, ok))
		}
	}
	for k, g := range got {
		if _, ok := want[k]; !ok {
			diff = append(diff, fmt.Sprintf("%s: want absent, got %q", k, g))
		}
	}
	require.Empty(t, diff)
}

// A shard that shares its budget with others may find too little of its
// own to spill; it then waits before trying again, but writes that grow
// the budget's use by a sixteenth try at once, so fast writes cannot run
// the shard far past the budget while it waits.
func TestSpillRetriesAsTheBudgetGrows(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	const limit = 64 << 10
	budget := NewBudget(limit)
	// The rest of the budget is another shard's, which this one cannot
	// spill: every spill here falls short of the excess.
	budget.used.Add(limit)
	s := openBudget(t, t.TempDir(), clk, budget)
	defer func() { require.NoError(t, s.Close()) }()
	value := strings.Repeat("v", 1000)
	peak := int64(0)
	for i := range 400 {
		require.NoError(t, s.MutateKey(t.Context(), fmt.Appendf(nil, "h%03d", i), func(*View) ([]command.Command, error) {
			return []command.Command{{Op: OpHSet, Key: fmt.Appendf(nil, "h%03d", i), Args: args("f", value)}}, nil
		}))
		s.mu.RLock()
		peak = max(peak, s.spill.bytes)
		s.mu.RUnlock()
	}
	t.Logf("peak resident %d bytes, budget %d", peak, limit)
	require.Positive(t, s.Stats().Spilled)
	// 400 hashes of a kilobyte written in well under the retry delay on
	// any machine this runs on: without the growth rule they all stay.
	require.Less(t, peak, int64(limit/4), "resident collections stay near a sixteenth of the budget")
}
