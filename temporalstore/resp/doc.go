// Package resp serves the engine over RESP, the Redis protocol: redis-cli,
// go-redis, redis-py and redis-benchmark talk to it as to a Redis 7 server.
// Its time-aware verbs (FAPPEND, FQUERY, FAGG, CONTROLSTATE...) take the
// arities and replies of TemporalStore's Rust implementation ("the
// original" in comments below).
//
//	srv, err := resp.New(resp.Options{Engine: e})
//	go srv.Serve(ln)
//	defer srv.Close()
//
// # Protocol
//
// Requests are multibulk arrays of bulk strings or inline commands;
// pipelined requests are answered in order, and replies are flushed when
// the connection has no further request buffered. Replies are RESP2 until
// HELLO 3 switches the connection to RESP3; HELLO 2 switches back. A
// malformed request gets "-ERR Protocol error" and the connection is
// closed, as Redis does.
//
// # Commands
//
// Every key-value kind of the engine is served under its Redis name with
// Redis's arguments and reply types, and so are transactions, Lua scripts
// and functions, blocking pops and Redis's server commands; Commands lists
// them, and COMMAND DOCS gives each one's summary. A command the server
// does not implement gets "-ERR unknown command", never a fake success.
// Keys of database 0 live in the engine's default table (Options.Namespace
// and Options.Table choose another); SELECT, MOVE and SWAPDB address
// Options.Databases numbered databases, each a table of its own.
//
// Another module mounts its verbs on the same listener through
// Options.Commands: each a Command with its arity, write flag, key
// positions and a Run that replies through Request.Reply. They get the
// built-ins' treatment (AUTH, read-only tokens, MULTI, COMMAND, statistics,
// slow log); a name already served is refused by New. A RunMany serves a
// pipeline's run of one verb at once, Request.Block waits as the built-in
// blocking verbs wait, and Options.Keyspace shows the module's keys to
// DEL, EXISTS, TYPE, SCAN and the like. A Server with no
// Options.Engine serves those verbs alone, with the connection's and the
// server's own (PING, HELLO, AUTH, CLIENT, COMMAND, CONFIG, INFO, ...):
// the rest are unknown commands, as in a Redis that lacks them.
//
// Pushed frames (pub/sub messages, Request.Push) wait in a per-connection
// queue bounded as Redis's client-output-buffer-limit pubsub bounds a
// subscriber's output (Options.PushLimits); CONFIG GET and CONFIG SET
// client-output-buffer-limit read and change the bounds while the server
// runs.
//
// With Options.Publish set, notify-keyspace-events publishes Redis's
// keyspace notifications: the engine reports every applied write, from
// any surface (temporalstore.Engine.OnWrite), and its expiries.
//
// # Statistics
//
// Every call is counted under its command with its server time in a
// latency histogram: INFO commandstats, latencystats and errorstats and
// LATENCY HISTOGRAM show them in Redis 7's shapes, CONFIG RESETSTAT
// starts them again, Server.CommandStats and Server.Stats return them, and
// package respprom exports them to Prometheus. The slow log
// (Options.SlowlogThreshold) and the latency monitor
// (Options.LatencyMonitorThreshold) are Redis's too.
//
// # Transactions
//
// MULTI queues commands, EXEC runs them with no other command of their
// shard in between, and their writes reach the log as one group a crash
// keeps whole or drops whole; DISCARD drops them; WATCH makes EXEC fail
// (null reply) when a watched key was written since, even if changed back.
// Scripts with keys run the same way. All keys of a transaction, watched
// ones included, must be in one key group (a common {hash tag}); EXEC of
// one that spans groups fails with CROSSSLOT and runs nothing.
//
// # Cluster
//
// With Options.Cluster the server is one member of a cluster and speaks
// Redis Cluster's routing: a keyed command runs only if this member leads
// its hash slot's shard (a READONLY connection's reads also where it
// follows), and is otherwise answered MOVED slot host:port, or CLUSTERDOWN
// while the shard has no leader; keys of two slots get CROSSSLOT. CLUSTER
// SLOTS, SHARDS, NODES, INFO, MYID and KEYSLOT describe the cluster as the
// Cluster says. Without one, CLUSTER, READONLY, READWRITE and ASKING
// answer as a Redis without cluster support.
//
// # Tables and tenants
//
// TABLE and TENANT are an operator's verbs over the engine's tables and
// tenants' limits; changes are kept across restarts:
//
//	TABLE LIST                                  namespace/name of every table
//	TABLE INFO ns name                          options, read-only shards, per-shard statistics (a map)
//	TABLE CREATE ns name [SHARDS n] [KEYGROUPS n] [READQPS q] [WRITEQPS q] [SHARDRATE r] [SHARDBURST n] [ASYNC]
//	TABLE SET ns name [READQPS q] [WRITEQPS q] [SHARDRATE r] [SHARDBURST n]   0: no limit
//	TABLE READONLY ns name shard|ALL ON|OFF
//	TABLE DROP ns name                          the table, its numbered databases and their data
//	TENANT LIST | TENANT GET t | TENANT SET t QPS q    q > 0 limits, 0 the default, -1 none
//
// Any global token may run LIST, INFO and GET; the others need a
// read-write one (NOPERM otherwise), and no tenant token runs either
// verb. DROP refuses the default table and the table the server serves,
// with their databases; CREATE and DROP are refused in a cluster, whose
// catalog is not replicated. Errors are "-ERR ..." (no such table, table
// exists, table in use, invalid argument).
//
// # Auth and concurrency
//
// With tokens configured, a connection must AUTH first (NOAUTH otherwise);
// a read-only token may run only read commands (and no SAVE or BGSAVE
// when they make backups, Options.Saver). A tenant token
// (Options.TenantTokens) confines the connection to its tenant: its keys
// live in the namespace named as the tenant (database n in the table
// tenant/Options.Table, @n past 0), its commands carry the tenant so the
// engine's tenant limit applies, a read-only one reads only, and it gets
// NOPERM for the verbs that reach past the namespace (TABLE, TENANT,
// SLOWLOG, SAVE, BGSAVE, DEBUG, CONFIG SET, CLIENT LIST and KILL, SCRIPT
// FLUSH, FUNCTION LOAD and DELETE, CLUSTER ADDMEMBER, ...) and for the
// verbs of Options.Commands, whose keys have no namespace. Tokens are
// compared in constant time. A Server serves each connection on its own goroutine; the
// engine is safe for concurrent use. Close stops accepting, closes every
// connection and waits for their goroutines.
package resp
