package temporalstore

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// Each admission limit refuses with its own error, changes nothing, and
// recovers as the engine's clock moves on; limits survive a reopen.
func TestAdmissionLimits(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e, err := testOpen(t.Context(), Options{Dir: dir, Now: clk.Now, TenantQPS: 2})
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "ns", "w", TableOptions{Shards: 1, WriteQPS: 3}))
	require.NoError(t, e.CreateTable(ctx, "ns", "r", TableOptions{Shards: 1, ReadQPS: 2}))
	require.NoError(t, e.CreateTable(ctx, "ns", "s", TableOptions{Shards: 1, ShardRate: 2, ShardBurst: 2}))

	set := func(table, key string) error {
		_, err := e.Execute(ctx, Command{Namespace: "ns", Table: table, Kind: KindSet, Key: []byte(key), Value: []byte("v")})
		return err
	}
	read := func(table, key string) error {
		_, err := e.Execute(ctx, Command{Namespace: "ns", Table: table, Kind: KindGet, Key: []byte(key)})
		return err
	}

	for i := range 3 {
		require.NoError(t, set("w", "k"), i)
	}
	require.ErrorIs(t, set("w", "refused"), ErrWriteQPS)
	r, err := e.Execute(ctx, Command{Namespace: "ns", Table: "w", Kind: KindExists, Key: []byte("refused")})
	require.NoError(t, err, "reads are not write-limited")
	require.Zero(t, r.Int, "a refused write changes nothing")

	require.NoError(t, read("r", "k"))
	require.NoError(t, read("r", "k"))
	require.ErrorIs(t, read("r", "k"), ErrReadQPS)
	require.NoError(t, set("r", "k"), "writes are not read-limited")

	require.NoError(t, set("s", "a"))
	require.NoError(t, read("s", "a"))
	require.ErrorIs(t, set("s", "b"), ErrShardRate)
	clk.Advance(500 * time.Millisecond)
	require.NoError(t, set("s", "b"), "one token back after half a second")

	tenantSet := func(tenant string) error {
		_, err := e.Execute(ctx, Command{Tenant: tenant, Kind: KindSet, Key: []byte("t"), Value: []byte("v")})
		return err
	}
	require.NoError(t, tenantSet("acme"))
	require.NoError(t, tenantSet("acme"))
	require.ErrorIs(t, tenantSet("acme"), ErrTenantQPS)
	require.NoError(t, tenantSet("globex"), "tenants are limited apart")
	require.NoError(t, tenantSet(""), "no tenant, no tenant limit")

	clk.Advance(time.Second)
	require.NoError(t, set("w", "k"))
	require.NoError(t, read("r", "k"))
	require.NoError(t, tenantSet("acme"))

	// Limits are table options, kept in the catalog.
	require.NoError(t, e.Close())
	e, err = testOpen(ctx, Options{Dir: dir, Now: clk.Now})
	require.NoError(t, err)
	defer e.Close()
	for range 3 {
		require.NoError(t, set("w", "k"))
	}
	require.ErrorIs(t, set("w", "k"), ErrWriteQPS)
}

// A read-only shard refuses writes and serves reads.
func TestReadOnlyShard(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	_, err := e.Execute(ctx, Command{Kind: KindSet, Key: []byte("k"), Value: []byte("v")})
	require.NoError(t, err)
	sh := ShardOf([]byte("k"), DefaultShards)
	require.NoError(t, e.SetReadOnly(DefaultNamespace, DefaultTable, sh, true))
	_, err = e.Execute(ctx, Command{Kind: KindSet, Key: []byte("k"), Value: []byte("w")})
	require.ErrorIs(t, err, ErrReadOnly)
	_, err = e.Execute(ctx, Command{Kind: KindIncrBy, Key: []byte("k"), Delta: 1})
	require.ErrorIs(t, err, ErrReadOnly)
	v, ok := get(t, e, Command{Key: []byte("k")})
	require.True(t, ok)
	require.Equal(t, "v", v)
	require.NoError(t, e.SetReadOnly(DefaultNamespace, DefaultTable, sh, false))
	_, err = e.Execute(ctx, Command{Kind: KindSet, Key: []byte("k"), Value: []byte("w")})
	require.NoError(t, err)
	require.ErrorIs(t, e.SetReadOnly(DefaultNamespace, DefaultTable, DefaultShards, true), ErrInvalid)
	require.ErrorIs(t, e.SetReadOnly("nope", "nope", 0, true), ErrNoTable)
	require.ErrorIs(t, e.CreateTable(ctx, "ns", "bad", TableOptions{WriteQPS: -1}), ErrInvalid)
}
