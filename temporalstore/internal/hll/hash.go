package hll

import "encoding/binary"

// seed is the seed Redis hashes elements with.
const seed = 0xadc83b19

// murmur64A is MurmurHash64A as Redis computes it on a little-endian
// machine: whole 8-byte words first, then the tail.
func murmur64A(key []byte) uint64 {
	const m = 0xc6a4a7935bd1e995
	const r = 47
	h := uint64(seed) ^ uint64(len(key))*m
	n := len(key) &^ 7
	for i := 0; i < n; i += 8 {
		k := binary.LittleEndian.Uint64(key[i:])
		k *= m
		k ^= k >> r
		k *= m
		h ^= k
		h *= m
	}
	if tail := key[n:]; len(tail) > 0 {
		for i := len(tail) - 1; i >= 0; i-- {
			h ^= uint64(tail[i]) << (8 * i)
		}
		h *= m
	}
	h ^= h >> r
	h *= m
	h ^= h >> r
	return h
}

// patLen returns the register an element falls in (the hash's low 14
// bits) and the count to store there: the position of the first 1 bit in
// the remaining 50 bits, from 1, or 51 when they are all 0.
func patLen(elem []byte) (index int, count uint8) {
	h := murmur64A(elem)
	index = int(h & (Registers - 1))
	h >>= P
	h |= 1 << q
	count = 1
	for h&1 == 0 {
		count++
		h >>= 1
	}
	return index, count
}
