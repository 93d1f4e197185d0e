// Package matrixraft is a Raft library built on go.etcd.io/raft/v3: it hosts
// Raft nodes and groups, moves their messages, and stores their logs.
//
// # What this module owns
//
//   - The durable segmented write-ahead log, package wal. It is used by
//     every module that needs a log, with or without Raft, and it is the
//     part of this module that exists today.
//   - A node and group host over etcd raft: transport, snapshots,
//     membership changes, ReadIndex reads and leader transfer.
//   - A multi-group host in which many groups share one log, so their fsyncs
//     are batched together.
//
// The planned entry points are wal.Open, NewHost, and Group.Propose and
// Group.Read.
//
// # Dependencies
//
// This module depends on go.etcd.io/raft/v3 and on no other module of this
// repository.
package matrixraft
