package api

// Sorted-set algebra and ZRANGESTORE, with Redis's semantics.
const (
	// KindZUnion, KindZInter and KindZDiff combine the sorted sets at Keys
	// (a set counts as a sorted set of scores 1; a missing key is empty).
	// Scores are multiplied by Scores[i], the weights (default 1), and
	// combined by Aggregator: "sum" (default), "min" or "max"; KindZDiff
	// takes neither. The result is in Values and Scores, by score then
	// member (ZUNION, ZINTER, ZDIFF).
	KindZUnion Kind = "zunion"
	KindZInter Kind = "zinter"
	KindZDiff  Kind = "zdiff"
	// KindZUnionStore, KindZInterStore and KindZDiffStore store that
	// result at Dest, replacing what it held, and return its size in
	// Response.Int. Dest and Keys must share a key group.
	KindZUnionStore Kind = "zunionstore"
	KindZInterStore Kind = "zinterstore"
	KindZDiffStore  Kind = "zdiffstore"
	// KindZRangeStore stores at Dest the members of the sorted set at Key
	// in Range (without WithScores), replacing what Dest held; Response.Int
	// is their count (ZRANGESTORE).
	KindZRangeStore Kind = "zrangestore"
)
