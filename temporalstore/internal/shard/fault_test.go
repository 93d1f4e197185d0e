package shard

import (
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// openFaulty opens a shard in dir whose log fails when faults says so,
// retrying its recovery every few milliseconds.
func openFaulty(t *testing.T, dir string, faults *teststorage.Faults, durable bool) *Shard {
	t.Helper()
	s, err := Open(dir, Options{
		OpenLog: faults.OpenLog, Durable: durable, SegmentSize: 1 << 20,
		Cache: newDRAMCache(t, 1<<20), RecentBytes: 1 << 20,
		RecoverWait: 5 * time.Millisecond, RecoverMaxWait: 40 * time.Millisecond,
	})
	require.NoError(t, err)
	return s
}

func requireValue(t *testing.T, s *Shard, key, want string) {
	t.Helper()
	v, ok, err := s.Get([]byte(key))
	require.NoError(t, err)
	require.True(t, ok, "key %q", key)
	require.Equal(t, want, string(v), "key %q", key)
}

func requireAbsent(t *testing.T, s *Shard, key string) {
	t.Helper()
	_, ok, err := s.Get([]byte(key))
	require.NoError(t, err)
	require.False(t, ok, "key %q", key)
}

// A storage fault refuses every kind of write with the sentinel, serves
// every key read, fails the probe, and passes by itself once the log takes
// writes again; the refused writes are in no state, before or after a
// reopen, and the acknowledged ones in every one.
func TestStorageFaultRefusesWritesAndRecovers(t *testing.T) {
	cases := []struct {
		name    string
		err     error
		written bool
		durable bool
		full    bool
	}{
		{"disk full, write failed", syscall.ENOSPC, false, true, true},
		{"disk full, sync failed", syscall.ENOSPC, true, true, true},
		{"device error, sync failed", syscall.EIO, true, true, false},
		{"device error, async", syscall.EIO, true, false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			ctx := t.Context()
			dir := t.TempDir()
			faults := teststorage.NewFaults(teststorage.OpenLog())
			s := openFaulty(t, dir, faults, c.durable)
			defer func() { s.Close() }()
			for i := range 20 {
				require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), fmt.Appendf(nil, "v%d", i), time.Time{}))
			}
			require.NoError(t, s.Mutate(ctx, func(v *View) ([]command.Command, error) {
				return []command.Command{{Op: OpSAdd, Key: []byte("set"), Args: [][]byte{[]byte("a")}}}, nil
			}))

			faults.Set(teststorage.Fault{Err: c.err, Written: c.written})
			writes := map[string]func() error{
				"set": func() error { return s.Set(ctx, []byte("refused"), []byte("x"), time.Time{}) },
				"update": func() error {
					return s.Update(ctx, []byte("k1"), func([]byte, time.Time, bool) ([]byte, time.Time, Action, error) {
						return []byte("refused"), time.Time{}, Write, nil
					})
				},
				"mutate": func() error {
					return s.Mutate(ctx, func(v *View) ([]command.Command, error) {
						return []command.Command{{Op: OpSAdd, Key: []byte("set"), Args: [][]byte{[]byte("refused")}}}, nil
					})
				},
				"batch": func() error {
					return s.SetBatch(ctx, []command.Command{StringSet([]byte("refused2"), []byte("x"), time.Time{})})
				},
				"exclusive": func() error {
					return s.Exclusive(ctx, func(h *Shard) error {
						return h.Set(ctx, []byte("refused3"), []byte("x"), time.Time{})
					})
				},
			}
			for name, write := range writes {
				err := write()
				require.ErrorIs(t, err, api.ErrStorageFault, name)
				require.ErrorIs(t, err, c.err, name)
				require.Equal(t, c.full, errors.Is(err, api.ErrDiskFull), name)
				require.Contains(t, err.Error(), "shard //0 refuses writes", name)
			}
			require.ErrorIs(t, s.Probe(ctx), api.ErrStorageFault)
			require.ErrorIs(t, s.StorageFault(), api.ErrStorageFault)
			for i := range 20 {
				requireValue(t, s, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
			}
			requireAbsent(t, s, "refused")
			// The recovery keeps trying while the fault lasts.
			n := faults.Injected()
			require.Eventually(t, func() bool { return faults.Injected() > n+2 }, 5*time.Second, 5*time.Millisecond)
			require.Error(t, s.Set(ctx, []byte("refused"), []byte("x"), time.Time{}))

			faults.Clear()
			require.Eventually(t, func() bool { return s.Set(ctx, []byte("after"), []byte("y"), time.Time{}) == nil },
				5*time.Second, 5*time.Millisecond)
			require.NoError(t, s.Probe(ctx))
			require.NoError(t, s.StorageFault())
			require.Equal(t, uint64(1), s.Recoveries())
			check := func(s *Shard) {
				t.Helper()
				for i := range 20 {
					requireValue(t, s, fmt.Sprintf("k%d", i), fmt.Sprintf("v%d", i))
				}
				requireValue(t, s, "after", "y")
				for _, k := range []string{"refused", "refused2", "refused3"} {
					requireAbsent(t, s, k)
				}
				require.NoError(t, s.Read(ctx, func(v *View) error {
					it, err := v.Get([]byte("set"))
					require.NoError(t, err)
					require.Equal(t, 1, it.Obj.Len(), "the refused SADD is not in the set")
					return nil
				}))
				require.Equal(t, s.applied, s.log.LastIndex(), "no record past the state")
			}
			check(s)
			require.NoError(t, s.Close())
			s = openFaulty(t, dir, faults, c.durable)
			check(s)
		})
	}
}

// Writers racing a fault: each write is either acknowledged, and then in
// the state before and after a reopen, or refused, and then in neither;
// writes after the recovery reuse the refused records' indexes without
// reading their bytes from memory.
func TestStorageFaultUnderConcurrentWrites(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	faults := teststorage.NewFaults(teststorage.OpenLog())
	s := openFaulty(t, dir, faults, true)
	defer func() { s.Close() }()

	var mu sync.Mutex
	acked, refused := map[string]string{}, map[string]bool{}
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for w := range 8 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				key, val := fmt.Sprintf("w%d-%d", w, i), fmt.Sprintf("v%d-%d", w, i)
				var err error
				switch i % 3 {
				case 0:
					err = s.Set(ctx, []byte(key), []byte(val), time.Time{})
				case 1:
					err = s.Update(ctx, []byte(key), func([]byte, time.Time, bool) ([]byte, time.Time, Action, error) {
						return []byte(val), time.Time{}, Write, nil
					})
				default:
					err = s.Exclusive(ctx, func(h *Shard) error { return h.Set(ctx, []byte(key), []byte(val), time.Time{}) })
				}
				mu.Lock()
				if err == nil {
					acked[key] = val
				} else {
					require.ErrorIs(t, err, api.ErrStorageFault)
					refused[key] = true
				}
				mu.Unlock()
				time.Sleep(100 * time.Microsecond)
			}
		})
	}
	time.Sleep(30 * time.Millisecond)
	faults.Set(teststorage.Fault{Err: syscall.EIO, Written: true})
	time.Sleep(50 * time.Millisecond)
	faults.Clear()
	time.Sleep(100 * time.Millisecond)
	close(stop)
	wg.Wait()
	require.NotEmpty(t, refused)
	require.Positive(t, s.Recoveries())

	check := func(s *Shard) {
		t.Helper()
		for k, v := range acked {
			requireValue(t, s, k, v)
		}
		for k := range refused {
			requireAbsent(t, s, k)
		}
	}
	check(s)
	require.NoError(t, s.Close())
	s = openFaulty(t, dir, faults, true)
	check(s)
}

// droppingCache is a record cache that may refuse puts, as a full one
// does.
type droppingCache struct {
	storage.RecordCache
	drop atomic.Bool
}

func (c *droppingCache) Put(log, index uint64, rec []byte) {
	if !c.drop.Load() {
		c.RecordCache.Put(log, index, rec)
	}
}

// A transaction's group meets the fault after its writes were applied and
// their records cached by index: after the recovery, new records take
// those indexes, and reads find the new records, not the group's, even
// when the cache did not take the new ones.
func TestStorageFaultForgetsRefusedRecords(t *testing.T) {
	ctx := t.Context()
	faults := teststorage.NewFaults(teststorage.OpenLog())
	cache := &droppingCache{RecordCache: newDRAMCache(t, 1<<20)}
	s, err := Open(t.TempDir(), Options{
		OpenLog: faults.OpenLog, Durable: true, SegmentSize: 1 << 20, Cache: cache,
		RecoverWait: 5 * time.Millisecond, RecoverMaxWait: 40 * time.Millisecond,
	})
	require.NoError(t, err)
	defer s.Close()
	require.NoError(t, s.Set(ctx, []byte("a"), []byte("1"), time.Time{}))
	faults.Set(teststorage.Fault{Err: syscall.ENOSPC, Written: true})
	err = s.Exclusive(ctx, func(h *Shard) error {
		for i := range 5 {
			require.NoError(t, h.Set(ctx, fmt.Appendf(nil, "g%d", i), []byte("ghost"), time.Time{}))
		}
		return nil
	})
	require.ErrorIs(t, err, api.ErrDiskFull)
	faults.Clear()
	require.Eventually(t, func() bool { return s.StorageFault() == nil }, 5*time.Second, 5*time.Millisecond)
	cache.drop.Store(true)
	for i := range 5 {
		require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "n%d", i), fmt.Appendf(nil, "new%d", i), time.Time{}))
	}
	for i := range 5 {
		requireValue(t, s, fmt.Sprintf("n%d", i), fmt.Sprintf("new%d", i))
		requireAbsent(t, s, fmt.Sprintf("g%d", i))
	}
	requireValue(t, s, "a", "1")
}

// A failure that is not the log's (a record's apply, here a bug) is not
// recovered: the shard goes on refusing writes.
func TestNonStorageFailureIsNotRecovered(t *testing.T) {
	ctx := t.Context()
	faults := teststorage.NewFaults(teststorage.OpenLog())
	s := openFaulty(t, t.TempDir(), faults, true)
	defer s.Close()
	faults.Set(teststorage.Fault{Err: syscall.EIO})
	require.ErrorIs(t, s.Set(ctx, []byte("a"), []byte("1"), time.Time{}), api.ErrStorageFault)
	s.locked(func() { s.failLocked(errors.New("a failure of the state"), 0) })
	faults.Clear()
	time.Sleep(100 * time.Millisecond)
	require.Error(t, s.Set(ctx, []byte("a"), []byte("1"), time.Time{}))
	require.Zero(t, s.Recoveries())
}
