// Package tsstore is matrixark's Store on the TemporalStore engine, so
// that context, pack audits and memories live in the server's durable,
// recovered storage beside everything else.
//
//	s, err := tsstore.Open(ctx, engine, tsstore.Options{})
//	ark := matrixark.New(s, matrixark.Options{})
//
// The records are strings of one single-shard table (namespace
// "matrixark", table "context", created durable when missing), so an Apply
// is one engine transaction (Engine.Atomic): its writes reach the log as
// one group that a crash keeps or drops whole, and it returns once they
// are durable. Key order, which the engine's hash index does not keep, is
// a sorted set of the keys (all of score 0, read by lex range) updated in
// the same transaction; a Scan pages through it and reads the values of
// each page with one MGET.
//
// ReadOpts.NoFill is not passed on: the engine has no read that skips its
// caches.
package tsstore
