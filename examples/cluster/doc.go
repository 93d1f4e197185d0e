// Command cluster starts a three-member TemporalStore cluster on loopback,
// each member a server process with its own data directory and ports,
// and shows a shard leader's SIGKILL and the recovery:
//
//	go run ./examples/cluster
//
// It builds the server (or takes --server), starts the three members
// (server --cluster-id N --cluster-peers ...), writes keys through
// go-redis's ClusterClient, prints which member leads which slots
// (CLUSTER SHARDS), kills the leader of one key's shard, times how long
// until that key is writable again on the new leader, checks that every
// acknowledged write is still there, restarts the killed member and waits
// until its replica (read with READONLY) has caught up. With --keep it
// leaves the cluster running until interrupted, for redis-cli -c.
//
// Across machines, run the server itself on each one with the same
// --cluster-peers list of id@raft-addr@resp-addr (see server --help).
package main
