package main

import (
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	arkhttp "github.com/temporalstore/temporalstore-go/matrixark/httpapi"
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
