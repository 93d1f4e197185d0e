package main

import (
	"bytes"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	arkhttp "github.com/temporalstore/temporalstore-go/matrixark/httpapi"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

func TestContextTokenFlag(t *testing.T) {
	c, err := parse([]string{"--context-token", "k1=acme:admin, k2=globex"}, io.Discard, func(string) string { return "" })
	require.NoError(t, err)
	require.Equal(t, map[string]arkhttp.TenantToken{"k1": {Tenant: "acme", Admin: true}, "k2": {Tenant: "globex"}}, c.contextTokens)
	for _, bad := range []string{"k1", "=acme", "k1=", "k1=:admin"} {
		_, err := parse([]string{"--context-token", bad}, io.Discard, func(string) string { return "" })
		require.Error(t, err, bad)
	}
}

// The HTTP listener serves the engine's routes and the context and memory
// routes side by side; with --token, the memory routes take those tokens,
// and the memories live in the engine across a restart.
func TestContextRoutes(t *testing.T) {
	bin := buildServer(t)
	data := t.TempDir()
	httpAddr := servertest.FreeAddr(t)
	args := []string{"--data", data, "--resp", servertest.FreeAddr(t), "--http", httpAddr, "--s3", "", "--token", "secret"}
	srv := servertest.Start(t, bin, args...)
	call := func(method, path, token, body string) (int, string) {
		req, err := http.NewRequest(method, "http://"+httpAddr+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	code, body := call("POST", "/memories", "secret", `{"messages":[{"role":"user","content":"My office moved to Lisbon."}],"user_id":"alice"}`)
	require.Equal(t, 200, code, body)
	require.Contains(t, body, `"event":"ADD"`)
	code, _ = call("POST", "/memories", "", `{"messages":[{"role":"user","content":"x"}],"user_id":"alice"}`)
	require.Equal(t, 401, code)
	code, body = call("POST", "/execute", "secret", `{"command":{"kind":"string_set","key":"k","value":"dg=="}}`)
	require.Equal(t, 200, code, body)
	require.NoError(t, srv.Stop(), srv.Log())

	srv = servertest.Start(t, bin, args...)
	defer func() { _ = srv.Stop() }()
	code, body = call("POST", "/search", "secret", `{"query":"where is the office","user_id":"alice"}`)
	require.Equal(t, 200, code, body)
	require.Contains(t, body, "Lisbon", "the memory came back with the engine")
	code, body = call("POST", "/context/pack", "secret", `{"retrieve":{"query":"office Lisbon","user_id":"alice"},"prompt":"Where?","max_prompt_tokens":100}`)
	require.Equal(t, 200, code, body)
	require.Contains(t, body, `"injected_prompt":"Where?\n\n\u003ccontext\u003e`)
	require.Contains(t, srv.Log(), "context routes")
	code, body = call("GET", "/metrics", "secret", "")
	require.Equal(t, 200, code)
	require.Contains(t, body, `matrixark_embedding_declined_total{reason="encoder"} 0`)
}

// The context_* kinds of /execute and /batch_execute run on matrixark:
// an event written, retrieved, packed with its audit durable and queried
// back, in JSON and in MessagePack; a read-only token cannot pack, and
// the original's storage-level kinds stay unsupported.
func TestContextKindsOnExecute(t *testing.T) {
	bin := buildServer(t)
	httpAddr := servertest.FreeAddr(t)
	srv := servertest.Start(t, bin, "--data", t.TempDir(), "--resp", servertest.FreeAddr(t), "--http", httpAddr,
		"--s3", "", "--token", "secret", "--readonly-token", "ro")
	defer func() { _ = srv.Stop() }()
	post := func(path, token string, mp bool, body any) (int, map[string]any) {
		raw, err := wire.EncodeValue(body, mp)
		require.NoError(t, err)
		req, err := http.NewRequest("POST", "http://"+httpAddr+path, bytes.NewReader(raw))
		require.NoError(t, err)
		req.Header.Set("Content-Type", map[bool]string{false: "application/json", true: "application/msgpack"}[mp])
		req.Header.Set("Authorization", "Bearer "+token)
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		var out map[string]any
		require.NoError(t, wire.DecodeValue(b, mp, &out), string(b))
		return res.StatusCode, out
	}
	execute := func(token string, mp bool, cmd map[string]any) (map[string]any, map[string]any) {
		code, out := post("/execute", token, mp, map[string]any{"tenant": "acme", "command": cmd})
		require.Equal(t, 200, code, out)
		st, _ := out["status"].(map[string]any)
		resp, _ := out["response"].(map[string]any)
		return st, resp
	}
	for _, mp := range []bool{false, true} {
		st, resp := execute("secret", mp, map[string]any{"kind": "context_write_event", "source_id": fmt.Sprint("ticket-", mp),
			"source_kind": "ticket", "title": "Checkout outage", "text": "Payments failed at checkout after the deploy.", "event_time_ms": 1_764_460_800_000, "user_id": "ada"})
		require.Equal(t, true, st["ok"], st)
		require.Equal(t, "context_write_event", resp["kind"])
		require.NotZero(t, resp["node_hash"])
	}
	// An event's summaries share its source_ref, so they collapse into its
	// L2 block.
	st, resp := execute("ro", false, map[string]any{"kind": "context_retrieve", "query": "checkout payments", "user_id": "ada", "tiers": []string{"l2"}})
	require.Equal(t, true, st["ok"], st)
	blocks, _ := resp["blocks"].([]any)
	require.Len(t, blocks, 2, resp)
	for _, b := range blocks {
		require.Equal(t, "l2", b.(map[string]any)["tier"], "the original's spelling")
		require.Contains(t, b.(map[string]any)["text"], "Payments failed")
	}
	require.Equal(t, float64(2), resp["node_count"])
	require.Equal(t, float64(2), resp["event_count"])
	_, resp = execute("ro", false, map[string]any{"kind": "context_retrieve", "query": "checkout payments", "user_id": "ada", "tiers": []string{"l0"}})
	require.Empty(t, resp["blocks"])
	st, _ = execute("secret", false, map[string]any{"kind": "context_retrieve", "query": "x", "tiers": []string{"l9"}})
	require.Equal(t, "bad_request", st["code"], st)
	st, resp = execute("secret", false, map[string]any{"kind": "context_retrieve", "query": "checkout", "tenant": "globex"})
	require.Equal(t, true, st["ok"], st)
	require.Empty(t, resp["blocks"], "another tenant's events are not seen")

	code, out := post("/execute", "ro", false, map[string]any{"tenant": "acme", "command": map[string]any{"kind": "context_inject", "prompt": "What failed?"}})
	require.Equal(t, 403, code, out)

	// A batch in MessagePack: a pack beside an engine kind, then its audit.
	code, out = post("/batch_execute", "secret", true, map[string]any{"tenant": "acme", "commands": []any{
		map[string]any{"kind": "context_inject", "prompt": "What failed?", "session_id": "s1", "query_id": "q1", "max_prompt_tokens": 400,
			"retrieve": map[string]any{"query": "checkout payments failed", "user_id": "ada"}},
		map[string]any{"kind": "string_set", "key": []byte("k"), "value": []byte("v")},
		map[string]any{"kind": "context_upsert_node", "node_hash": 7},
	}})
	require.Equal(t, 200, code, out)
	rs := out["responses"].([]any)
	require.Len(t, rs, 3)
	pack := rs[0].(map[string]any)
	require.Equal(t, true, pack["status"].(map[string]any)["ok"], pack)
	packed := pack["response"].(map[string]any)
	require.Equal(t, "context_inject", packed["kind"])
	require.Contains(t, packed["injected_prompt"], "<context>")
	auditID := packed["audit"].(map[string]any)["audit_id"]
	require.NotEmpty(t, auditID)
	require.Equal(t, true, rs[1].(map[string]any)["status"].(map[string]any)["ok"])
	require.Equal(t, "unsupported", rs[2].(map[string]any)["status"].(map[string]any)["code"])

	st, resp = execute("ro", true, map[string]any{"kind": "context_query_pack_audit", "session_id": "s1"})
	require.Equal(t, true, st["ok"], st)
	audits := resp["audits"].([]any)
	require.Len(t, audits, 1)
	require.Equal(t, auditID, audits[0].(map[string]any)["audit_id"])
	st, _ = execute("ro", false, map[string]any{"kind": "context_query_pack_audit", "audit_id": "nope"})
	require.Equal(t, "not_found", st["code"], st)
}
