package api

// Kinds over keys of any type.
const (
	// KindExistsKeys counts how many of Keys exist (EXISTS k1 k2 ...); a
	// key named twice counts twice.
	KindExistsKeys Kind = "exists_keys"
	// KindDeleteKeys deletes Keys (DEL/UNLINK k1 k2 ...); Response.Int is
	// how many existed. Keys of one shard are deleted in one crash-atomic
	// record.
	KindDeleteKeys Kind = "delete_keys"
	// KindMGet reads Keys (MGET); Values has nil for a missing key or one
	// that is not a string.
	KindMGet Kind = "mget"
	// KindMSet stores Args[i] under Keys[i] (MSET). The keys of one shard
	// are written in one crash-atomic record; keys on several shards are
	// several records (give them a common {hash tag} for one).
	KindMSet Kind = "mset"
	// KindGetEx reads a string and sets its TTL (TTL or ExpireAt), or
	// removes it (Persist), as GETEX.
	KindGetEx Kind = "get_ex"
	// KindExpireTime returns the absolute expiry in Unix ms in
	// Response.Int: -2 when absent, -1 when none (PEXPIRETIME).
	KindExpireTime Kind = "expire_time"
	// KindRename renames Key to Dest, replacing Dest (RENAME). Key must
	// exist (ErrNoSuchKey). With Cond IfAbsent it renames only when Dest
	// does not exist (RENAMENX); Applied says it did.
	KindRename Kind = "rename"
)
