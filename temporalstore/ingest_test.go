package temporalstore

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// A batch applies each record once: replayed whole or in part (as a
// source does after a crash or a failed batch), the records already
// applied are skipped, counters included. Refused records go to the
// dead-letter queue with their offset; the committed offset is where the
// source resumes, across a restart.
func TestIngestExactlyOnceWithDeadLetters(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	dir := t.TempDir()
	e := openEngine(t, dir, clk)
	ctx := t.Context()
	next, err := e.IngestOffset(ctx, "", "", "clicks", 3)
	require.NoError(t, err)
	require.Zero(t, next)

	rec := func(off int64, c Command) IngestRecord { return IngestRecord{Offset: off, Command: c} }
	batch := IngestBatch{Source: "clicks", Partition: 3, Records: []IngestRecord{
		rec(10, Command{Kind: KindCIncr, Key: b("user:1"), At: 1000, Delta: 1}),
		rec(11, Command{Kind: KindCIncr, Key: b("user:2"), At: 1000, Delta: 1}),
		rec(12, Command{Kind: KindFAppend, Key: b("ev:1"), Points: pts(1, "a")}),
		rec(13, Command{Kind: KindCIncr, Key: b("user:1"), At: 2000, Delta: 5}),
		rec(14, Command{Kind: KindFAppend, Key: b("ev:1"), Points: []Point{{TS: -1, Value: b("bad")}}}),
		rec(15, Command{Kind: KindGet, Key: b("user:1")}),
		rec(16, Command{Kind: KindSet, Key: b("s"), Value: b("v")}),
		rec(17, Command{Kind: KindIncrBy, Key: b("n"), Delta: 2}),
	}}
	res, err := e.Ingest(ctx, batch)
	require.NoError(t, err)
	require.Equal(t, []IngestStatus{IngestApplied, IngestApplied, IngestApplied, IngestApplied, IngestDeadLettered, IngestDeadLettered, IngestApplied, IngestApplied}, res.Statuses)
	require.ErrorIs(t, res.Errors[4], ErrInvalid)
	require.Equal(t, int64(17), res.Committed)

	count := func(k string) int64 {
		return exec(t, e, Command{Kind: KindCCount, Key: b(k), Start: 0, End: 10_000}).Int
	}
	state := func() string {
		n, _ := get(t, e, Command{Key: b("n")})
		return fmt.Sprintf("%d %d %d %s", count("user:1"), count("user:2"), len(exec(t, e, Command{Kind: KindFQuery, Key: b("ev:1"), End: 10}).Points), n)
	}
	require.Equal(t, "6 1 1 2", state())

	// The source replays the whole batch (it did not see the commit) and
	// then a part of it with a new record: nothing applies twice.
	res, err = e.Ingest(ctx, batch)
	require.NoError(t, err)
	for i, st := range res.Statuses {
		require.Equal(t, IngestDuplicate, st, "record %d", i)
	}
	res, err = e.Ingest(ctx, IngestBatch{Source: "clicks", Partition: 3, Records: []IngestRecord{
		rec(13, Command{Kind: KindCIncr, Key: b("user:1"), At: 2000, Delta: 5}),
		rec(18, Command{Kind: KindCIncr, Key: b("user:1"), At: 3000, Delta: 100}),
	}})
	require.NoError(t, err)
	require.Equal(t, []IngestStatus{IngestDuplicate, IngestApplied}, res.Statuses)
	require.Equal(t, "106 1 1 2", state())
	require.Equal(t, int64(18), res.Committed)
	// Replaying the first batch again does not move the resume point back.
	res, err = e.Ingest(ctx, batch)
	require.NoError(t, err)
	require.Equal(t, int64(18), res.Committed)

	// Another partition has its own ledger.
	res, err = e.Ingest(ctx, IngestBatch{Source: "clicks", Partition: 4, Records: []IngestRecord{
		rec(0, Command{Kind: KindCIncr, Key: b("user:2"), At: 1000, Delta: 1}),
	}})
	require.NoError(t, err)
	require.Equal(t, []IngestStatus{IngestApplied}, res.Statuses)
	require.Equal(t, "106 2 1 2", state())

	dl, err := e.DeadLetters(ctx, "", "", "clicks")
	require.NoError(t, err)
	require.Len(t, dl, 2, "a replay does not dead-letter again")
	require.Equal(t, int64(14), dl[0].Offset)
	require.Equal(t, KindFAppend, dl[0].Kind)
	require.Contains(t, dl[0].Error, "timestamp_ms")
	require.Equal(t, int64(15), dl[1].Offset)

	// Bad batches change nothing.
	_, err = e.Ingest(ctx, IngestBatch{Source: "bad source!", Records: batch.Records})
	require.ErrorIs(t, err, ErrIngest)
	_, err = e.Ingest(ctx, IngestBatch{Source: "clicks", Partition: 3, Records: []IngestRecord{rec(30, Command{Kind: KindSet, Key: b("x"), Value: b("1")}), rec(29, Command{Kind: KindSet, Key: b("y"), Value: b("1")})}})
	require.ErrorIs(t, err, ErrIngest)
	_, found := get(t, e, Command{Key: b("x")})
	require.False(t, found)

	// A failure that is not the record's fails the batch, with the
	// records before it applied and skipped on the retry.
	require.NoError(t, e.CreateTable(ctx, "ro", "t", TableOptions{Shards: 1}))
	require.NoError(t, e.SetReadOnly("ro", "t", 0, true))
	retry := IngestBatch{Source: "clicks", Partition: 3, Records: []IngestRecord{
		rec(19, Command{Kind: KindCIncr, Key: b("user:1"), At: 4000, Delta: 1000}),
		rec(20, Command{Namespace: "ro", Table: "t", Kind: KindSet, Key: b("k"), Value: b("v")}),
	}}
	_, err = e.Ingest(ctx, retry)
	require.ErrorIs(t, err, ErrReadOnly)
	require.True(t, errors.Is(err, ErrReadOnly))
	require.NoError(t, e.SetReadOnly("ro", "t", 0, false))
	res, err = e.Ingest(ctx, retry)
	require.NoError(t, err)
	require.Equal(t, []IngestStatus{IngestDuplicate, IngestApplied}, res.Statuses)
	require.Equal(t, "1106 2 1 2", state())

	// The handshake survives a restart.
	require.NoError(t, e.Close())
	e = openEngine(t, dir, clk)
	defer e.Close()
	next, err = e.IngestOffset(ctx, "", "", "clicks", 3)
	require.NoError(t, err)
	require.Equal(t, int64(21), next)
	res, err = e.Ingest(ctx, retry)
	require.NoError(t, err)
	require.Equal(t, []IngestStatus{IngestDuplicate, IngestDuplicate}, res.Statuses)
	require.Equal(t, "1106 2 1 2", state())
}
