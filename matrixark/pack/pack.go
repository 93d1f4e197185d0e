package pack

import (
	"slices"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

// DefaultMaxPromptTokens is the budget B when Options.MaxPromptTokens is not
// set.
const DefaultMaxPromptTokens = 2048

// The context section wraps the selected blocks after the prompt.
const (
	contextOpen  = "\n\n<context>\n"
	contextClose = "</context>"
)

// Reasons a block is held back.
const (
	// ReasonBudgetExceeded prefixes "budget_exceeded:{Tier}:{uri}": the
	// block did not fit the budget left when its turn came.
	ReasonBudgetExceeded = "budget_exceeded"
	// ReasonRenderOverflow marks a block that fitted the per-block
	// arithmetic but was dropped because the rendered prompt counted more
	// than the budget (a tokenizer may merge across the joins).
	ReasonRenderOverflow = "render_overflow"
)

// Options tunes Pack. The zero value packs at 2,048 o200k_base tokens.
type Options struct {
	// Counter prices the prompt and the blocks. Default tokens.O200k(),
	// or tokens.Words{} in conformance mode.
	Counter tokens.Counter
	// MaxPromptTokens is the budget B for the prompt plus the context.
	// Zero or negative means DefaultMaxPromptTokens.
	MaxPromptTokens int
	// Conformance reproduces the original arithmetic: a block costs
	// Count(text) alone, with neither its header line nor the <context>
	// wrapper charged, and the rendered prompt is not re-counted (so it
	// may exceed the budget). The rendering itself is the same.
	Conformance bool
}

// withDefaults is the one place Options defaults are applied.
func (o Options) withDefaults() Options {
	if o.Counter == nil {
		if o.Conformance {
			o.Counter = tokens.Words{}
		} else {
			o.Counter = tokens.O200k()
		}
	}
	if o.MaxPromptTokens <= 0 {
		o.MaxPromptTokens = DefaultMaxPromptTokens
	}
	return o
}

// Selected is a block that went into the prompt.
type Selected struct {
	Block
	// Rank is the block's 0-based position in the input of Pack.
	Rank int `json:"rank"`
}

// Blocked is a block held back, with why.
type Blocked struct {
	Block
	// Rank is the block's 0-based position in the input of Pack.
	Rank int `json:"rank"`
	// Reason is "budget_exceeded:{Tier}:{uri}" or "render_overflow".
	Reason string `json:"reason"`
}

// Result is the outcome of Pack. Every input block is in exactly one of
// Selected and Blocked, each list in input order, each block with Tokens set
// to what it was charged; SelectedTokens and BlockedTokens are the sums of
// those charges, and SelectedTokens ≤ max(MaxPromptTokens−PromptTokens, 0).
type Result struct {
	Prompt          string // the prompt as given
	Rendered        string // the prompt followed by the context section
	Tokenizer       string // Counter.Name() of the counter used
	MaxPromptTokens int    // the budget B
	PromptTokens    int    // P = Count(prompt), charged first
	SelectedTokens  int
	BlockedTokens   int
	Selected        []Selected
	Blocked         []Blocked
}

// renderBlock is a block as it appears in the context section; outside
// conformance mode it is also what the block costs.
func renderBlock(b Block) string {
	return "[" + string(b.Tier) + "] " + b.URI + " " + b.SourceRef + "\n" + b.Text + "\n"
}

// budgetReason is the reason of a block that did not fit.
func budgetReason(b Block) string {
	return ReasonBudgetExceeded + ":" + string(b.Tier) + ":" + b.URI
}

// Pack fits blocks, already in rank order, into the token budget after the
// prompt, and renders the result:
//
//  1. B = MaxPromptTokens, P = Count(prompt), R = max(B−P, 0): the prompt
//     is charged first, so P ≥ B selects nothing.
//  2. Blocks are walked in order. A block costs
//     Count("[{Tier}] {uri} {source_ref}\n{text}\n"), at least 1, and the
//     first block selected also pays for the "\n\n<context>\n" and
//     "</context>" wrapper.
//  3. A block that fits the remaining budget is selected; one that does
//     not is blocked as "budget_exceeded:{Tier}:{uri}" and the walk
//     continues, because a smaller block further down may still fit.
//  4. The prompt is rendered as prompt + "\n\n<context>\n" + the selected
//     blocks + "</context>", or as the prompt alone if nothing was selected.
//  5. While Count(rendered) > B, which a tokenizer merging across the joins
//     can cause, the last selected block moves to Blocked as
//     "render_overflow". So Count(rendered) ≤ B whenever P ≤ B.
//
// In conformance mode a block costs Count(text) and neither the wrapper nor
// step 5 applies (see Options.Conformance).
func Pack(prompt string, blocks []Block, opts Options) Result {
	o := opts.withDefaults()
	c := o.Counter
	r := Result{
		Prompt:          prompt,
		Tokenizer:       c.Name(),
		MaxPromptTokens: o.MaxPromptTokens,
		PromptTokens:    c.Count(prompt),
		Selected:        make([]Selected, 0),
		Blocked:         make([]Blocked, 0),
	}
	remaining := max(o.MaxPromptTokens-r.PromptTokens, 0)
	wrapper := 0
	if !o.Conformance {
		wrapper = c.Count(contextOpen) + c.Count(contextClose)
	}

	var rendered []string // renderBlock of each selected block
	for rank, b := range blocks {
		text := renderBlock(b)
		var cost int
		if o.Conformance {
			cost = c.Count(b.Text)
		} else {
			cost = c.Count(text)
		}
		// A block is never free: a zero-cost block would otherwise land in
		// an exhausted budget.
		cost = max(cost, 1)
		if len(r.Selected) == 0 {
			cost += wrapper
		}
		b.Tokens = cost
		if cost <= remaining {
			remaining -= cost
			r.SelectedTokens += cost
			r.Selected = append(r.Selected, Selected{Block: b, Rank: rank})
			rendered = append(rendered, text)
			continue
		}
		r.BlockedTokens += cost
		r.Blocked = append(r.Blocked, Blocked{Block: b, Rank: rank, Reason: budgetReason(b)})
	}

	r.Rendered = render(prompt, rendered)
	if o.Conformance {
		return r
	}
	dropped := false
	for len(r.Selected) > 0 && c.Count(r.Rendered) > o.MaxPromptTokens {
		last := r.Selected[len(r.Selected)-1]
		r.Selected = r.Selected[:len(r.Selected)-1]
		rendered = rendered[:len(rendered)-1]
		r.SelectedTokens -= last.Tokens
		r.BlockedTokens += last.Tokens
		r.Blocked = append(r.Blocked, Blocked{Block: last.Block, Rank: last.Rank, Reason: ReasonRenderOverflow})
		r.Rendered = render(prompt, rendered)
		dropped = true
	}
	if dropped {
		slices.SortFunc(r.Blocked, func(x, y Blocked) int { return x.Rank - y.Rank })
	}
	return r
}

// render joins the prompt and the rendered blocks into the final prompt.
func render(prompt string, blocks []string) string {
	if len(blocks) == 0 {
		return prompt
	}
	n := len(prompt) + len(contextOpen) + len(contextClose)
	for _, s := range blocks {
		n += len(s)
	}
	var sb strings.Builder
	sb.Grow(n)
	sb.WriteString(prompt)
	sb.WriteString(contextOpen)
	for _, s := range blocks {
		sb.WriteString(s)
	}
	sb.WriteString(contextClose)
	return sb.String()
}
