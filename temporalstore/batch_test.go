package temporalstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// ExecuteBatch gives each command the result Execute would, in order:
// runs of plain SETs are written per shard as one record, the bad ones
// among them get their own errors and change nothing, and the commands
// between runs see the writes before them.
func TestExecuteBatchMatchesOneByOne(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "b", "ttl", TableOptions{DefaultTTL: time.Minute}))
	exec(t, e, Command{Kind: KindHSet, Key: b("h"), Args: bs("f", "v")})
	require.NoError(t, e.CreateTable(ctx, "b", "ro", TableOptions{Shards: 1}))
	require.NoError(t, e.SetReadOnly("b", "ro", 0, true))

	set := func(k, v string) Command { return Command{Kind: KindSet, Key: b(k), Value: b(v)} }
	cmds := []Command{
		set("a", "1"), set("b", "2"), set("a", "3"), // a run: a ends as 3
		{Kind: KindGet, Key: b("a")}, // sees it
		set("h", "s"),                // a SET replaces a hash
		{Kind: KindSet, Key: b("c"), Value: b("x"), Cond: IfAbsent},
		set("", "empty key"), set("d", "4"),
		{Namespace: "b", Table: "ro", Kind: KindSet, Key: b("ro"), Value: b("refused")},
		{Kind: KindSet, Key: b("n"), Value: b("v"), TTL: -time.Second},
		{Namespace: "b", Table: "ttl", Kind: KindSet, Key: b("t"), Value: b("default ttl")},
		{Namespace: "b", Table: "nope", Kind: KindSet, Key: b("t"), Value: b("v")},
		{Kind: KindType, Key: b("h")},
	}
	rs, errs := e.ExecuteBatch(ctx, cmds)
	require.Len(t, rs, len(cmds))
	require.Len(t, errs, len(cmds))
	wantErrs := []error{nil, nil, nil, nil, nil, nil, ErrInvalid, nil, ErrReadOnly, ErrInvalid, nil, ErrNoTable, nil}
	checkErrs := func(errs []error) {
		t.Helper()
		for i, want := range wantErrs {
			if want == nil {
				require.NoError(t, errs[i], "command %d", i)
			} else {
				require.ErrorIs(t, errs[i], want, "command %d", i)
			}
		}
	}
	checkErrs(errs)
	require.Equal(t, "3", string(rs[3].Value))
	require.True(t, rs[5].Applied)
	require.Equal(t, "string", string(rs[12].Value))
	for k, v := range map[string]string{"a": "3", "b": "2", "h": "s", "c": "x", "d": "4"} {
		got, ok := get(t, e, Command{Key: b(k)})
		require.True(t, ok, k)
		require.Equal(t, v, got, k)
	}
	_, ok := get(t, e, Command{Key: b("n")})
	require.False(t, ok)
	_, ok = get(t, e, Command{Namespace: "b", Table: "ro", Key: b("ro")})
	require.False(t, ok)
	pttl := exec(t, e, Command{Namespace: "b", Table: "ttl", Kind: KindPTTL, Key: b("t")})
	require.Equal(t, time.Minute.Milliseconds(), pttl.Int)

	// ExecuteBatchErrors gives the same errors, after those errs held.
	kept := errors.New("kept")
	again := e.ExecuteBatchErrors(ctx, cmds, []error{kept})
	require.Len(t, again, len(cmds)+1)
	require.Equal(t, kept, again[0])
	checkErrs(again[1:])
	got, _ := get(t, e, Command{Key: b("a")})
	require.Equal(t, "3", got)

	// One record per shard for a run of SETs, and every one survives a
	// reopen.
	before := logRecords(t, e)
	var run []Command
	for i := range 100 {
		run = append(run, set(fmt.Sprint("k", i), fmt.Sprint(i)))
	}
	_, errs = e.ExecuteBatch(ctx, run)
	for _, err := range errs {
		require.NoError(t, err)
	}
	require.Equal(t, uint64(DefaultShards), logRecords(t, e)-before)
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	defer e.Close()
	for i := range 100 {
		got, ok := get(t, e, Command{Key: fmt.Append(nil, "k", i)})
		require.True(t, ok)
		require.Equal(t, fmt.Sprint(i), got)
	}
}

func logRecords(t *testing.T, e *Engine) (n uint64) {
	t.Helper()
	stats, err := e.Stats()
	require.NoError(t, err)
	for _, s := range stats {
		if s.Namespace == DefaultNamespace && s.Table == DefaultTable {
			n += s.LogRecords
		}
	}
	return n
}
