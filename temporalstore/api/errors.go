package api

import "errors"

// Errors. Match them with errors.Is.
var (
	// ErrClosed is returned by calls on a closed engine.
	ErrClosed = errors.New("temporalstore: engine closed")
	// ErrNoTable is returned for a command addressed to a table that does
	// not exist.
	ErrNoTable = errors.New("temporalstore: no such table")
	// ErrTableExists is returned by the engine's CreateTable for a name in use.
	ErrTableExists = errors.New("temporalstore: table exists")
	// ErrInvalid is returned for a malformed command or option; nothing is
	// changed.
	ErrInvalid = errors.New("temporalstore: invalid argument")
	// ErrUnknownKind is returned for a command kind the engine does not
	// implement.
	ErrUnknownKind = errors.New("temporalstore: unknown command kind")
)

// Admission refusals. Each is its own error so a surface can map it to its
// own code; none changes anything.
var (
	// ErrReadQPS is returned when a table's read QPS limit is reached.
	ErrReadQPS = errors.New("temporalstore: table read QPS limit reached")
	// ErrWriteQPS is returned when a table's write QPS limit is reached.
	ErrWriteQPS = errors.New("temporalstore: table write QPS limit reached")
	// ErrTenantQPS is returned when a tenant's QPS limit is reached.
	ErrTenantQPS = errors.New("temporalstore: tenant QPS limit reached")
	// ErrShardRate is returned when a shard's rate and burst are used up.
	ErrShardRate = errors.New("temporalstore: shard rate limit reached")
	// ErrReadOnly is returned for a write to a shard in read-only mode.
	ErrReadOnly = errors.New("temporalstore: shard is read-only")
)

// Errors of the string kinds, with Redis's meaning. Each changes nothing.
var (
	// ErrNotInteger: the stored value is not a base-10 64-bit integer.
	ErrNotInteger = errors.New("temporalstore: value is not an integer or out of range")
	// ErrNotFloat: the stored value is not a valid float.
	ErrNotFloat = errors.New("temporalstore: value is not a valid float")
	// ErrOverflow: the increment's result does not fit.
	ErrOverflow = errors.New("temporalstore: increment or decrement would overflow")
	// ErrTooLarge: the string would exceed 512 MiB, or its log record the
	// log's record size limit (16 MiB).
	ErrTooLarge = errors.New("temporalstore: string exceeds maximum allowed size")
	// ErrWrongType: the key holds a value of another type than the kind
	// works on (Redis's WRONGTYPE).
	ErrWrongType = errors.New("temporalstore: WRONGTYPE Operation against a key holding the wrong kind of value")
	// ErrCrossShard: a kind's keys are on different shards. Keys that
	// share a {hash tag} share a shard, as in Redis Cluster.
	ErrCrossShard = errors.New("temporalstore: keys are on different shards (give them a common {hash tag})")
	// ErrNotLeader: in a cluster, a write reached a member that does not
	// lead the key's shard; nothing was written.
	ErrNotLeader = errors.New("temporalstore: not the leader of the shard's group")
	// ErrUnknownOutcome: in a cluster, the shard's leader changed before
	// the write committed; it may or may not be applied.
	ErrUnknownOutcome = errors.New("temporalstore: leadership changed; the write may or may not be applied")
	// ErrNoSuchKey: the kind needs the key to exist (RENAME, LSET).
	ErrNoSuchKey = errors.New("temporalstore: no such key")
	// ErrOutOfRange: an index is outside the list (LSET).
	ErrOutOfRange = errors.New("temporalstore: index out of range")
)

// ErrSeriesTooLarge is returned for a feature write that would take the
// series past MaxFeatureAppend points; nothing is written.
var ErrSeriesTooLarge = errors.New("temporalstore: feature series size bigger than 100000")

// Errors of the HyperLogLog kinds; each changes nothing.
var (
	// ErrNotHLL: the string is not a HyperLogLog (Redis's "WRONGTYPE Key
	// is not a valid HyperLogLog string value.").
	ErrNotHLL = errors.New("temporalstore: WRONGTYPE Key is not a valid HyperLogLog string value")
	// ErrCorruptHLL: the string has a HyperLogLog's header but registers
	// that do not add up (Redis's INVALIDOBJ Corrupted HLL object
	// detected).
	ErrCorruptHLL = errors.New("temporalstore: INVALIDOBJ Corrupted HLL object detected")
)

// ErrInternal is the error of a command that met a bug (a panic) while it
// ran. The panic is contained: the command changed nothing (a write panics
// while it is being decided, before its record is logged), its stack is
// logged, the engine's Panics stat counts it, and every other command goes on.
var ErrInternal = errors.New("temporalstore: internal error")

// Storage faults: a shard's log failed to write or sync. The shard refuses
// writes until its log recovers (a log on the local disk by itself, once
// the disk takes writes again; another at a restart) and serves reads
// meanwhile. The write that met the fault, and every write refused after
// it, is not applied.
var (
	// ErrStorageFault: the shard's log failed to write or sync.
	ErrStorageFault = errors.New("temporalstore: storage fault")
	// ErrDiskFull: the storage fault of a full disk (or quota). An error
	// that matches it matches ErrStorageFault too.
	ErrDiskFull = errors.New("temporalstore: disk full")
)
