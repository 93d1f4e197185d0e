package api

// Kinds that read and write several keys at once, atomically: the keys
// must share one key group, as Redis Cluster wants them in one slot
// (ErrCrossShard, CROSSSLOT, otherwise).
const (
	// KindSMove moves member Args[0] from the set at Key to the set at
	// Dest (SMOVE); Response.Int is 1 if it was moved.
	KindSMove Kind = "smove"
	// KindSInterStore, KindSUnionStore and KindSDiffStore store at Dest
	// the combination of the sets at Keys (a missing key is an empty set),
	// replacing what Dest held; Response.Int is its size
	// (SINTERSTORE ...). An empty result deletes Dest.
	KindSInterStore Kind = "sinterstore"
	KindSUnionStore Kind = "sunionstore"
	KindSDiffStore  Kind = "sdiffstore"
	// KindMSetNX stores Args[i] under Keys[i] only if none of Keys
	// exists (MSETNX); Response.Int is 1 if it did.
	KindMSetNX Kind = "msetnx"
)
