package shard

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func mutate(t *testing.T, s *Shard, cmds ...command.Command) {
	t.Helper()
	require.NoError(t, s.Mutate(t.Context(), func(*View) ([]command.Command, error) { return cmds, nil }))
}

func args(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, x := range ss {
		out[i] = []byte(x)
	}
	return out
}

// dump renders every live key of the shard: strings by value, collections
// by their image (which is a function of their contents).
func dump(t *testing.T, s *Shard) map[string]string {
	t.Helper()
	requireStringAddrs(t, s)
	out := map[string]string{}
	var cur uint64
	for {
		keys, next, err := s.Scan(cur, 100)
		require.NoError(t, err)
		for _, k := range keys {
			s.mu.RLock()
			it, err := s.lookupLocked(k, s.opts.Now().UnixMilli())
			s.mu.RUnlock()
			require.NoError(t, err)
			require.True(t, it.Exists)
			if it.Obj != nil {
				out[string(k)] = string(object.Append(nil, it.Obj))
			} else {
				out[string(k)] = "string:" + string(it.Value) + fmt.Sprint(it.Expiry.UnixMilli())
			}
		}
		if next == 0 {
			return out
		}
		cur = next
	}
}

func TestCollectionOps(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, t.TempDir(), clk, true)
	defer s.Close()
	mutate(t, s,
		command.Command{Op: OpHSet, Key: []byte("h"), Args: args("a", "1", "b", "2")},
		command.Command{Op: OpSAdd, Key: []byte("s"), Args: args("x", "y")},
		command.Command{Op: OpZAdd, Key: []byte("z"), Args: [][]byte{[]byte("m"), EncodeScore(2), []byte("n"), EncodeScore(1)}},
		command.Command{Op: OpRPush, Key: []byte("l"), Args: args("1", "2", "3")},
		command.Command{Op: OpLPush, Key: []byte("l"), Args: args("0")},
	)
	get := func(k string) *object.Object {
		s.mu.RLock()
		defer s.mu.RUnlock()
		it, err := s.lookupLocked([]byte(k), clk.Now().UnixMilli())
		require.NoError(t, err)
		return it.Obj
	}
	require.Equal(t, map[string][]byte{"a": []byte("1"), "b": []byte("2")}, get("h").Hash)
	require.Len(t, get("s").Set, 2)
	r, _ := get("z").ZSet.Rank("n")
	require.Zero(t, r)
	require.Equal(t, args("0", "1", "2", "3"), get("l").List.Slice())

	// A string read of a collection is a type error.
	_, _, err := s.Get([]byte("h"))
	require.ErrorIs(t, err, ErrWrongType)

	mutate(t, s,
		command.Command{Op: OpLPop, Key: []byte("l"), Args: [][]byte{Uvarint(2)}},
		command.Command{Op: OpLSet, Key: []byte("l"), Args: [][]byte{Varint(1), []byte("three")}},
		command.Command{Op: OpLInsert, Key: []byte("l"), Args: args("b", "three", "2.5")},
		command.Command{Op: OpHDel, Key: []byte("h"), Args: args("a", "b")},
		command.Command{Op: OpRename, Key: []byte("s"), Args: args("s2")},
	)
	require.Equal(t, args("2", "2.5", "three"), get("l").List.Slice())
	require.Nil(t, get("h"), "an emptied hash is no key")
	require.Nil(t, get("s"))
	require.Len(t, get("s2").Set, 2)

	// Expiry: judged at read time, and at apply time by the command's own
	// time, so a write to an expired collection starts a new one.
	mutate(t, s, command.Command{Op: OpExpireAt, Key: []byte("z"), Expiry: clk.Now().Add(time.Second).UnixMilli()})
	clk.Advance(2 * time.Second)
	require.Nil(t, get("z"))
	mutate(t, s, command.Command{Op: OpZAdd, Key: []byte("z"), Args: [][]byte{[]byte("q"), EncodeScore(5)}})
	require.Equal(t, 1, get("z").Len())
	require.Zero(t, get("z").Expiry)

	// SET replaces a collection, and the object slot is reused.
	require.NoError(t, s.Set(t.Context(), []byte("s2"), []byte("now a string"), time.Time{}))
	v, ok, err := s.Get([]byte("s2"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "now a string", string(v))
	require.NotEmpty(t, s.free)
}

// Random collection ops agree across a reopen that replays the whole log,
// one that starts from a checkpoint, and one from a checkpoint plus a tail.
func TestCollectionsSurviveReplayAndCheckpoints(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, false)
	rng := rand.New(rand.NewPCG(5, 6))
	run := func(n int) {
		for range n {
			mutate(t, s, randomOp(rng, clk, 20))
			clk.Advance(time.Duration(rng.IntN(100)) * time.Millisecond)
		}
	}
	reopen := func() {
		before := dump(t, s)
		require.NoError(t, s.Close())
		s = open(t, dir, clk, false)
		require.Equal(t, before, dump(t, s))
	}
	run(2000)
	reopen() // the whole log
	_, err := s.Checkpoint(context.Background())
	require.NoError(t, err)
	reopen() // the checkpoint alone
	run(1000)
	reopen() // checkpoint and tail
	require.Positive(t, s.replayed)
	require.NoError(t, s.Close())

	// Without the checkpoints, the whole log gives the same state again.
	s = open(t, dir, clk, false)
	want := dump(t, s)
	require.NoError(t, s.Close())
	imgs, _ := filepath.Glob(filepath.Join(dir, "checkpoint-*"))
	for _, f := range imgs {
		require.NoError(t, os.Remove(f))
	}
	s = open(t, dir, clk, false)
	defer s.Close()
	require.Equal(t, want, dump(t, s))
	kinds := map[string]bool{}
	for k := range want {
		kinds[k[:1]] = true
	}
	require.True(t, slices.ContainsFunc([]string{"h", "s", "z", "l"}, func(k string) bool { return kinds[k] }))
}

func TestSweepDeletesExpiredKeysOnly(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, true)
	ctx := t.Context()
	for i := range 100 {
		var exp time.Time
		if i%2 == 0 {
			exp = clk.Now().Add(time.Second)
		}
		require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), []byte("v"), exp))
	}
	mutate(t, s,
		command.Command{Op: OpSAdd, Key: []byte("set"), Args: args("a")},
		command.Command{Op: OpExpireAt, Key: []byte("set"), Expiry: clk.Now().Add(time.Second).UnixMilli()},
	)
	st, err := s.Sweep(ctx, 1000)
	require.NoError(t, err)
	require.Zero(t, st.Expired, "nothing has expired yet")
	clk.Advance(2 * time.Second)
	// A key rewritten after expiring is live again, and stays.
	require.NoError(t, s.Set(ctx, []byte("k0"), []byte("again"), time.Time{}))
	total := 0
	for range 50 {
		st, err := s.Sweep(ctx, 7)
		require.NoError(t, err)
		require.LessOrEqual(t, st.Examined, 7+16) // a budget, give or take one home run
		total += st.Expired
		if st.Done && total > 0 {
			break
		}
	}
	require.Equal(t, 50, total) // 49 expired strings and the set
	require.Equal(t, 51, s.Len())
	v, ok, err := s.Get([]byte("k0"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "again", string(v))
	// The deletes were logged: a replay agrees.
	require.NoError(t, s.Close())
	s = open(t, dir, clk, true)
	defer s.Close()
	require.Equal(t, 51, s.Len())
}

// randomOp is a random command over keys keys of each kind.
func randomOp(rng *rand.Rand, clk *testclock.Clock, keys int) command.Command {
	ops := []command.Op{OpHSet, OpHDel, OpSAdd, OpSRem, OpZAdd, OpZRem, OpLPush, OpRPush, OpLPop, OpRPop, OpLTrim, OpLRem, OpExpireAt, OpSet, OpDelete, OpFUpsert, OpFReplace, OpCAdd, OpCChange, OpCSelect}
	op := ops[rng.IntN(len(ops))]
	kind := opKind(op)
	if kind == 0 { // expiry, SET and DEL land on any kind's keys
		kind = object.Kind(1 + rng.IntN(6))
	}
	k := fmt.Sprintf("%s-%d", kind, rng.IntN(keys))
	m := fmt.Sprint(rng.IntN(10))
	c := command.Command{Op: op, Key: []byte(k)}
	switch op {
	case OpHSet:
		c.Args = args(m, fmt.Sprint(rng.Int()))
	case OpZAdd:
		c.Args = [][]byte{[]byte(m), EncodeScore(float64(rng.IntN(5)))}
	case OpLPop, OpRPop:
		c.Args = [][]byte{Uvarint(uint64(rng.IntN(3)))}
	case OpLTrim:
		c.Args = [][]byte{Varint(int64(rng.IntN(2))), Varint(int64(rng.IntN(6)))}
	case OpLRem:
		c.Args = [][]byte{Varint(int64(rng.IntN(3) - 1)), []byte(m)}
	case OpExpireAt:
		c.Expiry = clk.Now().Add(time.Duration(rng.IntN(3000)) * time.Millisecond).UnixMilli()
	case OpCAdd:
		c.Args = [][]byte{Varint(int64(rng.IntN(5) * 1000)), Varint(int64(rng.IntN(9) - 2))}
		if rng.IntN(2) == 0 {
			c.Args = append(c.Args, []byte(m), Varint(clk.Now().UnixMilli()+int64(rng.IntN(2000))))
		}
	case OpCChange:
		c.Args = [][]byte{Varint(int64(rng.IntN(5) * 1000)), []byte(m)}
	case OpCSelect:
		c.Args = [][]byte{[]byte(m), Varint(int64(rng.IntN(100))), []byte([]string{"f", "l"}[rng.IntN(2)])}
	case OpFUpsert, OpFReplace:
		c.Args = [][]byte{Uvarint(uint64(rng.IntN(8)))} // 0: no retention
		if op == OpFReplace {
			lo := int64(rng.IntN(20))
			c.Args = append(c.Args, Varint(lo), Varint(lo+int64(rng.IntN(10))))
		}
		for range rng.IntN(4) {
			c.Args = append(c.Args, Varint(int64(rng.IntN(30))), []byte(m))
		}
	default:
		c.Args = args(m)
	}
	return c
}
