// Package ferricstore is Redis's streams, durable on its own logs and
// usable from Go without a server; package pubsub routes publish/
// subscribe; package commands serves both over RESP. Durable flows are to
// come.
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
// The methods take Redis's arguments and return its errors (ErrNoSuchKey,
// stream.ErrNoGroup, stream.ErrIDTooSmall, ...). Streams.Changes lets a
// reader block until a shard changes. This module imports matrixraft and
// no other module of this repository.
package ferricstore
