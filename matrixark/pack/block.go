package pack

import (
	"slices"
	"strings"
)

// Tier is how much of a node a block says. Prompts and reasons spell it
// "L0"; its JSON (and text) form is the original's "l0".
type Tier string

// Tiers, from the most compact to the most detailed.
const (
	TierL0 Tier = "L0" // "{title}: {lead sentence}", at most 18 words
	TierL1 Tier = "L1" // the lead plus key facts
	TierL2 Tier = "L2" // the raw event or chunk
)

// MarshalText is the tier as the original serializes it: "l0", "l1", "l2".
func (t Tier) MarshalText() ([]byte, error) { return []byte(strings.ToLower(string(t))), nil }

// UnmarshalText reads "l0" or "L0" (audits stored before took the latter).
func (t *Tier) UnmarshalText(b []byte) error {
	*t = Tier(strings.ToUpper(string(b)))
	return nil
}

// Block is one unit of retrieved context, as ranked, packed and returned.
type Block struct {
	URI         string `json:"uri"`
	Tier        Tier   `json:"tier"`
	RecordType  string `json:"record_type"`
	NodeHash    uint64 `json:"node_hash"`
	EventTimeMs int64  `json:"event_time_ms"`
	Text        string `json:"text"`
	// Tokens is what Pack charged (or would have charged) for the block;
	// zero until the block has been through Pack.
	Tokens    int    `json:"tokens"`
	SourceRef string `json:"source_ref"`
	Score     int64  `json:"score"`
	// Cosine is the similarity of the query and the block's node (its
	// best summary vector) when both were embedded, else nil.
	Cosine *float64 `json:"cosine,omitempty"`
}

// tierOrder places L0 before L1 before L2 in the final order; an unknown
// tier sorts last.
func tierOrder(tier Tier) int {
	switch tier {
	case TierL0:
		return 0
	case TierL1:
		return 1
	case TierL2:
		return 2
	}
	return 3
}

// tierDetail ranks how much a tier says: L2 > L1 > L0 > unknown.
func tierDetail(tier Tier) int {
	switch tier {
	case TierL0:
		return 1
	case TierL1:
		return 2
	case TierL2:
		return 3
	}
	return 0
}

// Order sorts blocks in place into the final order: score(text) descending,
// then tier L0 < L1 < L2 (the compact tier first, so a budget spends itself
// on summaries before raw text), then newest event first, then URI
// ascending. Recency is only a tiebreak; nothing decays. Blocks equal on all
// four keys keep their relative order.
//
// score is called once per block, typically with the query plan's score; a
// nil score ranks every block equal. Order does not modify any field,
// Block.Score included.
func Order(blocks []Block, score func(text string) uint32) {
	type keyed struct {
		score uint32
		b     Block
	}
	ks := make([]keyed, len(blocks))
	for i, b := range blocks {
		ks[i].b = b
		if score != nil {
			ks[i].score = score(b.Text)
		}
	}
	slices.SortStableFunc(ks, func(x, y keyed) int {
		switch {
		case x.score != y.score:
			if x.score > y.score {
				return -1
			}
			return 1
		case tierOrder(x.b.Tier) != tierOrder(y.b.Tier):
			return tierOrder(x.b.Tier) - tierOrder(y.b.Tier)
		case x.b.EventTimeMs != y.b.EventTimeMs:
			if x.b.EventTimeMs > y.b.EventTimeMs {
				return -1
			}
			return 1
		}
		return strings.Compare(x.b.URI, y.b.URI)
	})
	for i := range ks {
		blocks[i] = ks[i].b
	}
}

// dedupKey identifies one piece of provenance within a node.
type dedupKey struct {
	node  uint64
	byURI bool // ref holds the URI because the block has no source_ref
	ref   string
}

func keyOf(b Block) dedupKey {
	ref := strings.ToLower(strings.TrimSpace(b.SourceRef))
	if ref == "" {
		return dedupKey{node: b.NodeHash, byURI: true, ref: b.URI}
	}
	return dedupKey{node: b.NodeHash, ref: ref}
}

// Dedup returns blocks without duplicates, in order, leaving the input
// untouched. Two blocks are duplicates when they share the node and the
// source_ref compared trimmed and case-insensitively, or, for blocks without
// a source_ref, the node and the URI. Blocks of different nodes never
// collapse, even with the same source_ref.
//
// Of a set of duplicates the output keeps the position of the first (the
// best-ranked, once Order has run) and the content of the most detailed
// tier (L2 over L1 over L0); between equal tiers, the longer text (in bytes)
// wins, and on a tie the earlier block stays.
func Dedup(blocks []Block) []Block {
	out := make([]Block, 0, len(blocks))
	slot := make(map[dedupKey]int, len(blocks))
	for _, b := range blocks {
		k := keyOf(b)
		i, seen := slot[k]
		if !seen {
			slot[k] = len(out)
			out = append(out, b)
			continue
		}
		kept := out[i]
		dNew, dKept := tierDetail(b.Tier), tierDetail(kept.Tier)
		if dNew > dKept || (dNew == dKept && len(b.Text) > len(kept.Text)) {
			out[i] = b
		}
	}
	return out
}
