package main

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/freeport"
)

// Both backends' client code runs against the null server: histories of
// the length set, takes granted at the first offer, records new.
func TestNullServerAnswersBothBackends(t *testing.T) {
	addr, err := freeport.Addr()
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan error, 1)
	go func() { done <- runNullServer(ctx, addr) }()
	defer func() {
		cancel()
		require.NoError(t, <-done)
	}()
	rc := newClient(addr, 1)
	require.Eventually(t, func() bool { return rc.Ping(ctx).Err() == nil }, 5e9, 1e7)
	require.NoError(t, rc.Do(ctx, nullHistoryVerb, 7, 3).Err())
	require.Error(t, rc.Do(ctx, "NOSUCH").Err())
	rc.Close()

	at := dayStart + hourMs
	offers := []Offer{{Campaign: 2, Charge: 10, Limit: 100, CapN: 1}, {Campaign: 1, Charge: 10, Limit: 100, CapN: 1}}
	for _, b := range []Backend{newOurs(addr, 1), newRedis(addr, 1)} {
		require.NoError(t, b.Reset(ctx))
		var h History
		require.NoError(t, b.History(ctx, 5, at, &h))
		require.Len(t, h.Imps, 7)
		for i, imp := range h.Imps {
			require.Equal(t, Imp{At: at - int64(i), Campaign: i % 3, Charge: 12345}, imp)
		}
		won, tried, err := b.Take(ctx, 5, at, offers)
		require.NoError(t, err)
		require.Equal(t, [2]int{0, 1}, [2]int{won, tried})
		ok, err := b.Record(ctx, Event{User: 5, Imp: Imp{At: at, Campaign: 2, Charge: 10}})
		require.NoError(t, err)
		require.True(t, ok)
		spend := make([]int64, 3)
		require.NoError(t, b.Spend(ctx, spend))
		require.Equal(t, []int64{0, 0, 0}, spend)
		require.NoError(t, b.Close())
	}
}
