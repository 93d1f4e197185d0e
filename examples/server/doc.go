// Command server is the thin TemporalStore server: it opens the engine on
// a local data directory (single node) and serves it over RESP (redis-cli,
// go-redis, redis-py) and the HTTP command surface (curl, the Go client),
// and the object store over the S3 API. The HTTP surface speaks the
// command shapes of TemporalStore's Rust implementation ("the original").
//
// Every flag also reads an environment variable (TS_...); a flag beats its
// variable, which beats the default. `server --help` lists them. It refuses
// to listen on a non-loopback address without a token unless --insecure is
// given. On SIGTERM or SIGINT it stops accepting, closes the connections,
// checkpoints every shard and closes the engine.
//
// A value over --large-value-threshold (1 MiB) is kept in a file beside
// its shard's log (package temporalstore/storage/largelog), so values up
// to --max-value-bytes (512 MiB) are taken; /blob serves named blobs from
// <data>/blobs (package temporalstore/blob). Backups carry both.
//
// With --cluster-id and --cluster-peers it is one member of a cluster:
// each shard of the default table a raft group with a replica on every
// member (package temporalstore/cluster), its RESP port serving Redis
// Cluster routing. examples/cluster starts three on loopback.
package main
