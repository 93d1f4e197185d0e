package pack_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark/pack"
)

// checkoutScore stands in for a query plan: one point per "checkout".
func checkoutScore(text string) uint32 { return uint32(strings.Count(text, "checkout")) }

func uris(blocks []pack.Block) []string {
	out := make([]string, len(blocks))
	for i, b := range blocks {
		out[i] = b.URI
	}
	return out
}

func TestOrder(t *testing.T) {
	for _, tc := range []struct {
		name   string
		score  func(string) uint32
		blocks []pack.Block
		want   []string
	}{
		{
			name:  "equal score: L0 before L1 before L2",
			score: checkoutScore,
			blocks: []pack.Block{
				{URI: "l2", Tier: "L2", Text: "checkout"},
				{URI: "l0", Tier: "L0", Text: "checkout"},
				{URI: "l1", Tier: "L1", Text: "checkout"},
			},
			want: []string{"l0", "l1", "l2"},
		},
		{
			name:  "score beats tier",
			score: checkoutScore,
			blocks: []pack.Block{
				{URI: "l0", Tier: "L0", Text: "checkout"},
				{URI: "l2", Tier: "L2", Text: "checkout checkout"},
			},
			want: []string{"l2", "l0"},
		},
		{
			name:  "equal score and tier: newer first",
			score: checkoutScore,
			blocks: []pack.Block{
				{URI: "old", Tier: "L2", EventTimeMs: 1_000},
				{URI: "new", Tier: "L2", EventTimeMs: 2_000},
				{URI: "mid", Tier: "L2", EventTimeMs: 1_500},
			},
			want: []string{"new", "mid", "old"},
		},
		{
			name:  "tier beats recency",
			score: checkoutScore,
			blocks: []pack.Block{
				{URI: "l1-new", Tier: "L1", EventTimeMs: 9_000},
				{URI: "l0-old", Tier: "L0", EventTimeMs: 1},
			},
			want: []string{"l0-old", "l1-new"},
		},
		{
			name:  "all else equal: uri ascending",
			score: checkoutScore,
			blocks: []pack.Block{
				{URI: "tsctx://b", Tier: "L2", EventTimeMs: 5},
				{URI: "tsctx://a", Tier: "L2", EventTimeMs: 5},
				{URI: "tsctx://c", Tier: "L2", EventTimeMs: 5},
			},
			want: []string{"tsctx://a", "tsctx://b", "tsctx://c"},
		},
		{
			name: "nil score orders by tier, time, uri",
			blocks: []pack.Block{
				{URI: "b", Tier: "L2", Text: "checkout checkout"},
				{URI: "a", Tier: "L1", EventTimeMs: 1},
				{URI: "c", Tier: "L1", EventTimeMs: 2},
			},
			want: []string{"c", "a", "b"},
		},
		{
			name:  "unknown tier sorts after L2",
			score: checkoutScore,
			blocks: []pack.Block{
				{URI: "x", Tier: "L9"},
				{URI: "y", Tier: "L2"},
			},
			want: []string{"y", "x"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pack.Order(tc.blocks, tc.score)
			require.Equal(t, tc.want, uris(tc.blocks))
		})
	}
}

func TestOrderIsStableAndScoresOnce(t *testing.T) {
	blocks := []pack.Block{
		{URI: "same", Tier: "L2", SourceRef: "first", Score: 7},
		{URI: "same", Tier: "L2", SourceRef: "second", Score: 8},
		{URI: "same", Tier: "L2", SourceRef: "third", Score: 9},
	}
	calls := 0
	pack.Order(blocks, func(string) uint32 { calls++; return 1 })
	require.Equal(t, 3, calls)
	require.Equal(t, []string{"first", "second", "third"},
		[]string{blocks[0].SourceRef, blocks[1].SourceRef, blocks[2].SourceRef})
	require.Equal(t, int64(7), blocks[0].Score, "Order leaves Score alone")
}

func TestDedup(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []pack.Block
		want []pack.Block
	}{
		{
			name: "shared source_ref collapses to the detailed tier in the first slot",
			in: []pack.Block{
				{URI: "n1/l0", Tier: "L0", NodeHash: 1, SourceRef: "doc-1", Text: "Checkout: short"},
				{URI: "n2/l0", Tier: "L0", NodeHash: 2, SourceRef: "doc-2", Text: "other"},
				{URI: "n1/ev", Tier: "L2", NodeHash: 1, SourceRef: "doc-1", Text: "the whole event"},
			},
			want: []pack.Block{
				{URI: "n1/ev", Tier: "L2", NodeHash: 1, SourceRef: "doc-1", Text: "the whole event"},
				{URI: "n2/l0", Tier: "L0", NodeHash: 2, SourceRef: "doc-2", Text: "other"},
			},
		},
		{
			name: "across nodes both stay",
			in: []pack.Block{
				{URI: "n1/l0", Tier: "L0", NodeHash: 1, SourceRef: "shared"},
				{URI: "n2/l2", Tier: "L2", NodeHash: 2, SourceRef: "shared"},
			},
			want: []pack.Block{
				{URI: "n1/l0", Tier: "L0", NodeHash: 1, SourceRef: "shared"},
				{URI: "n2/l2", Tier: "L2", NodeHash: 2, SourceRef: "shared"},
			},
		},
		{
			name: "source_ref compared trimmed and case-insensitively",
			in: []pack.Block{
				{URI: "a", Tier: "L0", NodeHash: 1, SourceRef: " Doc-1 "},
				{URI: "b", Tier: "L1", NodeHash: 1, SourceRef: "doc-1"},
			},
			want: []pack.Block{
				{URI: "b", Tier: "L1", NodeHash: 1, SourceRef: "doc-1"},
			},
		},
		{
			name: "a less detailed duplicate does not replace",
			in: []pack.Block{
				{URI: "ev", Tier: "L2", NodeHash: 1, SourceRef: "m1", Text: "x"},
				{URI: "l1", Tier: "L1", NodeHash: 1, SourceRef: "m1", Text: "a much longer text"},
			},
			want: []pack.Block{
				{URI: "ev", Tier: "L2", NodeHash: 1, SourceRef: "m1", Text: "x"},
			},
		},
		{
			name: "equal tier: longer text replaces, equal length keeps the first",
			in: []pack.Block{
				{URI: "a", Tier: "L2", NodeHash: 1, SourceRef: "r", Text: "abc"},
				{URI: "b", Tier: "L2", NodeHash: 1, SourceRef: "r", Text: "abcd"},
				{URI: "c", Tier: "L2", NodeHash: 1, SourceRef: "r", Text: "wxyz"},
			},
			want: []pack.Block{
				{URI: "b", Tier: "L2", NodeHash: 1, SourceRef: "r", Text: "abcd"},
			},
		},
		{
			name: "empty source_ref keys on the uri",
			in: []pack.Block{
				{URI: "u1", Tier: "L2", NodeHash: 1, Text: "a"},
				{URI: "u2", Tier: "L2", NodeHash: 1, Text: "b"},
				{URI: "u1", Tier: "L2", NodeHash: 1, SourceRef: "  ", Text: "longer"},
				{URI: "u3", Tier: "L2", NodeHash: 1, SourceRef: "u1", Text: "ref equal to a uri"},
			},
			want: []pack.Block{
				{URI: "u1", Tier: "L2", NodeHash: 1, SourceRef: "  ", Text: "longer"},
				{URI: "u2", Tier: "L2", NodeHash: 1, Text: "b"},
				{URI: "u3", Tier: "L2", NodeHash: 1, SourceRef: "u1", Text: "ref equal to a uri"},
			},
		},
		{
			name: "empty input",
			in:   nil,
			want: []pack.Block{},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			in := append([]pack.Block(nil), tc.in...)
			require.Equal(t, tc.want, pack.Dedup(in))
			require.Equal(t, tc.in, in, "input untouched")
		})
	}
}

// TestOrderThenDedup is the §6 pipeline: ties order L0 < L1 < L2, then the
// node's shared source_ref collapses into the first (L0) slot with the L2
// content, while the other node's block with the same ref stays.
func TestOrderThenDedup(t *testing.T) {
	blocks := []pack.Block{
		{URI: "n1/event/5", Tier: "L2", NodeHash: 1, SourceRef: "doc-1", EventTimeMs: 5, Text: "raw checkout event"},
		{URI: "n2/l1", Tier: "L1", NodeHash: 2, SourceRef: "doc-1", EventTimeMs: 9, Text: "checkout facts"},
		{URI: "n1/l0", Tier: "L0", NodeHash: 1, SourceRef: "doc-1", EventTimeMs: 5, Text: "checkout title"},
		{URI: "n3/l0", Tier: "L0", NodeHash: 3, SourceRef: "doc-3", EventTimeMs: 1, Text: "unrelated"},
	}
	pack.Order(blocks, checkoutScore)
	require.Equal(t, []string{"n1/l0", "n2/l1", "n1/event/5", "n3/l0"}, uris(blocks))
	require.Equal(t, []string{"n1/event/5", "n2/l1", "n3/l0"}, uris(pack.Dedup(blocks)))
}
