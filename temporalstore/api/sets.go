package api

// Set kinds, with Redis's semantics. Members are in Args.
const (
	// KindSAdd adds members; Response.Int is how many are new (SADD).
	KindSAdd Kind = "sadd"
	// KindSRem removes members; Response.Int is how many existed (SREM).
	KindSRem Kind = "srem"
	// KindSMembers returns the members in byte order (SMEMBERS).
	KindSMembers Kind = "smembers"
	// KindSIsMember is 1 if Args[0] is a member (SISMEMBER).
	KindSIsMember Kind = "sismember"
	// KindSMIsMember returns 1 or 0 per member of Args in Ints.
	KindSMIsMember Kind = "smismember"
	// KindSCard is the number of members (SCARD).
	KindSCard Kind = "scard"
	// KindSPop removes and returns a random member (Value), or Count of
	// them (Values) when HasCount (SPOP).
	KindSPop Kind = "spop"
	// KindSRandMember returns a random member, or with HasCount up to
	// Count distinct ones, or -Count possibly repeated ones when Count is
	// negative (SRANDMEMBER).
	KindSRandMember Kind = "srandmember"
	// KindSScan pages through members (SSCAN).
	KindSScan Kind = "sscan"
	// KindSInter, KindSUnion and KindSDiff combine the sets at Keys (a
	// missing key is an empty set) and return members in byte order.
	KindSInter Kind = "sinter"
	KindSUnion Kind = "sunion"
	KindSDiff  Kind = "sdiff"
)
