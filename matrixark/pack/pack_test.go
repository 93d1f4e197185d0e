package pack_test

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark/pack"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

// rendering is a block as §8 renders and prices it.
func rendering(b pack.Block) string {
	return "[" + string(b.Tier) + "] " + b.URI + " " + b.SourceRef + "\n" + b.Text + "\n"
}

func counters() []tokens.Counter { return []tokens.Counter{tokens.O200k(), tokens.Words{}} }

func TestDefaults(t *testing.T) {
	r := pack.Pack("hello world", nil, pack.Options{})
	require.Equal(t, "o200k_base", r.Tokenizer)
	require.Equal(t, pack.DefaultMaxPromptTokens, r.MaxPromptTokens)
	require.Equal(t, 2048, r.MaxPromptTokens)
	require.Equal(t, 2, r.PromptTokens)
	require.Equal(t, "hello world", r.Rendered)
	require.Empty(t, r.Selected)
	require.Empty(t, r.Blocked)

	r = pack.Pack("hello world", nil, pack.Options{Conformance: true, MaxPromptTokens: -5})
	require.Equal(t, "words", r.Tokenizer, "conformance defaults to the original's estimator")
	require.Equal(t, 2048, r.MaxPromptTokens)
}

func TestRenderFormat(t *testing.T) {
	blocks := []pack.Block{
		{URI: "tsctx://tenant/t/node/7/l0", Tier: "L0", SourceRef: "doc-7", Text: "Checkout: the payment provider changed."},
		{URI: "tsctx://tenant/t/node/7/event/5", Tier: "L2", Text: "raw"},
	}
	r := pack.Pack("What changed?", blocks, pack.Options{Counter: tokens.Words{}, MaxPromptTokens: 100})
	require.Len(t, r.Selected, 2)
	require.Equal(t, "What changed?\n\n<context>\n"+
		"[L0] tsctx://tenant/t/node/7/l0 doc-7\nCheckout: the payment provider changed.\n"+
		"[L2] tsctx://tenant/t/node/7/event/5 \nraw\n"+
		"</context>", r.Rendered)

	r = pack.Pack("What changed?", blocks, pack.Options{Counter: tokens.Words{}, MaxPromptTokens: 3})
	require.Empty(t, r.Selected)
	require.Equal(t, "What changed?", r.Rendered, "no context section when nothing is selected")
}

func TestPromptAtOrOverBudgetSelectsNothing(t *testing.T) {
	prompt := "Summarise the latest checkout incident for the on-call engineer, please."
	blocks := []pack.Block{
		{URI: "u0", Tier: "L0", Text: "a"},
		{URI: "u1", Tier: "L2", Text: ""},
	}
	for _, c := range counters() {
		p := c.Count(prompt)
		for _, budget := range []int{p, p - 1} {
			t.Run(fmt.Sprintf("%s/B=P%+d", c.Name(), budget-p), func(t *testing.T) {
				r := pack.Pack(prompt, blocks, pack.Options{Counter: c, MaxPromptTokens: budget})
				require.Equal(t, p, r.PromptTokens)
				require.Empty(t, r.Selected)
				require.Zero(t, r.SelectedTokens)
				require.Len(t, r.Blocked, 2)
				for i, b := range r.Blocked {
					require.Equal(t, i, b.Rank)
					require.Equal(t, "budget_exceeded:"+string(b.Tier)+":"+b.URI, b.Reason)
					require.Positive(t, b.Tokens)
				}
				require.Equal(t, r.Blocked[0].Tokens+r.Blocked[1].Tokens, r.BlockedTokens)
				require.Equal(t, prompt, r.Rendered)
			})
		}
	}
}

func TestBigBlockBlockedSmallLaterTaken(t *testing.T) {
	big := pack.Block{URI: "tsctx://tenant/t/node/1/event/9", Tier: "L2", SourceRef: "doc-1",
		Text: strings.Repeat("the payment provider rotated its keys and the checkout failed ", 20)}
	small := pack.Block{URI: "tsctx://tenant/t/node/2/l0", Tier: "L0", SourceRef: "doc-2", Text: "Checkout: fixed."}
	for _, c := range counters() {
		t.Run(c.Name(), func(t *testing.T) {
			r := pack.Pack("What broke?", []pack.Block{big, small}, pack.Options{Counter: c, MaxPromptTokens: 60})
			require.Len(t, r.Selected, 1)
			require.Equal(t, small.URI, r.Selected[0].URI)
			require.Equal(t, 1, r.Selected[0].Rank)
			require.Len(t, r.Blocked, 1)
			require.Equal(t, 0, r.Blocked[0].Rank)
			require.Equal(t, "budget_exceeded:L2:tsctx://tenant/t/node/1/event/9", r.Blocked[0].Reason)
			// The small block paid for its rendering and for the wrapper.
			wrapper := c.Count("\n\n<context>\n") + c.Count("</context>")
			require.Equal(t, c.Count(rendering(small))+wrapper, r.Selected[0].Tokens)
			require.Equal(t, r.Selected[0].Tokens, r.SelectedTokens)
			require.LessOrEqual(t, c.Count(r.Rendered), 60)
		})
	}
}

// conformanceCase is small enough to price by hand with whitespace words.
var conformanceCase = struct {
	prompt string
	blocks []pack.Block
}{
	prompt: "alpha beta gamma", // 3 words
	blocks: []pack.Block{
		{URI: "u0", Tier: "L0", SourceRef: "s0", Text: "one two three four"}, // 4
		{URI: "u1", Tier: "L1", SourceRef: "s1", Text: "a b c d e f"},        // 6
		{URI: "u2", Tier: "L2", SourceRef: "s2", Text: "x y"},                // 2
		{URI: "u3", Tier: "L2", SourceRef: "s3", Text: ""},                   // 1, the minimum
	},
}

func TestConformanceReproducesOriginalArithmetic(t *testing.T) {
	// B=10, P=3, R=7. Costs are Count(text): 4 fits (R→3), 6 does not,
	// 2 fits (R→1), 1 fits (R→0). The header lines and the wrapper are
	// free, so the rendered prompt counts 3+1+(3+4)+(3+2)+(3+0)+1 = 20
	// words, over B: the original did not re-count it.
	r := pack.Pack(conformanceCase.prompt, conformanceCase.blocks,
		pack.Options{Conformance: true, MaxPromptTokens: 10})
	require.Equal(t, "words", r.Tokenizer)
	require.Equal(t, 3, r.PromptTokens)
	require.Equal(t, 7, r.SelectedTokens)
	require.Equal(t, 6, r.BlockedTokens)
	require.Equal(t, []int{0, 2, 3}, selectedRanks(r))
	require.Equal(t, []int{4, 2, 1}, []int{r.Selected[0].Tokens, r.Selected[1].Tokens, r.Selected[2].Tokens})
	require.Len(t, r.Blocked, 1)
	require.Equal(t, pack.Blocked{Block: withTokens(conformanceCase.blocks[1], 6), Rank: 1,
		Reason: "budget_exceeded:L1:u1"}, r.Blocked[0])
	require.Equal(t, 20, tokens.Words{}.Count(r.Rendered))
}

func TestHeaderAndWrapperChargedOutsideConformance(t *testing.T) {
	// Same input, B=10, R=7, wrapper "<context>" + "</context>" = 2 words,
	// each header "[Lx] ux sx" = 3 words:
	//   u0: 3+4+2 = 9 > 7 blocked; u1: 3+6+2 = 11 blocked;
	//   u2: 3+2+2 = 7 fits (R→0); u3: 3+0 = 3 blocked.
	// Rendered: 3 + 1 + 5 + 1 = 10 words = B.
	r := pack.Pack(conformanceCase.prompt, conformanceCase.blocks,
		pack.Options{Counter: tokens.Words{}, MaxPromptTokens: 10})
	require.Equal(t, []int{2}, selectedRanks(r))
	require.Equal(t, 7, r.SelectedTokens)
	require.Equal(t, []int{9, 11, 3}, []int{r.Blocked[0].Tokens, r.Blocked[1].Tokens, r.Blocked[2].Tokens})
	require.Equal(t, 23, r.BlockedTokens)
	require.Equal(t, 10, tokens.Words{}.Count(r.Rendered))
}

func TestRenderOverflowDropsLastSelected(t *testing.T) {
	// o200k_base counts "⭕" as one token and the wrapper's opening as
	// three, but "⭕\n\n<context>\n" as five: the join costs a token the
	// per-piece arithmetic cannot see.
	c := tokens.O200k()
	prompt := "⭕"
	first := pack.Block{URI: "tsctx://tenant/t/node/1/l0", Tier: "L0", SourceRef: "doc-1", Text: "Checkout: fixed."}
	second := pack.Block{URI: "tsctx://tenant/t/node/2/l0", Tier: "L0", SourceRef: "doc-2", Text: "Refunds: paused."}
	wrapper := c.Count("\n\n<context>\n") + c.Count("</context>")
	p := c.Count(prompt)
	cost1 := c.Count(rendering(first)) + wrapper
	cost2 := c.Count(rendering(second))

	for _, tc := range []struct {
		name   string
		blocks []pack.Block
		budget int
		kept   []int
	}{
		{"only block dropped", []pack.Block{first}, p + cost1, []int{}},
		{"last of two dropped", []pack.Block{first, second}, p + cost1 + cost2, []int{0}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			full := prompt + "\n\n<context>\n"
			for _, b := range tc.blocks {
				full += rendering(b)
			}
			full += "</context>"
			require.Greater(t, c.Count(full), tc.budget, "the case must overflow at render")

			r := pack.Pack(prompt, tc.blocks, pack.Options{Counter: c, MaxPromptTokens: tc.budget})
			require.Equal(t, tc.kept, selectedRanks(r))
			last := len(tc.blocks) - 1
			require.Equal(t, pack.ReasonRenderOverflow, r.Blocked[len(r.Blocked)-1].Reason)
			require.Equal(t, last, r.Blocked[len(r.Blocked)-1].Rank)
			require.LessOrEqual(t, c.Count(r.Rendered), tc.budget)

			conf := pack.Pack(prompt, tc.blocks, pack.Options{Counter: c, MaxPromptTokens: tc.budget, Conformance: true})
			require.Len(t, conf.Selected, len(tc.blocks), "conformance mode has no step 5")
		})
	}
}

func TestPackLeavesInputAlone(t *testing.T) {
	blocks := []pack.Block{{URI: "u", Tier: "L0", Text: "text"}}
	pack.Pack("p", blocks, pack.Options{Counter: tokens.Words{}})
	require.Zero(t, blocks[0].Tokens)
}

func selectedRanks(r pack.Result) []int {
	out := make([]int, 0, len(r.Selected))
	for _, s := range r.Selected {
		out = append(out, s.Rank)
	}
	return out
}

func withTokens(b pack.Block, n int) pack.Block {
	b.Tokens = n
	return b
}

// vocabulary mixes prose with the characters that make tokenizers merge
// across joins: carriage returns, trailing spaces, emoji, invalid UTF-8.
var vocabulary = []string{
	"checkout", "payment", "failed", "the", "provider", "rotated", "keys", "at", "09:30",
	"2024-05-01", "incident", "INC-4412", "moved", "to", "Berlin", "⭕", "日本語", "naïve",
	"\r", " ", "\t", "\n", "!!", "<|endoftext|>", "</context>", "\xff", "a", "Prefer", "int8.",
}

func randomText(r *rand.Rand, maxWords int) string {
	n := r.IntN(maxWords + 1)
	var sb strings.Builder
	for i := range n {
		if i > 0 && r.IntN(4) > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString(vocabulary[r.IntN(len(vocabulary))])
	}
	return sb.String()
}

func randomBlocks(r *rand.Rand, n int) []pack.Block {
	tiers := []pack.Tier{pack.TierL0, pack.TierL1, pack.TierL2}
	blocks := make([]pack.Block, n)
	for i := range blocks {
		node := r.Uint64N(8)
		blocks[i] = pack.Block{
			URI:         fmt.Sprintf("tsctx://tenant/t/node/%d/event/%d", node, i),
			Tier:        tiers[r.IntN(3)],
			RecordType:  "raw_message",
			NodeHash:    node,
			EventTimeMs: r.Int64N(1_000_000),
			Text:        randomText(r, 60),
			SourceRef:   randomText(r, 2),
		}
	}
	return blocks
}

// TestPackProperties checks the invariants of §8 over seeded random inputs.
func TestPackProperties(t *testing.T) {
	for _, c := range counters() {
		for _, conformance := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/conformance=%v", c.Name(), conformance), func(t *testing.T) {
				rng := rand.New(rand.NewPCG(8, 13))
				var seen struct{ selected, blocked, promptOver, overflow int }
				for i := range 300 {
					prompt := randomText(rng, 80)
					blocks := randomBlocks(rng, rng.IntN(25))
					budget := 1 + rng.IntN(400)
					if rng.IntN(3) == 0 {
						// Budgets that the first k blocks fill exactly, after a
						// prompt ending in a character that merges with the
						// wrapper, reach the render check.
						prompt += []string{"⭕", " \r\n", "\r", ""}[rng.IntN(4)]
						budget = tightBudget(c, prompt, blocks, rng.IntN(len(blocks)+1))
					}
					r := pack.Pack(prompt, blocks, pack.Options{Counter: c, MaxPromptTokens: budget, Conformance: conformance})
					checkResult(t, fmt.Sprintf("case %d", i), c, prompt, blocks, budget, conformance, r)
					seen.selected += len(r.Selected)
					seen.blocked += len(r.Blocked)
					if r.PromptTokens >= budget {
						seen.promptOver++
					}
					for _, b := range r.Blocked {
						if b.Reason == pack.ReasonRenderOverflow {
							seen.overflow++
						}
					}
				}
				t.Logf("%+v", seen)
				// The cases must reach every branch to prove anything.
				require.Positive(t, seen.selected)
				require.Positive(t, seen.blocked)
				require.Positive(t, seen.promptOver)
				if !conformance && c.Name() == "o200k_base" {
					require.Positive(t, seen.overflow)
				}
			})
		}
	}
}

// tightBudget is the budget that the prompt and the first k blocks fill
// exactly outside conformance mode.
func tightBudget(c tokens.Counter, prompt string, blocks []pack.Block, k int) int {
	b := max(c.Count(prompt), 1)
	if k > 0 {
		b += c.Count("\n\n<context>\n") + c.Count("</context>")
	}
	for _, blk := range blocks[:k] {
		b += c.Count(rendering(blk))
	}
	return b
}

func checkResult(t *testing.T, name string, c tokens.Counter, prompt string, in []pack.Block,
	budget int, conformance bool, r pack.Result) {
	t.Helper()
	p := c.Count(prompt)
	require.Equal(t, p, r.PromptTokens, name)
	require.Equal(t, budget, r.MaxPromptTokens, name)
	require.Equal(t, len(in), len(r.Selected)+len(r.Blocked), name)

	// Selected ∪ Blocked is the input, each in input order; the walk
	// selected a block only if it fitted what the earlier ones left.
	si, bi, spent := 0, 0, 0
	sumSel, sumBlk := 0, 0
	for rank, want := range in {
		var got pack.Block
		switch {
		case si < len(r.Selected) && r.Selected[si].Rank == rank:
			got = r.Selected[si].Block
			require.LessOrEqual(t, p+spent+got.Tokens, budget, name)
			spent += got.Tokens
			sumSel += got.Tokens
			si++
		case bi < len(r.Blocked) && r.Blocked[bi].Rank == rank:
			b := r.Blocked[bi]
			got = b.Block
			switch b.Reason {
			case pack.ReasonRenderOverflow:
				require.False(t, conformance, name)
				spent += got.Tokens // selected during the walk, dropped after
			case "budget_exceeded:" + string(got.Tier) + ":" + got.URI:
				require.Greater(t, p+spent+got.Tokens, budget, name)
			default:
				require.Failf(t, "unexpected reason", "%s: %q", name, b.Reason)
			}
			sumBlk += got.Tokens
			bi++
		default:
			require.Failf(t, "block missing", "%s: rank %d", name, rank)
		}
		if conformance {
			require.Equal(t, max(c.Count(want.Text), 1), got.Tokens, name)
		} else {
			require.GreaterOrEqual(t, got.Tokens, c.Count(rendering(want)), name)
		}
		want.Tokens = got.Tokens
		require.Equal(t, want, got, name)
	}
	require.Equal(t, sumSel, r.SelectedTokens, name)
	require.Equal(t, sumBlk, r.BlockedTokens, name)
	require.LessOrEqual(t, p+r.SelectedTokens, max(budget, p), name)
	if p >= budget {
		require.Empty(t, r.Selected, name)
	}

	if len(r.Selected) == 0 {
		require.Equal(t, prompt, r.Rendered, name)
	} else {
		want := prompt + "\n\n<context>\n"
		for _, s := range r.Selected {
			want += rendering(s.Block)
		}
		require.Equal(t, want+"</context>", r.Rendered, name)
	}
	if !conformance {
		require.LessOrEqual(t, c.Count(r.Rendered), max(budget, p), name)
	}
}

// proseSentences build realistic block texts for the benchmark.
var proseSentences = []string{
	"Customer checkout failed after the payment provider rotated its signing keys.",
	"The incident was moved to the fraud review queue on 2024-05-01 at 09:30.",
	"Alice switched the office meeting to Thursday because the room was booked.",
	"Risk score spiked to 87 percent for orders above 500 EUR in Berlin.",
	"The on-call engineer rolled back release 4.12 and refunds resumed within an hour.",
	"No longer using the legacy gateway; traffic now goes through the new cluster.",
}

func BenchmarkPack(b *testing.B) {
	rng := rand.New(rand.NewPCG(1, 2))
	blocks := randomBlocks(rng, 200)
	for i := range blocks {
		var sb strings.Builder
		for range 1 + rng.IntN(6) {
			sb.WriteString(proseSentences[rng.IntN(len(proseSentences))])
			sb.WriteByte(' ')
		}
		blocks[i].Text = sb.String()
		blocks[i].SourceRef = fmt.Sprintf("doc-%d#c%d", blocks[i].NodeHash, i)
	}
	prompt := "What is the latest status of the checkout incident, and what changed after the fraud review?"
	opts := pack.Options{Counter: tokens.O200k(), MaxPromptTokens: 1200}
	var r pack.Result
	for b.Loop() {
		r = pack.Pack(prompt, blocks, opts)
	}
	b.ReportMetric(float64(len(r.Selected)), "selected")
	b.ReportMetric(float64(r.PromptTokens+r.SelectedTokens), "packed_tokens")
	// Every block is priced, selected or not: this is the work per op.
	b.ReportMetric(float64(r.PromptTokens+r.SelectedTokens+r.BlockedTokens), "priced_tokens")
}

// A tier is "l0" in JSON, as the original serializes it, and "L0" in
// prompts and reasons; both spellings read back.
func TestTierJSON(t *testing.T) {
	b, err := json.Marshal(pack.Block{Tier: pack.TierL0})
	require.NoError(t, err)
	require.Contains(t, string(b), `"tier":"l0"`)
	for in, want := range map[string]pack.Tier{`"l1"`: pack.TierL1, `"L2"`: pack.TierL2} {
		var tier pack.Tier
		require.NoError(t, json.Unmarshal([]byte(in), &tier))
		require.Equal(t, want, tier)
	}
}
