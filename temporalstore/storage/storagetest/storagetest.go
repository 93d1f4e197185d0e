package storagetest

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// segmentBytes is the segment size the log tests ask for: small, so that a
// few records span several segments.
const segmentBytes = 64 << 10

// Log runs the Log contract tests on logs open opens; each test opens its
// logs in a directory of its own.
func Log(t *testing.T, open storage.OpenLogFunc) {
	opts := func(t *testing.T) storage.LogOptions {
		return storage.LogOptions{Dir: t.TempDir(), Durable: true, SegmentBytes: segmentBytes}
	}
	mustOpen := func(t *testing.T, o storage.LogOptions) storage.Log {
		l, err := open(t.Context(), o)
		require.NoError(t, err)
		return l
	}
	rec := func(i int) []byte { return fmt.Appendf(nil, "record-%d-%s", i, bytes.Repeat([]byte{'x'}, i%50)) }
	// noise is n bytes no log compresses, the same for the same seed.
	noise := func(seed, n int) []byte {
		b := make([]byte, n)
		r := rand.New(rand.NewPCG(uint64(seed), 1))
		for i := range b {
			b[i] = byte(r.Uint32())
		}
		return b
	}

	t.Run("AppendAndRead", func(t *testing.T) {
		l := mustOpen(t, opts(t))
		defer l.Close()
		ctx := t.Context()
		first := l.FirstIndex()
		require.Equal(t, first-1, l.LastIndex(), "empty")
		i, err := l.Append(ctx, rec(0))
		require.NoError(t, err)
		require.Equal(t, first, i)
		b, err := l.AppendBatch(ctx, [][]byte{rec(1), rec(2)})
		require.NoError(t, err)
		require.Equal(t, first+1, b)
		g, err := l.AppendGroup(ctx, [][]byte{rec(3), rec(4)})
		require.NoError(t, err)
		require.Equal(t, first+3, g)
		e, err := l.AppendBatch(ctx, nil)
		require.NoError(t, err)
		require.Equal(t, first+5, e, "an empty batch returns the next index")
		require.Equal(t, first+4, l.LastIndex())
		for k := range 5 {
			got, err := l.Read(first + uint64(k))
			require.NoError(t, err)
			require.Equal(t, rec(k), got)
			got[0] = '!' // the caller's own copy
			again, err := l.Read(first + uint64(k))
			require.NoError(t, err)
			require.Equal(t, rec(k), again)
		}
		_, err = l.Read(first + 5)
		require.ErrorIs(t, err, storage.ErrNotFound)
		st := l.Stats()
		require.Equal(t, uint64(5), st.Records)
		require.Positive(t, st.Bytes)
	})

	t.Run("AppendDoesNotRetain", func(t *testing.T) {
		l := mustOpen(t, opts(t))
		defer l.Close()
		buf := []byte("original")
		i, err := l.Append(t.Context(), buf)
		require.NoError(t, err)
		copy(buf, "mutated!")
		got, err := l.Read(i)
		require.NoError(t, err)
		require.Equal(t, "original", string(got))
	})

	t.Run("TooLarge", func(t *testing.T) {
		l := mustOpen(t, opts(t))
		defer l.Close()
		_, err := l.Append(t.Context(), make([]byte, l.MaxRecordSize()+1))
		require.ErrorIs(t, err, storage.ErrRecordTooLarge)
		var group [][]byte
		for size := int64(0); size <= l.MaxGroupSize(); size += 1000 + storage.FrameOverhead {
			group = append(group, noise(len(group), 1000))
		}
		_, err = l.AppendGroup(t.Context(), group)
		require.ErrorIs(t, err, storage.ErrGroupTooLarge)
		require.Equal(t, l.FirstIndex()-1, l.LastIndex(), "nothing appended")
		i, err := l.Append(t.Context(), rec(1))
		require.NoError(t, err, "the log still takes appends")
		require.Equal(t, l.FirstIndex(), i)
	})

	t.Run("IteratorSeesLaterAppends", func(t *testing.T) {
		l := mustOpen(t, opts(t))
		defer l.Close()
		ctx := t.Context()
		first, err := l.Append(ctx, rec(0))
		require.NoError(t, err)
		it := l.Iterator(first)
		defer it.Close()
		require.True(t, it.Next())
		require.Equal(t, first, it.Index())
		require.Equal(t, rec(0), it.Value())
		require.False(t, it.Next())
		require.NoError(t, it.Err(), "the end is no error")
		_, err = l.Append(ctx, rec(1))
		require.NoError(t, err)
		require.True(t, it.Next())
		require.Equal(t, first+1, it.Index())
		require.Equal(t, rec(1), it.Value())
	})

	t.Run("TruncateFrontDropsWholeSegments", func(t *testing.T) {
		l := mustOpen(t, opts(t))
		defer l.Close()
		ctx := t.Context()
		const n = 1000
		for i := range n {
			_, err := l.Append(ctx, noise(i, 500))
			require.NoError(t, err)
		}
		segs := l.Segments()
		require.Greater(t, len(segs), 2, "the records span segments")
		require.Equal(t, l.FirstIndex(), segs[0].First)
		for i := 1; i < len(segs); i++ {
			require.Greater(t, segs[i].First, segs[i-1].First)
			require.Positive(t, segs[i-1].Bytes)
		}
		require.ErrorIs(t, l.TruncateFront(ctx, l.LastIndex()+2), storage.ErrInvalidIndex)
		cut := segs[2].First + 1 // inside the third segment
		require.NoError(t, l.TruncateFront(ctx, cut))
		require.Equal(t, segs[2].First, l.FirstIndex(), "whole segments go")
		_, err := l.Read(segs[2].First - 1)
		require.ErrorIs(t, err, storage.ErrCompacted)
		got, err := l.Read(segs[2].First)
		require.NoError(t, err)
		require.Equal(t, noise(int(segs[2].First-segs[0].First), 500), got)
		require.NoError(t, l.TruncateFront(ctx, l.LastIndex()+1))
		require.Len(t, l.Segments(), 1, "the last segment stays")
	})

	t.Run("ReopenKeepsRecords", func(t *testing.T) {
		o := opts(t)
		l := mustOpen(t, o)
		ctx := t.Context()
		first, err := l.AppendBatch(ctx, [][]byte{rec(0), rec(1), rec(2)})
		require.NoError(t, err)
		_, err = open(ctx, o)
		require.ErrorIs(t, err, storage.ErrLocked, "one opening at a time")
		require.NoError(t, l.Close())
		_, err = l.Append(ctx, rec(3))
		require.ErrorIs(t, err, storage.ErrClosed)
		require.ErrorIs(t, l.Close(), storage.ErrClosed)
		l = mustOpen(t, o)
		defer l.Close()
		require.Equal(t, first+2, l.LastIndex())
		for k := range 3 {
			got, err := l.Read(first + uint64(k))
			require.NoError(t, err)
			require.Equal(t, rec(k), got)
		}
		i, err := l.Append(ctx, rec(3))
		require.NoError(t, err)
		require.Equal(t, first+3, i)
	})

	t.Run("ConcurrentAppends", func(t *testing.T) {
		l := mustOpen(t, opts(t))
		defer l.Close()
		const writers, each = 8, 50
		var mu sync.Mutex
		seen := map[uint64][]byte{}
		var wg sync.WaitGroup
		for w := range writers {
			wg.Go(func() {
				for i := range each {
					r := rec(w*each + i)
					idx, err := l.Append(context.Background(), r)
					if err != nil {
						t.Error(err)
						return
					}
					mu.Lock()
					seen[idx] = r
					mu.Unlock()
				}
			})
		}
		wg.Wait()
		require.Len(t, seen, writers*each, "every append got its own index")
		require.NoError(t, l.Sync(t.Context()))
		for idx, r := range seen {
			got, err := l.Read(idx)
			require.NoError(t, err)
			require.Equal(t, r, got)
		}
	})

	t.Run("RecoverCutsAfterLast", func(t *testing.T) {
		o := opts(t)
		l := mustOpen(t, o)
		r, ok := l.(storage.Recoverer)
		if !ok {
			l.Close()
			t.Skip("not a storage.Recoverer")
		}
		ctx := t.Context()
		first, err := l.AppendBatch(ctx, [][]byte{rec(0), rec(1), rec(2), rec(3), noise(1, 20_000), noise(2, 20_000), noise(3, 20_000), noise(4, 20_000)})
		require.NoError(t, err)
		require.Greater(t, len(l.Segments()), 1)
		require.ErrorIs(t, r.Recover(ctx, first+8), storage.ErrInvalidIndex, "past the last record")
		require.NoError(t, r.Recover(ctx, first+1))
		require.Equal(t, first+1, l.LastIndex())
		require.Len(t, l.Segments(), 1)
		_, err = l.Read(first + 2)
		require.ErrorIs(t, err, storage.ErrNotFound)
		i, err := l.Append(ctx, rec(7))
		require.NoError(t, err)
		require.Equal(t, first+2, i, "appends go on after last")
		require.NoError(t, l.Close())
		l = mustOpen(t, o)
		defer l.Close()
		require.Equal(t, first+2, l.LastIndex())
		for k, want := range [][]byte{rec(0), rec(1), rec(7)} {
			got, err := l.Read(first + uint64(k))
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
	})
}

// RecordCache runs the RecordCache contract tests on caches made by
// newCache with the capacity in bytes it is given.
func RecordCache(t *testing.T, newCache func(capacity int64) storage.RecordCache) {
	t.Run("PutGetDelete", func(t *testing.T) {
		c := newCache(1 << 20)
		_, ok := c.GetShared(1, 10)
		require.False(t, ok)
		c.Put(1, 10, []byte("ten"))
		c.Put(2, 10, []byte("other log"))
		got, ok := c.GetShared(1, 10)
		require.True(t, ok)
		require.Equal(t, "ten", string(got))
		got, ok = c.GetShared(2, 10)
		require.True(t, ok, "logs are apart")
		require.Equal(t, "other log", string(got))
		c.Prefetch(1, []uint64{10, 11})
		c.Delete(1, 10)
		_, ok = c.GetShared(1, 10)
		require.False(t, ok)
		st := c.Stats()
		require.Positive(t, st.Hits)
		require.Positive(t, st.Misses)
	})

	t.Run("Bounded", func(t *testing.T) {
		c := newCache(256 << 10)
		val := bytes.Repeat([]byte{'v'}, 1000)
		for i := range 2000 {
			c.Put(7, uint64(i), val)
		}
		st := c.Stats()
		require.Positive(t, st.Evictions, "2 MB into 256 KiB")
		require.LessOrEqual(t, st.Bytes, int64(256<<10)*2, "it keeps within its size")
		held := 0
		for i := range 2000 {
			if v, ok := c.GetShared(7, uint64(i)); ok {
				require.Equal(t, val, v)
				held++
			}
		}
		require.Positive(t, held)
		require.Less(t, held, 2000)
	})

	t.Run("Concurrent", func(t *testing.T) {
		c := newCache(1 << 20)
		var wg sync.WaitGroup
		for w := range 4 {
			wg.Go(func() {
				for i := range 500 {
					idx := uint64(i % 100)
					c.Put(uint64(w), idx, fmt.Appendf(nil, "%d/%d", w, idx))
					if v, ok := c.GetShared(uint64(w), idx); ok && string(v) != fmt.Sprintf("%d/%d", w, idx) {
						t.Errorf("log %d record %d holds %q", w, idx, v)
					}
					if i%7 == 0 {
						c.Delete(uint64(w), idx)
					}
				}
			})
		}
		wg.Wait()
	})
}
