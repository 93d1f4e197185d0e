// Package cluster runs the engine as one member of a cluster: every shard
// of the routed table is a matrixraft group with a replica on each member,
// and Redis Cluster clients are routed to each shard's leader.
//
//	node, err := cluster.Start(cluster.Options{Dir: dir, ID: 1, Peers: peers, Shards: 3})
//	e, err := temporalstore.Open(ctx, temporalstore.Options{Dir: engineDir, OpenLog: node.OpenLog,
//		DefaultTableOptions: temporalstore.TableOptions{Shards: 3, SlotRouting: true}})
//	node.Attach(e)
//	srv, err := resp.New(resp.Options{Engine: e, Cluster: node})
//
// A Node keeps one raft host (one raft log, fsyncs shared by every group)
// and one TCP transport (tcptransport, every group multiplexed on it);
// each shard's log is a storage/raftlog log, so a write is acknowledged
// once a quorum of the shard's replicas has it and this replica applied
// it. The routed table's keys map onto shards by Redis Cluster hash slot
// (temporalstore.SlotShard), so the node answers CLUSTER SLOTS, SHARDS and
// NODES with each shard's slot range and its leader first, MOVED for a
// slot another member leads, and serves a READONLY connection's reads
// from its own replica. A leader's reads pass a ReadIndex round (or the
// lease, with Options.LeaseReads) and wait for the shard to apply what it
// covers, so they are linearizable.
//
// Members join and leave while the cluster serves (AddMember,
// RemoveMember; over RESP, CLUSTER ADDMEMBER and FORGET; over HTTP,
// AdminHandler): each shard's change runs on its leader, a new member is
// a learner until it has caught up, and a removal that would leave a
// shard without a live quorum is refused. Options.Replicas members vote
// in each shard, chosen on matrixcache's topology ring across zones; the
// others hold it as learners, and each shard's leader moves the voters
// there a step at a time. Shard i is meant to be led by its i-th voter in
// ID order, and a member hands over the shards it leads and should not,
// so the load spreads (Options.BalanceInterval).
//
// Package liveness holds the failure detector and the guardrails that
// decide when a member is down.
package cluster
