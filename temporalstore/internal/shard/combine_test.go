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
	incr := func(old []byte, exp time.Time, found bool) ([]byte, time.Time, Action, error) {
		n := 0
		if found {
			n, _ = strconv.Atoi(string(old))
		}
		return []byte(strconv.Itoa(n + 1)), exp, Write, nil
	}
	const writers, each, keys = 32, 40, 8
	before := s.LogStats().Fsyncs
	var wg sync.WaitGroup
	for g := range writers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Appendf(nil, "k%d", (g+i)%keys)
				require.NoError(t, s.Update(ctx, key, incr))
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

// A batch takes the first mutation and every later one on a key not yet
// taken, up to the first unkeyed one; the rest stay queued in order.
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
		{"a a b", "a b", "a"},
		{"a b a c b d", "a b c d", "a b"},
		{"a b * c", "a b", "* c"},
		{"a a * b", "a", "a * b"},
		{"* a b", "*", "a b"},
	} {
		batch, rest := takeBatch(mk(tc.queue))
		require.Equal(t, tc.batch, names(batch), tc.queue)
		require.Equal(t, tc.rest, names(rest), tc.queue)
	}
	// maxCombine bounds a batch; what does not fit stays, in order.
	var q []*mutation
	for i := range maxCombine + 3 {
		q = append(q, &mutation{key: fmt.Appendf(nil, "k%d", i)})
	}
	q = append(q[:1], append([]*mutation{{key: []byte("k0")}}, q[1:]...)...)
	batch, rest := takeBatch(q)
	require.Len(t, batch, maxCombine)
	require.Equal(t, "k0", string(rest[0].key))
	require.Len(t, rest, 4)
}
