// Command ferricstore serves ferricstore alone over RESP: Redis streams
// (XADD, XREADGROUP, XACK, XPENDING, XCLAIM, ... durable on per-shard logs
// in its data directory), durable work queues (FLOW.CREATE,
// FLOW.CLAIM_DUE, FLOW.COMPLETE, ... on the same logs) and pub/sub
// (SUBSCRIBE, PSUBSCRIBE, SSUBSCRIBE, PUBLISH, SPUBLISH, PUBSUB), with the connection's and the server's own
// verbs a client needs (PING, ECHO, HELLO, AUTH, CLIENT, COMMAND, CONFIG,
// INFO, TIME, SELECT 0, MULTI/EXEC, RESET, QUIT). There is no engine
// behind it: GET, SET and every other key-value verb answer "unknown
// command", as a Redis without them would. It listens on 127.0.0.1:6380 by
// default, beside the main server (examples/server) on 6379.
//
// Every flag also reads an environment variable (FS_...); a flag beats
// its variable, which beats the default. `ferricstore --help` lists them.
// Prometheus metrics (the streams', the flows', pub/sub's, the RESP commands' and the
// runtime's) are served at /metrics on --metrics-addr, 127.0.0.1:17103 by
// default. It refuses to listen on a non-loopback address without a
// token unless --insecure is given. On SIGTERM or SIGINT it stops
// accepting, closes the connections and closes the store, whose
// acknowledged writes are on disk already (each fsynced, or with --async
// written to the operating system).
package main
