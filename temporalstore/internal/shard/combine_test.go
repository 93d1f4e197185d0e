package shard

import (
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
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
	// A collection op on h, then a string update of h: deferred to the
	// next batch, it sees the hash.
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

// stringEffect follows sets and deletes of one key, refuses anything else,
// and hands out a value nobody can append into.
func TestStringEffect(t *testing.T) {
	k := []byte("k")
	set := func(v string, exp int64) command.Command {
		return command.Command{Op: OpSet, Key: k, Args: [][]byte{append(make([]byte, 0, 64), v...)}, Expiry: exp}
	}
	it, ok := stringEffect(k, []command.Command{set("a", 0), set("b", 1_764_460_800_000)})
	require.True(t, ok)
	require.Equal(t, "b", string(it.Value))
	require.Equal(t, int64(1_764_460_800_000), it.Expiry.UnixMilli())
	require.Equal(t, len(it.Value), cap(it.Value))
	it, ok = stringEffect(k, []command.Command{set("a", 0), {Op: OpDelete, Key: k}})
	require.True(t, ok)
	require.False(t, it.Exists)
	_, ok = stringEffect(k, []command.Command{set("a", 0), {Op: OpSet, Key: []byte("other"), Args: [][]byte{nil}}})
	require.False(t, ok, "another key")
	_, ok = stringEffect(k, []command.Command{{Op: OpHSet, Key: k, Args: [][]byte{[]byte("f"), []byte("v")}}})
	require.False(t, ok, "a collection op")
}
