// Package blockfmt is the on-disk format of a cache block, shared by the
// persistent tiers of matrixcache (the SSD tier in package ssdtier, and the
// file-backed resident tier).
//
// It defines the cache's [Key] (shard, record key, namespace, selector),
// [KeyOf] for a key named by one string (package cachekey builds the rest),
// the block kinds and initial hotness rules, a [Block] codec ([Encode], [Decode],
// [DecodeHeader]) and an order-preserving encoding of a Key for use as a
// key in an ordered key/value store ([AppendOrderedKey]). The key, kinds
// and block options mirror TemporalStore's Rust implementation ("the
// original" in comments below).
//
// # Block format (version 1)
//
// An encoded block is a 48-byte header followed by the key's three strings
// and the stored value, with nothing after it:
//
//	[0:4]   magic "MCBK"
//	[4]     format version (1)
//	[5]     flags: bit 0 = value is zstd-compressed; other bits must be 0
//	[6]     kind (0 Page, 1 Object, 2 Index, 3 Oplog, 4 Other)
//	[7]     hotness
//	[8:16]  expiry, unix nanoseconds, little endian (0 = never)
//	[16:24] shard, little endian
//	[24:28] record key length
//	[28:32] namespace length
//	[32:36] selector length
//	[36:40] stored value length (compressed length when bit 0 is set)
//	[40:44] value length once decompressed
//	[44:48] CRC32C (Castagnoli) of bytes [0:44] and of everything after
//	        the header
//	[48:]   record key, namespace, selector, stored value
//
// All lengths are little-endian uint32. A value is compressed only when
// [Options.Compression] asks for it, the value is at least
// [Options.MinCompressBytes] long, and compression makes it smaller.
//
// # What a reader can rely on
//
// The checksum covers every byte, and the total length must match the
// lengths in the header exactly, so a truncated, extended or damaged block
// decodes to [ErrCorrupt] — never to a wrong value. A block written by a
// newer format version decodes to [ErrUnsupportedVersion]. Decoding never
// allocates more than the input's own length plus the declared value
// length, bounded by [MaxValueLen]. A decoded [Block] never aliases the
// input, so it stays valid after the input buffer (for example a
// memory-mapped page) goes away.
//
// # Ordered keys
//
// [AppendOrderedKey] encodes a Key as the big-endian shard followed by the
// record key, the namespace and the selector. The record key and namespace
// have every 0x00 byte escaped as 0x00 0xFF and end with 0x00 0x01; the
// selector, being last, is stored escaped without a terminator. Byte order
// of encoded keys is (shard, record key, namespace, selector) order, and
// every key of a shard — or of a shard and a record-key prefix — lies in one
// contiguous range that starts with [ShardPrefix] or [RecordPrefix]. So
// "invalidate a shard" and "invalidate every record under a prefix" are
// range scans.
package blockfmt
