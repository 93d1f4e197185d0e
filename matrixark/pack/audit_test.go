package pack_test

import (
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark/pack"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

func TestHash64(t *testing.T) {
	require.Equal(t, uint64(0x85944171f73967e8), pack.Hash64("foobar"))
	require.Equal(t, uint64(0xcbf29ce484222325), pack.Hash64(""), "the FNV-1a offset basis")
}

func TestNewAudit(t *testing.T) {
	meta := pack.AuditMeta{
		AuditID: "aud-1", Tenant: "acme", SessionHash: pack.Hash64("session:s1"),
		QueryID: "q-1", RequestTimeMs: 1_717_000_000_000, Query: "latest checkout status",
	}
	blocks := []pack.Block{
		{URI: "tsctx://tenant/acme/node/1/l0", Tier: "L0", RecordType: "matched_chunk", NodeHash: 1,
			EventTimeMs: 10, SourceRef: "doc-1", Text: "Checkout: failed."},
		{URI: "tsctx://tenant/acme/node/2/event/20", Tier: "L2", RecordType: "raw_message", NodeHash: 2,
			EventTimeMs: 20, SourceRef: "s1:4", Text: strings.Repeat("word ", 50)},
	}
	prompt := "What is the checkout status?"
	r := pack.Pack(prompt, blocks, pack.Options{Counter: tokens.Words{}, MaxPromptTokens: 30})
	require.Len(t, r.Selected, 1)
	require.Len(t, r.Blocked, 1)

	a := pack.NewAudit(meta, r)
	require.Equal(t, pack.Audit{
		AuditID: "aud-1", Tenant: "acme", SessionHash: meta.SessionHash, QueryID: "q-1",
		RequestTimeMs: meta.RequestTimeMs,
		QueryHash:     pack.Hash64("latest checkout status"),
		PromptHash:    pack.Hash64(prompt),
		PackHash:      pack.Hash64(r.Rendered),
		Tokenizer:     "words", MaxPromptTokens: 30,
		PromptTokens: r.PromptTokens, SelectedTokens: r.SelectedTokens, BlockedTokens: r.BlockedTokens,
		SelectedRefs: []pack.Ref{{
			Rank: 0, NodeHash: 1, EventTimeMs: 10, URI: blocks[0].URI, Tier: "L0",
			RecordType: "matched_chunk", SourceRef: "doc-1", Tokens: r.Selected[0].Tokens,
			Reason: "L0:" + blocks[0].URI,
		}},
		BlockedRefs: []pack.Ref{{
			Rank: 1, NodeHash: 2, EventTimeMs: 20, URI: blocks[1].URI, Tier: "L2",
			RecordType: "raw_message", SourceRef: "s1:4", Tokens: r.Blocked[0].Tokens,
			Reason: "budget_exceeded:L2:" + blocks[1].URI,
		}},
	}, a)
	require.NotEqual(t, a.PromptHash, a.PackHash)
}

func TestAuditCapsRefs(t *testing.T) {
	for _, tc := range []struct {
		name                  string
		blocks                int
		budget                int
		wantSel, wantBlk      int
		selOverflow, overflow int
	}{
		// The prompt alone exceeds the budget: every block is blocked.
		{name: "600 blocked", blocks: 600, budget: 1, wantBlk: 512, overflow: 88},
		{name: "512 blocked fit exactly", blocks: 512, budget: 1, wantBlk: 512},
		{name: "700 selected", blocks: 700, budget: 100_000, wantSel: 512, selOverflow: 188},
	} {
		t.Run(tc.name, func(t *testing.T) {
			blocks := make([]pack.Block, tc.blocks)
			for i := range blocks {
				blocks[i] = pack.Block{URI: fmt.Sprintf("u%d", i), Tier: "L2", NodeHash: uint64(i), Text: "x"}
			}
			r := pack.Pack("a prompt of six words here", blocks,
				pack.Options{Counter: tokens.Words{}, MaxPromptTokens: tc.budget})
			a := pack.NewAudit(pack.AuditMeta{AuditID: "a"}, r)
			require.Len(t, a.SelectedRefs, tc.wantSel)
			require.Len(t, a.BlockedRefs, tc.wantBlk)
			require.Equal(t, tc.selOverflow, a.SelectedOverflow)
			require.Equal(t, tc.overflow, a.BlockedOverflow)
			// The best-ranked refs are the ones kept.
			for i, ref := range slices.Concat(a.SelectedRefs, a.BlockedRefs) {
				require.Equal(t, i, ref.Rank)
			}
			// Capped audits still decode: the cap is what keeps them writable.
			data, err := json.Marshal(a)
			require.NoError(t, err)
			back, err := pack.DecodeAudit(data)
			require.NoError(t, err)
			require.Equal(t, a, back)
		})
	}
}

func fullAudit() pack.Audit {
	return pack.Audit{
		AuditID: "0190f7a4-7d1c-7c7e-9d3b-6f2d1c0e4a11", Tenant: "acme", SessionHash: math.MaxUint64,
		QueryID: "q-42", RequestTimeMs: -1, QueryHash: 1 << 63, PromptHash: 0x85944171f73967e8, PackHash: 1,
		Tokenizer: "o200k_base", MaxPromptTokens: 2048, PromptTokens: 17, SelectedTokens: 1000, BlockedTokens: 3,
		SelectedRefs: []pack.Ref{{Rank: 0, NodeHash: math.MaxUint64 - 1, EventTimeMs: math.MaxInt64,
			URI: "tsctx://tenant/acme/node/9/l1", Tier: "L1", RecordType: "matched_chunk",
			SourceRef: "doc \"quoted\" ü", Tokens: 1000, Reason: "L1:tsctx://tenant/acme/node/9/l1"}},
		BlockedRefs: []pack.Ref{{Rank: 1, NodeHash: 9, EventTimeMs: math.MinInt64, URI: "u", Tier: "L2",
			RecordType: "raw_message", Tokens: 3, Reason: "render_overflow"}},
		SelectedOverflow: 2,
		BlockedOverflow:  7,
	}
}

func TestAuditJSONRoundTrip(t *testing.T) {
	for _, a := range []pack.Audit{
		fullAudit(),
		{AuditID: "empty-lists", SelectedRefs: []pack.Ref{}, BlockedRefs: []pack.Ref{}},
		{AuditID: "nil-lists"},
	} {
		t.Run(a.AuditID, func(t *testing.T) {
			data, err := json.Marshal(a)
			require.NoError(t, err)
			back, err := pack.DecodeAudit(data)
			require.NoError(t, err)
			require.Equal(t, a, back)
		})
	}
}

func TestAuditJSONNames(t *testing.T) {
	data, err := json.Marshal(fullAudit())
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &m))
	require.ElementsMatch(t, []string{
		"audit_id", "tenant", "session_hash", "query_id", "request_time_ms",
		"query_hash", "prompt_hash", "pack_hash",
		"tokenizer", "max_prompt_tokens", "prompt_tokens", "selected_tokens", "blocked_tokens",
		"selected_refs", "blocked_refs", "selected_overflow", "blocked_overflow",
	}, slices.Collect(maps.Keys(m)))
	require.Equal(t, "18446744073709551615", string(m["session_hash"]), "uint64 stays an exact integer")

	var refs []map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(m["selected_refs"], &refs))
	require.ElementsMatch(t, []string{
		"rank", "node_hash", "event_time_ms", "uri", "tier", "record_type", "source_ref", "tokens", "reason",
	}, slices.Collect(maps.Keys(refs[0])))

	noOverflow := fullAudit()
	noOverflow.SelectedOverflow = 0
	data, err = json.Marshal(noOverflow)
	require.NoError(t, err)
	require.NotContains(t, string(data), "selected_overflow", "absent unless used")
	require.Contains(t, string(data), `"blocked_overflow":7`)
}

func TestBlockJSONNames(t *testing.T) {
	data, err := json.Marshal(pack.Blocked{Block: pack.Block{URI: "u"}, Rank: 3, Reason: "render_overflow"})
	require.NoError(t, err)
	var m map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(data, &m))
	require.ElementsMatch(t, []string{
		"uri", "tier", "record_type", "node_hash", "event_time_ms", "text", "tokens", "source_ref", "score",
		"rank", "reason",
	}, slices.Collect(maps.Keys(m)))
}

func TestDecodeAuditRejects(t *testing.T) {
	tooMany := fullAudit()
	tooMany.BlockedRefs = make([]pack.Ref, pack.MaxAuditRefs+1)
	tooManyJSON, err := json.Marshal(tooMany)
	require.NoError(t, err)

	for _, tc := range []struct {
		name, in string
	}{
		{"empty", ""},
		{"garbage", "not json"},
		{"null", "null"},
		{"array", "[]"},
		{"number", "42"},
		{"no id", "{}"},
		{"empty id", `{"audit_id":""}`},
		{"id not a string", `{"audit_id":5}`},
		{"trailing data", `{"audit_id":"a"} {}`},
		{"truncated", `{"audit_id":"a","selected_refs":[`},
		{"negative hash", `{"audit_id":"a","session_hash":-1}`},
		{"fractional hash", `{"audit_id":"a","pack_hash":1.5}`},
		{"hash overflows", `{"audit_id":"a","pack_hash":18446744073709551616}`},
		{"negative tokens", `{"audit_id":"a","prompt_tokens":-1}`},
		{"negative overflow", `{"audit_id":"a","blocked_overflow":-3}`},
		{"negative rank", `{"audit_id":"a","blocked_refs":[{"rank":-1}]}`},
		{"negative ref tokens", `{"audit_id":"a","selected_refs":[{"tokens":-1}]}`},
		{"refs not a list", `{"audit_id":"a","selected_refs":{}}`},
		{"too many refs", string(tooManyJSON)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := pack.DecodeAudit([]byte(tc.in))
			require.ErrorIs(t, err, pack.ErrInvalidAudit)
			require.Zero(t, a)
		})
	}
}

func TestDecodeAuditIgnoresUnknownFields(t *testing.T) {
	a, err := pack.DecodeAudit([]byte(`{"audit_id":"a","added_later":{"x":[1,2]}}`))
	require.NoError(t, err)
	require.Equal(t, "a", a.AuditID)
}

func FuzzDecodeAudit(f *testing.F) {
	full, err := json.Marshal(fullAudit())
	require.NoError(f, err)
	for _, s := range []string{
		string(full), "", "null", "{}", `{"audit_id":"a"}`, `{"audit_id":"a","blocked_refs":[{"rank":1}]}`,
		`{"audit_id":"a","session_hash":18446744073709551616}`, "[", `{"AUDIT_ID":"case"}`, "\xff",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		a, err := pack.DecodeAudit(data)
		if err != nil {
			require.ErrorIs(t, err, pack.ErrInvalidAudit)
			require.Zero(t, a)
			return
		}
		require.NotEmpty(t, a.AuditID)
		// Whatever decodes re-encodes to the same audit.
		again, err := json.Marshal(a)
		require.NoError(t, err)
		back, err := pack.DecodeAudit(again)
		require.NoError(t, err)
		require.Equal(t, a, back)
	})
}
