// Package kindcases is a sequence of commands that runs every kind of the
// engine, its errors included, for the surfaces' tests: run against a
// fresh default table, in order, it is deterministic (random kinds draw
// from single-member sets), so two engines on the same clock give the
// same responses.
package kindcases

import (
	"math"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

func b(s string) []byte { return []byte(s) }

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = b(s)
	}
	return out
}

// Steps returns the sequence; at is the clock's time, for absolute expiry
// and row event times.
func Steps(at time.Time) []ts.Command {
	return []ts.Command{
		// Strings and keys.
		{Kind: ts.KindSet, Key: b("s"), Value: b("v1")},
		{Kind: ts.KindGet, Key: b("s")},
		{Kind: ts.KindGet, Key: b("missing")},
		{Kind: ts.KindSet, Key: b("s"), Value: b("v2"), ReturnOld: true, Cond: ts.IfPresent},
		{Kind: ts.KindSet, Key: b("s"), Value: b("v3"), Cond: ts.IfAbsent},
		{Kind: ts.KindSet, Key: b("empty"), Value: []byte{}},
		{Kind: ts.KindGet, Key: b("empty")},
		{Kind: ts.KindSet, Key: b("bin"), Value: []byte{0, 255, 128, 10}},
		{Kind: ts.KindGet, Key: b("bin")},
		{Kind: ts.KindSet, Key: []byte{0xff, 0xfe, 'k'}, Value: b("non-utf8 key")},
		{Kind: ts.KindGet, Key: []byte{0xff, 0xfe, 'k'}},
		{Kind: ts.KindSet, Key: b("ttl"), Value: b("x"), TTL: 90 * time.Second},
		{Kind: ts.KindPTTL, Key: b("ttl")},
		{Kind: ts.KindExpireTime, Key: b("ttl")},
		{Kind: ts.KindPersist, Key: b("ttl")},
		{Kind: ts.KindExpire, Key: b("ttl"), TTL: time.Minute},
		{Kind: ts.KindExpire, Key: b("ttl"), ExpireAt: at.Add(time.Hour)},
		{Kind: ts.KindPTTL, Key: b("missing")},
		{Kind: ts.KindIncrBy, Key: b("n"), Delta: 41},
		{Kind: ts.KindIncrBy, Key: b("n"), Delta: math.MaxInt64},
		{Kind: ts.KindIncrBy, Key: b("s"), Delta: 1},
		{Kind: ts.KindIncrByFloat, Key: b("f"), Float: 2.5},
		{Kind: ts.KindIncrByFloat, Key: b("s"), Float: 1},
		{Kind: ts.KindAppend, Key: b("s"), Value: b("-tail")},
		{Kind: ts.KindStrLen, Key: b("s")},
		{Kind: ts.KindGetRange, Key: b("s"), Start: 1, End: -2},
		{Kind: ts.KindSetRange, Key: b("s"), Start: 2, Value: b("XY")},
		{Kind: ts.KindSetRange, Key: b("s"), Start: -1, Value: b("XY")},
		{Kind: ts.KindExists, Key: b("s")},
		{Kind: ts.KindType, Key: b("s")},
		{Kind: ts.KindType, Key: b("missing")},
		{Kind: ts.KindGetEx, Key: b("s"), TTL: time.Minute},
		{Kind: ts.KindGetEx, Key: b("s"), Persist: true},
		{Kind: ts.KindGetDel, Key: b("f")},
		{Kind: ts.KindMSet, Keys: bs("m1", "m2"), Args: bs("a", "b")},
		{Kind: ts.KindMGet, Keys: bs("m1", "missing", "m2")},
		{Kind: ts.KindExistsKeys, Keys: bs("m1", "m2", "missing", "m1")},
		{Kind: ts.KindRename, Key: b("{r}a"), Dest: b("{r}b")},
		{Kind: ts.KindSet, Key: b("{r}a"), Value: b("moved")},
		{Kind: ts.KindRename, Key: b("{r}a"), Dest: b("{r}b")},
		{Kind: ts.KindGet, Key: b("{r}b")},
		{Kind: ts.KindRename, Key: b("{r}b"), Dest: b("elsewhere-0")},
		{Kind: ts.KindRename, Key: b("{r}b"), Dest: b("elsewhere-1")},
		{Kind: ts.KindDeleteKeys, Keys: bs("m1", "m2", "missing")},
		{Kind: ts.KindDelete, Key: b("bin")},
		{Kind: ts.KindSet, Key: b(""), Value: b("x")},
		{Kind: ts.KindScan, Count: 100},

		// Hashes.
		{Kind: ts.KindHSet, Key: b("h"), Args: bs("f1", "1", "f2", "two")},
		{Kind: ts.KindHSetNX, Key: b("h"), Args: bs("f1"), Value: b("x")},
		{Kind: ts.KindHSetNX, Key: b("h"), Args: bs("f3"), Value: b("3")},
		{Kind: ts.KindHGet, Key: b("h"), Args: bs("f2")},
		{Kind: ts.KindHGet, Key: b("h"), Args: bs("nope")},
		{Kind: ts.KindHMGet, Key: b("h"), Args: bs("f1", "nope", "f3")},
		{Kind: ts.KindHGetAll, Key: b("h")},
		{Kind: ts.KindHIncrBy, Key: b("h"), Args: bs("f1"), Delta: 9},
		{Kind: ts.KindHIncrBy, Key: b("h"), Args: bs("f2"), Delta: 1},
		{Kind: ts.KindHIncrByFloat, Key: b("h"), Args: bs("f1"), Float: 0.25},
		{Kind: ts.KindHLen, Key: b("h")},
		{Kind: ts.KindHExists, Key: b("h"), Args: bs("f3")},
		{Kind: ts.KindHStrLen, Key: b("h"), Args: bs("f2")},
		{Kind: ts.KindHKeys, Key: b("h")},
		{Kind: ts.KindHVals, Key: b("h")},
		{Kind: ts.KindHScan, Key: b("h"), Count: 10},
		{Kind: ts.KindHDel, Key: b("h"), Args: bs("f3", "nope")},
		{Kind: ts.KindGet, Key: b("h")},

		// Sets.
		{Kind: ts.KindSAdd, Key: b("{s}a"), Args: bs("x", "y", "z")},
		{Kind: ts.KindSAdd, Key: b("{s}b"), Args: bs("y", "w")},
		{Kind: ts.KindSAdd, Key: b("one"), Args: bs("only")},
		{Kind: ts.KindSRem, Key: b("{s}a"), Args: bs("z", "nope")},
		{Kind: ts.KindSMembers, Key: b("{s}a")},
		{Kind: ts.KindSMembers, Key: b("missing")},
		{Kind: ts.KindSIsMember, Key: b("{s}a"), Args: bs("x")},
		{Kind: ts.KindSMIsMember, Key: b("{s}a"), Args: bs("x", "nope", "y")},
		{Kind: ts.KindSCard, Key: b("{s}a")},
		{Kind: ts.KindSRandMember, Key: b("one")},
		{Kind: ts.KindSRandMember, Key: b("one"), Count: 3, HasCount: true},
		{Kind: ts.KindSScan, Key: b("{s}a"), Count: 10},
		{Kind: ts.KindSInter, Keys: bs("{s}a", "{s}b")},
		{Kind: ts.KindSUnion, Keys: bs("{s}a", "{s}b")},
		{Kind: ts.KindSDiff, Keys: bs("{s}a", "{s}b")},
		{Kind: ts.KindSPop, Key: b("one")},
		{Kind: ts.KindSPop, Key: b("one")},
		{Kind: ts.KindSAdd, Key: b("one"), Args: bs("again")},
		{Kind: ts.KindSPop, Key: b("one"), Count: 5, HasCount: true},
		{Kind: ts.KindSPop, Key: b("missing"), Count: 5, HasCount: true},

		// Sorted sets.
		{Kind: ts.KindZAdd, Key: b("z"), Args: bs("a", "b", "c", "d"), Scores: []float64{1, 2, 3, math.Inf(1)}},
		{Kind: ts.KindZAdd, Key: b("z"), Args: bs("a"), Scores: []float64{5}, ZAdd: ts.ZAddFlags{Incr: true}},
		{Kind: ts.KindZAdd, Key: b("z"), Args: bs("a"), Scores: []float64{5}, ZAdd: ts.ZAddFlags{Incr: true, NX: true}},
		{Kind: ts.KindZAdd, Key: b("z"), Args: bs("b", "e"), Scores: []float64{2.5, -1}, ZAdd: ts.ZAddFlags{CH: true}},
		{Kind: ts.KindZRange, Key: b("z"), Range: ts.ZRange{Start: 0, Stop: -1}},
		{Kind: ts.KindZRange, Key: b("z"), Range: ts.ZRange{Start: 0, Stop: -1, Rev: true, WithScores: true}},
		{Kind: ts.KindZRange, Key: b("z"), Range: ts.ZRange{By: ts.ByScore, Min: ts.ScoreBound{Value: 1, Excl: true}, Max: ts.ScoreBound{Value: math.Inf(1)}, HasLimit: true, Offset: 1, Limit: 2, WithScores: true}},
		{Kind: ts.KindZRange, Key: b("z"), Range: ts.ZRange{By: ts.ByLex, LexMin: ts.LexBound{Inf: -1}, LexMax: ts.LexBound{Value: b("c"), Excl: true}}},
		{Kind: ts.KindZRange, Key: b("missing"), Range: ts.ZRange{Start: 0, Stop: -1, WithScores: true}},
		{Kind: ts.KindZCount, Key: b("z"), Range: ts.ZRange{By: ts.ByScore, Min: ts.ScoreBound{Value: math.Inf(-1)}, Max: ts.ScoreBound{Value: 3}}},
		{Kind: ts.KindZRank, Key: b("z"), Args: bs("c")},
		{Kind: ts.KindZRevRank, Key: b("z"), Args: bs("c")},
		{Kind: ts.KindZRank, Key: b("z"), Args: bs("nope")},
		{Kind: ts.KindZScore, Key: b("z"), Args: bs("b")},
		{Kind: ts.KindZScore, Key: b("z"), Args: bs("d")},
		{Kind: ts.KindZScore, Key: b("z"), Args: bs("nope")},
		{Kind: ts.KindZMScore, Key: b("z"), Args: bs("a", "nope", "e")},
		{Kind: ts.KindZIncrBy, Key: b("z"), Args: bs("e"), Float: 0.5},
		{Kind: ts.KindZCard, Key: b("z")},
		{Kind: ts.KindZScan, Key: b("z"), Count: 10},
		{Kind: ts.KindZPopMin, Key: b("z")},
		{Kind: ts.KindZPopMax, Key: b("z"), Count: 2, HasCount: true},
		{Kind: ts.KindZRem, Key: b("z"), Args: bs("c", "nope")},
		{Kind: ts.KindZRemRange, Key: b("z"), Range: ts.ZRange{Start: 0, Stop: 0}},
		{Kind: ts.KindZAdd, Key: b("z"), Args: bs("a", "b"), Scores: []float64{1}},

		// Lists.
		{Kind: ts.KindRPush, Key: b("{l}a"), Args: bs("1", "2", "3", "2")},
		{Kind: ts.KindLPush, Key: b("{l}a"), Args: bs("0")},
		{Kind: ts.KindLRange, Key: b("{l}a"), Start: 0, End: -1},
		{Kind: ts.KindLLen, Key: b("{l}a")},
		{Kind: ts.KindLIndex, Key: b("{l}a"), Start: -1},
		{Kind: ts.KindLIndex, Key: b("{l}a"), Start: 99},
		{Kind: ts.KindLSet, Key: b("{l}a"), Start: 1, Value: b("one")},
		{Kind: ts.KindLSet, Key: b("{l}a"), Start: 99, Value: b("x")},
		{Kind: ts.KindLSet, Key: b("missing"), Start: 0, Value: b("x")},
		{Kind: ts.KindLPos, Key: b("{l}a"), Value: b("2")},
		{Kind: ts.KindLPos, Key: b("{l}a"), Value: b("2"), Count: 0, HasCount: true},
		{Kind: ts.KindLPos, Key: b("{l}a"), Value: b("nope")},
		{Kind: ts.KindLInsert, Key: b("{l}a"), Args: bs("3"), Value: b("2.5"), Before: true},
		{Kind: ts.KindLRem, Key: b("{l}a"), Count: -1, Value: b("2")},
		{Kind: ts.KindLMove, Key: b("{l}a"), Dest: b("{l}b"), FromLeft: true, ToLeft: false},
		{Kind: ts.KindLPop, Key: b("{l}a")},
		{Kind: ts.KindRPop, Key: b("{l}a"), Count: 2, HasCount: true},
		{Kind: ts.KindLPop, Key: b("missing"), Count: 2, HasCount: true},
		{Kind: ts.KindLTrim, Key: b("{l}b"), Start: 0, End: 0},
		{Kind: ts.KindLRange, Key: b("{l}b"), Start: 0, End: -1},
		{Kind: ts.KindLPush, Key: b("s"), Args: bs("x")},

		// Feast rows.
		{Kind: ts.KindRowWrite, Key: b("row:1"), Args: bs("clicks", "3"), EventTime: at},
		{Kind: ts.KindRowWrite, Key: b("row:1"), Args: bs("clicks", "2"), EventTime: at.Add(-time.Second)},
		{Kind: ts.KindRowWriteBatch, Rows: []ts.Row{
			{Key: b("row:1"), Args: bs("clicks", "5"), EventTime: at.Add(time.Second)},
			{Key: b("row:2"), Args: bs("clicks", "1"), EventTime: at},
			{Key: b("row:1"), Args: bs("clicks", "0"), EventTime: at.Add(-time.Hour)},
		}},
		{Kind: ts.KindHGetAll, Key: b("row:1")},

		// Feature series.
		{Kind: ts.KindFAppend, Key: b("f"), Points: []ts.Point{{TS: 30, Value: b("3")}, {TS: 10, Value: b("1")}, {TS: 20, Value: []byte{}}}},
		{Kind: ts.KindFAppend, Key: b("f"), Policy: ts.PolicyInsertIfAbsent, Points: []ts.Point{{TS: 10, Value: b("no")}, {TS: 40, Value: b("-4")}}},
		{Kind: ts.KindFAppend, Key: b("f"), Policy: ts.PolicyReplaceExisting, Points: []ts.Point{{TS: 50, Value: b("no")}}},
		{Kind: ts.KindFAppend, Key: b("f"), Policy: ts.PolicyBlock, Points: []ts.Point{{TS: 60, Value: b("x")}}},
		{Kind: ts.KindFAppend, Key: b("s"), Points: []ts.Point{{TS: 1, Value: b("x")}}},
		{Kind: ts.KindFAppend, Key: b("aged"), Points: []ts.Point{{TS: 1, Value: b("x")}, {TS: at.UnixMilli(), Value: b("y")}}, MaxAge: time.Minute},
		{Kind: ts.KindFQuery, Key: b("aged"), Start: 0, End: at.UnixMilli()},
		{Kind: ts.KindFQuery, Key: b("f"), Start: 0, End: 100},
		{Kind: ts.KindFQuery, Key: b("f"), Start: 15, End: 100, Count: 2, HasCount: true},
		{Kind: ts.KindFQuery, Key: b("missing"), Start: 0, End: 100},
		{Kind: ts.KindFAgg, Key: b("f"), Start: 0, End: 100, Aggregator: "sum"},
		{Kind: ts.KindFAgg, Key: b("f"), Start: 0, End: 100, Aggregator: "median"},
		{Kind: ts.KindFAgg, Key: b("f"), Start: 0, End: 100, Aggregator: "maxf"},
		{Kind: ts.KindFAgg, Key: b("f"), Start: 0, End: 100, Aggregators: []string{"avgf", "p50", "distinct", "top:2", "sum", "decay:1000"}},
		{Kind: ts.KindFAgg, Key: b("missing"), Start: 0, End: 100, Aggregators: []string{"top:2", "p99"}},
		{Kind: ts.KindFAppend, Key: b("r"), Points: []ts.Point{{TS: 1, Value: ts.EncodeRow(1, 2, 3, 4)}, {TS: 2, Value: ts.EncodeRow(5, 2, 7, 8)}}},
		{Kind: ts.KindFQueryFiltered, Key: b("r"), Start: 0, End: 10, Filters: []ts.Filter{{Field: "gid", Op: ts.FilterGreater, Value: 1}, {Field: "action_type", Op: ts.FilterEqual, Value: 2}}},
		{Kind: ts.KindFReplace, Key: b("f"), Start: 10, End: 20, Points: []ts.Point{{TS: 90, Value: b("9")}}},
		{Kind: ts.KindFQuery, Key: b("f"), Start: 0, End: 100},
		{Kind: ts.KindFDelete, Key: b("r")},
		{Kind: ts.KindFDelete, Key: b("r")},

		// Sequences.
		{Kind: ts.KindSeqAdd, Key: b("q"), SeqRows: []ts.SeqRow{{TimestampMs: 2, GID: 9, ActionType: 1, Duration: 30, AuthorID: 4}, {TimestampMs: 1, GID: 8, ActionType: 2, Duration: 10, AuthorID: 4}}},
		{Kind: ts.KindSeqAdd, Key: b("s"), SeqRows: []ts.SeqRow{{TimestampMs: 1}}},
		{Kind: ts.KindSeqQuery, Key: b("q"), End: 10, Count: 10},
		{Kind: ts.KindSeqQuery, Key: b("q"), End: 10, Count: 10, Filters: []ts.Filter{{Field: "duration", Op: ts.FilterLess, Value: 20}}},
		{Kind: ts.KindSeqQuery, Key: b("q"), End: 10},
		{Kind: ts.KindSeqBatchQuery, SeqQueries: []ts.SeqQuery{{Key: b("q"), Start: 2, End: 2, Count: 1}, {Key: b("nobody"), End: 5, Count: 1}}},
		{Kind: ts.KindSeqBatchQuery, SeqQueries: []ts.SeqQuery{{Key: b("q"), End: 5}}},

		// Control state.
		{Kind: ts.KindCIncr, Key: b("cs"), At: 1500, Delta: 2, PrecisionMs: 1000},
		{Kind: ts.KindCIncr, Key: b("cs"), At: 3000, Delta: 5, TTL: time.Hour},
		{Kind: ts.KindCIncr, Key: b("s"), At: 1, Delta: 1},
		{Kind: ts.KindCChange, Key: b("cs"), At: 1500, Value: b("v1"), PrecisionMs: 1000},
		{Kind: ts.KindCCount, Key: b("cs"), Start: 0, End: 5000},
		{Kind: ts.KindCQuery, Key: b("cs"), Start: 0, End: 5000, Aggregator: "max"},
		{Kind: ts.KindCQuery, Key: b("cs"), Start: 0, End: 5000, Aggregator: "change"},
		{Kind: ts.KindCQuery, Key: b("cs"), Start: 0, End: 5000, Aggregator: "p50"},
		{Kind: ts.KindCDetail, Key: b("cs"), Start: 0, End: 5000},
		{Kind: ts.KindCSetAndGet, Family: "h", Key: b("u"), At: 100, Delta: 4, Start: 0, End: 1000, Aggregator: "sum", RequestID: "id-1"},
		{Kind: ts.KindCSetAndGet, Family: "h", Key: b("u"), At: 100, Delta: 4, Start: 0, End: 1000, Aggregator: "sum", RequestID: "id-1"},
		{Kind: ts.KindCSetAndGet, Family: "nope", Key: b("u"), At: 100, Delta: 4},
		{Kind: ts.KindCFamilyQuery, Family: "h", Key: b("u"), Start: 0, End: 1000, Aggregator: "events"},
		{Kind: ts.KindCSelect, Key: b("sel"), Value: b("late"), At: 20},
		{Kind: ts.KindCSelect, Key: b("sel"), Value: b("early"), At: 10},
		{Kind: ts.KindCSelection, Key: b("sel")},
		{Kind: ts.KindCSelection, Key: b("missing")},
		{Kind: ts.KindCTake, Key: b("quota"), At: 10_000, Delta: 2, Limit: 2, Window: time.Second},
		{Kind: ts.KindCTake, Key: b("quota"), At: 10_500, Delta: 1, Limit: 2, Window: time.Second},
		{Kind: ts.KindCTake, Key: b("quota"), Delta: 1, Limit: 2},
		{Kind: ts.KindCPace, Key: b("pace"), Limit: 10, Window: time.Second},
		{Kind: ts.KindCPace, Key: b("pace"), Limit: 10, Window: time.Second},
		{Kind: ts.KindCPace, Key: b("pace"), Limit: 10, Window: time.Second, Count: 3, HasCount: true},
		{Kind: ts.KindCPace, Key: b("pace")},
		{Kind: ts.KindCManager, Key: b("u")},
		{Kind: ts.KindCManager, Key: b("u"), Count: ts.ManagerFieldList},
		{Kind: ts.KindCManager, Key: b("u"), Count: ts.ManagerQuery, Args: bs("100", "101")},
		{Kind: ts.KindCManager, Key: b("u"), Count: ts.ManagerQuery, Args: bs("x")},
		{Kind: ts.KindCDebug, Key: b("cs"), Start: 0, End: 5000},
		{Kind: ts.KindScan, Count: 1000},
	}
}
