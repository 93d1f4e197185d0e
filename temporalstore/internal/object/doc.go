// Package object holds the engine's native collections: hashes, sets,
// sorted sets and lists, and the time-aware models' feature series (with
// their rollup ladders) and control state, each an Object under one key,
// with the encoding a shard's checkpoint stores them in. The time-aware
// models follow TemporalStore's Rust implementation ("the original" in
// comments below).
//
// A sorted set is a skip list with spans (ordered by score, then member)
// beside a member → score map, so rank, score-range and lex-range lookups
// are O(log n) and a range of k members costs O(log n + k). A list is a
// ring-buffer deque: pushes and pops at either end are O(1), an index is
// O(1). A series keeps its points in timestamp order, so a window read is a
// binary search and a slice.
//
// Objects are not safe for concurrent use; a shard mutates them under its
// lock, and every mutation is the apply of a logged command, so replaying
// the log rebuilds them exactly. Nothing here draws randomness from global
// state: a sorted set's level generator is seeded per set, so the same
// commands build the same structure.
package object
