// Package disk has the engine's default storage: each shard's log a
// matrixraft/wal log in the shard's directory, and a record cache over a
// matrixcache. It adapts them to the interfaces of package storage, and
// owns the mapping from a shard's record to a cache key.
//
// A program wires them into temporalstore.Options itself,
//
//	c, _ := matrixcache.New(ctx, matrixcache.Options{DRAMCapacityBytes: 64 << 20})
//	opts := temporalstore.Options{Dir: dir, OpenLog: disk.OpenLog, RecordCache: disk.NewRecordCache(c)}
//
// or lets package temporalstore/local do it in one call.
package disk
