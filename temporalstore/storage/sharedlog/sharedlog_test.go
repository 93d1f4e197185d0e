package sharedlog_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/storagetest"
)

// alone opens a log whose store is a directory beside its value log: one
// member, which takes the log at once.
func alone(ctx context.Context, o storage.LogOptions) (storage.Log, error) {
	store, err := sharedlog.NewDirStore(o.Dir + ".shared")
	if err != nil {
		return nil, err
	}
	logs, err := sharedlog.New(sharedlog.Options{Store: store, Member: "solo"})
	if err != nil {
		return nil, err
	}
	return logs.OpenLog(ctx, o)
}

func TestLogContract(t *testing.T) { storagetest.Log(t, alone) }

// member is one member's logs on a shared store.
type member struct {
	logs *sharedlog.Logs
	dir  string
	log  *sharedlog.Log
}

func fast(store sharedlog.Store, name string) sharedlog.Options {
	return sharedlog.Options{Store: store, Member: name, LeaseTimeout: 200 * time.Millisecond, SegmentBytes: 4096}
}

func open(t *testing.T, o sharedlog.Options, dir string) *member {
	t.Helper()
	logs, err := sharedlog.New(o)
	require.NoError(t, err)
	l, err := logs.OpenLog(t.Context(), storage.LogOptions{Dir: dir, Namespace: "ns", Table: "t", Shard: 0, Durable: true, SegmentBytes: 64 << 10})
	require.NoError(t, err)
	m := &member{logs: logs, dir: dir, log: l.(*sharedlog.Log)}
	t.Cleanup(func() { m.log.Close() })
	return m
}

func rec(i int) []byte { return fmt.Appendf(nil, "record-%d", i) }

func waitFor(t *testing.T, l *sharedlog.Log, index uint64) {
	t.Helper()
	require.Eventually(t, func() bool { return l.LastIndex() >= index }, 10*time.Second, time.Millisecond, "index %d", index)
}

// The first member takes the log; the others follow it and hold the same
// records under the same indexes; a follower's append is refused.
func TestFollowersHoldTheWritersRecords(t *testing.T) {
	storagetest.SharedStores(t, func(t *testing.T, store sharedlog.Store) {
		ctx := t.Context()
		a := open(t, fast(store, "a"), t.TempDir())
		require.True(t, a.log.Writing())
		b := open(t, fast(store, "b"), t.TempDir())
		c := open(t, fast(store, "c"), t.TempDir())
		require.False(t, b.log.Writing())
		require.Equal(t, "a", b.log.Writer())

		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := range 100 {
					_, err := a.log.Append(ctx, rec(w*1000+i))
					require.NoError(t, err)
				}
			})
		}
		wg.Wait()
		first, err := a.log.AppendBatch(ctx, [][]byte{rec(-1), rec(-2)})
		require.NoError(t, err)
		last := first + 1
		for _, m := range []*member{b, c} {
			waitFor(t, m.log, last)
			for i := a.log.FirstIndex(); i <= last; i++ {
				want, err := a.log.Read(i)
				require.NoError(t, err)
				got, err := m.log.Read(i)
				require.NoError(t, err)
				require.Equal(t, want, got, "index %d", i)
			}
		}
		_, err = b.log.Append(ctx, rec(0))
		require.ErrorIs(t, err, storage.ErrNotLeader)
		require.ErrorIs(t, b.log.ReadBarrier(ctx), storage.ErrNotLeader)
		require.NoError(t, a.log.ReadBarrier(ctx))
		require.Greater(t, len(a.log.Segments()), 0)
		st := a.log.Stats()
		require.Less(t, st.Fsyncs, uint64(402), "concurrent appends share store appends")
	})
}

// A writer that closes lets a follower take over at once; one that dies
// without a word is replaced once the lease runs out. Nothing
// acknowledged is lost either way.
func TestTakeover(t *testing.T) {
	storagetest.SharedStores(t, func(t *testing.T, store sharedlog.Store) {
		ctx := t.Context()
		o := fast(store, "a")
		o.LeaseTimeout = 3 * time.Second
		a := open(t, o, t.TempDir())
		b := open(t, fast(store, "b"), t.TempDir())
		for i := range 10 {
			_, err := a.log.Append(ctx, rec(i))
			require.NoError(t, err)
		}
		start := time.Now()
		require.NoError(t, a.log.Close())
		require.Eventually(t, b.log.Writing, 5*time.Second, time.Millisecond)
		require.Less(t, time.Since(start), 150*time.Millisecond, "a released log is taken without waiting out the lease")
		idx, err := b.log.Append(ctx, rec(10))
		require.NoError(t, err)
		require.Equal(t, uint64(11), idx)

		// a comes back as a follower and sees b's record.
		a2 := open(t, fast(store, "a"), a.dir)
		waitFor(t, a2.log, 11)
		require.False(t, a2.log.Writing())
		require.Equal(t, "b", a2.log.Writer())
	})
}

// A writer cut off for longer than the lease (a pause, a partition) is
// fenced: its next append fails with ErrNotLeader and is in nobody's log.
func TestDeposedWriterIsFenced(t *testing.T) {
	storagetest.SharedStores(t, func(t *testing.T, store sharedlog.Store) {
		ctx := t.Context()
		slow := fast(store, "a")
		slow.LeaseTimeout = time.Hour // it never renews: as if paused
		a := open(t, slow, t.TempDir())
		_, err := a.log.Append(ctx, rec(1))
		require.NoError(t, err)
		b := open(t, fast(store, "b"), t.TempDir())
		require.Eventually(t, b.log.Writing, 5*time.Second, time.Millisecond, "b takes the silent log")
		require.True(t, a.log.Writing(), "a does not know yet")
		_, err = a.log.Append(ctx, rec(2))
		require.ErrorIs(t, err, storage.ErrNotLeader)
		require.False(t, a.log.Writing())
		idx, err := b.log.Append(ctx, rec(3))
		require.NoError(t, err)
		require.Equal(t, uint64(2), idx)
		waitFor(t, a.log, 2)
		got, err := a.log.Read(2)
		require.NoError(t, err)
		require.Equal(t, rec(3), got, "the fenced append is nowhere")
	})
}

// A writer that crashed mid-append leaves a torn tail in a directory
// store; the member that takes over cuts it and appends after the last
// whole frame.
func TestTornTailIsCut(t *testing.T) {
	ctx := t.Context()
	shared := t.TempDir()
	store, err := sharedlog.NewDirStore(shared)
	require.NoError(t, err)
	o := fast(store, "a")
	o.LeaseTimeout = time.Hour
	a := open(t, o, t.TempDir())
	for i := range 3 {
		_, err := a.log.Append(ctx, rec(i))
		require.NoError(t, err)
	}
	segs, err := filepath.Glob(filepath.Join(shared, "ns", "t", "0", "seg-*"))
	require.NoError(t, err)
	require.Len(t, segs, 1)
	f, err := os.OpenFile(segs[0], os.O_WRONLY|os.O_APPEND, 0)
	require.NoError(t, err)
	_, err = f.Write([]byte{40, 0, 0, 0, 1, 2, 3}) // a header and a bit
	require.NoError(t, err)
	require.NoError(t, f.Close())

	b := open(t, fast(store, "b"), t.TempDir())
	require.Eventually(t, b.log.Writing, 5*time.Second, time.Millisecond)
	idx, err := b.log.Append(ctx, rec(3))
	require.NoError(t, err)
	require.Equal(t, uint64(4), idx)
	c := open(t, fast(store, "c"), t.TempDir())
	waitFor(t, c.log, 4)
	for i := range 4 {
		got, err := c.log.Read(uint64(i + 1))
		require.NoError(t, err)
		require.Equal(t, rec(i), got)
	}
}

// Segments roll; once the writer's value log is reclaimed, the shared
// segments before its front go, behind a snapshot; a member that was away
// meanwhile installs the snapshot and follows on from it.
func TestReclaimAndSnapshot(t *testing.T) {
	storagetest.SharedStores(t, func(t *testing.T, store sharedlog.Store) {
		ctx := t.Context()
		a := open(t, fast(store, "a"), t.TempDir())
		a.log.Attach(&storagetest.Images{Label: "image-a"})
		bdir := t.TempDir()
		b := open(t, fast(store, "b"), bdir)
		waitFor(t, b.log, 0)
		require.NoError(t, b.log.Close())

		for i := range 2000 {
			_, err := a.log.Append(ctx, append(rec(i), make([]byte, 100)...))
			require.NoError(t, err)
		}
		require.Greater(t, len(a.log.Segments()), 1, "the value log spans segments")
		front := a.log.Segments()[len(a.log.Segments())-1].First
		require.NoError(t, a.log.TruncateFront(ctx, front))
		require.Eventually(t, func() bool { return a.log.SharedStats().Snapshots > 0 }, 10*time.Second, 5*time.Millisecond, "a snapshot is written")
		_, err := store.Size(ctx, "ns/t/0/seg-00000000000000000001")
		require.ErrorIs(t, err, sharedlog.ErrNotExist, "the first segment is reclaimed")

		// b comes back behind the front.
		b = open(t, fast(store, "b"), bdir)
		imgs := &storagetest.Images{}
		b.log.Attach(imgs)
		last, err := a.log.Append(ctx, rec(5000))
		require.NoError(t, err)
		waitFor(t, b.log, last)
		require.Equal(t, []string{"image-a"}, imgs.Installs())
		require.Equal(t, a.log.FirstIndex(), b.log.FirstIndex())
		for i := b.log.FirstIndex(); i <= last; i++ {
			want, err := a.log.Read(i)
			require.NoError(t, err)
			got, err := b.log.Read(i)
			require.NoError(t, err)
			require.Equal(t, want, got, "index %d", i)
		}
	})
}

func TestDirStoreConditions(t *testing.T) {
	ctx := t.Context()
	s, err := sharedlog.NewDirStore(t.TempDir())
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.AppendAt(ctx, "a/b", 0, []byte("xy")))
	require.ErrorIs(t, s.AppendAt(ctx, "a/b", 0, []byte("z")), sharedlog.ErrConflict)
	require.NoError(t, s.AppendAt(ctx, "a/b", 2, []byte("z")))
	n, err := s.Size(ctx, "a/b")
	require.NoError(t, err)
	require.Equal(t, int64(3), n)
	require.ErrorIs(t, s.Cut(ctx, "a/b", 1, 2), sharedlog.ErrConflict)
	require.NoError(t, s.Cut(ctx, "a/b", 1, 3))
	buf := make([]byte, 4)
	k, err := s.ReadAt(ctx, "a/b", 0, buf)
	require.Equal(t, 1, k)
	require.True(t, err != nil, "short read says so")
	_, err = s.Size(ctx, "nope")
	require.ErrorIs(t, err, sharedlog.ErrNotExist)
	_, err = s.Get(ctx, "nope")
	require.ErrorIs(t, err, sharedlog.ErrNotExist)
	require.NoError(t, s.Put(ctx, "o", []byte("v1")))
	require.NoError(t, s.Put(ctx, "o", []byte("v2")))
	v, err := s.Get(ctx, "o")
	require.NoError(t, err)
	require.Equal(t, "v2", string(v))
	require.NoError(t, s.Delete(ctx, "o"))
	require.NoError(t, s.Delete(ctx, "o"))
	require.Error(t, s.Put(ctx, "../x", nil))
}

// LeaseBarrier skips the store round within half a lease of the writer's
// last append, and is ReadBarrier otherwise: a deposed writer learns it.
func TestLeaseBarrier(t *testing.T) {
	storagetest.SharedStores(t, func(t *testing.T, store sharedlog.Store) {
		ctx := t.Context()
		o := fast(store, "a")
		o.LeaseTimeout = time.Hour // never renews: as if paused
		a := open(t, o, t.TempDir())
		_, err := a.log.Append(ctx, rec(1))
		require.NoError(t, err)
		require.NoError(t, a.log.LeaseBarrier(ctx))
		b := open(t, fast(store, "b"), t.TempDir())
		require.Eventually(t, b.log.Writing, 5*time.Second, time.Millisecond)
		// a's lease (half an hour) still holds by its own clock: the
		// lease is only as good as the members' agreement on the lease
		// length, which this test breaks on purpose to show the fallback.
		require.NoError(t, a.log.LeaseBarrier(ctx))
		require.ErrorIs(t, a.log.ReadBarrier(ctx), storage.ErrNotLeader)
		require.ErrorIs(t, a.log.LeaseBarrier(ctx), storage.ErrNotLeader, "a follower now")
	})
}

// The member Prefer names takes its shard back from the writer that took
// it while it was away, once up for two leases and caught up; the old
// writer's next append is refused, unwritten.
func TestPreferredMemberTakesItsShardBack(t *testing.T) {
	storagetest.SharedStores(t, func(t *testing.T, store sharedlog.Store) {
		ctx := t.Context()
		prefer := func(name string) sharedlog.Options {
			o := fast(store, name)
			o.Prefer = func(storage.LogOptions) bool { return name == "b" }
			return o
		}
		a := open(t, prefer("a"), t.TempDir())
		require.Eventually(t, a.log.Writing, 5*time.Second, time.Millisecond, "a takes the unwritten log after a lease")
		_, err := a.log.Append(ctx, rec(1))
		require.NoError(t, err)
		opened := time.Now()
		b := open(t, prefer("b"), t.TempDir())
		require.False(t, b.log.Writing())
		require.Eventually(t, b.log.Writing, 5*time.Second, time.Millisecond, "b takes its shard back")
		require.GreaterOrEqual(t, time.Since(opened), 400*time.Millisecond, "after two leases")
		_, err = a.log.Append(ctx, rec(2))
		require.ErrorIs(t, err, storage.ErrNotLeader)
		idx, err := b.log.Append(ctx, rec(3))
		require.NoError(t, err)
		require.Equal(t, uint64(2), idx)
	})
}
