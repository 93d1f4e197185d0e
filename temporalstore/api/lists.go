package api

// List kinds, with Redis's semantics. Elements are in Args, indexes in
// Start and End.
const (
	// KindLPush and KindRPush push Args at the head or tail, in order;
	// Response.Int is the new length (LPUSH, RPUSH). With Cond IfPresent
	// they push only onto an existing list (LPUSHX, RPUSHX; else 0).
	KindLPush Kind = "lpush"
	KindRPush Kind = "rpush"
	// KindLPop and KindRPop remove and return one element (Value), or up
	// to Count (Values) when HasCount (LPOP, RPOP).
	KindLPop Kind = "lpop"
	KindRPop Kind = "rpop"
	// KindLRange returns elements Start..End inclusive, negative counting
	// from the tail (LRANGE).
	KindLRange Kind = "lrange"
	// KindLLen is the length (LLEN).
	KindLLen Kind = "llen"
	// KindLIndex returns element Start (LINDEX).
	KindLIndex Kind = "lindex"
	// KindLSet replaces element Start with Value (LSET): ErrNoSuchKey or
	// ErrOutOfRange when there is none.
	KindLSet Kind = "lset"
	// KindLTrim keeps elements Start..End (LTRIM).
	KindLTrim Kind = "ltrim"
	// KindLRem removes Count elements equal to Value, from the head (Count
	// > 0), the tail (< 0) or all (0); Response.Int is how many (LREM).
	KindLRem Kind = "lrem"
	// KindLInsert inserts Value before (Before) or after the first
	// element equal to Args[0]; Response.Int is the new length, -1 when
	// the pivot is absent, 0 when the key is (LINSERT).
	KindLInsert Kind = "linsert"
	// KindLPos finds Value: its index in Int (Found), or with HasCount
	// up to Count indexes (0: all) in Ints; Rank picks the match to start
	// from (negative: from the tail), MaxLen bounds the elements compared
	// (LPOS).
	KindLPos Kind = "lpos"
	// KindLMove pops from Key's head (FromLeft) or tail and pushes onto
	// Dest's head (ToLeft) or tail, in one record; Value is the element
	// (LMOVE).
	KindLMove Kind = "lmove"
)
