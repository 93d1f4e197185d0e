package pack

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/temporalstore/temporalstore-go/matrixark/internal/h64"
)

// MaxAuditRefs caps each list of references in an Audit.
const MaxAuditRefs = 512

// ErrInvalidAudit reports bytes that do not decode to a valid Audit.
var ErrInvalidAudit = errors.New("pack: invalid audit")

// Ref records one block of a pack in an Audit.
type Ref struct {
	Rank        int    `json:"rank"` // 0-based position in the ranked input
	NodeHash    uint64 `json:"node_hash"`
	EventTimeMs int64  `json:"event_time_ms"`
	URI         string `json:"uri"`
	Tier        Tier   `json:"tier"`
	RecordType  string `json:"record_type"`
	SourceRef   string `json:"source_ref"`
	Tokens      int    `json:"tokens"`
	// Reason is "{Tier}:{uri}" for a selected block, as the original
	// recorded it, and the Blocked reason for a blocked one.
	Reason string `json:"reason"`
}

// Audit is the durable record of one pack: what went into the prompt, what
// was held back and why. Strings are UTF-8; the JSON form round-trips
// exactly, uint64 hashes included.
type Audit struct {
	AuditID       string `json:"audit_id"`
	Tenant        string `json:"tenant"`
	SessionHash   uint64 `json:"session_hash"`
	QueryID       string `json:"query_id"`
	RequestTimeMs int64  `json:"request_time_ms"`

	QueryHash  uint64 `json:"query_hash"`  // Hash64(query)
	PromptHash uint64 `json:"prompt_hash"` // Hash64(prompt)
	PackHash   uint64 `json:"pack_hash"`   // Hash64(rendered prompt)

	Tokenizer       string `json:"tokenizer"`
	MaxPromptTokens int    `json:"max_prompt_tokens"`
	PromptTokens    int    `json:"prompt_tokens"`
	SelectedTokens  int    `json:"selected_tokens"`
	BlockedTokens   int    `json:"blocked_tokens"`

	// SelectedRefs and BlockedRefs hold at most MaxAuditRefs entries each,
	// the best-ranked first; the overflow fields count the rest, whose
	// tokens are still in SelectedTokens and BlockedTokens.
	SelectedRefs     []Ref `json:"selected_refs"`
	BlockedRefs      []Ref `json:"blocked_refs"`
	SelectedOverflow int   `json:"selected_overflow,omitempty"`
	BlockedOverflow  int   `json:"blocked_overflow"`
}

// AuditMeta identifies the pack an Audit describes.
type AuditMeta struct {
	AuditID       string
	Tenant        string
	SessionHash   uint64
	QueryID       string
	RequestTimeMs int64
	// Query is the retrieval query; the audit keeps only its hash.
	Query string
}

// Hash64 is FNV-1a 64 of s, with 0 mapped to 1 so that 0 can mean "none":
// the hash of every id and key in matrixark.
func Hash64(s string) uint64 { return h64.Sum(s) }

// NewAudit records r. Each list of references keeps the first MaxAuditRefs
// blocks in rank order and counts the rest in BlockedOverflow (or
// SelectedOverflow, which a budget rarely allows: it takes more than 512
// blocks of a few tokens each). The original dropped the whole audit past
// 512 blocked blocks; here it always stays writable.
func NewAudit(m AuditMeta, r Result) Audit {
	a := Audit{
		AuditID:         m.AuditID,
		Tenant:          m.Tenant,
		SessionHash:     m.SessionHash,
		QueryID:         m.QueryID,
		RequestTimeMs:   m.RequestTimeMs,
		QueryHash:       Hash64(m.Query),
		PromptHash:      Hash64(r.Prompt),
		PackHash:        Hash64(r.Rendered),
		Tokenizer:       r.Tokenizer,
		MaxPromptTokens: r.MaxPromptTokens,
		PromptTokens:    r.PromptTokens,
		SelectedTokens:  r.SelectedTokens,
		BlockedTokens:   r.BlockedTokens,
		SelectedRefs:    make([]Ref, 0, min(len(r.Selected), MaxAuditRefs)),
		BlockedRefs:     make([]Ref, 0, min(len(r.Blocked), MaxAuditRefs)),
	}
	for i, s := range r.Selected {
		if i == MaxAuditRefs {
			a.SelectedOverflow = len(r.Selected) - MaxAuditRefs
			break
		}
		a.SelectedRefs = append(a.SelectedRefs, refOf(s.Block, s.Rank, string(s.Tier)+":"+s.URI))
	}
	for i, b := range r.Blocked {
		if i == MaxAuditRefs {
			a.BlockedOverflow = len(r.Blocked) - MaxAuditRefs
			break
		}
		a.BlockedRefs = append(a.BlockedRefs, refOf(b.Block, b.Rank, b.Reason))
	}
	return a
}

func refOf(b Block, rank int, reason string) Ref {
	return Ref{
		Rank:        rank,
		NodeHash:    b.NodeHash,
		EventTimeMs: b.EventTimeMs,
		URI:         b.URI,
		Tier:        b.Tier,
		RecordType:  b.RecordType,
		SourceRef:   b.SourceRef,
		Tokens:      b.Tokens,
		Reason:      reason,
	}
}

// DecodeAudit parses the JSON form of an Audit, as stored. Anything that is
// not one JSON object of the right shape fails with ErrInvalidAudit, as does
// an audit without an id, with a negative count, or with more than
// MaxAuditRefs references in a list. Unknown fields are ignored, so that
// records written by a newer version stay readable.
func DecodeAudit(data []byte) (Audit, error) {
	var a Audit
	if err := json.Unmarshal(data, &a); err != nil {
		return Audit{}, fmt.Errorf("%w: %v", ErrInvalidAudit, err)
	}
	if err := a.validate(); err != nil {
		return Audit{}, err
	}
	return a, nil
}

func (a *Audit) validate() error {
	if a.AuditID == "" {
		return fmt.Errorf("%w: no audit_id", ErrInvalidAudit)
	}
	for _, f := range []struct {
		name string
		v    int
	}{
		{"max_prompt_tokens", a.MaxPromptTokens},
		{"prompt_tokens", a.PromptTokens},
		{"selected_tokens", a.SelectedTokens},
		{"blocked_tokens", a.BlockedTokens},
		{"selected_overflow", a.SelectedOverflow},
		{"blocked_overflow", a.BlockedOverflow},
	} {
		if f.v < 0 {
			return fmt.Errorf("%w: negative %s", ErrInvalidAudit, f.name)
		}
	}
	for _, l := range []struct {
		name string
		refs []Ref
	}{
		{"selected_refs", a.SelectedRefs},
		{"blocked_refs", a.BlockedRefs},
	} {
		if len(l.refs) > MaxAuditRefs {
			return fmt.Errorf("%w: %d %s, more than %d", ErrInvalidAudit, len(l.refs), l.name, MaxAuditRefs)
		}
		for i, ref := range l.refs {
			if ref.Rank < 0 || ref.Tokens < 0 {
				return fmt.Errorf("%w: %s[%d] has a negative rank or tokens", ErrInvalidAudit, l.name, i)
			}
		}
	}
	return nil
}
