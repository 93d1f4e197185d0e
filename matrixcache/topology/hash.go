package topology

import (
	"strconv"

	"github.com/cespare/xxhash/v2"
)

// Hash returns the ring position of key: the 64-bit xxHash (XXH64, seed 0)
// of the key bytes. It is part of data placement and never changes; every
// node, on every build and platform, places a key at the same position.
func Hash(key []byte) uint64 {
	return xxhash.Sum64(key)
}

// HashString is Hash for a string key, without converting it to bytes.
func HashString(key string) uint64 {
	return xxhash.Sum64String(key)
}

// PointHash returns the ring position of virtual node i of the node id: the
// XXH64 (seed 0) of the label id + "#" + the decimal form of i, so the
// points of node "cache-a" are the hashes of "cache-a#0", "cache-a#1", ...
// Like Hash, it is fixed.
func PointHash(id NodeID, i int) uint64 {
	var buf [64]byte
	return pointHash(buf[:0], id, i)
}

// pointHash is PointHash using buf as scratch space for the label.
func pointHash(buf []byte, id NodeID, i int) uint64 {
	buf = append(buf, id...)
	buf = append(buf, '#')
	buf = strconv.AppendInt(buf, int64(i), 10)
	return xxhash.Sum64(buf)
}
