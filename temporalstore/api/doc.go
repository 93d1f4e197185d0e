// Package api holds the values a TemporalStore engine takes and returns:
// a [Command] names a table, a [Kind] and its operands; a [Response]
// carries the reply; the errors below are what a command can fail with.
// It imports nothing of the engine (no storage, cache, log or metrics), so
// a program that only talks to a server links this package and the client.
//
// The kinds follow Redis's commands where one exists (KindSet is SET,
// KindZRange is ZRANGE with its BYSCORE, BYLEX, REV and LIMIT options) and
// TemporalStore's Rust implementation for the rest: feature series
// (KindFAppend, KindFQuery, KindFAgg), feature rows with event times
// (KindRowWrite), event sequences (KindSeqAdd, KindSeqQuery) and control
// state (KindCIncr, KindCTake). Each kind's constant documents which
// Command fields it reads and which Response fields it fills.
//
//	resp, err := engine.Execute(ctx, api.Command{
//		Kind: api.KindZAdd, Key: []byte("board"),
//		Args: [][]byte{[]byte("ann")}, Scores: []float64{42},
//	})
//
// Every error is a sentinel: match with errors.Is, on the engine's side
// and, through the client's mapping of status codes, on a remote one.
// [IsReadKind] says which kinds only read, which a client may retry.
//
// The parsers ([ParseScoreBound], [ParseLexBound], [ParseWritePolicy],
// [ParseFilterOp], [ParseInt]) read the textual forms Redis and the HTTP
// surface use, and refuse anything else.
package api
