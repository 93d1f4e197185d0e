package matrixark

import (
	"context"
	"encoding/binary"
	"encoding/hex"
	"errors"
	"fmt"

	"github.com/temporalstore/temporalstore-go/matrixark/pack"
)

// PackRequest retrieves for Retrieve and packs the blocks after Prompt,
// within MaxPromptTokens.
type PackRequest struct {
	Retrieve Query  `json:"retrieve"`
	Prompt   string `json:"prompt"`
	// SessionID keys the audit (default Retrieve.Session).
	SessionID string `json:"session_id,omitempty"`
	QueryID   string `json:"query_id,omitempty"`
	// MaxPromptTokens is the budget of prompt and context together
	// (default 2,048).
	MaxPromptTokens int `json:"max_prompt_tokens,omitempty"`
}

// PackResult is a packed prompt, what went in, what was held back, and
// the audit that records it (already durable).
type PackResult struct {
	InjectedPrompt string          `json:"injected_prompt"`
	Selected       []pack.Selected `json:"selected_blocks"`
	Blocked        []pack.Blocked  `json:"blocked_blocks"`
	Audit          pack.Audit      `json:"audit"`
}

// Pack retrieves, packs to the budget (the prompt charged first, blocks
// greedily in rank order, a block that does not fit skipped for smaller
// ones after it), and writes the pack's audit durably before returning. A
// pack whose audit cannot be written fails with ErrAuditWrite and returns
// no prompt.
func (e *Engine) Pack(ctx context.Context, t string, r PackRequest) (PackResult, error) {
	if len(r.Prompt) > MaxTextBytes {
		return PackResult{}, fmt.Errorf("%w: prompt longer than %d bytes", ErrInvalid, MaxTextBytes)
	}
	if len(r.QueryID) > MaxRefBytes {
		return PackResult{}, fmt.Errorf("%w: query_id longer than %d bytes", ErrInvalid, MaxRefBytes)
	}
	if r.SessionID == "" {
		r.SessionID = r.Retrieve.Session
	}
	if err := checkName("session_id", r.SessionID, false); err != nil {
		return PackResult{}, err
	}
	blocks, err := e.Retrieve(ctx, t, r.Retrieve)
	if err != nil {
		return PackResult{}, err
	}
	res := pack.Pack(r.Prompt, blocks, pack.Options{Counter: e.o.Counter, MaxPromptTokens: r.MaxPromptTokens})
	now := e.o.Now().UnixMilli()
	session, seq := hashOf(r.SessionID), e.nextSeq()
	key := auditKey(t, session, now, seq)
	a := pack.NewAudit(pack.AuditMeta{
		AuditID: hex.EncodeToString(key[len(tenantKey(famAudit, t)):]), Tenant: t, SessionHash: session,
		QueryID: r.QueryID, RequestTimeMs: now, Query: r.Retrieve.Text,
	}, res)
	var b batch
	b.put(key, a)
	if b.err == nil {
		b.err = e.store.Apply(ctx, b.m, WriteOpts{Durable: true})
	}
	if b.err != nil {
		return PackResult{}, fmt.Errorf("%w: %w", ErrAuditWrite, b.err)
	}
	return PackResult{InjectedPrompt: res.Rendered, Selected: res.Selected, Blocked: res.Blocked, Audit: a}, nil
}

// AuditQuery selects a session's audits by request time.
type AuditQuery struct {
	Session string
	// The window of request times, in ms; 0 leaves a side open.
	StartMs, EndMs int64
	// Limit bounds the audits returned, oldest first (default 100, at
	// most 1,000).
	Limit int
}

// Audits returns tenant t's pack audits of a session in a window.
func (e *Engine) Audits(ctx context.Context, t string, q AuditQuery) ([]pack.Audit, error) {
	if err := checkName("tenant", t, true); err != nil {
		return nil, err
	}
	if err := checkName("session", q.Session, false); err != nil {
		return nil, err
	}
	if q.Limit <= 0 {
		q.Limit = DefaultLimit
	}
	q.Limit = min(q.Limit, MaxLimit)
	prefix := auditPrefix(t, hashOf(q.Session))
	r := PrefixRange(prefix)
	if q.StartMs > 0 {
		r.Start = binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(q.StartMs))
	}
	if q.EndMs > 0 {
		r.End = binary.BigEndian.AppendUint64(append([]byte(nil), prefix...), uint64(q.EndMs+1))
	}
	var out []pack.Audit
	var bad error
	err := e.store.Scan(ctx, r, ReadOpts{}, func(_, v []byte) bool {
		a, err := pack.DecodeAudit(v)
		if err != nil {
			bad = err
			return false
		}
		out = append(out, a)
		return len(out) < q.Limit
	})
	if err == nil {
		err = bad
	}
	return out, err
}

// Audit returns one audit by its id.
func (e *Engine) Audit(ctx context.Context, t, id string) (pack.Audit, error) {
	if err := checkName("tenant", t, true); err != nil {
		return pack.Audit{}, err
	}
	suffix, err := hex.DecodeString(id)
	if err != nil || len(suffix) != 20 {
		return pack.Audit{}, fmt.Errorf("%w: audit id %q", ErrNotFound, id)
	}
	key := append(tenantKey(famAudit, t), suffix...)
	got, err := e.store.Get(ctx, [][]byte{key}, ReadOpts{})
	if err != nil {
		return pack.Audit{}, err
	}
	if got[0] == nil {
		return pack.Audit{}, fmt.Errorf("%w: audit %s", ErrNotFound, id)
	}
	a, err := pack.DecodeAudit(got[0])
	if err != nil {
		return pack.Audit{}, errors.Join(fmt.Errorf("matrixark: audit %s", id), err)
	}
	return a, nil
}
