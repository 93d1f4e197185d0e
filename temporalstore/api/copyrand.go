package api

// COPY and the random reads of hashes and sorted sets, with Redis's
// semantics.
const (
	// KindCopy copies the value at Key, with its expiry, to Dest (COPY);
	// Response.Int is 1 if it did: not when Key is absent, nor when Dest
	// exists and Replace is not set. Strings, hashes, sets, sorted sets
	// and lists are copied; series and control states are not.
	KindCopy Kind = "copy"
	// KindHRandField returns a random field (Value), or with HasCount up
	// to Count distinct ones, or -Count possibly repeated ones when Count
	// is negative (Values); WithValues makes Values field, value pairs
	// (HRANDFIELD).
	KindHRandField Kind = "hrandfield"
	// KindZRandMember is KindHRandField for a sorted set; WithValues
	// returns the members' scores in Scores (ZRANDMEMBER).
	KindZRandMember Kind = "zrandmember"
)
