// Command raft-kv is a replicated key-value store: one process per member
// of a matrixraft cluster, raft messages over TCP (package
// matrixraft/tcptransport), the log and snapshots durable in a data
// directory, and an HTTP API on each process. The store is a
// matrixraft.SnapshotCapturer, so a snapshot of it is sorted and written
// beside the node's loop rather than on it.
//
// Usage:
//
//	go run ./raft-kv --id 1 --peers 1=127.0.0.1:7001,2=127.0.0.1:7002,3=127.0.0.1:7003 \
//	    --http 127.0.0.1:8001 --data /tmp/raft-kv/1
//	go run ./raft-kv --help
//
// The README in this directory starts three processes and kills the leader.
//
// # HTTP API
//
//	PUT /kv/{key}          the body is the value; 204 once applied here
//	GET /kv/{key}          linearizable read (ReadIndex); 404 if absent
//	GET /kv/{key}?stale=1  the local value, which may lag the cluster
//	GET /status            raft status and transport counters as JSON
//
// Writes go through the leader. A follower given a PUT answers 307 with
// the leader's HTTP address as Location when --http-peers names it, or 503
// otherwise; both carry the leader's raft ID in the X-Raft-Leader header
// (0 while there is none). A PUT that times out answers 504: its outcome is
// unknown, and retrying the same value is safe. Reads work on every
// member: a linearizable read on a follower asks the leader for the commit
// index and waits until the follower has applied it.
//
// # Binary protocol
//
// With --kv, each process also serves puts and gets in the binary
// protocol of package kvwire: length-prefixed frames, many requests in
// flight on one connection, answered in any order, with the same
// semantics as the HTTP API (a put answers once applied on the leader; a
// follower answers "not leader" with the leader's raft ID instead of
// redirecting). kvwire.Dial is its Go client.
//
// # Flags
//
//	--id                this node's raft ID (required)
//	--peers             ID=host:port of every member's raft address (required);
//	                    bootstraps a new cluster, ignored on restart
//	--http              this node's HTTP address (required)
//	--http-peers        ID=host:port of every member's HTTP address, for redirects
//	--kv                this node's kvwire address (default off)
//	--data              the node's data directory (required)
//	--tick              raft tick (default 100ms)
//	--election-ticks    election timeout in ticks (default 10)
//	--snapshot-entries  applied entries between snapshots (default 10000)
//	--catchup-entries   entries kept behind a snapshot for laggards (default 5000)
//	--request-timeout   how long a request waits for raft (default 5s)
//	--log-level         debug, info, warn or error (default info)
//
// SIGINT or SIGTERM stops the node gracefully; SIGKILL loses nothing that
// was acknowledged, since every write is fsynced on a majority before it
// is applied.
package main
