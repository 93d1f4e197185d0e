package temporalstore

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
)

func openEngine(t *testing.T, dir string, clk *testclock.Clock) *Engine {
	t.Helper()
	e, err := testOpen(t.Context(), Options{Dir: dir, Now: clk.Now})
	require.NoError(t, err)
	return e
}

func get(t *testing.T, e *Engine, c Command) (string, bool) {
	t.Helper()
	c.Kind = KindGet
	r, err := e.Execute(t.Context(), c)
	require.NoError(t, err)
	// AppendGet, GET's own path, agrees, and appends after what dst holds.
	v, found, err := e.AppendGet(t.Context(), "", c.Namespace, c.Table, c.Key, []byte("dst:"))
	require.NoError(t, err)
	require.Equal(t, r.Found, found)
	require.Equal(t, "dst:"+string(r.Value), string(v))
	// So does AppendGets, the path of a pipeline of GETs.
	reads := make([]GetRead, 1)
	out := e.AppendGets(t.Context(), "", c.Namespace, c.Table, [][]byte{c.Key}, []byte("dst:"), reads)
	require.NoError(t, reads[0].Err)
	require.Equal(t, r.Found, reads[0].Found)
	require.Equal(t, string(r.Value), string(out[reads[0].Start:reads[0].End]))
	return string(r.Value), r.Found
}

// AppendGet reads strings in place, and refuses what GET refuses: the
// same errors as Execute, and nothing appended.
func TestAppendGet(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	for _, c := range []Command{
		{Kind: KindSet, Key: []byte("s"), Value: []byte("value")},
		{Kind: KindSet, Key: []byte("empty"), Value: []byte{}},
		{Kind: KindSet, Key: []byte("ttl"), Value: []byte("brief"), TTL: time.Minute},
		{Kind: KindHSet, Key: []byte("h"), Args: [][]byte{[]byte("f"), []byte("v")}},
		{Kind: KindHSet, Key: []byte("hx"), Args: [][]byte{[]byte("f"), []byte("v")}},
		{Kind: KindExpire, Key: []byte("hx"), TTL: time.Minute},
	} {
		_, err := e.Execute(ctx, c)
		require.NoError(t, err)
	}
	cases := []struct {
		name, ns, table, key string
		advance              time.Duration
		want                 string
		found                bool
		err                  error
	}{
		{name: "string", key: "s", want: "value", found: true},
		{name: "empty string", key: "empty", want: "", found: true},
		{name: "absent", key: "nope"},
		{name: "live ttl", key: "ttl", want: "brief", found: true},
		{name: "collection", key: "h", err: ErrWrongType},
		{name: "empty key", key: "", err: ErrInvalid},
		{name: "no table", ns: "x", table: "y", key: "s", err: ErrNoTable},
		{name: "expired string", key: "ttl", advance: 2 * time.Minute},
		{name: "expired collection", key: "hx"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk.Advance(tc.advance)
			v, found, err := e.AppendGet(ctx, "", tc.ns, tc.table, []byte(tc.key), []byte("dst"))
			require.ErrorIs(t, err, tc.err)
			require.Equal(t, tc.found, found)
			require.Equal(t, "dst"+tc.want, string(v))
			r, err := e.Execute(ctx, Command{Kind: KindGet, Namespace: tc.ns, Table: tc.table, Key: []byte(tc.key)})
			require.ErrorIs(t, err, tc.err)
			require.Equal(t, tc.found, r.Found)
			require.Equal(t, tc.want, string(r.Value))
		})
	}
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	_, _, err := e.AppendGet(canceled, "", "", "", []byte("s"), nil)
	require.ErrorIs(t, err, context.Canceled)
	require.NoError(t, e.Close())
	_, _, err = e.AppendGet(ctx, "", "", "", []byte("s"), nil)
	require.ErrorIs(t, err, ErrClosed)
}

// AppendGets gives every key of a batch what AppendGet gives it alone:
// across shards, in batches longer than one lookup pass, for strings,
// absent and expired keys, collections (WRONGTYPE or, expired, absent) and
// empty keys; and every key the call's error when the call fails.
func TestAppendGetsAgreesWithAppendGet(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "n", "four", TableOptions{Shards: 4, Async: true}))
	var keys [][]byte
	for i := range 150 {
		k := fmt.Appendf(nil, "k%03d", i)
		keys = append(keys, k, fmt.Appendf(nil, "absent%03d", i))
		c := Command{Kind: KindSet, Namespace: "n", Table: "four", Key: k, Value: fmt.Appendf(nil, "value-%d", i)}
		switch i % 5 {
		case 1:
			c.TTL = time.Minute
		case 2:
			c = Command{Kind: KindHSet, Namespace: "n", Table: "four", Key: k, Args: [][]byte{[]byte("f"), []byte("v")}}
		case 3:
			c.Value = nil // an empty string
		}
		_, err := e.Execute(ctx, c)
		require.NoError(t, err)
		if i%7 == 0 {
			_, err := e.Execute(ctx, Command{Kind: KindExpire, Namespace: "n", Table: "four", Key: k, TTL: 30 * time.Second})
			require.NoError(t, err)
		}
	}
	keys = append(keys[:17], append([][]byte{{}}, keys[17:]...)...) // an empty key among them
	check := func(name string) {
		reads := make([]GetRead, len(keys))
		out := e.AppendGets(ctx, "", "n", "four", keys, []byte("dst"), reads)
		require.Equal(t, "dst", string(out[:3]))
		for i, k := range keys {
			v, found, err := e.AppendGet(ctx, "", "n", "four", k, nil)
			r := reads[i]
			if err != nil {
				require.ErrorIs(t, r.Err, errorsSentinel(err), "%s: key %q", name, k)
				continue
			}
			require.NoError(t, r.Err, "%s: key %q", name, k)
			require.Equal(t, found, r.Found, "%s: key %q", name, k)
			require.Equal(t, string(v), string(out[r.Start:r.End]), "%s: key %q", name, k)
		}
	}
	check("live")
	clk.Advance(45 * time.Second) // the 30 s expiries pass
	check("some expired")
	clk.Advance(time.Minute) // and the minute TTLs
	check("more expired")

	reads := make([]GetRead, 2)
	e.AppendGets(ctx, "", "x", "y", keys[:2], nil, reads)
	require.ErrorIs(t, reads[0].Err, ErrNoTable)
	require.ErrorIs(t, reads[1].Err, ErrNoTable)
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	e.AppendGets(canceled, "", "n", "four", keys[:2], nil, reads)
	require.ErrorIs(t, reads[0].Err, context.Canceled)
	require.NoError(t, e.Close())
	e.AppendGets(ctx, "", "n", "four", keys[:2], nil, reads)
	require.ErrorIs(t, reads[0].Err, ErrClosed)
	require.ErrorIs(t, reads[1].Err, ErrClosed)
}

// errorsSentinel is the engine sentinel err wraps, for ErrorIs.
func errorsSentinel(err error) error {
	for _, s := range []error{ErrWrongType, ErrInvalid, ErrNoTable, ErrClosed} {
		if errors.Is(err, s) {
			return s
		}
	}
	return err
}

// Writes and reads through Execute, in the default table and a created
// one, survive a reopen; a TTL expires on the engine's clock.
func TestExecuteAcrossReopen(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "ads", "caps", TableOptions{Shards: 3, Async: true}))
	for i := range 100 {
		_, err := e.Execute(ctx, Command{Kind: KindSet, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "v%d", i)})
		require.NoError(t, err)
		_, err = e.Execute(ctx, Command{Namespace: "ads", Table: "caps", Kind: KindSet, Key: fmt.Appendf(nil, "k%d", i), Value: fmt.Appendf(nil, "caps%d", i)})
		require.NoError(t, err)
	}
	_, err := e.Execute(ctx, Command{Kind: KindDelete, Key: []byte("k7")})
	require.NoError(t, err)
	_, err = e.Execute(ctx, Command{Kind: KindSet, Key: []byte("session"), Value: []byte("s"), TTL: time.Minute})
	require.NoError(t, err)
	require.NoError(t, e.Close())

	e = openEngine(t, dir, clk)
	defer e.Close()
	for i := range 100 {
		v, ok := get(t, e, Command{Key: fmt.Appendf(nil, "k%d", i)})
		if i == 7 {
			require.False(t, ok)
			continue
		}
		require.True(t, ok, i)
		require.Equal(t, fmt.Sprintf("v%d", i), v)
		v, ok = get(t, e, Command{Namespace: "ads", Table: "caps", Key: fmt.Appendf(nil, "k%d", i)})
		require.True(t, ok)
		require.Equal(t, fmt.Sprintf("caps%d", i), v)
	}
	_, ok := get(t, e, Command{Key: []byte("session")})
	require.True(t, ok)
	clk.Advance(2 * time.Minute)
	_, ok = get(t, e, Command{Key: []byte("session")})
	require.False(t, ok)
}

// Bad input gets a clear error and changes nothing.
func TestExecuteRefusesBadInput(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	cases := []struct {
		name string
		c    Command
		want error
	}{
		{"empty key", Command{Kind: KindSet, Value: []byte("v")}, ErrInvalid},
		{"negative ttl", Command{Kind: KindSet, Key: []byte("k"), TTL: -time.Second}, ErrInvalid},
		{"unknown kind", Command{Kind: "frobnicate", Key: []byte("k")}, ErrUnknownKind},
		{"no such table", Command{Table: "nope", Kind: KindSet, Key: []byte("k")}, ErrNoTable},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := e.Execute(ctx, tc.c)
			require.ErrorIs(t, err, tc.want)
			_, ok := get(t, e, Command{Key: []byte("k")})
			require.False(t, ok)
		})
	}
	require.ErrorIs(t, e.CreateTable(ctx, "bad/ns", "t", TableOptions{}), ErrInvalid)
	require.ErrorIs(t, e.CreateTable(ctx, "ns", "t", TableOptions{Shards: -1}), ErrInvalid)
	require.ErrorIs(t, e.CreateTable(ctx, "ns", "t", TableOptions{RangeLo: 10, RangeHi: 5}), ErrInvalid)
	require.ErrorIs(t, e.CreateTable(ctx, DefaultNamespace, DefaultTable, TableOptions{}), ErrTableExists)
	_, err := Open(ctx, Options{})
	require.ErrorIs(t, err, ErrInvalid)
	require.NoError(t, e.Close())
	_, err = e.Execute(ctx, Command{Kind: KindGet, Key: []byte("k")})
	require.ErrorIs(t, err, ErrClosed)
}

// Routing is XXH64 modulo the shard count: pinned here, because data on
// disk depends on it.
func TestShardOfIsStable(t *testing.T) {
	require.Equal(t, 2, ShardOf([]byte("user:42"), 4))
	require.Equal(t, 0, ShardOf([]byte("user:43"), 4))
	require.Equal(t, 0, ShardOf([]byte("anything"), 1))
}

// INCRBY and APPEND follow Redis: a missing key counts from 0 or the empty
// string, a non-integer or an overflow is refused and changes nothing, and
// the key's TTL is kept.
func TestSuggestedShards(t *testing.T) {
	for _, tc := range []struct{ procs, shards int }{
		{0, 1}, {1, 1}, {2, 1}, {3, 1}, {4, 2}, {7, 2}, {8, DefaultShards}, {64, DefaultShards},
	} {
		require.Equal(t, tc.shards, SuggestedShards(tc.procs), "%d processors", tc.procs)
		require.Zero(t, DefaultShards%tc.shards, "a divisor of DefaultShards")
		require.Equal(t, DefaultShards, PortableKeyGroups(tc.shards), "a default table's groups")
	}
	require.Equal(t, 3, PortableKeyGroups(3))
	require.Equal(t, 8, PortableKeyGroups(8))
}

// A table's key groups, not its shard count, decide which keys a two-key
// command or a transaction may take: one shard with four groups refuses what
// four shards refuse, and the groups survive a reopen. A catalog written
// before key groups existed opens with one group a shard.
func TestKeyGroups(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	for _, bad := range []TableOptions{{Shards: 4, KeyGroups: 6}, {KeyGroups: 2}, {Shards: 1, KeyGroups: -1}, {Shards: 1, KeyGroups: 5000}} {
		require.ErrorIs(t, e.CreateTable(ctx, "ads", "bad", bad), ErrInvalid, "%+v", bad)
	}
	require.NoError(t, e.CreateTable(ctx, "ads", "one", TableOptions{Shards: 1, KeyGroups: 4}))
	require.NoError(t, e.CreateTable(ctx, "ads", "plain", TableOptions{Shards: 1}))
	// Two keys in different groups of four.
	a, b := []byte("a"), []byte("b")
	for i := 0; ShardOf(a, 4) == ShardOf(b, 4); i++ {
		b = fmt.Appendf(nil, "b%d", i)
	}
	check := func(e *Engine) {
		g, err := e.KeyGroup("ads", "one", b)
		require.NoError(t, err)
		require.Equal(t, ShardOf(b, 4), g)
		_, err = e.Execute(ctx, Command{Namespace: "ads", Table: "one", Kind: KindSet, Key: a, Value: []byte("v")})
		require.NoError(t, err)
		_, err = e.Execute(ctx, Command{Namespace: "ads", Table: "one", Kind: KindRename, Key: a, Dest: b})
		require.ErrorIs(t, err, ErrCrossShard)
		v, ok := get(t, e, Command{Namespace: "ads", Table: "one", Key: a})
		require.True(t, ok, "a refused rename changes nothing")
		require.Equal(t, "v", v)
		_, err = e.Execute(ctx, Command{Namespace: "ads", Table: "one", Kind: KindRename, Key: a, Dest: []byte("{a}b")})
		require.NoError(t, err, "a common hash tag shares a group")
		// Without groups of its own a one-shard table takes any pair.
		_, err = e.Execute(ctx, Command{Namespace: "ads", Table: "plain", Kind: KindSet, Key: a, Value: []byte("v")})
		require.NoError(t, err)
		_, err = e.Execute(ctx, Command{Namespace: "ads", Table: "plain", Kind: KindRename, Key: a, Dest: b})
		require.NoError(t, err)
		_, err = e.Execute(ctx, Command{Namespace: "ads", Table: "plain", Kind: KindRename, Key: b, Dest: a})
		require.NoError(t, err)
	}
	check(e)
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	check(e)
	o, err := e.TableOptions("ads", "one")
	require.NoError(t, err)
	require.Equal(t, 1, o.Shards)
	require.Equal(t, 4, o.KeyGroups)
	_, err = e.TableOptions("ads", "missing")
	require.ErrorIs(t, err, ErrNoTable)
	require.NoError(t, e.Close())

	// The same catalog without the field: each table has a group a shard.
	name := filepath.Join(dir, catalogFile)
	raw, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Contains(t, string(raw), `"key_groups": 4`)
	old := regexp.MustCompile(`,?\s*"key_groups": [0-9]+`).ReplaceAll(raw, nil)
	require.NotContains(t, string(old), "key_groups")
	require.NoError(t, os.WriteFile(name, old, 0o644))
	e = openEngine(t, dir, clk)
	defer e.Close()
	_, err = e.Execute(ctx, Command{Namespace: "ads", Table: "one", Kind: KindRename, Key: []byte("{a}b"), Dest: b})
	require.NoError(t, err)
	g, err := e.KeyGroup("ads", "one", b)
	require.NoError(t, err)
	require.Zero(t, g)
}

func TestIncrByAndAppend(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, t.TempDir(), clk)
	defer e.Close()
	ctx := t.Context()
	exec := func(c Command) (Response, error) { return e.Execute(ctx, c) }

	r, err := exec(Command{Kind: KindIncrBy, Key: []byte("n"), Delta: 5})
	require.NoError(t, err)
	require.Equal(t, int64(5), r.Int)
	r, err = exec(Command{Kind: KindIncrBy, Key: []byte("n"), Delta: -7})
	require.NoError(t, err)
	require.Equal(t, int64(-2), r.Int)
	v, _ := get(t, e, Command{Key: []byte("n")})
	require.Equal(t, "-2", v)

	_, err = exec(Command{Kind: KindSet, Key: []byte("s"), Value: []byte("abc")})
	require.NoError(t, err)
	_, err = exec(Command{Kind: KindIncrBy, Key: []byte("s"), Delta: 1})
	require.ErrorIs(t, err, ErrNotInteger)
	v, _ = get(t, e, Command{Key: []byte("s")})
	require.Equal(t, "abc", v)

	_, err = exec(Command{Kind: KindSet, Key: []byte("max"), Value: []byte("9223372036854775807")})
	require.NoError(t, err)
	_, err = exec(Command{Kind: KindIncrBy, Key: []byte("max"), Delta: 1})
	require.ErrorIs(t, err, ErrOverflow)
	v, _ = get(t, e, Command{Key: []byte("max")})
	require.Equal(t, "9223372036854775807", v)

	r, err = exec(Command{Kind: KindAppend, Key: []byte("s"), Value: []byte("de")})
	require.NoError(t, err)
	require.Equal(t, int64(5), r.Int)
	r, err = exec(Command{Kind: KindAppend, Key: []byte("new"), Value: []byte("xy")})
	require.NoError(t, err)
	require.Equal(t, int64(2), r.Int)
	v, _ = get(t, e, Command{Key: []byte("s")})
	require.Equal(t, "abcde", v)

	_, err = exec(Command{Kind: KindSet, Key: []byte("ttl"), Value: []byte("1"), TTL: time.Minute})
	require.NoError(t, err)
	_, err = exec(Command{Kind: KindIncrBy, Key: []byte("ttl"), Delta: 1})
	require.NoError(t, err)
	clk.Advance(2 * time.Minute)
	_, ok := get(t, e, Command{Key: []byte("ttl")})
	require.False(t, ok, "INCRBY keeps the TTL")
}

// A table's DefaultTTL applies to writes that give no TTL; expiry is judged
// against the clock at read time after a replay, so a key live when written
// and still live is kept, and one whose time ran out while the engine was
// down is gone.
func TestDefaultTTLAndExpiryAcrossReplay(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "m", "ttl", TableOptions{Shards: 2, DefaultTTL: time.Minute}))
	c := func(kind Kind, key string) Command {
		return Command{Namespace: "m", Table: "ttl", Kind: kind, Key: []byte(key)}
	}
	set := c(KindSet, "a")
	set.Value = []byte("v")
	exec(t, e, set)
	require.Equal(t, int64(60_000), exec(t, e, c(KindPTTL, "a")).Int)
	long := c(KindSet, "b")
	long.Value, long.TTL = []byte("v"), time.Hour
	exec(t, e, long)
	exec(t, e, Command{Namespace: "m", Table: "ttl", Kind: KindMSet, Keys: bs("c", "d"), Args: bs("1", "2")})
	require.Equal(t, int64(60_000), exec(t, e, c(KindPTTL, "d")).Int)
	h := c(KindHSet, "h")
	h.Args = bs("f", "v")
	exec(t, e, h)
	exp := c(KindExpire, "h")
	exp.TTL = 30 * time.Second
	exec(t, e, exp)
	require.NoError(t, e.Close())

	clk.Advance(45 * time.Second)
	e = openEngine(t, dir, clk)
	require.Equal(t, int64(15_000), exec(t, e, c(KindPTTL, "a")).Int, "live at write time, still live")
	require.Equal(t, int64(-2), exec(t, e, c(KindPTTL, "h")).Int, "ran out while the engine was down")
	require.NoError(t, e.Close())
	clk.Advance(time.Minute)
	e = openEngine(t, dir, clk)
	defer e.Close()
	require.False(t, exec(t, e, c(KindGet, "a")).Found)
	require.True(t, exec(t, e, c(KindGet, "b")).Found)
	st, err := e.Stats()
	require.NoError(t, err)
	require.NotEmpty(t, st)
}

func TestBucketOfIsInTheRange(t *testing.T) {
	for i := range 1000 {
		k := fmt.Appendf(nil, "k%d", i)
		bkt := BucketOf(k, 100, 163)
		require.GreaterOrEqual(t, bkt, uint32(100))
		require.LessOrEqual(t, bkt, uint32(163))
	}
	require.Equal(t, BucketOf([]byte("{u}a"), 0, 1023), BucketOf([]byte("{u}b"), 0, 1023))
}

// Reads through AppendGet while writers overwrite the same keys (records
// coming and going from the recent buffer and the record cache) always
// see a value that key was given, whole: run under -race.
func TestAppendGetDuringOverwrites(t *testing.T) {
	// A small cache: the recent buffer holds 16 KiB, so most records are
	// pushed out to the cache, and many out of it, while being read.
	e, err := testOpen(t.Context(), Options{Dir: t.TempDir(), CacheBytes: 64 << 10})
	require.NoError(t, err)
	defer e.Close()
	ctx := t.Context()
	const keys, rounds = 64, 300
	var wg sync.WaitGroup
	for w := range 2 {
		wg.Go(func() {
			batch := make([]Command, 0, 16)
			for r := range rounds {
				for k := w; k < keys; k += 2 {
					batch = append(batch, Command{Kind: KindSet, Key: fmt.Appendf(nil, "k%d", k), Value: fmt.Appendf(nil, "k%d=%d", k, r)})
					if len(batch) == cap(batch) {
						_, errs := e.ExecuteBatch(ctx, batch)
						require.NoError(t, errs[0])
						batch = batch[:0]
					}
				}
			}
		})
	}
	for range 2 {
		wg.Go(func() {
			var dst []byte
			for i := range rounds * keys {
				k := fmt.Appendf(nil, "k%d", i%keys)
				var found bool
				var err error
				dst, found, err = e.AppendGet(ctx, "", "", "", k, dst[:0])
				require.NoError(t, err)
				if found {
					require.True(t, bytes.HasPrefix(dst, append(k, '=')), "%q holds %q", k, dst)
				}
			}
		})
	}
	wg.Wait()
}

// An async table fsyncs what it acknowledged every SyncInterval: a table
// with a short one has synced a write shortly after, one with a minute
// has not; the interval is kept across a restart, and one out of range
// is refused and creates nothing.
func TestSyncInterval(t *testing.T) {
	teststorage.SkipOnMem(t, "the disk log's periodic fsyncs")
	ctx := t.Context()
	dir := t.TempDir()
	// No maintenance rounds: nothing but the interval syncs the log.
	e, err := testOpen(ctx, Options{Dir: dir, MaintenanceInterval: -1})
	require.NoError(t, err)
	require.NoError(t, e.CreateTable(ctx, "n", "fast", TableOptions{Async: true, Shards: 1, SyncInterval: 5 * time.Millisecond}))
	require.NoError(t, e.CreateTable(ctx, "n", "slow", TableOptions{Async: true, Shards: 1, SyncInterval: time.Minute}))
	for _, bad := range []time.Duration{-time.Millisecond, MaxSyncInterval + time.Second} {
		err := e.CreateTable(ctx, "n", "bad", TableOptions{Async: true, SyncInterval: bad})
		require.ErrorIs(t, err, ErrInvalid, bad)
		_, err = e.TableOptions("n", "bad")
		require.Error(t, err, "a refused table does not exist")
	}
	fsyncs := func(table string) uint64 {
		st, err := e.Stats()
		require.NoError(t, err)
		for _, s := range st {
			if s.Namespace == "n" && s.Table == table {
				return s.LogFsyncs
			}
		}
		t.Fatalf("no shard of n/%s", table)
		return 0
	}
	before := map[string]uint64{"fast": fsyncs("fast"), "slow": fsyncs("slow")}
	for _, table := range []string{"fast", "slow"} {
		_, err := e.Execute(ctx, Command{Kind: KindSet, Namespace: "n", Table: table, Key: []byte("k"), Value: []byte("v")})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool { return fsyncs("fast") > before["fast"] }, 5*time.Second, 5*time.Millisecond)
	time.Sleep(100 * time.Millisecond)
	require.Equal(t, before["slow"], fsyncs("slow"), "a minute's interval has not synced yet")

	require.NoError(t, e.Close())
	e, err = testOpen(ctx, Options{Dir: dir})
	require.NoError(t, err)
	defer e.Close()
	o, err := e.TableOptions("n", "slow")
	require.NoError(t, err)
	require.Equal(t, time.Minute, o.SyncInterval)
	o, err = e.TableOptions("n", "fast")
	require.NoError(t, err)
	require.Equal(t, 5*time.Millisecond, o.SyncInterval)
	v, found := get(t, e, Command{Namespace: "n", Table: "slow", Key: []byte("k")})
	require.True(t, found)
	require.Equal(t, "v", v)
}

// testOpen is Open on the storage the tests run on (teststorage): a record
// cache of opts.CacheBytes unless Disabled, when opts gives none.
func testOpen(ctx context.Context, opts Options) (*Engine, error) {
	if opts.OpenLog == nil {
		opts.OpenLog = teststorage.OpenLog()
	}
	if opts.RecordCache == nil && opts.CacheBytes != Disabled {
		c, err := teststorage.NewCache(cmp.Or(opts.CacheBytes, DefaultCacheBytes))
		if err != nil {
			return nil, err
		}
		opts.RecordCache = c
	}
	return Open(ctx, opts)
}

func TestKeySlotMatchesRedis(t *testing.T) {
	rc := testredis.Start(t, "--cluster-enabled", "yes", "--cluster-config-file", filepath.Join(t.TempDir(), "nodes.conf"))
	keys := []string{"", "foo", "bar", "{user1000}.following", "{user1000}.followers", "foo{}{bar}", "foo{{bar}}zap",
		"foo{bar}{zap}", "{", "}", "{}", "a{b", "\x00\xff{\x80}", strings.Repeat("k", 1000)}
	rng := rand.New(rand.NewPCG(7, 7))
	for range 300 {
		b := make([]byte, rng.IntN(24))
		for i := range b {
			b[i] = "ab{}\x00\xff"[rng.IntN(6)]
		}
		keys = append(keys, string(b))
	}
	for _, k := range keys {
		want, err := rc.ClusterKeySlot(t.Context(), k).Result()
		require.NoError(t, err, "%q", k)
		require.Equal(t, int(want), KeySlot([]byte(k)), "%q", k)
	}
	require.Equal(t, 12182, KeySlot([]byte("foo")))
}

// A table routed by slot puts each slot range on one shard, as a Redis
// Cluster's masters would take them, takes multi-key commands within one
// slot only, and keeps its routing across a reopen.
func TestSlotRouting(t *testing.T) {
	o := TableOptions{Shards: 3, SlotRouting: true}.withDefaults()
	for _, tc := range []struct{ slot, shard int }{{0, 0}, {5461, 0}, {5462, 1}, {10922, 1}, {10923, 2}, {16383, 2}} {
		require.Equal(t, tc.shard, SlotShard(tc.slot, 3), "slot %d", tc.slot)
	}
	for i := range 1000 {
		k := fmt.Appendf(nil, "key:%d", i)
		require.Equal(t, SlotShard(KeySlot(k), 3), o.KeyShard(k))
		require.Equal(t, KeySlot(k), o.KeyGroup(k))
		require.Equal(t, o.KeyShard(k), o.KeyShard(fmt.Appendf(nil, "{%s}other", k)), "a hash tag keeps the shard")
	}
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "c", "slots", TableOptions{Shards: 3, SlotRouting: true}))
	// Two keys of different slots on one shard: a hash-routed table with
	// one key group per shard would take the pair, a slot-routed one not.
	a := []byte("a")
	var b []byte
	for i := 0; ; i++ {
		b = fmt.Appendf(nil, "b%d", i)
		if KeySlot(b) != KeySlot(a) && o.KeyShard(b) == o.KeyShard(a) {
			break
		}
	}
	check := func(e *Engine) {
		got, err := e.TableOptions("c", "slots")
		require.NoError(t, err)
		require.True(t, got.SlotRouting)
		_, err = e.Execute(ctx, Command{Namespace: "c", Table: "slots", Kind: KindSet, Key: a, Value: []byte("v")})
		require.NoError(t, err)
		_, err = e.Execute(ctx, Command{Namespace: "c", Table: "slots", Kind: KindRename, Key: a, Dest: b})
		require.ErrorIs(t, err, ErrCrossShard)
		g, err := e.KeyGroup("c", "slots", b)
		require.NoError(t, err)
		require.Equal(t, KeySlot(b), g)
		v, ok := get(t, e, Command{Namespace: "c", Table: "slots", Key: a})
		require.True(t, ok)
		require.Equal(t, "v", v)
	}
	check(e)
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	defer e.Close()
	check(e)
}
