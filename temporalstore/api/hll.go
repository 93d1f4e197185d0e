package api

// HyperLogLog kinds, with Redis's semantics and Redis's own string format
// (internal/hll): the value is a plain string, which GET returns byte for
// byte as redis-server would, and which SET can put back.
const (
	// KindPFAdd adds the elements Args to the HyperLogLog at Key,
	// creating it (PFADD); Response.Int is 1 if a register changed or the
	// key was created.
	KindPFAdd Kind = "pfadd"
	// KindPFCount returns in Response.Int the estimated cardinality of the
	// HyperLogLog at Keys[0] (PFCOUNT), or of the union of those at Keys
	// (which share a key group); a missing key is empty. For one key the
	// computed cardinality is cached in the value, as Redis caches it,
	// which writes the key when the cache was stale.
	KindPFCount Kind = "pfcount"
	// KindPFMerge stores at Dest the union of the HyperLogLogs at Dest and
	// Keys (PFMERGE), keeping Dest's TTL; they share a key group. Dest is
	// written even when nothing changed (its cache is marked stale).
	KindPFMerge Kind = "pfmerge"
	// KindPFDebug is PFDEBUG's subcommand Aggregator on the HyperLogLog
	// at Key, which must exist (ErrNoSuchKey): "getreg" returns the
	// registers in Ints, turning a sparse value dense; "todense" turns it
	// dense, Response.Int 1 if it was sparse; "encoding" returns "sparse"
	// or "dense" and "decode" a sparse value's opcodes in Value.
	KindPFDebug Kind = "pfdebug"
)
