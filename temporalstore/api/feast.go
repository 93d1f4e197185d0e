package api

import "time"

// Feast row kinds: latest-value feature rows, stored as hashes, written
// only when newer than what is stored.
const (
	// KindRowWrite writes the field/value pairs of Args into the hash at
	// Key if EventTime is newer than the row's stored event time (field
	// TSField), atomically; the stored time becomes EventTime and, when
	// TTL is set, the row's TTL is renewed. An older or equal EventTime is
	// a stale write: refused (Applied false), counted in the shard's
	// StaleRejects, nothing changed, the TTL not renewed.
	KindRowWrite Kind = "row_write"
	// KindRowWriteBatch is KindRowWrite for each of Rows (Key, Args,
	// EventTime of each row; TTL and TSField of the command). The rows of
	// one shard are one crash-atomic record. Response.Ints has 1 for each
	// row written and 0 for each stale one; Response.Int counts the
	// written.
	KindRowWriteBatch Kind = "row_write_batch"
	// KindRowReadBatch reads the fields Args of every row in Keys (HMGET
	// of each), the rows of one shard under one hold of its lock: Values
	// has len(Keys)*len(Args) entries, row after row, nil for a missing
	// row or field. A key that is not a hash fails the command
	// (WRONGTYPE), as HMGET would. A Feast read of many entities is one
	// command rather than one a row.
	KindRowReadBatch Kind = "row_read_batch"
)

// DefaultTSField is the hash field that holds a row's event time when
// Command.TSField is empty.
const DefaultTSField = "_ts"

// TSFormat is how a row's event time is kept in its TSField, and so the
// precision rows are compared at.
type TSFormat string

const (
	// TSMillis keeps Unix milliseconds in decimal (the zero value): two
	// writes in one millisecond compare equal and the second is stale.
	TSMillis TSFormat = ""
	// TSNanos keeps Unix nanoseconds in decimal.
	TSNanos TSFormat = "ns"
	// TSProto keeps a serialized google.protobuf.Timestamp (field 1
	// seconds, field 2 nanos), as Feast's Redis online store does, so its
	// rows and ours share one layout; compared at nanosecond precision.
	TSProto TSFormat = "proto"
)

// Row is one entity's feature row in a KindRowWriteBatch.
type Row struct {
	Key       []byte
	Args      [][]byte
	EventTime time.Time
}
