package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/pack"
	"github.com/temporalstore/temporalstore-go/temporalstore/httpapi"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// contextKinds serves context_* command kinds on /execute and
// /batch_execute with matrixark: retrieval and injection in the shapes of
// the original's ContextRetrieveRequest and ContextInjectRequest, an
// event's ingest and the pack audits' query. The original's storage-level
// kinds (nodes, index refs, dirty markers, ...) address its own record
// layout by hash and stay "unsupported": matrixark derives those records
// from what it ingests. A command's tenant is its "tenant" (or the
// request's), "default" when neither names one.
//
// In a cluster (router set) they are served by the member leading the
// context table, as the context routes are (contextRouter).
type contextKinds struct {
	ark    *matrixark.Engine
	router *contextRouter
}

// ContextLeader implements httpapi.ContextLeader in a cluster.
func (k contextKinds) ContextLeader(ctx context.Context) (string, error) {
	if k.router == nil {
		return "", nil
	}
	return k.router.leaderURL(ctx)
}

// contextKindWrites are the served kinds, and whether each writes.
var contextKindWrites = map[string]bool{
	"context_retrieve":         false,
	"context_query_pack_audit": false,
	"context_inject":           true, // writes the pack's audit
	"context_write_event":      true,
}

func (k contextKinds) Serves(kind string) (served, write bool) {
	write, served = contextKindWrites[kind]
	return served, write
}

// retrieveCommand is the original's ContextRetrieveRequest, with
// matrixark's scope fields. shard_id and tenant_hash are accepted and not
// used: the tenant is named, and the engine routes by key.
type retrieveCommand struct {
	Query              string   `json:"query"`
	NodeHashes         []uint64 `json:"node_hashes"`
	StartMs            int64    `json:"start_time_ms"`
	EndMs              int64    `json:"end_time_ms"`
	MaxEvents          int      `json:"max_events"`
	MinConfidence      float64  `json:"min_confidence"`
	MinImportance      float64  `json:"min_importance"`
	Tiers              []string `json:"tiers"` // l0, l1, l2
	MaxSummaryNodes    int      `json:"max_summary_nodes"`
	MaxEventNodes      int      `json:"max_event_nodes"`
	PreferCurrentAgent bool     `json:"prefer_current_agent"`
	UserID             string   `json:"user_id"`
	SessionID          string   `json:"session_id"`
	AgentID            string   `json:"agent_id"`
}

func (c *retrieveCommand) query() matrixark.Query {
	return matrixark.Query{Text: c.Query, User: c.UserID, Session: c.SessionID, Agent: c.AgentID,
		NodeHashes: c.NodeHashes, MaxEvents: c.MaxEvents, MaxSummaryNodes: c.MaxSummaryNodes,
		MaxEventNodes: c.MaxEventNodes, StartMs: c.StartMs, EndMs: c.EndMs, MinConfidence: c.MinConfidence,
		MinImportance: c.MinImportance, PreferCurrentAgent: c.PreferCurrentAgent}
}

// keep is the blocks of the asked tiers (all without Tiers), named as the
// original does (l0, l1, l2) or as blocks are (L0, L1, L2).
func (c *retrieveCommand) keep(blocks []pack.Block) ([]pack.Block, error) {
	if len(c.Tiers) == 0 {
		return blocks, nil
	}
	tiers := make([]pack.Tier, len(c.Tiers))
	for i, t := range c.Tiers {
		tiers[i] = pack.Tier(strings.ToUpper(t))
		if tiers[i] != pack.TierL0 && tiers[i] != pack.TierL1 && tiers[i] != pack.TierL2 {
			return nil, fmt.Errorf("%w: tier %q: l0, l1 or l2", httpapi.ErrBadRequest, t)
		}
	}
	return slices.DeleteFunc(blocks, func(b pack.Block) bool { return !slices.Contains(tiers, b.Tier) }), nil
}

type retrieveReply struct {
	Kind       string       `json:"kind"`
	Blocks     []pack.Block `json:"blocks"`
	NodeCount  int          `json:"node_count"`
	EventCount int          `json:"event_count"`
}

// injectCommand is the original's ContextInjectRequest.
type injectCommand struct {
	Retrieve        retrieveCommand `json:"retrieve"`
	Prompt          string          `json:"prompt"`
	SessionID       string          `json:"session_id"`
	QueryID         string          `json:"query_id"`
	MaxPromptTokens int             `json:"max_prompt_tokens"`
}

type injectReply struct {
	Kind string `json:"kind"`
	matrixark.PackResult
}

// eventCommand is one event to ingest: source_kind is the node's kind
// (user_event by default), text its body.
type eventCommand struct {
	SourceID    string `json:"source_id"`
	SourceKind  string `json:"source_kind"`
	Title       string `json:"title"`
	Text        string `json:"text"`
	EventTimeMs int64  `json:"event_time_ms"`
	UserID      string `json:"user_id"`
	SessionID   string `json:"session_id"`
	AgentID     string `json:"agent_id"`
	// Durable acknowledges after the durable commit; default true.
	Durable *bool `json:"durable"`
}

type eventReply struct {
	Kind string `json:"kind"`
	matrixark.IngestResult
}

// auditCommand asks for one audit by id, or a session's in a window.
type auditCommand struct {
	AuditID   string `json:"audit_id"`
	SessionID string `json:"session_id"`
	StartMs   int64  `json:"start_time_ms"`
	EndMs     int64  `json:"end_time_ms"`
	Limit     int    `json:"limit"`
}

type auditReply struct {
	Kind   string       `json:"kind"`
	Audits []pack.Audit `json:"audits"`
}

func (k contextKinds) ExecuteContext(ctx context.Context, tenant, kind string, raw []byte, mp bool) (any, error) {
	if k.router != nil {
		k.router.servingHere()
	}
	if tenant == "" {
		tenant = "default"
	}
	decode := func(v any) error {
		if err := wire.DecodeValue(raw, mp, v); err != nil {
			return fmt.Errorf("%w: %s: %v", httpapi.ErrBadRequest, kind, err)
		}
		return nil
	}
	switch kind {
	case "context_retrieve":
		var c retrieveCommand
		if err := decode(&c); err != nil {
			return nil, err
		}
		blocks, err := k.ark.Retrieve(ctx, tenant, c.query())
		if err != nil {
			return nil, arkError(err)
		}
		if blocks, err = c.keep(blocks); err != nil {
			return nil, err
		}
		r := retrieveReply{Kind: kind, Blocks: nonNil(blocks)}
		nodes := map[uint64]bool{}
		for _, b := range blocks {
			nodes[b.NodeHash] = true
			if b.Tier == pack.TierL2 {
				r.EventCount++
			}
		}
		r.NodeCount = len(nodes)
		return r, nil
	case "context_inject":
		var c injectCommand
		if err := decode(&c); err != nil {
			return nil, err
		}
		if len(c.Retrieve.Tiers) > 0 {
			return nil, fmt.Errorf("%w: %s: retrieve.tiers is not taken by a pack (every tier competes for the budget)", httpapi.ErrBadRequest, kind)
		}
		res, err := k.ark.Pack(ctx, tenant, matrixark.PackRequest{Retrieve: c.Retrieve.query(), Prompt: c.Prompt,
			SessionID: c.SessionID, QueryID: c.QueryID, MaxPromptTokens: c.MaxPromptTokens})
		if err != nil {
			return nil, arkError(err)
		}
		res.Selected, res.Blocked = nonNil(res.Selected), nonNil(res.Blocked)
		return injectReply{Kind: kind, PackResult: res}, nil
	case "context_write_event":
		var c eventCommand
		if err := decode(&c); err != nil {
			return nil, err
		}
		in := matrixark.Input{Kind: matrixark.KindUserEvent, SourceID: c.SourceID, Title: c.Title, Body: c.Text,
			User: c.UserID, Session: c.SessionID, Agent: c.AgentID, TimeMs: c.EventTimeMs, Durable: c.Durable == nil || *c.Durable}
		if c.SourceKind != "" {
			kd, err := matrixark.ParseKind(c.SourceKind)
			if err != nil {
				return nil, arkError(err)
			}
			in.Kind = kd
		}
		res, err := k.ark.Ingest(ctx, tenant, in)
		if err != nil {
			return nil, arkError(err)
		}
		return eventReply{Kind: kind, IngestResult: res}, nil
	case "context_query_pack_audit":
		var c auditCommand
		if err := decode(&c); err != nil {
			return nil, err
		}
		if c.AuditID != "" {
			a, err := k.ark.Audit(ctx, tenant, c.AuditID)
			if err != nil {
				return nil, arkError(err)
			}
			return auditReply{Kind: "context_pack_audits", Audits: []pack.Audit{a}}, nil
		}
		audits, err := k.ark.Audits(ctx, tenant, matrixark.AuditQuery{Session: c.SessionID, StartMs: c.StartMs, EndMs: c.EndMs, Limit: c.Limit})
		if err != nil {
			return nil, arkError(err)
		}
		return auditReply{Kind: "context_pack_audits", Audits: nonNil(audits)}, nil
	}
	return nil, fmt.Errorf("%w: %s", httpapi.ErrUnsupported, kind)
}

// arkError maps matrixark's errors onto the surface's codes.
func arkError(err error) error {
	switch {
	case errors.Is(err, matrixark.ErrInvalid), errors.Is(err, matrixark.ErrModelRequired),
		errors.Is(err, matrixark.ErrEmbeddingWidth), errors.Is(err, matrixark.ErrEmbeddingEncoder):
		return fmt.Errorf("%w: %v", httpapi.ErrBadRequest, err)
	case errors.Is(err, matrixark.ErrNotFound):
		return fmt.Errorf("%w: %v", httpapi.ErrNotFound, err)
	}
	return err
}

// nonNil makes an empty list [] on the wire rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
