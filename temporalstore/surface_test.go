package temporalstore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// Probe answers for every shard; a frozen shard fails its probe (and
// only it) while writes to it wait and reads go on; unfreezing lets the
// waiting write through and the probe pass again.
func TestProbeAndFreeze(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()

	res, err := e.Probe(ctx)
	require.NoError(t, err)
	require.Len(t, res, DefaultShards)
	for _, p := range res {
		require.NoError(t, p.Err)
	}

	key := []byte("wedged")
	sh := ShardOf(key, DefaultShards)
	_, err = e.Execute(ctx, Command{Kind: KindSet, Key: key, Value: []byte("v1")})
	require.NoError(t, err)
	unfreeze, err := e.FreezeShard(ctx, DefaultNamespace, DefaultTable, sh)
	require.NoError(t, err)
	defer unfreeze()

	pctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	res, err = e.Probe(pctx)
	cancel()
	require.NoError(t, err)
	for _, p := range res {
		if p.Shard == sh {
			require.ErrorIs(t, p.Err, context.DeadlineExceeded)
		} else {
			require.NoError(t, p.Err, "shard %d", p.Shard)
		}
	}

	r, err := e.Execute(ctx, Command{Kind: KindGet, Key: key})
	require.NoError(t, err)
	require.Equal(t, "v1", string(r.Value))

	written := make(chan error, 1)
	go func() {
		_, err := e.Execute(ctx, Command{Kind: KindIncrBy, Key: []byte("{wedged}n"), Delta: 1})
		written <- err
	}()
	select {
	case err := <-written:
		t.Fatalf("a write to a frozen shard went through: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	unfreeze()
	require.NoError(t, <-written)

	res, err = e.Probe(ctx)
	require.NoError(t, err)
	for _, p := range res {
		require.NoError(t, p.Err)
	}

	_, err = e.FreezeShard(ctx, DefaultNamespace, DefaultTable, DefaultShards)
	require.ErrorIs(t, err, ErrInvalid)
	_, err = e.FreezeShard(ctx, "no", "table", 0)
	require.ErrorIs(t, err, ErrNoTable)

	require.NoError(t, e.Close())
	_, err = e.Probe(ctx)
	require.ErrorIs(t, err, ErrClosed)
}

// Probes of a wedged shard share one waiter rather than piling up.
func TestProbeCoalesces(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	ctx := t.Context()
	unfreeze, err := e.FreezeShard(ctx, DefaultNamespace, DefaultTable, 0)
	require.NoError(t, err)
	s := e.tables[tableName{DefaultNamespace, DefaultTable}].shards[0]
	pctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	errs := make(chan error, 10)
	for range 10 {
		go func() { errs <- s.Probe(pctx) }()
	}
	for range 10 {
		require.ErrorIs(t, <-errs, context.DeadlineExceeded)
	}
	unfreeze()
	require.NoError(t, s.Probe(ctx))
}

// Every kind Execute runs is listed, and the read kinds are a subset of
// them.
func TestKindsAndReadKinds(t *testing.T) {
	e := openEngine(t, t.TempDir(), testclock.New(time.Unix(1_764_460_800, 0)))
	defer e.Close()
	all := Kinds()
	require.Contains(t, all, KindSet)
	require.Contains(t, all, KindMGet)
	require.Contains(t, all, KindScan)
	require.Contains(t, all, KindRowWriteBatch)
	for _, k := range api.ReadKinds() {
		require.Contains(t, all, k)
	}
	for _, k := range all {
		_, err := e.Execute(t.Context(), Command{Kind: k, Key: []byte("k"), Keys: [][]byte{[]byte("k")}})
		require.False(t, errors.Is(err, ErrUnknownKind), fmt.Sprint(k))
	}
	_, err := e.Execute(t.Context(), Command{Kind: "no_such_kind", Key: []byte("k")})
	require.ErrorIs(t, err, ErrUnknownKind)
	require.True(t, IsReadKind(KindGet))
	require.True(t, IsReadKind(KindZRange))
	require.False(t, IsReadKind(KindSet))
	require.False(t, IsReadKind(KindRowWrite))
	require.False(t, IsReadKind("no_such_kind"))
}
