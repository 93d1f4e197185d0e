package matrixcache

import (
	"context"
	"errors"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// Concurrent misses of one key run one load; every caller gets the value,
// its own copy, and the next call is a hit.
func TestGetOrLoadSharesOneLoad(t *testing.T) {
	c := newTestCache(t, Options{SSDCapacityBytes: Disabled})
	ctx := t.Context()
	key := cachekey.String(0, "user:1")
	var loads atomic.Int64
	release := make(chan struct{})
	load := func(context.Context) ([]byte, error) {
		loads.Add(1)
		<-release
		return []byte("loaded"), nil
	}
	const callers = 16
	var wg sync.WaitGroup
	got := make([][]byte, callers)
	for i := range callers {
		wg.Go(func() {
			v, err := c.GetOrLoad(ctx, key, PutOptions{}, load)
			require.NoError(t, err)
			got[i] = v
		})
	}
	// Let every caller reach the flight before the load returns.
	require.Eventually(t, func() bool { return loads.Load() == 1 }, 5*time.Second, time.Millisecond)
	time.Sleep(20 * time.Millisecond)
	close(release)
	wg.Wait()
	require.Equal(t, int64(1), loads.Load())
	for i := range callers {
		require.Equal(t, "loaded", string(got[i]))
	}
	got[0][0] = 'X' // a caller's copy is its own
	v, err := c.GetOrLoad(ctx, key, PutOptions{}, func(context.Context) ([]byte, error) {
		return nil, errors.New("not called on a hit")
	})
	require.NoError(t, err)
	require.Equal(t, "loaded", string(v))
	require.Equal(t, int64(1), c.Stats().Loads)
}

// A load error reaches its callers and is not remembered; a caller whose
// context ends stops waiting while the load goes on for the others.
func TestGetOrLoadErrorsAndCancel(t *testing.T) {
	c := newTestCache(t, Options{SSDCapacityBytes: Disabled})
	ctx := t.Context()
	key := cachekey.String(0, "k")
	boom := errors.New("backend down")
	_, err := c.GetOrLoad(ctx, key, PutOptions{}, func(context.Context) ([]byte, error) { return nil, boom })
	require.ErrorIs(t, err, boom)
	_, _, ok, err := c.Get(ctx, key)
	require.NoError(t, err)
	require.False(t, ok, "a failed load puts nothing")

	release := make(chan struct{})
	var loadCtxErr atomic.Value
	load := func(lctx context.Context) ([]byte, error) {
		<-release
		loadCtxErr.Store(fmt.Sprint(lctx.Err()))
		return []byte("v"), nil
	}
	short, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		_, err := c.GetOrLoad(short, key, PutOptions{}, load)
		done <- err
	}()
	other := make(chan []byte, 1)
	go func() {
		// Joins the flight, or finds what it put.
		v, err := c.GetOrLoad(ctx, key, PutOptions{}, load)
		if err == nil {
			other <- v
		}
	}()
	cancel()
	require.ErrorIs(t, <-done, context.Canceled)
	close(release)
	require.Equal(t, "v", string(<-other))
	require.Equal(t, "<nil>", loadCtxErr.Load(), "the load does not end with its first caller")
	require.Equal(t, int64(2), c.Stats().Loads)
	require.Equal(t, int64(1), c.Stats().LoadFailures)
}

// Different keys never share a flight, even when their fields would
// concatenate to the same string.
func TestLoadKeyTellsKeysApart(t *testing.T) {
	a := blockfmt.Key{Shard: 1, Namespace: "ab", Selector: "c", Record: "d"}
	b := blockfmt.Key{Shard: 1, Namespace: "a", Selector: "bc", Record: "d"}
	d := blockfmt.Key{Shard: 11, Namespace: "", Selector: "", Record: ""}
	require.NotEqual(t, loadKey(a), loadKey(b))
	require.NotEqual(t, loadKey(a), loadKey(d))
	require.Equal(t, loadKey(a), loadKey(a))
}
