// Package client runs engine commands, in process or over the HTTP
// command surface, behind one interface: Client takes api.Command values
// and returns api.Response values and the engine's errors (match them with
// errors.Is), whichever implementation runs them. It imports api and wire
// and nothing of the engine, so a program that only talks to a server
// links neither storage nor metrics.
//
// Local wraps an engine in the same process (a *temporalstore.Engine is an
// Executor; the engine's Command is api.Command). HTTP speaks
// to a server's /execute and /batch_execute (package httpapi): it encodes
// commands in the engine's own kinds, in MessagePack by default or in
// JSON, the encoding of TemporalStore's Rust implementation ("the
// original" in comments below); it keeps connections alive and reuses
// them, and sends a Batch as one request per run of commands addressed to
// the same table and tenant (at most HTTPOptions.MaxBatch each).
//
// # Retries
//
// HTTP retries only what is safe to retry. A read (api.IsReadKind;
// a batch of reads only) is retried on a transport error and on a 502, 503
// or 504 reply. A write is retried only when the request certainly did not
// reach the server: the connection could not be made (a dial error). A
// write whose connection broke after it was sent is not retried, since it
// may have been applied; the caller gets the error. Retries wait
// RetryBackoff, doubling, up to MaxRetries times, and stop when ctx ends.
//
// Every call honours ctx: its deadline and cancellation end the request.
// Both implementations are safe for concurrent use.
package client
