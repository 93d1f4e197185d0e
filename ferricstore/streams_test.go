package ferricstore

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// clock is a settable clock for Options.Now.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time { return time.UnixMilli(c.ms.Load()) }

func open(t *testing.T, dir string, clk *clock) *Store { return openEvery(t, dir, clk, 0) }

// openEvery opens with a snapshot every n records (0: the default).
func openEvery(t *testing.T, dir string, clk *clock, n int) *Store {
	t.Helper()
	st, err := Open(Options{Dir: dir, Shards: 3, Now: clk.now, SnapshotEvery: n})
	require.NoError(t, err)
	return st
}

func kv(s ...string) [][]byte {
	out := make([][]byte, len(s))
	for i, x := range s {
		out[i] = []byte(x)
	}
	return out
}

func TestAddAndRead(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(1000)
	st := open(t, t.TempDir(), clk)
	defer st.Close()
	ctx := t.Context()
	x := st.Streams()

	id, ok, err := x.Add(ctx, "s", AddArgs{Fields: kv("f", "v")})
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, stream.ID{Ms: 1000}, id)
	id, _, err = x.Add(ctx, "s", AddArgs{ID: "*", Fields: kv("f", "v2")})
	require.NoError(t, err)
	require.Equal(t, stream.ID{Ms: 1000, Seq: 1}, id)
	id, _, err = x.Add(ctx, "s", AddArgs{ID: "2000-*", Fields: kv("f", "v3", "f", "dup")})
	require.NoError(t, err)
	require.Equal(t, stream.ID{Ms: 2000}, id)
	_, _, err = x.Add(ctx, "s", AddArgs{ID: "1500-0", Fields: kv("f", "v")})
	require.ErrorIs(t, err, stream.ErrIDTooSmall)
	_, _, err = x.Add(ctx, "t", AddArgs{ID: "0-0", Fields: kv("f", "v")})
	require.ErrorIs(t, err, stream.ErrIDZero)
	_, _, err = x.Add(ctx, "t", AddArgs{ID: "x", Fields: kv("f", "v")})
	require.ErrorIs(t, err, stream.ErrInvalidID)
	_, _, err = x.Add(ctx, "t", AddArgs{Fields: kv("f")})
	require.ErrorIs(t, err, ErrInvalid)
	_, ok, err = x.Add(ctx, "t", AddArgs{NoMkStream: true, Fields: kv("f", "v")})
	require.NoError(t, err)
	require.False(t, ok)
	n, err := x.Len(ctx, "t")
	require.NoError(t, err)
	require.Zero(t, n, "a failed XADD creates nothing")

	es, err := x.Range(ctx, "s", stream.ID{}, stream.MaxID, 0, false)
	require.NoError(t, err)
	require.Len(t, es, 3)
	require.Equal(t, kv("f", "v3", "f", "dup"), es[2].Fields)
	es, err = x.Range(ctx, "s", stream.ID{}, stream.MaxID, 1, true)
	require.NoError(t, err)
	require.Equal(t, stream.ID{Ms: 2000}, es[0].ID)

	// Trimming on add, XDEL, XTRIM, XSETID.
	for range 5 {
		_, _, err = x.Add(ctx, "s", AddArgs{Fields: kv("f", "v"), Trim: stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 4}})
		require.NoError(t, err)
	}
	n, _ = x.Len(ctx, "s")
	require.Equal(t, 4, n)
	first, _ := x.Range(ctx, "s", stream.ID{}, stream.MaxID, 1, false)
	d, err := x.Delete(ctx, "s", []stream.ID{first[0].ID, {Ms: 1}})
	require.NoError(t, err)
	require.Equal(t, 1, d)
	r, err := x.Trim(ctx, "s", stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 1})
	require.NoError(t, err)
	require.Equal(t, int64(2), r)
	require.ErrorIs(t, x.SetID(ctx, "nope", stream.ID{Ms: 1}, -1, stream.ID{}), ErrNoSuchKey)
	require.ErrorIs(t, x.SetID(ctx, "s", stream.ID{Ms: 1}, -1, stream.ID{}), stream.ErrSetIDTooSmall)
	require.NoError(t, x.SetID(ctx, "s", stream.ID{Ms: 9000}, 50, stream.ID{}))
	id, _, err = x.Add(ctx, "s", AddArgs{Fields: kv("f", "v")})
	require.NoError(t, err)
	require.Equal(t, stream.ID{Ms: 9000, Seq: 1}, id, "IDs keep rising past XSETID")
	existed, err := x.DeleteKey(ctx, "s")
	require.NoError(t, err)
	require.True(t, existed)
	existed, err = x.DeleteKey(ctx, "s")
	require.NoError(t, err)
	require.False(t, existed)
}

func TestGroups(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(1000)
	st := open(t, t.TempDir(), clk)
	defer st.Close()
	ctx := t.Context()
	x := st.Streams()
	require.ErrorIs(t, x.CreateGroup(ctx, "s", "g", "$", false, stream.UnknownEntriesRead), ErrGroupNeedsKey)
	require.NoError(t, x.CreateGroup(ctx, "s", "g", "$", true, stream.UnknownEntriesRead))
	require.ErrorIs(t, x.CreateGroup(ctx, "s", "g", "0", false, stream.UnknownEntriesRead), stream.ErrGroupExists)
	for range 3 {
		_, _, err := x.Add(ctx, "s", AddArgs{Fields: kv("f", "v")})
		require.NoError(t, err)
	}
	_, err := x.ReadGroup(ctx, "s", "nogroup", "c", ">", 0, false)
	require.ErrorIs(t, err, stream.ErrNoGroup)
	es, err := x.ReadGroup(ctx, "s", "g", "alice", ">", 2, false)
	require.NoError(t, err)
	require.Len(t, es, 2)
	clk.ms.Add(5000)
	claimed, err := x.Claim(ctx, "s", "g", "bob", []stream.ID{es[0].ID}, ClaimArgs{MinIdle: 1000})
	require.NoError(t, err)
	require.Len(t, claimed, 1)
	ac, err := x.AutoClaim(ctx, "s", "g", "bob", 1000, stream.ID{}, 10, true)
	require.NoError(t, err)
	require.Equal(t, []stream.ID{es[1].ID}, idsOf(ac.Claimed))
	n, err := x.Ack(ctx, "s", "g", []stream.ID{es[0].ID})
	require.NoError(t, err)
	require.Equal(t, 1, n)
	created, err := x.CreateConsumer(ctx, "s", "g", "carol")
	require.NoError(t, err)
	require.True(t, created)
	held, err := x.DeleteConsumer(ctx, "s", "g", "bob")
	require.NoError(t, err)
	require.Equal(t, 1, held)
	require.NoError(t, x.SetGroupID(ctx, "s", "g", "0", 0))
	destroyed, err := x.DestroyGroup(ctx, "s", "g")
	require.NoError(t, err)
	require.True(t, destroyed)
}

func idsOf(es []stream.Entry) []stream.ID {
	out := make([]stream.ID, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

// dump renders every stream of the store whole: entries, counters,
// groups, consumers and pending entries.
func dump(t *testing.T, st *Store, keys []string) string {
	var b strings.Builder
	for _, k := range keys {
		require.NoError(t, st.Streams().View(context.Background(), k, func(s *stream.Stream) error {
			if s == nil {
				fmt.Fprintf(&b, "%s: none\n", k)
				return nil
			}
			fmt.Fprintf(&b, "%s: len %d last %s maxdel %s added %d\n", k, s.Len(), s.LastID, s.MaxDeletedID, s.EntriesAdded)
			for _, e := range s.Range(stream.ID{}, stream.MaxID, 0, false) {
				fmt.Fprintf(&b, "  %s %q\n", e.ID, e.Fields)
			}
			for _, g := range s.Groups() {
				fmt.Fprintf(&b, "  group %s last %s read %d\n", g.Name, g.LastID, g.EntriesRead)
				for _, c := range g.Consumers() {
					fmt.Fprintf(&b, "    consumer %s seen %d active %d pending %d\n", c.Name, c.SeenTime, c.ActiveTime, c.Pending())
				}
				g.PendingRange(nil, stream.ID{}, stream.MaxID, func(p *stream.Pending) bool {
					fmt.Fprintf(&b, "    pending %s %s %d %d\n", p.ID, p.Consumer.Name, p.DeliveryTime, p.DeliveryCount)
					return true
				})
			}
			return nil
		}))
	}
	return b.String()
}

// Reopening restores every stream exactly: entries, IDs, counters,
// groups, consumers, pending entries and delivery counts; from the log
// alone, and from snapshots taken every 7 records with the log before
// them let go.
func TestReopenRestoresEverything(t *testing.T) {
	for _, every := range []int{0, 7} {
		t.Run(fmt.Sprint("snapshot every ", every), func(t *testing.T) { testReopen(t, every) })
	}
}

func testReopen(t *testing.T, every int) {
	clk := &clock{}
	clk.ms.Store(1_000_000)
	dir := t.TempDir()
	st := openEvery(t, dir, clk, every)
	ctx := t.Context()
	x := st.Streams()
	keys := []string{"a", "b", "{t}c", "{t}d", "gone"}
	for i := range 200 {
		clk.ms.Add(int64(i % 3))
		k := keys[i%4]
		_, _, err := x.Add(ctx, k, AddArgs{Fields: kv("i", fmt.Sprint(i)), Trim: stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 40, Approx: i%2 == 0}})
		require.NoError(t, err)
	}
	_, _, err := x.Add(ctx, "gone", AddArgs{Fields: kv("f", "v")})
	require.NoError(t, err)
	_, err = x.DeleteKey(ctx, "gone")
	require.NoError(t, err)
	require.NoError(t, x.CreateGroup(ctx, "a", "g1", "0", false, stream.UnknownEntriesRead))
	require.NoError(t, x.CreateGroup(ctx, "a", "g2", "$", false, 7))
	require.NoError(t, x.CreateGroup(ctx, "new", "g", "$", true, stream.UnknownEntriesRead))
	_, err = x.ReadGroup(ctx, "a", "g1", "alice", ">", 5, false)
	require.NoError(t, err)
	clk.ms.Add(100)
	_, err = x.ReadGroup(ctx, "a", "g1", "bob", ">", 3, true)
	require.NoError(t, err)
	_, err = x.ReadGroup(ctx, "a", "g1", "alice", "0", 0, false)
	require.NoError(t, err)
	es, _ := x.Range(ctx, "a", stream.ID{}, stream.MaxID, 3, false)
	_, err = x.Delete(ctx, "a", []stream.ID{es[1].ID})
	require.NoError(t, err)
	clk.ms.Add(100)
	rc := int64(7)
	_, err = x.Claim(ctx, "a", "g1", "carol", []stream.ID{es[0].ID, es[2].ID}, ClaimArgs{RetryCount: &rc})
	require.NoError(t, err)
	_, err = x.AutoClaim(ctx, "a", "g1", "dave", 0, stream.ID{}, 2, false)
	require.NoError(t, err)
	_, err = x.Ack(ctx, "a", "g1", []stream.ID{es[2].ID})
	require.NoError(t, err)
	require.NoError(t, x.SetID(ctx, "b", stream.ID{Ms: 5_000_000}, 1000, stream.ID{Ms: 3}))
	_, err = x.Trim(ctx, "{t}c", stream.Trim{Strategy: stream.TrimMinID, MinID: stream.ID{Ms: 1_000_100}})
	require.NoError(t, err)

	all := append(keys, "new")
	before := dump(t, st, all)
	require.NoError(t, st.Close())
	st = openEvery(t, dir, clk, every)
	require.Equal(t, before, dump(t, st, all))
	// Once more, after writes on the reopened store.
	_, _, err = x.Add(ctx, "a", AddArgs{Fields: kv("after", "reopen")})
	require.ErrorIs(t, err, ErrClosed, "the closed store's handle")
	x = st.Streams()
	_, _, err = x.Add(ctx, "a", AddArgs{Fields: kv("after", "reopen")})
	require.NoError(t, err)
	before = dump(t, st, all)
	require.NoError(t, st.Close())
	st = openEvery(t, dir, clk, every)
	defer st.Close()
	require.Equal(t, before, dump(t, st, all))
	if every > 0 {
		snaps, _ := filepath.Glob(filepath.Join(dir, "snapshots", "*", "snapshot-*"))
		require.NotEmpty(t, snaps)
	}
	require.Contains(t, before, "pending")
	require.Contains(t, before, "consumer carol")
}

// Concurrent writers: every acknowledged entry is there after a reopen,
// each stream's IDs rise, and the writes were batched (fewer log appends
// than writes is not asserted: the machine decides).
func TestConcurrentAddsSurviveReopen(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(1)
	dir := t.TempDir()
	st := open(t, dir, clk)
	ctx := t.Context()
	const writers, each = 8, 50
	var mu sync.Mutex
	acked := map[string][]stream.ID{}
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			key := fmt.Sprintf("k%d", w%3)
			for i := range each {
				id, _, err := st.Streams().Add(ctx, key, AddArgs{Fields: kv("w", fmt.Sprint(w), "i", fmt.Sprint(i))})
				require.NoError(t, err)
				mu.Lock()
				acked[key] = append(acked[key], id)
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	require.NoError(t, st.Close())
	st = open(t, dir, clk)
	defer st.Close()
	total := 0
	for key, ids := range acked {
		es, err := st.Streams().Range(ctx, key, stream.ID{}, stream.MaxID, 0, false)
		require.NoError(t, err)
		got := map[stream.ID]bool{}
		for i, e := range es {
			got[e.ID] = true
			if i > 0 {
				require.True(t, es[i-1].ID.Less(e.ID))
			}
		}
		for _, id := range ids {
			require.True(t, got[id], "acknowledged %s lost", id)
		}
		total += len(es)
	}
	require.Equal(t, writers*each, total)
}

func TestClosedStoreRefuses(t *testing.T) {
	st := open(t, t.TempDir(), &clock{})
	require.NoError(t, st.Close())
	require.NoError(t, st.Close())
	_, _, err := st.Streams().Add(t.Context(), "s", AddArgs{Fields: kv("f", "v")})
	require.ErrorIs(t, err, ErrClosed)
	_, err = st.Streams().Len(t.Context(), "s")
	require.ErrorIs(t, err, ErrClosed)
	_, err = Open(Options{})
	require.ErrorIs(t, err, ErrInvalidOptions)
}

func TestKeysExistsFlush(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(1000)
	dir := t.TempDir()
	st := open(t, dir, clk)
	ctx := t.Context()
	x := st.Streams()
	for _, k := range []string{"a", "b", "{t}c", "d"} {
		_, _, err := x.Add(ctx, k, AddArgs{Fields: kv("f", "v")})
		require.NoError(t, err)
	}
	// An empty stream made by XGROUP CREATE MKSTREAM is a key too.
	require.NoError(t, x.CreateGroup(ctx, "e", "g", "$", true, stream.UnknownEntriesRead))
	keys := func() []string {
		var out []string
		require.NoError(t, x.Keys(ctx, func(k string) bool { out = append(out, k); return true }))
		slices.Sort(out)
		return out
	}
	require.Equal(t, []string{"a", "b", "d", "e", "{t}c"}, keys())
	seen := 0
	require.NoError(t, x.Keys(ctx, func(string) bool { seen++; return false }))
	require.Equal(t, 1, seen, "Keys stops when fn returns false")
	for k, want := range map[string]bool{"a": true, "e": true, "zz": false} {
		got, err := x.Exists(ctx, k)
		require.NoError(t, err)
		require.Equal(t, want, got, k)
	}
	n, err := x.Flush(ctx)
	require.NoError(t, err)
	require.Equal(t, 5, n)
	require.Empty(t, keys())
	_, _, err = x.Add(ctx, "after", AddArgs{Fields: kv("f", "v")})
	require.NoError(t, err)
	require.NoError(t, st.Close())

	st = open(t, dir, clk)
	defer st.Close()
	x = st.Streams()
	require.Equal(t, []string{"after"}, keys(), "the flush is durable")
}

// Blocked group readers are served by the writer in the order they
// blocked, in the batch that adds the entries, and the deliveries are
// logged: after a restart they are the consumers' pending entries.
func TestGroupWaitersServedInOrder(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(1000)
	dir := t.TempDir()
	st := open(t, dir, clk)
	ctx := t.Context()
	x := st.Streams()
	require.NoError(t, x.CreateGroup(ctx, "s", "g", "$", true, stream.UnknownEntriesRead))
	var ws []*GroupWaiter
	for _, c := range []string{"c1", "c2", "c3"} {
		w, err := x.WaitGroup(ctx, []string{"s"}, "g", c, 1, false)
		require.NoError(t, err)
		require.NotNil(t, w)
		ws = append(ws, w)
	}
	done := func(w *GroupWaiter) bool {
		select {
		case <-w.Done():
			return true
		default:
			return false
		}
	}
	for i := range 2 {
		_, _, err := x.Add(ctx, "s", AddArgs{Fields: kv("n", fmt.Sprint(i))})
		require.NoError(t, err)
		require.Eventually(t, func() bool { return done(ws[i]) }, 5*time.Second, time.Millisecond)
		key, es, err := ws[i].Result()
		require.NoError(t, err)
		require.Equal(t, "s", key)
		require.Len(t, es, 1)
		require.Equal(t, []byte(fmt.Sprint(i)), es[0].Fields[1])
	}
	require.False(t, done(ws[2]))
	require.True(t, ws[2].Cancel(), "not served: cancelled")
	require.False(t, ws[0].Cancel(), "served before: not cancelled")
	// Entries there already: no waiter, read them.
	_, _, err := x.Add(ctx, "s", AddArgs{Fields: kv("n", "2")})
	require.NoError(t, err)
	w, err := x.WaitGroup(ctx, []string{"s"}, "g", "c3", 1, false)
	require.NoError(t, err)
	require.Nil(t, w)
	require.NoError(t, st.Close())

	st = open(t, dir, clk)
	defer st.Close()
	require.NoError(t, st.Streams().View(ctx, "s", func(s *stream.Stream) error {
		g := s.Group("g")
		require.NotNil(t, g)
		for _, c := range []string{"c1", "c2"} {
			n := 0
			g.PendingRange(g.Consumer(c), stream.ID{}, stream.MaxID, func(*stream.Pending) bool { n++; return true })
			require.Equal(t, 1, n, c)
		}
		return nil
	}))
}
