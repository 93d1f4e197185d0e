package resp

import (
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// TABLE and TENANT: each subcommand's happy path and errors, in RESP3
// (maps) and RESP2 (flat arrays).
func TestTableVerbs(t *testing.T) {
	ctx := t.Context()
	addr, e := start(t, Options{Table: "served"})
	require.NoError(t, e.CreateTable(ctx, temporalstore.DefaultNamespace, "served", temporalstore.TableOptions{Shards: 1}))
	c := client(t, addr, 3)
	do := func(args ...any) (any, error) { return c.Do(ctx, args...).Result() }

	v, err := do("TABLE", "CREATE", "acme", "orders", "SHARDS", "2", "WRITEQPS", "2.5", "READQPS", "100", "SHARDBURST", "4", "ASYNC")
	require.NoError(t, err)
	require.Equal(t, "OK", v)
	_, err = do("TABLE", "CREATE", "acme", "orders")
	require.ErrorContains(t, err, "ERR table exists: acme/orders")
	for _, bad := range [][]any{
		{"TABLE", "CREATE", "acme", "x", "SHARDS"},
		{"TABLE", "CREATE", "acme", "x", "SHARDS", "two"},
		{"TABLE", "CREATE", "acme", "x", "COLOR", "red"},
		{"TABLE", "CREATE", "acme", "x", "SHARDS", "3", "KEYGROUPS", "4"},
		{"TABLE", "CREATE", "a/b", "x"},
		{"TABLE", "SET", "acme", "orders", "SHARDS", "3"},
		{"TABLE", "SET", "acme", "orders", "READQPS", "-1"},
		{"TABLE", "READONLY", "acme", "orders", "7", "ON"},
		{"TABLE", "READONLY", "acme", "orders", "0", "MAYBE"},
		{"TABLE", "NOSUCH"},
		{"TABLE", "INFO", "acme"},
		{"TENANT", "SET", "acme", "QPS", "-5"},
		{"TENANT", "SET", "acme", "RATE", "5"},
		{"TENANT", "GET", "a/b"},
	} {
		_, err := do(bad...)
		require.ErrorContains(t, err, "ERR", "%v", bad)
	}

	v, err = do("TABLE", "LIST")
	require.NoError(t, err)
	require.Equal(t, []any{"acme/orders", "default/default", "default/served"}, v)
	require.NoError(t, c.Do(ctx, "TABLE", "SET", "acme", "orders", "WRITEQPS", "0", "SHARDRATE", "50").Err())
	require.NoError(t, c.Do(ctx, "TABLE", "READONLY", "acme", "orders", "1", "ON").Err())
	v, err = do("TABLE", "INFO", "acme", "orders")
	require.NoError(t, err)
	info := v.(map[any]any)
	require.Equal(t, "acme", info["namespace"])
	require.Equal(t, "orders", info["name"])
	require.Equal(t, int64(2), info["shards"])
	require.Equal(t, int64(1), info["async"])
	require.Equal(t, 0.0, info["write_qps"])
	require.Equal(t, 100.0, info["read_qps"])
	require.Equal(t, 50.0, info["shard_rate"])
	require.Equal(t, int64(4), info["shard_burst"])
	require.Equal(t, []any{int64(1)}, info["read_only_shards"])
	require.Len(t, info["shard_stats"], 2)
	sh1 := info["shard_stats"].([]any)[1].(map[any]any)
	require.Equal(t, int64(1), sh1["read_only"])

	// RESP2: the same as flat arrays.
	c2 := client(t, addr, 2)
	flat, err := c2.Do(ctx, "TABLE", "INFO", "acme", "orders").Slice()
	require.NoError(t, err)
	require.Equal(t, []any{"namespace", "acme"}, flat[:2])
	require.Len(t, flat, 26)

	_, err = do("TABLE", "DROP", "default", "default")
	require.ErrorContains(t, err, "ERR table in use")
	_, err = do("TABLE", "DROP", "default", "served")
	require.ErrorContains(t, err, "ERR table in use", "the table the server serves")
	require.NoError(t, c.Do(ctx, "TABLE", "DROP", "acme", "orders").Err())
	_, err = do("TABLE", "INFO", "acme", "orders")
	require.ErrorContains(t, err, "ERR no such table")
	_, err = do("TABLE", "DROP", "acme", "orders")
	require.ErrorContains(t, err, "ERR no such table")

	require.NoError(t, c.Do(ctx, "TENANT", "SET", "acme", "QPS", "5").Err())
	require.NoError(t, c.Do(ctx, "TENANT", "SET", "free", "QPS", "-1").Err())
	v, err = do("TENANT", "GET", "acme")
	require.NoError(t, err)
	require.Equal(t, map[any]any{"tenant": "acme", "qps": 5.0, "own": int64(1)}, v)
	v, err = do("TENANT", "GET", "other")
	require.NoError(t, err)
	require.Equal(t, map[any]any{"tenant": "other", "qps": 0.0, "own": int64(0)}, v)
	v, err = do("TENANT", "LIST")
	require.NoError(t, err)
	require.Equal(t, map[any]any{"acme": 5.0, "free": -1.0}, v)
	v, err = do("TABLE", "HELP")
	require.NoError(t, err)
	require.NotEmpty(t, v)

	// Not in a transaction, nor in a script.
	require.NoError(t, c.Do(ctx, "MULTI").Err())
	require.ErrorContains(t, c.Do(ctx, "TABLE", "LIST").Err(), "ERR Command not allowed inside a transaction")
	require.NoError(t, c.Do(ctx, "DISCARD").Err())
	require.ErrorContains(t, c.Do(ctx, "EVAL", "return redis.call('TABLE', 'LIST')", "0").Err(), "not allowed from script")
}

// Global tokens: a read-only one describes tables and tenants, only a
// read-write one changes them.
func TestTableVerbsNeedReadWriteToken(t *testing.T) {
	ctx := t.Context()
	addr, _ := start(t, Options{Tokens: []string{"admin"}, ReadOnlyTokens: []string{"viewer"}})
	ro := redis.NewClient(&redis.Options{Addr: addr, Password: "viewer", Protocol: 3})
	t.Cleanup(func() { ro.Close() })
	require.NoError(t, ro.Do(ctx, "TABLE", "LIST").Err())
	require.NoError(t, ro.Do(ctx, "TABLE", "INFO", "default", "default").Err())
	require.NoError(t, ro.Do(ctx, "TENANT", "GET", "acme").Err())
	for _, args := range [][]any{
		{"TABLE", "CREATE", "acme", "t"},
		{"TABLE", "SET", "default", "default", "READQPS", "1"},
		{"TABLE", "READONLY", "default", "default", "ALL", "ON"},
		{"TABLE", "DROP", "acme", "t"},
		{"TENANT", "SET", "acme", "QPS", "1"},
	} {
		require.ErrorContains(t, ro.Do(ctx, args...).Err(), "NOPERM", "%v", args)
	}
	rw := redis.NewClient(&redis.Options{Addr: addr, Password: "admin"})
	t.Cleanup(func() { rw.Close() })
	require.NoError(t, rw.Do(ctx, "TABLE", "CREATE", "acme", "t").Err())
	require.NoError(t, rw.Do(ctx, "TENANT", "SET", "acme", "QPS", "1").Err())
}

// A tenant token confines its connection to its tenant's namespace: its
// keys are there, its commands meet the tenant's limit, a read-only one
// reads only, and the verbs reaching past the namespace are refused.
func TestTenantTokens(t *testing.T) {
	ctx := t.Context()
	x := &counters{n: map[string]int64{}}
	addr, e := start(t, Options{Tokens: []string{"admin"}, Commands: x.commands(), TenantTokens: map[string]TenantToken{
		"a-rw": {Tenant: "acme"}, "a-ro": {Tenant: "acme", ReadOnly: true}, "b-rw": {Tenant: "beta"},
	}})
	for _, ns := range []string{"acme", "beta"} {
		require.NoError(t, e.CreateTable(ctx, ns, temporalstore.DefaultTable, temporalstore.TableOptions{Shards: 1}))
	}
	conn := func(token string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: addr, Password: token, Protocol: 2, PoolSize: 1})
		t.Cleanup(func() { c.Close() })
		return c
	}
	a, aro, b, admin := conn("a-rw"), conn("a-ro"), conn("b-rw"), conn("admin")

	require.NoError(t, a.Set(ctx, "k", "acme's", 0).Err())
	require.Equal(t, "acme's", a.Get(ctx, "k").Val())
	r, err := e.Execute(ctx, temporalstore.Command{Namespace: "acme", Kind: temporalstore.KindGet, Key: []byte("k")})
	require.NoError(t, err)
	require.Equal(t, "acme's", string(r.Value), "kept in the tenant's namespace")
	require.ErrorIs(t, b.Get(ctx, "k").Err(), redis.Nil, "another tenant's namespace")
	require.ErrorIs(t, admin.Get(ctx, "k").Err(), redis.Nil, "the global token's default table")
	require.NoError(t, b.Set(ctx, "k", "beta's", 0).Err())
	require.Equal(t, "acme's", aro.Get(ctx, "k").Val())
	require.ErrorContains(t, aro.Set(ctx, "k", "x", 0).Err(), "NOPERM", "a read-only tenant token")
	require.Equal(t, []string{"k"}, a.Keys(ctx, "*").Val())
	require.Equal(t, int64(1), a.DBSize(ctx).Val())

	// Its databases are the tenant's tables too.
	require.NoError(t, a.Do(ctx, "SELECT", "2").Err())
	require.NoError(t, a.Set(ctx, "k2", "v", 0).Err())
	require.True(t, e.HasTable("acme", "default@2"))
	require.NoError(t, a.Do(ctx, "SELECT", "0").Err())

	// Scripts run in the namespace, under the same refusals.
	require.Equal(t, "acme's", a.Eval(ctx, "return redis.call('GET', KEYS[1])", []string{"k"}).Val())
	require.ErrorContains(t, a.Eval(ctx, "return redis.call('X.GET', 'k')", nil).Err(), "NOPERM")

	for _, args := range [][]any{
		{"TABLE", "LIST"},
		{"TENANT", "GET", "acme"},
		{"CONFIG", "SET", "hz", "10"},
		{"CLIENT", "LIST"},
		{"SLOWLOG", "GET"},
		{"SAVE"},
		{"FUNCTION", "FLUSH"},
		{"SCRIPT", "FLUSH"},
		{"X.GET", "k"}, // an added verb: its keys have no namespace
	} {
		require.ErrorContains(t, a.Do(ctx, args...).Err(), "NOPERM a tenant's token", "%v", args)
	}
	require.NoError(t, a.Do(ctx, "CONFIG", "GET", "hz").Err())
	require.NoError(t, a.Do(ctx, "CLIENT", "SETNAME", "acme-app").Err())

	// The tenant's limit applies to its commands, pipelined GETs too.
	require.NoError(t, admin.Do(ctx, "TENANT", "SET", "acme", "QPS", "0.001").Err())
	require.NoError(t, a.Get(ctx, "k").Err(), "a burst of one")
	require.ErrorContains(t, a.Get(ctx, "k").Err(), "BUSY")
	cmds, _ := a.Pipelined(ctx, func(p redis.Pipeliner) error {
		for range 3 {
			p.Get(ctx, "k")
		}
		return nil
	})
	for _, cmd := range cmds {
		require.ErrorContains(t, cmd.Err(), "BUSY")
	}
	cmds, _ = a.Pipelined(ctx, func(p redis.Pipeliner) error {
		for range 3 {
			p.Set(ctx, "k", "v", 0)
		}
		return nil
	})
	for _, cmd := range cmds {
		require.ErrorContains(t, cmd.Err(), "BUSY", "pipelined SETs too")
	}
	require.NoError(t, b.Get(ctx, "k").Err(), "another tenant is not limited")
	require.ErrorIs(t, admin.Get(ctx, "k").Err(), redis.Nil, "nor the global tokens")

	// AUTH with a global token takes the connection back to the server's
	// table (a client of its own: go-redis opened another connection for
	// the pipeline).
	sw := conn("b-rw")
	require.Equal(t, "beta's", sw.Get(ctx, "k").Val())
	require.NoError(t, sw.Do(ctx, "AUTH", "admin").Err())
	require.ErrorIs(t, sw.Get(ctx, "k").Err(), redis.Nil)
	require.NoError(t, sw.Do(ctx, "TABLE", "LIST").Err())
	require.NoError(t, sw.Do(ctx, "AUTH", "a-rw").Err())
	require.ErrorContains(t, sw.Get(ctx, "k").Err(), "BUSY", "acme's limit, once a token of acme's")
}

// New refuses tenant tokens it cannot take.
func TestTenantTokensRefused(t *testing.T) {
	for _, o := range []Options{
		{TenantTokens: map[string]TenantToken{"": {Tenant: "acme"}}},
		{TenantTokens: map[string]TenantToken{"t": {Tenant: ""}}},
		{TenantTokens: map[string]TenantToken{"t": {Tenant: "a/b"}}},
		{Tokens: []string{"t"}, TenantTokens: map[string]TenantToken{"t": {Tenant: "acme"}}},
	} {
		_, err := New(o)
		require.ErrorIs(t, err, ErrInvalidOptions, "%+v", o)
	}
}
