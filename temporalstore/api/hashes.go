package api

// Hash kinds, with Redis's semantics. Fields are in Args.
const (
	// KindHSet sets field/value pairs (Args); Response.Int is how many
	// fields are new (HSET).
	KindHSet Kind = "hset"
	// KindHSetNX sets field Args[0] to Value only if it is absent;
	// Response.Int is 1 if it did (HSETNX).
	KindHSetNX Kind = "hsetnx"
	// KindHGet reads field Args[0] (HGET).
	KindHGet Kind = "hget"
	// KindHMGet reads fields Args into Values, nil for absent (HMGET).
	KindHMGet Kind = "hmget"
	// KindHGetAll returns field, value, ... in Values, fields in byte
	// order (HGETALL).
	KindHGetAll Kind = "hgetall"
	// KindHDel removes fields Args; Response.Int is how many existed.
	KindHDel Kind = "hdel"
	// KindHIncrBy adds Delta to the integer in field Args[0] (HINCRBY).
	KindHIncrBy Kind = "hincrby"
	// KindHIncrByFloat adds Float to field Args[0] (HINCRBYFLOAT).
	KindHIncrByFloat Kind = "hincrbyfloat"
	// KindHLen is the number of fields (HLEN).
	KindHLen Kind = "hlen"
	// KindHExists is 1 if field Args[0] exists (HEXISTS).
	KindHExists Kind = "hexists"
	// KindHStrLen is the length of field Args[0]'s value (HSTRLEN).
	KindHStrLen Kind = "hstrlen"
	// KindHKeys and KindHVals return the fields or values, in field order.
	KindHKeys Kind = "hkeys"
	KindHVals Kind = "hvals"
	// KindHScan pages through field, value pairs (HSCAN).
	KindHScan Kind = "hscan"
)
