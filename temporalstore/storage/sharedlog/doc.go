// Package sharedlog is a storage.Log kept on shared storage: each shard's
// records are appended to segments on a Store every member reaches (an
// object store's append blobs, or a shared filesystem), one member writes
// them, and the others tail the segments and replay them.
//
//	store, _ := sharedlog.NewDirStore("/mnt/shared/temporalstore")
//	logs, _ := sharedlog.New(sharedlog.Options{Store: store, Member: "10.0.0.5:6379"})
//	opts := temporalstore.Options{Dir: dir, OpenLog: logs.OpenLog, ...}
//
// # Stores
//
// DirStore keeps the segments in a directory every member mounts;
// ObjectStore in a bucket of an in-process matrixobject store, for members
// of one process. S3Store reaches an S3-compatible object store over HTTP,
// as members on several machines do: matrixobject's own server
// (matrixobject/s3api), or another that takes S3 Express One Zone's
// appends path-style (Amazon's directory buckets want virtual-hosted
// addressing and session credentials, which S3Store does not do). A
// segment append is a PutObject with x-amz-write-offset-bytes, which the
// server refuses (InvalidWriteOffset, ErrConflict here) unless the offset
// is the segment's size, so the server decides between racing writers;
// the snapshots are plain objects. Requests are signed with AWS
// Signature Version 4 when keys are given.
//
//	store, _ := sharedlog.NewS3Store(ctx, sharedlog.S3Options{
//		Endpoint: "http://10.0.0.9:9000", Bucket: "temporalstore",
//		AccessKey: key, SecretKey: secret,
//	})
//
// # Two logs, one record stream
//
// As in package raftlog, the shared segments are the durable copy and
// every member appends the same records, in the same order and under the
// same indexes, to a value log in the shard's local directory, where the
// engine reads its values. An append is acknowledged once the store has
// made its frame durable and the writer's value log holds it.
//
// # One writer, fenced by the log itself
//
// A member becomes the writer by appending a fence frame (the next epoch
// and its name) at the end of the segment as it read it, with the store's
// conditional append: of several members racing, one wins. The writer
// appends its frames at the end it knows, conditionally too, so a writer
// deposed while paused fails its next append (storage.ErrNotLeader) and
// nothing it appends after the fence is ever in the log. ReadBarrier
// makes the same check for a read. Appends waiting while one is in flight
// go in the next store append together (group commit).
//
// The writer appends a lease frame every quarter of Options.LeaseTimeout
// when idle; a follower that sees the segment silent for LeaseTimeout
// fences it, cutting first a torn tail left by a writer that crashed
// mid-append. A writer that closes appends a release frame, and a
// follower takes over at once. Only ReadOnly members never take over.
//
// # Segments, snapshots, reclaim
//
// Past Options.SegmentBytes the writer seals the segment with a frame
// naming the next one. When the engine reclaims its value log, the writer
// reclaims the shared segments wholly before the value log's front: it
// writes a snapshot object named by its last index (a fresh checkpoint
// image of the shard and its value log from the front;
// storage.ShardImages), appends to the front blob a record naming the new
// oldest segment and that snapshot, and deletes the segments before it.
// The front blob is appended conditionally and only forward, so a deposed
// writer still reclaiming cannot move it back. A member whose value log
// is behind the front installs the snapshot it names and follows from
// there.
package sharedlog
