// Package ferricstore is Redis's streams and durable work queues
// (flows), durable on their own logs and usable from Go without a
// server; package pubsub routes publish/subscribe; package commands
// serves them over RESP.
//
//	st, err := ferricstore.Open(ferricstore.Options{Dir: "data/streams"})
//	defer st.Close()
//	x := st.Streams()
//	id, _, err := x.Add(ctx, "orders", ferricstore.AddArgs{Fields: [][]byte{[]byte("sku"), []byte("42")}})
//	err = x.CreateGroup(ctx, "orders", "billing", "0", false, stream.UnknownEntriesRead)
//	es, err := x.ReadGroup(ctx, "orders", "billing", "worker-1", ">", 10, false)
//	n, err := x.Ack(ctx, "orders", "billing", []stream.ID{es[0].ID})
//
// Keys are sharded by Redis Cluster's hash slot (CRC16 of the {hash tag}).
// Each shard has a matrixraft/wal log and one writer goroutine: a write is
// resolved against the shard's state (an XADD's ID, the time, what a read
// delivers), applied, and logged with the other writes of its batch in one
// append and one fsync; it returns once durable (Options.Async: once
// written, synced every SyncInterval). Readers see durable state only.
// AddAsync queues adds that share a batch (a pipeline of XADDs); blocked
// XREADGROUP calls (WaitGroup) are served by the writer, in the order they
// blocked, in the batch that adds the entries. One shard by default: one
// fsync commits every waiting writer. Every Options.SnapshotEvery records,
// once the log has grown by the last snapshot's size, a shard writes a
// snapshot and lets the log before it go; Open loads the snapshots and
// replays the logs after them, restoring entries, groups, pending lists
// and delivery counts exactly.
//
// Flows (package flow holds their rules) share the shards' logs: a flow
// lives on its ID's shard, every call is one logged record (a batch one
// per shard), and the time it used is logged with it, so replay needs no
// clock. Blocked claims (Flows.ClaimWait) are served by the writer in the
// order they blocked, in the batch that made a flow due or when a due
// time or lease deadline comes; expiries, schedules and the deletion of
// terminal flows past Options.FlowRetention run on the writer's timer.
//
//	fl := st.Flows()
//	_, err = fl.Create(ctx, flow.Create{ID: "mail-1", Type: "email", Payload: body})
//	rs, err := fl.ClaimWait(ctx, flow.Claim{Type: "email", State: flow.Queued, Worker: "w1", LeaseMs: 30_000, Limit: 10})
//	_, err = fl.Complete(ctx, flow.Complete{ID: rs[0].ID, LeaseToken: rs[0].LeaseToken, Fencing: rs[0].Fencing})
//
// The methods take Redis's arguments and return its errors (ErrNoSuchKey,
// stream.ErrNoGroup, stream.ErrIDTooSmall, ...). Streams.Changes lets a
// reader block until a shard changes. This module imports matrixraft and
// no other module of this repository.
package ferricstore
