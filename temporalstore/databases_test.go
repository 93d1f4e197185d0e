package temporalstore

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// A database's table is made at its first write; before, it reads as
// empty and costs no catalog entry. SwapTables exchanges two tables, and
// both the data and the swap survive a reopen.
func TestDatabasesCreateSwapReopen(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	db3 := DatabaseTable("", 3)
	require.Equal(t, "default@3", db3)
	require.False(t, e.HasTable("", db3))
	_, found := get(t, e, Command{Table: db3, Key: []byte("k")})
	require.False(t, found)
	r, err := e.Execute(ctx, Command{Table: db3, Kind: KindScan})
	require.NoError(t, err)
	require.Empty(t, r.Keys)
	// The stand-in takes no write.
	_, err = e.Execute(ctx, Command{Table: db3, Kind: KindSet, Key: []byte("k"), Value: []byte("v")})
	require.ErrorIs(t, err, ErrReadOnly)
	require.False(t, e.HasTable("", db3))

	name, err := e.CreateDatabase(ctx, "", "", 3)
	require.NoError(t, err)
	require.Equal(t, db3, name)
	_, err = e.CreateDatabase(ctx, "", "", 3) // again: nothing to do
	require.NoError(t, err)
	_, err = e.Execute(ctx, Command{Table: db3, Kind: KindSet, Key: []byte("k"), Value: []byte("three")})
	require.NoError(t, err)
	_, err = e.Execute(ctx, Command{Kind: KindSet, Key: []byte("k"), Value: []byte("zero")})
	require.NoError(t, err)
	// CreateTable refuses a database's name: no user table takes one.
	require.ErrorIs(t, e.CreateTable(ctx, DefaultNamespace, "default@4", TableOptions{}), ErrInvalid)

	_, err = e.CreateDatabase(ctx, "", "", 5)
	require.NoError(t, err)
	require.NoError(t, e.SwapTables(ctx, "", db3, DatabaseTable("", 5)))
	_, found = get(t, e, Command{Table: db3, Key: []byte("k")})
	require.False(t, found)
	v, _ := get(t, e, Command{Table: "default@5", Key: []byte("k")})
	require.Equal(t, "three", v)
	require.NoError(t, e.Close())

	e = openEngine(t, dir, clk)
	v, _ = get(t, e, Command{Table: "default@5", Key: []byte("k")})
	require.Equal(t, "three", v)
	v, _ = get(t, e, Command{Key: []byte("k")})
	require.Equal(t, "zero", v)
	// Swapping database 0 too: the base table's name follows its data.
	require.NoError(t, e.SwapTables(ctx, "", DefaultTable, "default@5"))
	v, _ = get(t, e, Command{Key: []byte("k")})
	require.Equal(t, "three", v)
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	defer e.Close()
	v, _ = get(t, e, Command{Key: []byte("k")})
	require.Equal(t, "three", v)
	v, _ = get(t, e, Command{Table: "default@5", Key: []byte("k")})
	require.Equal(t, "zero", v)
	require.ErrorIs(t, e.SwapTables(ctx, "", DefaultTable, "default@9"), ErrNoTable)
}

// A catalog written before tables had directories of their own opens:
// each table's directory is then its namespace/name.
func TestCatalogWithoutDirs(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "ns", "t", TableOptions{Shards: 2}))
	_, err := e.Execute(ctx, Command{Namespace: "ns", Table: "t", Kind: KindSet, Key: []byte("k"), Value: []byte("v")})
	require.NoError(t, err)
	require.NoError(t, e.Close())

	path := filepath.Join(dir, catalogFile)
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	var cat []map[string]any
	require.NoError(t, json.Unmarshal(b, &cat))
	for _, c := range cat {
		require.Equal(t, c["namespace"].(string)+"/"+c["table"].(string), c["dir"])
		delete(c, "dir")
	}
	b, err = json.Marshal(cat)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(path, b, 0o644))

	e = openEngine(t, dir, clk)
	defer e.Close()
	v, _ := get(t, e, Command{Namespace: "ns", Table: "t", Key: []byte("k")})
	require.Equal(t, "v", v)
}

// CopyBetween copies and moves every kind between tables, with expiry,
// never over an existing key unless told to.
func TestCopyBetween(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	db1, err := e.CreateDatabase(ctx, "", "", 1)
	require.NoError(t, err)
	for _, c := range []Command{
		{Kind: KindSet, Key: []byte("s"), Value: []byte("v"), TTL: time.Hour},
		{Kind: KindHSet, Key: []byte("h"), Args: [][]byte{[]byte("f"), []byte("x")}},
		{Kind: KindFAppend, Key: []byte("f"), Points: []Point{{TS: 1, Value: []byte("a")}, {TS: 2, Value: []byte("b")}}},
	} {
		_, err := e.Execute(ctx, c)
		require.NoError(t, err)
	}
	for _, k := range []string{"s", "h", "f"} {
		ok, err := e.CopyBetween(ctx, "", "", db1, []byte(k), []byte(k), false, true)
		require.NoError(t, err)
		require.True(t, ok, k)
		r, err := e.Execute(ctx, Command{Kind: KindExistsKeys, Keys: [][]byte{[]byte(k)}})
		require.NoError(t, err)
		require.Zero(t, r.Int, k)
	}
	r, err := e.Execute(ctx, Command{Table: db1, Kind: KindPTTL, Key: []byte("s")})
	require.NoError(t, err)
	require.Equal(t, int64(time.Hour/time.Millisecond), r.Int)
	r, err = e.Execute(ctx, Command{Table: db1, Kind: KindHGet, Key: []byte("h"), Args: [][]byte{[]byte("f")}})
	require.NoError(t, err)
	require.Equal(t, "x", string(r.Value))
	r, err = e.Execute(ctx, Command{Table: db1, Kind: KindFQuery, Key: []byte("f"), Start: 0, End: 10})
	require.NoError(t, err)
	require.Len(t, r.Points, 2)

	// A key in the target stays, and so does the source's.
	_, err = e.Execute(ctx, Command{Kind: KindSet, Key: []byte("s"), Value: []byte("new")})
	require.NoError(t, err)
	ok, err := e.CopyBetween(ctx, "", "", db1, []byte("s"), []byte("s"), false, true)
	require.NoError(t, err)
	require.False(t, ok)
	v, _ := get(t, e, Command{Key: []byte("s")})
	require.Equal(t, "new", v)
	ok, err = e.CopyBetween(ctx, "", "", db1, []byte("s"), []byte("s2"), true, false)
	require.NoError(t, err)
	require.True(t, ok)
	ok, err = e.CopyBetween(ctx, "", "", db1, []byte("missing"), []byte("s"), true, true)
	require.NoError(t, err)
	require.False(t, ok)
	_, err = e.CopyBetween(ctx, "", db1, db1, []byte("s"), []byte("t"), true, false)
	require.ErrorIs(t, err, ErrInvalid)
	require.NoError(t, e.Close())

	// The moved collections survive a reopen (the series as its image).
	e = openEngine(t, dir, clk)
	defer e.Close()
	r, err = e.Execute(ctx, Command{Table: db1, Kind: KindFQuery, Key: []byte("f"), Start: 0, End: 10})
	require.NoError(t, err)
	require.Len(t, r.Points, 2)
	v, _ = get(t, e, Command{Table: db1, Key: []byte("s2")})
	require.Equal(t, "new", v)
	// A write to the moved series makes it resident and applies.
	_, err = e.Execute(ctx, Command{Table: db1, Kind: KindFAppend, Key: []byte("f"), Points: []Point{{TS: 3, Value: []byte("c")}}})
	require.NoError(t, err)
	r, err = e.Execute(ctx, Command{Table: db1, Kind: KindFQuery, Key: []byte("f"), Start: 0, End: 10})
	require.NoError(t, err)
	require.Len(t, r.Points, 3)
}

// SWAPDB's cost is one catalog rewrite (fsynced), whatever the tables
// hold; MOVE's two records on two shards (durable: two fsyncs).
func BenchmarkDatabases(b *testing.B) {
	ctx := b.Context()
	e, err := testOpen(ctx, Options{Dir: b.TempDir(), MaintenanceInterval: Disabled})
	require.NoError(b, err)
	defer e.Close()
	db1, err := e.CreateDatabase(ctx, "", "", 1)
	require.NoError(b, err)
	for i := range 10_000 {
		_, err := e.Execute(ctx, Command{Kind: KindSet, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")})
		require.NoError(b, err)
	}
	b.Run("swap", func(b *testing.B) {
		for b.Loop() {
			require.NoError(b, e.SwapTables(ctx, "", DefaultTable, db1))
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/swap")
	})
	b.Run("move", func(b *testing.B) {
		from, to := DefaultTable, db1
		for b.Loop() {
			ok, err := e.CopyBetween(ctx, "", from, to, []byte("k1"), []byte("k1"), false, true)
			require.NoError(b, err)
			require.True(b, ok)
			from, to = to, from
		}
		b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/move")
	})
}
