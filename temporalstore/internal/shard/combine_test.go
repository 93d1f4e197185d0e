package shard

import (
	"fmt"
	"math/rand/v2"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// Concurrent read-modify-writes of many keys, durable, lose no update —
// several writers share each key — and share fsyncs: the combiner puts
// mutations of distinct keys in one append. A mutation refused (an error,
// a record too large) does not hold back the others of its batch, and a
// reopen replays exactly what was acknowledged.
func TestCombinedMutationsShareFsyncs(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, true)
	ctx := t.Context()
	const writers, each, keys = 32, 40, 8
	before := s.LogStats().Fsyncs
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Appendf(nil, "k%d", (g+i)%keys)
				require.NoError(t, s.Update(ctx, key, incrDecimal))
				if i%10 == 0 {
					err := s.MutateKey(ctx, []byte("big"), func(*View) ([]command.Command, error) {
						return []command.Command{StringSet([]byte("big"), make([]byte, 2<<20), time.Time{})}, nil
					})
					require.ErrorIs(t, err, ErrTooLarge)
				}
			}
		})
	}
	wg.Wait()
	fsyncs := s.LogStats().Fsyncs - before
	t.Logf("%d read-modify-writes, %d fsyncs", writers*each, fsyncs)
	require.Less(t, fsyncs, uint64(writers*each/2), "the writes share fsyncs")
	total := 0
	want := map[string]string{}
	for k := range keys {
		v, ok, err := s.Get(fmt.Appendf(nil, "k%d", k))
		require.NoError(t, err)
		require.True(t, ok)
		n, _ := strconv.Atoi(string(v))
		total += n
		want[fmt.Sprint("k", k)] = string(v)
	}
	require.Equal(t, writers*each, total)
	_, ok, _ := s.Get([]byte("big"))
	require.False(t, ok)

	require.NoError(t, s.Close())
	s = open(t, dir, clk, true)
	defer s.Close()
	for k, v := range want {
		got, ok, err := s.Get([]byte(k))
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, v, string(got))
	}
}

// incrDecimal adds one to a decimal string value (absent: 0).
func incrDecimal(old []byte, exp time.Time, found bool) ([]byte, time.Time, Action, error) {
	n := 0
	if found {
		n, _ = strconv.Atoi(string(old))
	}
	return []byte(strconv.Itoa(n + 1)), exp, Write, nil
}

// A batch takes the first mutation and every keyed one after it, up to
// the first unkeyed one and at most maxCombine; the rest stay queued.
func TestTakeBatch(t *testing.T) {
	mk := func(spec string) []*mutation {
		var q []*mutation
		for _, k := range strings.Fields(spec) {
			m := &mutation{}
			if k != "*" {
				m.key = []byte(k)
			}
			q = append(q, m)
		}
		return q
	}
	names := func(ms []*mutation) string {
		var out []string
		for _, m := range ms {
			if m.key == nil {
				out = append(out, "*")
			} else {
				out = append(out, string(m.key))
			}
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct{ queue, batch, rest string }{
		{"a", "a", ""},
		{"a b c", "a b c", ""},
		{"a a b", "a a b", ""},
		{"a b * c", "a b", "* c"},
		{"* a b", "*", "a b"},
	} {
		batch, rest := takeBatch(mk(tc.queue))
		require.Equal(t, tc.batch, names(batch), tc.queue)
		require.Equal(t, tc.rest, names(rest), tc.queue)
	}
	var q []*mutation
	for i := range maxCombine + 3 {
		q = append(q, &mutation{key: fmt.Appendf(nil, "k%d", i)})
	}
	batch, rest := takeBatch(q)
	require.Len(t, batch, maxCombine)
	require.Len(t, rest, 3)
	require.Equal(t, fmt.Sprint("k", maxCombine), string(rest[0].key))
}

// Increments of one hot string key share appends: each sees the ones
// before it in its batch, none is lost, and a reopen replays them all.
// Collection mutations of one key still take a batch each, in order.
func TestHotKeyMutationsShareFsyncs(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, true)
	ctx := t.Context()
	const writers, each = 32, 40
	before := s.LogStats().Fsyncs
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				require.NoError(t, s.Update(ctx, []byte("hot"), incrDecimal))
			}
		})
	}
	wg.Wait()
	fsyncs := s.LogStats().Fsyncs - before
	t.Logf("%d increments of one key, %d fsyncs", writers*each, fsyncs)
	require.Less(t, fsyncs, uint64(writers*each/3), "increments of one key share fsyncs")
	v, ok, err := s.Get([]byte("hot"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, strconv.Itoa(writers*each), string(v))
	require.NoError(t, s.Close())
	s = open(t, dir, clk, true)
	defer s.Close()
	v, _, err = s.Get([]byte("hot"))
	require.NoError(t, err)
	require.Equal(t, strconv.Itoa(writers*each), string(v))
}

// Read-modify-writes of one hot collection share fsyncs as a string's do:
// each sees every increment before it (the totals they read are 0..n-1,
// each once), and a reopen replays all of them.
func TestHotCollectionMutationsShareFsyncs(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, true)
	ctx := t.Context()
	key := []byte("caps")
	total := func(it Item) int64 {
		var n int64
		if it.Obj != nil {
			for i := range it.Obj.Control.Buckets() {
				_, sum := it.Obj.Control.Bucket(i)
				n += sum
			}
		}
		return n
	}
	const writers, each = 32, 40
	before := s.LogStats().Fsyncs
	var mu sync.Mutex
	seen := map[int64]int{}
	var wg sync.WaitGroup
	for range writers {
		wg.Go(func() {
			for range each {
				var read int64
				require.NoError(t, s.MutateKey(ctx, key, func(v *View) ([]command.Command, error) {
					it, err := v.Get(key)
					read = total(it)
					return []command.Command{{Op: OpCAdd, Key: key, Args: [][]byte{Varint(0), Varint(1)}}}, err
				}))
				mu.Lock()
				seen[read]++
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	fsyncs := s.LogStats().Fsyncs - before
	t.Logf("%d increments of one collection, %d fsyncs", writers*each, fsyncs)
	require.Less(t, fsyncs, uint64(writers*each/3), "increments of one collection share fsyncs")
	require.Len(t, seen, writers*each)
	for i := range int64(writers * each) {
		require.Equal(t, 1, seen[i], "total %d read once", i)
	}
	require.NoError(t, s.Close())
	s = open(t, dir, clk, true)
	defer s.Close()
	err := s.Read(ctx, func(v *View) error {
		it, err := v.Get(key)
		require.Equal(t, int64(writers*each), total(it))
		return err
	})
	require.NoError(t, err)
}

// In one batch: a delete then an increment of the same key sees it gone;
// an expiry set by an earlier mutation is honoured by a later one; and a
// collection op on a key defers that key's later mutations, which then
// see it applied.
func TestBatchPendingState(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, t.TempDir(), clk, false)
	defer s.Close()
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, []byte("k"), []byte("41"), time.Time{}))
	get := func(v *View, key string) Item {
		it, err := v.Get([]byte(key))
		require.NoError(t, err)
		return it
	}
	var seen []string
	steps := []MutateFunc{
		func(v *View) ([]command.Command, error) { // k: 41 -> deleted
			seen = append(seen, string(get(v, "k").Value))
			return []command.Command{{Op: OpDelete, Key: []byte("k")}}, nil
		},
		func(v *View) ([]command.Command, error) { // sees it gone; sets 1, expiring now
			it := get(v, "k")
			_, batched := v.pending["k"]
			seen = append(seen, fmt.Sprint(it.Exists, batched))
			return []command.Command{StringSet([]byte("k"), []byte("1"), clk.Now())}, nil
		},
		func(v *View) ([]command.Command, error) { // expired already: absent
			_, batched := v.pending["k"]
			seen = append(seen, fmt.Sprint(get(v, "k").Exists, batched))
			return []command.Command{StringSet([]byte("k"), []byte("7"), time.Time{})}, nil
		},
	}
	// A collection op on h, then a string update of h: in the same batch,
	// it sees the hash.
	steps = append(steps, func(v *View) ([]command.Command, error) {
		return []command.Command{{Op: OpHSet, Key: []byte("h"), Args: [][]byte{[]byte("f"), []byte("v")}}}, nil
	})
	keys := []string{"k", "k", "k", "h"}
	errs := make([]error, len(steps)+2)
	// Queued together behind a leader held at the gate, so they form one
	// batch.
	s.gate.Lock()
	var wg sync.WaitGroup
	wg.Go(func() {
		errs[0] = s.MutateKey(ctx, []byte("x"), func(*View) ([]command.Command, error) { return nil, nil })
	})
	queued := func(n int) func() bool {
		return func() bool {
			s.comb.mu.Lock()
			defer s.comb.mu.Unlock()
			return s.comb.leading && len(s.comb.queue) == n
		}
	}
	require.Eventually(t, queued(0), 5*time.Second, time.Millisecond)
	for i, fn := range steps {
		wg.Go(func() { errs[i+1] = s.MutateKey(ctx, []byte(keys[i]), fn) })
		require.Eventually(t, queued(i+1), 5*time.Second, time.Millisecond)
	}
	wg.Go(func() {
		errs[len(steps)+1] = s.Update(ctx, []byte("h"), func([]byte, time.Time, bool) ([]byte, time.Time, Action, error) {
			return []byte("s"), time.Time{}, Write, nil
		})
	})
	require.Eventually(t, queued(len(steps)+1), 5*time.Second, time.Millisecond)
	s.gate.Unlock()
	wg.Wait()
	require.Equal(t, []error{nil, nil, nil, nil, nil}, errs[:5])
	require.ErrorIs(t, errs[5], ErrWrongType)
	require.Equal(t, []string{"41", "false true", "false true"}, seen, "one batch, each seeing the ones before")
	v, ok, err := s.Get([]byte("k"))
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, "7", string(v))
}

// fold follows each command as apply would: sets and deletes, collection
// ops creating, changing and emptying a collection, an expired key giving
// way, an expiry set, ops on a key of another type doing nothing; and it
// hands out a value nobody can append into. foldable refuses commands of
// another key and renames.
func TestFold(t *testing.T) {
	k := []byte("k")
	const now = 1_764_460_800_000
	set := func(v string, exp int64) command.Command {
		return command.Command{Op: OpSet, Key: k, Args: [][]byte{append(make([]byte, 0, 64), v...)}, Expiry: exp, Time: now}
	}
	hset := func(f, v string) command.Command {
		return command.Command{Op: OpHSet, Key: k, Args: [][]byte{[]byte(f), []byte(v)}, Time: now}
	}
	hdel := command.Command{Op: OpHDel, Key: k, Args: [][]byte{[]byte("f")}, Time: now}
	expire := func(at int64) command.Command { return command.Command{Op: OpExpireAt, Key: k, Expiry: at, Time: now} }
	type want struct {
		exists bool
		value  string            // a string's
		hash   map[string]string // a hash's
		expiry int64
	}
	for _, tc := range []struct {
		name string
		cmds []command.Command
		want want
	}{
		{"set then set", []command.Command{set("a", 0), set("b", now+5)}, want{exists: true, value: "b", expiry: now + 5}},
		{"set then delete", []command.Command{set("a", 0), {Op: OpDelete, Key: k}}, want{}},
		{"hset creates", []command.Command{hset("f", "1"), hset("g", "2")}, want{exists: true, hash: map[string]string{"f": "1", "g": "2"}}},
		{"hdel empties", []command.Command{hset("f", "1"), hdel}, want{}},
		{"hdel of nothing", []command.Command{hdel}, want{}},
		{"hset on a string does nothing", []command.Command{set("a", 0), hset("f", "1")}, want{exists: true, value: "a"}},
		{"an expired string gives way", []command.Command{set("a", now), hset("f", "1")}, want{exists: true, hash: map[string]string{"f": "1"}}},
		{"expiry on a hash", []command.Command{hset("f", "1"), expire(now + 9)}, want{exists: true, hash: map[string]string{"f": "1"}, expiry: now + 9}},
		{"expiry in the past", []command.Command{hset("f", "1"), expire(now), hset("g", "2")}, want{exists: true, hash: map[string]string{"g": "2"}}},
		{"expiry on a string does nothing", []command.Command{set("a", 0), expire(now + 9)}, want{exists: true, value: "a"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.True(t, foldable(k, tc.cmds))
			var it Item
			for i := range tc.cmds {
				require.True(t, fold(&it, k, &tc.cmds[i]))
			}
			require.Equal(t, tc.want.exists, it.Exists)
			if tc.want.expiry != 0 {
				require.Equal(t, tc.want.expiry, it.Expiry.UnixMilli())
			} else {
				require.True(t, it.Expiry.IsZero())
			}
			switch {
			case tc.want.hash != nil:
				require.NotNil(t, it.Obj)
				got := map[string]string{}
				for f, v := range it.Obj.Hash {
					got[f] = string(v)
				}
				require.Equal(t, tc.want.hash, got)
				require.Equal(t, tc.want.expiry, it.Obj.Expiry)
			case tc.want.exists:
				require.Nil(t, it.Obj)
				require.Equal(t, tc.want.value, string(it.Value))
				require.Equal(t, len(it.Value), cap(it.Value), "clipped")
			}
		})
	}
	require.False(t, foldable(k, []command.Command{set("a", 0), {Op: OpSet, Key: []byte("other"), Args: [][]byte{nil}}}), "another key")
	require.False(t, foldable(k, []command.Command{{Op: OpRename, Key: k, Args: [][]byte{[]byte("j")}}}), "a rename")
}

// A batch's pending view of a key is what applying the same commands
// leaves: random sequences of sets, deletes, expiries and collection ops
// over a random applied state, folded and then applied, agree.
func TestFoldMatchesApply(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, t.TempDir(), clk, false)
	defer s.Close()
	ctx := t.Context()
	now := clk.Now().UnixMilli()
	rng := rand.New(rand.NewPCG(7, 11))
	small := func() []byte { return []byte(strconv.Itoa(rng.IntN(4))) }
	gen := func(key []byte) command.Command {
		c := command.Command{Key: key, Time: now}
		switch rng.IntN(11) {
		case 0:
			c.Op, c.Args = OpSet, [][]byte{small()}
			if rng.IntN(3) == 0 {
				c.Expiry = now + int64(rng.IntN(2))*1000
			}
		case 1:
			c.Op = OpDelete
		case 2:
			c.Op, c.Args = OpHSet, [][]byte{small(), small()}
		case 3:
			c.Op, c.Args = OpHDel, [][]byte{small()}
		case 4:
			c.Op, c.Args = OpSAdd, [][]byte{small(), small()}
		case 5:
			c.Op, c.Args = OpSRem, [][]byte{small()}
		case 6:
			c.Op, c.Args = OpCAdd, [][]byte{Varint(int64(rng.IntN(3)) * 60_000), Varint(int64(rng.IntN(5)) - 1)}
			if rng.IntN(4) == 0 {
				c.Op, c.Args = OpCTrimBefore, [][]byte{Varint(int64(rng.IntN(3)) * 60_000)}
			}
		case 7:
			c.Op, c.Args = OpFUpsert, [][]byte{Uvarint(uint64(rng.IntN(4))), Varint(int64(rng.IntN(6))), small()}
		case 8:
			c.Op, c.Args = OpRPush, [][]byte{small()}
		case 9:
			c.Op, c.Args = OpLPop, [][]byte{Uvarint(uint64(rng.IntN(3)))}
		default:
			c.Op, c.Expiry = OpExpireAt, now+int64(rng.IntN(3))*1000
		}
		return c
	}
	seq := func(key []byte) []command.Command {
		cmds := make([]command.Command, 1+rng.IntN(5))
		for i := range cmds {
			cmds[i] = gen(key)
		}
		return cmds
	}
	describe := func(it Item) string {
		if !it.Exists {
			return "absent"
		}
		exp := int64(0)
		if !it.Expiry.IsZero() {
			exp = it.Expiry.UnixMilli()
		}
		if it.Obj != nil {
			return fmt.Sprintf("%s expiring %d: %x", it.Obj.Kind, exp, object.Append(nil, it.Obj))
		}
		return fmt.Sprintf("string %q expiring %d", it.Value, exp)
	}
	for trial := range 400 {
		key := fmt.Appendf(nil, "k%d", trial)
		for _, c := range seq(key) { // the applied state, one record each
			require.NoError(t, s.write(ctx, []command.Command{c}))
		}
		more := seq(key)
		s.mu.RLock()
		it, ok := s.pendingOf(key, more)
		s.mu.RUnlock()
		require.True(t, ok)
		if it.Exists && !it.Expiry.IsZero() && it.Expiry.UnixMilli() <= now {
			it = Item{} // as View.Get shows it
		}
		require.NoError(t, s.write(ctx, more))
		s.mu.RLock()
		got, err := s.lookupLocked(key, now)
		s.mu.RUnlock()
		require.NoError(t, err)
		require.Equal(t, describe(got), describe(it), "trial %d: %v", trial, more)
	}
}
