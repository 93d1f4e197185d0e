// Package keyindex is a shard's resident index: it maps keys to the
// addresses of the log records that hold them, in 16 bytes a slot, without
// holding the keys themselves.
//
// A slot is a 32-bit tag taken from the key's 64-bit hash, a 64-bit entry
// (the record's address, packed by the caller) and 32 bits of metadata. The
// tag also places the slot, so the table can be resized and a deletion can
// close its gap without the key. Two keys may share a tag: every operation
// takes a match function that the index calls on each entry with the key's
// tag, and that says whether the entry is that key's (the caller reads the
// record and compares the key). A shared tag costs a read, never a wrong
// answer.
//
// The table is Robin Hood linear probing with backward-shift deletion, sized
// to any number of slots (not a power of two) and grown by a quarter when
// it is nine tenths full, so it stays between 72 % and 90 % full: 17.8 to
// 22.2 bytes per key at any key count.
//
// An Index is not safe for concurrent use; a shard serialises its callers.
package keyindex
