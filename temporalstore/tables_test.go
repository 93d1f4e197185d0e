package temporalstore

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func ptr[T any](v T) *T { return &v }

func set(t *testing.T, e *Engine, c Command) error {
	t.Helper()
	c.Kind = KindSet
	_, err := e.Execute(t.Context(), c)
	return err
}

// Tables made, listed, described; their limits and read-only shards
// changed at run time take effect at once and survive a reopen.
func TestTablesLimitsPersist(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "acme", "orders", TableOptions{Shards: 2, ReadQPS: 100}))
	list, err := e.ListTables()
	require.NoError(t, err)
	var names []string
	for _, ti := range list {
		names = append(names, ti.Namespace+"/"+ti.Name)
	}
	require.Equal(t, []string{"acme/orders", "default/default"}, names, "in name order")
	require.Equal(t, 2, list[0].Options.Shards)
	require.Equal(t, 100.0, list[0].Options.ReadQPS)
	require.Empty(t, list[0].ReadOnlyShards)

	orders := Command{Namespace: "acme", Table: "orders", Key: []byte("k"), Value: []byte("v")}
	for range 3 {
		require.NoError(t, set(t, e, orders), "no write limit yet")
	}
	require.NoError(t, e.SetTableLimits(ctx, "acme", "orders", TableLimits{WriteQPS: ptr(2.0)}))
	require.NoError(t, set(t, e, orders))
	require.NoError(t, set(t, e, orders))
	require.ErrorIs(t, set(t, e, orders), ErrWriteQPS, "a burst of one second's worth, then refused")
	clk.Advance(time.Second)
	require.NoError(t, set(t, e, orders), "refilled")
	ti, err := e.DescribeTable("acme", "orders")
	require.NoError(t, err)
	require.Equal(t, 2.0, ti.Options.WriteQPS)
	require.Equal(t, 100.0, ti.Options.ReadQPS, "a limit not named is kept")

	require.NoError(t, e.SetTableReadOnly(ctx, "acme", "orders", 1, true))
	ti, _ = e.DescribeTable("acme", "orders")
	require.Equal(t, []int{1}, ti.ReadOnlyShards)
	st, err := e.TableStats("acme", "orders")
	require.NoError(t, err)
	require.Len(t, st, 2)
	require.False(t, st[0].ReadOnly)
	require.True(t, st[1].ReadOnly)
	require.Equal(t, 1, st[0].Keys+st[1].Keys)

	for _, tc := range []struct {
		name string
		l    TableLimits
	}{
		{"negative", TableLimits{ReadQPS: ptr(-1.0)}},
		{"not a number", TableLimits{WriteQPS: ptr(func() float64 { z := 0.0; return z / z }())}},
		{"negative burst", TableLimits{ShardBurst: ptr(-2)}},
	} {
		require.ErrorIs(t, e.SetTableLimits(ctx, "acme", "orders", tc.l), ErrInvalid, tc.name)
	}
	require.ErrorIs(t, e.SetTableLimits(ctx, "acme", "nope", TableLimits{}), ErrNoTable)
	require.ErrorIs(t, e.SetTableReadOnly(ctx, "acme", "orders", 2, true), ErrInvalid)
	require.NoError(t, e.Close())

	e = openEngine(t, dir, clk)
	defer e.Close()
	ti, err = e.DescribeTable("acme", "orders")
	require.NoError(t, err)
	require.Equal(t, 2.0, ti.Options.WriteQPS)
	require.Equal(t, 100.0, ti.Options.ReadQPS)
	require.Equal(t, []int{1}, ti.ReadOnlyShards, "read-only mode is kept")
	// The key's shard and the other: one refuses writes.
	var refused int
	for _, k := range []string{"a", "b", "c", "d", "e", "f"} {
		clk.Advance(time.Second)
		if err := set(t, e, Command{Namespace: "acme", Table: "orders", Key: []byte(k), Value: []byte("v")}); err != nil {
			require.ErrorIs(t, err, ErrReadOnly)
			refused++
		}
	}
	require.Positive(t, refused)
	require.Less(t, refused, 6)
	require.NoError(t, e.SetTableReadOnly(ctx, "acme", "orders", AllShards, false))
	require.NoError(t, e.SetTableLimits(ctx, "acme", "orders", TableLimits{WriteQPS: ptr(0.0)}))
	for range 5 {
		require.NoError(t, set(t, e, orders), "no limit, no read-only shard")
	}
}

// DropTable refuses the default table and tables in use, drops a table
// with its databases, and the drop survives a reopen; a table made again
// under the name is empty.
func TestDropTable(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	require.ErrorIs(t, e.DropTable(ctx, DefaultNamespace, DefaultTable), ErrTableInUse)
	_, err := e.CreateDatabase(ctx, "", "", 2)
	require.NoError(t, err)
	require.ErrorIs(t, e.DropTable(ctx, DefaultNamespace, "default@2"), ErrTableInUse, "the default table's database")
	require.ErrorIs(t, e.DropTable(ctx, "acme", "nope"), ErrNoTable)
	require.ErrorIs(t, e.DropTable(ctx, "../x", "y"), ErrInvalid)

	require.NoError(t, e.CreateTable(ctx, "acme", "t", TableOptions{Shards: 2}))
	_, err = e.CreateDatabase(ctx, "acme", "t", 3)
	require.NoError(t, err)
	require.NoError(t, set(t, e, Command{Namespace: "acme", Table: "t", Key: []byte("k"), Value: []byte("old")}))
	require.NoError(t, set(t, e, Command{Namespace: "acme", Table: "t@3", Key: []byte("k"), Value: []byte("old3")}))
	release := e.UseTable("acme", "t")
	require.ErrorIs(t, e.DropTable(ctx, "acme", "t"), ErrTableInUse)
	require.ErrorIs(t, e.DropTable(ctx, "acme", "t@3"), ErrTableInUse)
	release()
	release() // once only
	require.NoError(t, e.DropTable(ctx, "acme", "t"))
	require.False(t, e.HasTable("acme", "t"))
	require.False(t, e.HasTable("acme", "t@3"), "its databases go with it")
	_, err = e.Execute(ctx, Command{Namespace: "acme", Table: "t", Kind: KindGet, Key: []byte("k")})
	require.ErrorIs(t, err, ErrNoTable)
	_, err = os.Stat(filepath.Join(dir, "acme", "t"))
	require.ErrorIs(t, err, os.ErrNotExist, "the files are removed")

	// Made again: empty, in a directory of its own.
	require.NoError(t, e.CreateTable(ctx, "acme", "t", TableOptions{Shards: 2}))
	_, found := get(t, e, Command{Namespace: "acme", Table: "t", Key: []byte("k")})
	require.False(t, found)
	require.NoError(t, e.DropTable(ctx, "acme", "t"))
	require.NoError(t, e.Close())

	e = openEngine(t, dir, clk)
	defer e.Close()
	require.False(t, e.HasTable("acme", "t"))
	require.True(t, e.HasTable("", "default@2"))
	require.NoError(t, e.CreateTable(ctx, "acme", "t", TableOptions{Shards: 2}))
	_, found = get(t, e, Command{Namespace: "acme", Table: "t", Key: []byte("k")})
	require.False(t, found, "a dropped table's log is never found again")
}

// A crash at any point of a drop leaves the table whole or gone: the
// states a crash can leave on disk, opened.
func TestDropTableCrash(t *testing.T) {
	for _, tc := range []struct {
		name string
		// catalogDropped: the catalog no longer lists the table;
		// partial: one shard's directory was removed already.
		catalogDropped, partial bool
	}{
		{name: "intent written, catalog not"},
		{name: "catalog written, nothing removed", catalogDropped: true},
		{name: "catalog written, removal half done", catalogDropped: true, partial: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := testclock.New(time.Unix(1_764_460_800, 0))
			dir := t.TempDir()
			ctx := t.Context()
			e := openEngine(t, dir, clk)
			require.NoError(t, e.CreateTable(ctx, "acme", "t", TableOptions{Shards: 2}))
			for _, k := range []string{"a", "b", "c", "d"} {
				require.NoError(t, set(t, e, Command{Namespace: "acme", Table: "t", Key: []byte(k), Value: []byte("v" + k)}))
			}
			require.NoError(t, e.Close())

			// What DropTable writes, cut where the crash came.
			b, err := json.Marshal(dropsState{Removing: []string{"acme/t"}, Retired: []string{"acme/t"}})
			require.NoError(t, err)
			require.NoError(t, os.WriteFile(filepath.Join(dir, dropsFile), b, 0o644))
			if tc.catalogDropped {
				var cat []catalogEntry
				b, err := os.ReadFile(filepath.Join(dir, catalogFile))
				require.NoError(t, err)
				require.NoError(t, json.Unmarshal(b, &cat))
				cat = slices.DeleteFunc(cat, func(c catalogEntry) bool { return c.Namespace == "acme" })
				b, err = json.Marshal(cat)
				require.NoError(t, err)
				require.NoError(t, os.WriteFile(filepath.Join(dir, catalogFile), b, 0o644))
			}
			if tc.partial {
				require.NoError(t, os.RemoveAll(filepath.Join(dir, "acme", "t", "shard-0001")))
			}

			e = openEngine(t, dir, clk)
			defer e.Close()
			var d dropsState
			b, err = os.ReadFile(filepath.Join(dir, dropsFile))
			require.NoError(t, err)
			require.NoError(t, json.Unmarshal(b, &d))
			require.Empty(t, d.Removing, "nothing left to remove")
			if !tc.catalogDropped {
				require.True(t, e.HasTable("acme", "t"), "the drop never happened: whole")
				for _, k := range []string{"a", "b", "c", "d"} {
					v, found := get(t, e, Command{Namespace: "acme", Table: "t", Key: []byte(k)})
					require.True(t, found)
					require.Equal(t, "v"+k, v)
				}
				require.Empty(t, d.Retired)
				return
			}
			require.False(t, e.HasTable("acme", "t"), "gone")
			_, err = os.Stat(filepath.Join(dir, "acme", "t"))
			require.ErrorIs(t, err, os.ErrNotExist, "its files removed at open")
			require.Equal(t, []string{"acme/t"}, d.Retired)
			require.NoError(t, e.CreateTable(ctx, "acme", "t", TableOptions{Shards: 2}))
			for _, k := range []string{"a", "b", "c", "d"} {
				_, found := get(t, e, Command{Namespace: "acme", Table: "t", Key: []byte(k)})
				require.False(t, found, "a new table opens none of the old one's records")
			}
		})
	}
}

// A tenant's own limit replaces Options.TenantQPS for it, Disabled lifts
// any, 0 goes back to the default; the limits survive a reopen.
func TestTenantQPS(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	ctx := t.Context()
	open := func() *Engine {
		e, err := testOpen(ctx, Options{Dir: dir, Now: clk.Now, TenantQPS: 3})
		require.NoError(t, err)
		return e
	}
	e := open()
	// burst is how many commands of tenant pass in a row.
	burst := func(tenant string) int {
		clk.Advance(time.Minute)
		for n := range 20 {
			if err := set(t, e, Command{Tenant: tenant, Key: []byte("k"), Value: []byte("v")}); err != nil {
				require.ErrorIs(t, err, ErrTenantQPS)
				return n
			}
		}
		return 20
	}
	require.Equal(t, 3, burst("acme"), "the default")
	require.NoError(t, e.SetTenantQPS(ctx, "acme", 1))
	require.NoError(t, e.SetTenantQPS(ctx, "free", Disabled))
	require.Equal(t, 1, burst("acme"))
	require.Equal(t, 20, burst("free"))
	require.Equal(t, 3, burst("other"))
	q, own := e.TenantQPS("acme")
	require.Equal(t, 1.0, q)
	require.True(t, own)
	q, own = e.TenantQPS("other")
	require.Equal(t, 3.0, q)
	require.False(t, own)
	for _, bad := range []float64{-2, func() float64 { z := 0.0; return 1 / z }()} {
		require.ErrorIs(t, e.SetTenantQPS(ctx, "acme", bad), ErrInvalid)
	}
	require.ErrorIs(t, e.SetTenantQPS(ctx, "a/b", 1), ErrInvalid)
	require.NoError(t, e.Close())

	e = open()
	defer e.Close()
	require.Equal(t, map[string]float64{"acme": 1, "free": Disabled}, e.TenantLimits())
	require.Equal(t, 1, burst("acme"), "kept across a reopen")
	require.Equal(t, 20, burst("free"))
	require.NoError(t, e.SetTenantQPS(ctx, "acme", 0))
	require.Equal(t, 3, burst("acme"), "back to the default")
}

// Commands running while their table is dropped fail with ErrNoTable or
// ErrClosed, never worse, and the engine goes on.
func TestDropTableUnderLoad(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "acme", "t", TableOptions{Shards: 2}))
	done := make(chan error, 4)
	for w := range 4 {
		go func() {
			for i := 0; ; i++ {
				c := Command{Namespace: "acme", Table: "t", Kind: KindSet, Key: []byte{byte(w), byte(i)}, Value: []byte("v")}
				if w%2 == 1 {
					c.Kind, c.Value = KindGet, nil
				}
				if _, err := e.Execute(ctx, c); err != nil {
					if errors.Is(err, ErrNoTable) || errors.Is(err, ErrClosed) {
						done <- nil
					} else {
						done <- err
					}
					return
				}
			}
		}()
	}
	time.Sleep(20 * time.Millisecond)
	require.NoError(t, e.DropTable(ctx, "acme", "t"))
	for range 4 {
		require.NoError(t, <-done)
	}
	require.NoError(t, set(t, e, Command{Key: []byte("k"), Value: []byte("v")}), "the other tables serve on")
}
