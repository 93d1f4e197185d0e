package temporalstore

import (
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// A storage fault of one shard: its writes are refused with ErrDiskFull
// (the other shards' go on), every key stays readable, the probe and the
// statistics name the shard and the cause; once the disk takes writes the
// shard takes them again by itself, and a reopen holds every acknowledged
// write and none of the refused ones.
func TestStorageFaultRefusesOneShardsWrites(t *testing.T) {
	ctx := t.Context()
	dir := t.TempDir()
	faults := teststorage.NewFaults(teststorage.OpenLog())
	open := func() *Engine {
		e, err := testOpen(ctx, Options{Dir: dir, OpenLog: faults.OpenLog, MaintenanceInterval: Disabled})
		require.NoError(t, err)
		return e
	}
	e := open()
	defer func() { e.Close() }()
	tbl, err := e.table(&Command{})
	require.NoError(t, err)
	keys := map[int][]string{} // by shard
	acked := map[string]string{}
	for i := 0; len(keys[0]) < 10 || len(keys[1]) < 10; i++ {
		k := fmt.Sprintf("key-%d", i)
		sh := tbl.opts.KeyShard([]byte(k))
		keys[sh] = append(keys[sh], k)
		_, err := e.Execute(ctx, Command{Kind: KindSet, Key: []byte(k), Value: []byte("v-" + k)})
		require.NoError(t, err)
		acked[k] = "v-" + k
	}
	faults.Set(teststorage.Fault{Err: syscall.ENOSPC, Written: true, Match: func(o storage.LogOptions) bool { return o.Shard == 0 }})

	fresh := "fresh" // a key of shard 0 never written
	for i := 0; tbl.opts.KeyShard([]byte(fresh)) != 0; i++ {
		fresh = fmt.Sprintf("fresh-%d", i)
	}
	refused := []string{fresh, keys[0][1]}
	for _, k := range refused {
		_, err := e.Execute(ctx, Command{Kind: KindSet, Key: []byte(k), Value: []byte("refused")})
		require.ErrorIs(t, err, ErrDiskFull)
		require.ErrorIs(t, err, ErrStorageFault)
		require.ErrorContains(t, err, "disk full: shard default/default/0 refuses writes")
		require.ErrorContains(t, err, "no space left on device")
	}
	_, err = e.Execute(ctx, Command{Kind: KindHSet, Key: []byte(keys[0][2]), Args: [][]byte{[]byte("f"), []byte("v")}})
	require.ErrorIs(t, err, ErrDiskFull)
	_, err = e.Execute(ctx, Command{Kind: KindSet, Key: []byte(keys[1][0]), Value: []byte("other shard")})
	require.NoError(t, err, "the other shards take writes")
	acked[keys[1][0]] = "other shard"
	for k, v := range acked {
		got, found := get(t, e, Command{Key: []byte(k)})
		require.True(t, found, k)
		require.Equal(t, v, got, k)
	}
	probes, err := e.Probe(ctx)
	require.NoError(t, err)
	for _, p := range probes {
		if p.Shard == 0 {
			require.ErrorIs(t, p.Err, ErrDiskFull)
		} else {
			require.NoError(t, p.Err)
		}
	}
	stats, err := e.Stats()
	require.NoError(t, err)
	require.ErrorIs(t, stats[0].StorageFault, ErrDiskFull)
	require.NoError(t, stats[1].StorageFault)

	// The shard's tries to recover fail while the disk is full.
	n := faults.Injected()
	require.Eventually(t, func() bool { return faults.Injected() > n }, 10*time.Second, 10*time.Millisecond)
	_, err = e.Execute(ctx, Command{Kind: KindSet, Key: []byte(keys[0][3]), Value: []byte("refused")})
	require.ErrorIs(t, err, ErrDiskFull)

	faults.Clear()
	require.Eventually(t, func() bool {
		_, err := e.Execute(ctx, Command{Kind: KindSet, Key: []byte(keys[0][3]), Value: []byte("after")})
		return err == nil
	}, 10*time.Second, 20*time.Millisecond, "writes resume by themselves")
	acked[keys[0][3]] = "after"
	stats, err = e.Stats()
	require.NoError(t, err)
	require.NoError(t, stats[0].StorageFault)
	require.Equal(t, uint64(1), stats[0].FaultRecoveries)

	check := func(e *Engine) {
		t.Helper()
		for k, v := range acked {
			got, found := get(t, e, Command{Key: []byte(k)})
			require.True(t, found, k)
			require.Equal(t, v, got, k)
		}
		_, found := get(t, e, Command{Key: []byte(refused[0])})
		require.False(t, found)
		r, err := e.Execute(ctx, Command{Kind: KindHLen, Key: []byte(keys[0][2])})
		require.ErrorIs(t, err, ErrWrongType, "%v", r)
	}
	check(e)
	require.NoError(t, e.Close())
	e = open()
	check(e)
}
