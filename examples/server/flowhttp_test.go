package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// respFlowRecord reads a FLOW.GET reply, a map in RESP3 and flat pairs
// in RESP2, as a map.
func respFlowRecord(t *testing.T, v any) map[string]any {
	t.Helper()
	out := map[string]any{}
	switch m := v.(type) {
	case map[any]any:
		for k, v := range m {
			out[fmt.Sprint(k)] = v
		}
	case []any:
		require.Zero(t, len(m)%2)
		for i := 0; i < len(m); i += 2 {
			out[fmt.Sprint(m[i])] = m[i+1]
		}
	default:
		t.Fatalf("not a flow record: %#v", v)
	}
	return out
}

// The flows' HTTP routes are mounted on the server's HTTP listener, under
// its tokens and beside the engine's routes: a flow created, claimed and
// completed over HTTP reads back the same over RESP.
func TestFlowHTTPMountedOnServer(t *testing.T) {
	bin := buildServer(t)
	httpAddr, respAddr := servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, bin, "--data", t.TempDir(), "--resp", respAddr, "--http", httpAddr, "--s3", "",
		"--shards", "2", "--token", "rw", "--readonly-token", "ro")
	defer func() { _ = srv.Stop() }()
	call := func(token, method, path string, body any) (int, map[string]any) {
		t.Helper()
		var rd io.Reader
		if body != nil {
			raw, err := json.Marshal(body)
			require.NoError(t, err)
			rd = bytes.NewReader(raw)
		}
		req, err := http.NewRequestWithContext(t.Context(), method, "http://"+httpAddr+path, rd)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		raw, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		var out map[string]any
		if res.Header.Get("Content-Type") == "application/json" {
			require.NoError(t, json.Unmarshal(raw, &out), string(raw))
		}
		return res.StatusCode, out
	}

	code, _ := call("", "GET", "/flows/stats", nil)
	require.Equal(t, 401, code, "the server's tokens guard the flows")
	code, _ = call("ro", "POST", "/flows", map[string]any{"id": "{o}1", "type": "email"})
	require.Equal(t, 403, code)
	code, rec := call("rw", "POST", "/flows", map[string]any{"id": "{o}1", "type": "email", "payload": "hello", "attributes": map[string]string{"k": "v"}})
	require.Equal(t, 201, code, rec)
	code, got := call("rw", "POST", "/flows/claim", map[string]any{"type": "email", "worker": "w1", "lease_ms": 60_000, "block_ms": 1000})
	require.Equal(t, 200, code, got)
	require.Len(t, got["flows"], 1)
	lease := got["flows"].([]any)[0].(map[string]any)
	code, done := call("rw", "POST", "/flows/%7Bo%7D1/complete", map[string]any{"lease_token": lease["lease_token"], "fencing_token": lease["fencing_token"], "result": "sent"})
	require.Equal(t, 200, code, done)
	require.Equal(t, "completed", done["state"])
	code, viaHTTP := call("ro", "GET", "/flows/%7Bo%7D1", nil)
	require.Equal(t, 200, code)
	require.Equal(t, done, viaHTTP)

	for _, proto := range []int{2, 3} {
		rc := redis.NewClient(&redis.Options{Addr: respAddr, Protocol: proto, Password: "rw"})
		v, err := rc.Do(t.Context(), "FLOW.GET", "{o}1").Result()
		require.NoError(t, err, "RESP%d", proto)
		r := respFlowRecord(t, v)
		rc.Close()
		require.Equal(t, "completed", r["state"], "RESP%d", proto)
		require.Equal(t, "hello", r["payload"])
		require.Equal(t, "sent", r["result"])
		require.Equal(t, "w1", r["lease_owner"])
		require.EqualValues(t, done["version"], r["version"])
		require.EqualValues(t, done["fencing_token"], r["fencing_token"])
		require.EqualValues(t, done["updated_at_ms"], r["updated_at_ms"])
	}

	// The engine's routes still answer beside them.
	code, _ = call("", "GET", "/health", nil)
	require.Equal(t, 200, code)
	code, _ = call("", "POST", "/execute", map[string]any{"command": map[string]any{"kind": "get", "key": "a"}})
	require.Equal(t, 401, code)
}
