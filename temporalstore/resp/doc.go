// Package resp serves the engine over RESP, the Redis protocol: redis-cli,
// go-redis, redis-py and redis-benchmark talk to it as to a Redis server.
//
// # Protocol
//
// Requests are multibulk arrays of bulk strings or inline commands;
// pipelined requests are answered in order, and replies are flushed when
// the connection has no further request buffered. Replies are RESP2 until
// HELLO 3 switches the connection to RESP3 (maps, sets, doubles, nulls);
// HELLO 2 switches back. A malformed request gets "-ERR Protocol error"
// and the connection is closed, as Redis does.
//
// On Linux a plain TCP or Unix connection is read and written with raw
// system calls on its non-blocking socket (rawio_linux.go): the Go
// scheduler's bookkeeping around a blocking system call, and the thread
// handoffs it triggers when a loopback write runs long, cost a GET at
// pipeline 1 about a quarter of its throughput. TLS connections use the
// standard path.
//
// # Commands
//
// Every key-value kind of the engine is served under its Redis name with
// Redis's arguments and reply types; Commands lists them. A command the
// server does not implement gets "-ERR unknown command", never a fake
// success. Keys live in the engine's default table (Options.Namespace and
// Options.Table choose another); SELECT accepts database 0 only. COMMAND
// DOCS gives every command's group and summary (commanddocs.go), which
// redis-cli's HELP shows, the time-aware verbs' included.
//
// # Adding commands
//
// Another module mounts its verbs on the same listener through
// Options.Commands: each a Command with its arity, write flag, key
// positions and a Run that replies through Request.Reply, the writer the
// built-in verbs use. They get the built-ins' treatment (AUTH, read-only
// tokens, MULTI, COMMAND, commandstats, slowlog); a name already served is
// refused by New.
//
// # Statistics
//
// Every call is counted under its command with its server time (from the
// parsed request to the reply buffered; a pipelined run of SETs or GETs
// is timed as a whole and shared by its calls) in a latency histogram of
// power-of-two buckets from 1 µs. INFO commandstats and INFO latencystats
// show them as Redis does (cmdstat_<name>:calls,usec,usec_per_call,
// rejected_calls,failed_calls; latency_percentiles_usec_<name>:p50,p99,
// p99.9, here the upper bounds of the buckets), in INFO all and not in
// the default INFO; LATENCY HISTOGRAM [command ...] gives the histograms
// in Redis 7's shape; CONFIG RESETSTAT starts them and
// INFO stats' totals
// again from zero (refused to read-only tokens). Server.CommandStats and
// Server.Stats return them, and package respprom exports them to
// Prometheus. Counting a call costs two monotonic clock reads and a few
// atomic adds (BenchmarkCommandStatsRecord: about 85 ns).
//
// INFO persistence has Redis's loading:0 and aof_enabled:1 (every write
// goes to a shard's log, as to an AOF) and the logs' own figures over every
// shard: engine_log_records, engine_log_fsyncs and the fsync time's p50 and
// p99 (engine_log_fsync_p50_usec, _p99_usec: bucket bounds, as above).
// INFO cpu has Redis's used_cpu_sys and used_cpu_user (the process's, from
// getrusage; empty where that is not known). INFO errorstats counts error
// replies by code as Redis's (errorstat_WRONGTYPE:count=2), up to 128
// codes; CONFIG RESETSTAT clears it.
//
// SLOWLOG GET [count] | LEN | RESET | HELP is Redis's slow log: calls whose
// server time reached Options.SlowlogThreshold (default 10 ms), the newest
// Options.SlowlogMaxLen (default 128), each with its id, start time,
// microseconds, arguments (at most 32, each at most 128 bytes, as Redis
// cuts them; AUTH's and HELLO's replaced by "(redacted)"), client address
// and name. CONFIG GET slowlog-log-slower-than and slowlog-max-len show
// the settings; CONFIG GET takes glob patterns, as Redis's.
//
// Redis's latency monitor: with latency-monitor-threshold above 0
// (Options.LatencyMonitorThreshold; off by default, as Redis's), a call
// taking at least that many milliseconds is a sample of the event
// "command" (Redis also keeps "fast-command" and persistence events;
// here every call is one event). LATENCY LATEST gives each event's newest
// sample and its worst, LATENCY HISTORY <event> its last 160 (one a
// second, the worst of that second), LATENCY RESET [event ...] forgets
// them; DOCTOR and GRAPH are not implemented and say so. CONFIG SET
// slowlog-log-slower-than, slowlog-max-len and latency-monitor-threshold
// change the settings while running, in Redis's units and with its
// errors, every pair checked before any is applied; the other settings
// are fixed by the server's flags.
//
// # Time-aware models
//
// The original's verbs, with its arities and replies:
//
//	FAPPEND key ts value [MAXAGE ms]     +OK (MAXAGE drops points older
//	                                     than now - ms)
//	FAPPENDPOLICY key ts value policy    :1 when anything changed
//	                                     (UPSERT, FIRST|NX, UPDATE|XX, BLOCK)
//	FQUERY key start end [count]         [[ts, value], ...], oldest first
//	FQUERYFILTER key s e count field op val
//	FQUERYFILTERSTR key s e count "field op val" ...
//	FREPLACE key s e ts value            +OK
//	FDEL key                             +OK
//	FAGG key s e agg [count]             integer (sum, avg, min, max,
//	                                     first, last, count), or a float
//	                                     (sumf, avgf, minf, maxf, pNN,
//	                                     decay:H) or top:K's pairs
//	FAGGS key s e agg [agg ...]          one reply per aggregator
//	CONTROLSTATEINCR key ts amount, CONTROLSTATEINCROPT key ts amount
//	precision ttl, CONTROLSTATECHANGE key ts value [precision ttl],
//	HCHANGE, CONTROLSTATECOUNT key s e, CONTROLSTATEQUERY key s e agg,
//	CONTROLSTATEDETAIL key s e [count], CONTROLSTATE{H,COUNTER,CPC,
//	DISTINCT,FOL,SELECTION}SET key ts amount, {H,COUNTER,CPC,DISTINCT,FOL,
//	SELECTION}SETANDGET key ts amount s e agg, ...SETANDGETOPT key ts
//	amount s e agg precision ttl uuid, {H,...}QUERY key s e agg,
//	FOLSET|SELECTIONSET key value occur ttl FIRST|LAST, FOLQUERY|
//	SELECTIONQUERY key, CONTROLSTATEMANAGER key [op is_distinct [ts ... |
//	start end]], CONTROLSTATEDEBUG key s e
//
// and two of this server's own: QUOTATAKE key limit window_ms [amount]
// (taken 0|1, used, retry after ms) and PACE key limit window_ms [burst
// [cost]] (allowed 0|1, retry after ms).
//
// # Transactions
//
// MULTI queues commands, EXEC runs them with no other command of their
// shard in between (the shard's append gate and read gate held) and their
// writes reach the log as one group a crash keeps whole or drops whole,
// DISCARD drops them, WATCH makes EXEC fail (null reply) when a watched key
// was written since, even if changed back. Scripts with keys run the same
// way, queued per key group. All keys of a transaction, watched ones included, must be on one
// shard (a common {hash tag}); EXEC of one that spans shards fails with
// CROSSSLOT and runs nothing.
//
// # Auth
//
// With tokens configured, a connection must AUTH first (NOAUTH
// otherwise); a read-only token may run only read commands. Tokens are
// compared in constant time.
//
// # Concurrency
//
// A Server serves each connection on its own goroutine; the engine is safe
// for concurrent use. Close stops accepting, closes every connection and
// waits for their goroutines.
package resp
