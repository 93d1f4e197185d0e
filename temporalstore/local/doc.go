// Package local opens the engine the way a single node keeps it: in a data
// directory, each shard's log a matrixraft/wal log in the shard's
// directory (its values over 1 MiB in files beside it, package
// storage/largelog), records cached in a DRAM matrixcache. It is the default
// wiring the server uses, in one call:
//
//	e, err := local.Open(ctx, temporalstore.Options{Dir: "data"})
//
// A program that wants other pieces (a cache with a resident tier, or one
// shared with its own data; another log) fills temporalstore.Options itself,
// with package storage/disk's adapters or its own.
package local
