// Package hll is Redis's HyperLogLog, byte for byte: the string format
// PFADD, PFCOUNT and PFMERGE keep (a 16-byte header, then the registers
// in the dense or the sparse encoding), the hash that picks a register,
// the in-place edits of the sparse encoding, the promotion to dense and
// the estimator, so that a value built here equals the one redis-server
// 7 builds from the same commands, and a value built there is read here.
//
// The header is the magic "HYLL", the encoding (Dense 0, Sparse 1), three
// unused bytes (kept as found), and the cached cardinality, 8 bytes
// little-endian, whose top bit set marks the cache stale. The dense
// encoding holds 16384 six-bit registers, least significant bits first.
// The sparse one is a run-length code of opcodes: ZERO (00xxxxxx, 1 to 64
// zero registers), XZERO (01xxxxxx yyyyyyyy, 1 to 16384 zero registers)
// and VAL (1vvvvvxx, 1 to 4 registers of value 1 to 32). A sparse value
// turns dense when an edit would take it past SparseMaxBytes or a
// register past 32.
//
// A Sketch is not safe for concurrent use; it owns its bytes.
package hll
