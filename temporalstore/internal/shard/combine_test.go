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
