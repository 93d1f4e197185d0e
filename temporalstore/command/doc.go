// Package command is the engine's command record: the compact, versioned
// binary form in which a write is appended to a shard's log and stored
// there.
//
// # Format (version 1)
//
// A record is one command or one batch of commands, so that a batch is
// crash-atomic under the log's per-record checksum:
//
//	record  = version(1 byte) kind(1 byte: 1 command, 2 batch) body
//	command = op(uvarint) flags(uvarint) time(varint, Unix ms)
//	          expiry(varint, Unix ms; 0: none) key(bytes) nargs(uvarint) arg(bytes)*
//	batch   = n(uvarint) command*
//	bytes   = length(uvarint) then the bytes
//
// Op numbers are stable once assigned: a record outlives the binary that
// wrote it. Decoding refuses an unknown version with [ErrVersion] and
// damaged input with [ErrMalformed], never guessing. Decoded keys and
// arguments alias the input, and [Decoded] reports each argument's offset
// in the record, so the engine can address a value inside the log record
// that carried it instead of writing it again.
//
// Encoding appends to a caller's buffer and allocates only to grow it.
// Everything here is safe for concurrent use; a Command is a value.
package command
