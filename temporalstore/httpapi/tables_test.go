package httpapi

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// call sends method to srv's path with a JSON body (none when empty) and
// token, and returns the status and the decoded JSON reply.
func call(t *testing.T, srv *httptest.Server, method, path, token, body string) (int, map[string]any) {
	t.Helper()
	var rd io.Reader
	if body != "" {
		rd = strings.NewReader(body)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, srv.URL+path, rd)
	require.NoError(t, err)
	req.Header.Set("Content-Type", ContentTypeJSON)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := srv.Client().Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	var out map[string]any
	require.NoError(t, json.Unmarshal(b, &out), string(b))
	return res.StatusCode, out
}

// statusCode is a reply's status code: the bare status object's, or its
// "status" field's.
func statusCode(out map[string]any) any {
	if st, ok := out["status"].(map[string]any); ok {
		return st["code"]
	}
	return out["code"]
}

// The table and tenant routes: each one's reply, and their errors with
// their HTTP statuses.
func TestTableRoutes(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), nil)
	code, out := call(t, srv, "POST", "/tables", "", `{"namespace":"acme","name":"orders","shards":2,"write_qps":1.5,"async":true}`)
	require.Equal(t, http.StatusCreated, code, out)
	table := out["table"].(map[string]any)
	require.Equal(t, "acme", table["namespace"])
	require.Equal(t, 2.0, table["options"].(map[string]any)["shards"])
	require.Equal(t, 1.5, table["options"].(map[string]any)["write_qps"])
	require.True(t, e.HasTable("acme", "orders"))

	for _, tc := range []struct {
		method, path, body string
		code               int
		status             string
	}{
		{"POST", "/tables", `{"namespace":"acme","name":"orders"}`, http.StatusConflict, CodeTableExists},
		{"POST", "/tables", `{"namespace":"acme","name":"x","shardz":2}`, http.StatusBadRequest, CodeBadRequest},
		{"POST", "/tables", `{"namespace":"a/b","name":"x"}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/tables", `{"namespace":"acme","name":"x","shards":3,"key_groups":4}`, http.StatusBadRequest, "invalid_argument"},
		{"POST", "/tables", `not json`, http.StatusBadRequest, CodeBadRequest},
		{"GET", "/tables/acme/nope", "", http.StatusNotFound, "table_not_found"},
		{"PATCH", "/tables/acme/nope", `{"read_qps":1}`, http.StatusNotFound, "table_not_found"},
		{"PATCH", "/tables/acme/orders", `{"read_qps":-1}`, http.StatusBadRequest, "invalid_argument"},
		{"PATCH", "/tables/acme/orders", `{"read_only":true,"shards":[5]}`, http.StatusBadRequest, "invalid_argument"},
		{"PATCH", "/tables/acme/orders", `{"shards":[0]}`, http.StatusBadRequest, CodeBadRequest},
		{"DELETE", "/tables/default/default", "", http.StatusConflict, CodeTableInUse},
		{"DELETE", "/tables/acme/nope", "", http.StatusNotFound, "table_not_found"},
		{"PUT", "/tables/acme/orders", "{}", http.StatusMethodNotAllowed, CodeBadRequest},
		{"GET", "/tables/acme", "", http.StatusNotFound, CodeNotFound},
		{"GET", "/tables/a/b/c", "", http.StatusNotFound, CodeNotFound},
		{"PUT", "/tenants/acme", `{"qps":-3}`, http.StatusBadRequest, "invalid_argument"},
		{"PUT", "/tenants/acme", `{}`, http.StatusBadRequest, CodeBadRequest},
		{"GET", "/tenants/a.b.", "", http.StatusOK, CodeOK},
		{"GET", "/tenants/-x", "", http.StatusBadRequest, "invalid_argument"},
	} {
		code, out := call(t, srv, tc.method, tc.path, "", tc.body)
		require.Equal(t, tc.code, code, "%s %s %s: %v", tc.method, tc.path, tc.body, out)
		require.Equal(t, tc.status, statusCode(out), "%s %s %s", tc.method, tc.path, tc.body)
	}

	code, out = call(t, srv, "GET", "/tables", "", "")
	require.Equal(t, http.StatusOK, code)
	var names []string
	for _, ti := range out["tables"].([]any) {
		m := ti.(map[string]any)
		names = append(names, m["namespace"].(string)+"/"+m["name"].(string))
	}
	require.Equal(t, []string{"acme/orders", "default/default"}, names)

	code, out = call(t, srv, "PATCH", "/tables/acme/orders", "", `{"write_qps":0,"read_qps":7,"read_only":true,"shards":[1]}`)
	require.Equal(t, http.StatusOK, code, out)
	table = out["table"].(map[string]any)
	require.Equal(t, []any{1.0}, table["read_only_shards"])
	require.Equal(t, 7.0, table["options"].(map[string]any)["read_qps"])
	require.Nil(t, table["options"].(map[string]any)["write_qps"], "0 (no limit) is left out")
	code, out = call(t, srv, "GET", "/tables/acme/orders", "", "")
	require.Equal(t, http.StatusOK, code)
	shards := out["shards"].([]any)
	require.Len(t, shards, 2)
	require.Equal(t, true, shards[1].(map[string]any)["read_only"])
	require.Equal(t, 0.0, shards[0].(map[string]any)["keys"])
	code, out = call(t, srv, "PATCH", "/tables/acme/orders", "", `{"read_only":false}`)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []any{}, out["table"].(map[string]any)["read_only_shards"], "every shard when none is named")

	code, _ = call(t, srv, "DELETE", "/tables/acme/orders", "", "")
	require.Equal(t, http.StatusOK, code)
	require.False(t, e.HasTable("acme", "orders"))

	code, out = call(t, srv, "PUT", "/tenants/acme", "", `{"qps":2}`)
	require.Equal(t, http.StatusOK, code, out)
	require.Equal(t, map[string]any{"status": map[string]any{"ok": true, "code": "ok", "message": ""}, "tenant": "acme", "qps": 2.0, "own": true}, out)
	code, out = call(t, srv, "GET", "/tenants/other", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, false, out["own"])
	code, out = call(t, srv, "GET", "/tenants", "", "")
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, []any{map[string]any{"tenant": "acme", "qps": 2.0, "own": true}}, out["tenants"])
}

// Reads of the table and tenant routes take any global token, changes a
// read-write one; tenant tokens are refused.
func TestTableRoutesAuth(t *testing.T) {
	srv, _, _ := newServer(t, testclock.New(epoch), func(o *Options) {
		o.ReadWriteTokens, o.ReadOnlyTokens = []string{"admin"}, []string{"viewer"}
		o.TenantTokens = map[string]TenantToken{"a-rw": {Tenant: "acme"}}
	})
	for _, tc := range []struct {
		method, path, token, body string
		code                      int
	}{
		{"GET", "/tables", "", "", http.StatusUnauthorized},
		{"GET", "/tables", "wrong", "", http.StatusUnauthorized},
		{"GET", "/tables", "viewer", "", http.StatusOK},
		{"GET", "/tables", "a-rw", "", http.StatusForbidden},
		{"GET", "/tenants/acme", "a-rw", "", http.StatusForbidden},
		{"POST", "/tables", "viewer", `{"namespace":"acme","name":"t"}`, http.StatusForbidden},
		{"POST", "/tables", "a-rw", `{"namespace":"acme","name":"t"}`, http.StatusForbidden},
		{"POST", "/tables", "admin", `{"namespace":"acme","name":"t"}`, http.StatusCreated},
		{"PUT", "/tenants/acme", "viewer", `{"qps":1}`, http.StatusForbidden},
		{"PUT", "/tenants/acme", "admin", `{"qps":1}`, http.StatusOK},
		{"DELETE", "/tables/acme/t", "a-rw", "", http.StatusForbidden},
		{"DELETE", "/tables/acme/t", "admin", "", http.StatusOK},
	} {
		code, out := call(t, srv, tc.method, tc.path, tc.token, tc.body)
		require.Equal(t, tc.code, code, "%s %s %q: %v", tc.method, tc.path, tc.token, out)
	}
}

// A tenant token runs commands in its tenant's namespace alone, as its
// tenant, and refuses what reaches past it.
func TestTenantTokensExecute(t *testing.T) {
	clk := testclock.New(epoch)
	srv, e, _ := newServer(t, clk, func(o *Options) {
		o.ReadWriteTokens = []string{"admin"}
		o.TenantTokens = map[string]TenantToken{"a-rw": {Tenant: "acme"}, "a-ro": {Tenant: "acme", ReadOnly: true}, "b-rw": {Tenant: "beta"}}
	})
	ctx := t.Context()
	for _, ns := range []string{"acme", "beta"} {
		require.NoError(t, e.CreateTable(ctx, ns, ts.DefaultTable, ts.TableOptions{Shards: 1}))
	}
	exec := func(token, body string) (int, string) {
		t.Helper()
		code, out := post(t, srv.Client(), srv.URL+"/execute", false, token, []byte(body))
		return code, string(out)
	}
	const set = `{"command":{"kind":"string_set","key":"k","value":"dmFs"}}` // "val"
	code, out := exec("a-rw", set)
	require.Equal(t, http.StatusOK, code, out)
	require.Contains(t, out, `"ok":true`)
	r, err := e.Execute(ctx, ts.Command{Namespace: "acme", Kind: ts.KindGet, Key: []byte("k")})
	require.NoError(t, err)
	require.Equal(t, "val", string(r.Value), "in the tenant's namespace")
	_, err = e.Execute(ctx, ts.Command{Kind: ts.KindGet, Key: []byte("k")})
	require.NoError(t, err)

	get := `{"command":{"kind":"string_get","key":"k"}}`
	_, out = exec("b-rw", get)
	require.Contains(t, out, `"ok":true`)
	require.NotContains(t, out, "[118,97,108]", "another tenant's namespace holds no k")
	_, out = exec("a-ro", get)
	require.Contains(t, out, "[118,97,108]")

	for _, tc := range []struct{ token, body string }{
		{"a-ro", set},
		{"a-rw", `{"namespace":"beta","command":{"kind":"string_get","key":"k"}}`},
		{"a-rw", `{"tenant":"beta","command":{"kind":"string_get","key":"k"}}`},
	} {
		code, out := exec(tc.token, tc.body)
		require.Equal(t, http.StatusForbidden, code, "%s %s: %s", tc.token, tc.body, out)
		require.Contains(t, out, `"code":"forbidden"`)
	}
	for _, body := range []string{
		`{"namespace":"beta","commands":[{"kind":"string_get","key":"k"}]}`,
		`{"commands":[{"kind":"string_get","key":"k"},{"kind":"string_get","key":"k","tenant":"beta"}]}`,
	} {
		code, reply := post(t, srv.Client(), srv.URL+"/batch_execute", false, "a-rw", []byte(body))
		require.Equal(t, http.StatusForbidden, code, string(reply))
	}
	code, reply := post(t, srv.Client(), srv.URL+"/batch_execute", false, "a-rw",
		[]byte(`{"namespace":"acme","commands":[{"kind":"string_get","key":"k"},{"kind":"string_set","key":"j","value":"dg=="}]}`))
	require.Equal(t, http.StatusOK, code, string(reply))

	// The tenant's limit applies to its commands.
	require.NoError(t, e.SetTenantQPS(ctx, "acme", 1))
	clk.Advance(time.Minute)
	_, out = exec("a-rw", get)
	require.Contains(t, out, `"ok":true`)
	_, out = exec("a-rw", get)
	require.Contains(t, out, `"code":"admission_rejected"`)
	_, out = exec("b-rw", get)
	require.Contains(t, out, `"ok":true`)

	// The other routes take global tokens only.
	code, _ = post(t, srv.Client(), srv.URL+"/ingest", false, "a-rw", []byte(`{}`))
	require.Equal(t, http.StatusUnauthorized, code)
	res, err := srv.Client().Do(func() *http.Request {
		req, _ := http.NewRequestWithContext(ctx, "GET", srv.URL+"/metrics", nil)
		req.Header.Set("Authorization", "Bearer a-rw")
		return req
	}())
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, http.StatusUnauthorized, res.StatusCode)
}

// New refuses tenant tokens it cannot take.
func TestTenantTokensRefused(t *testing.T) {
	e := newEngine(t, testclock.New(epoch))
	for _, tt := range []map[string]TenantToken{
		{"": {Tenant: "acme"}},
		{"t": {Tenant: ""}},
		{"admin": {Tenant: "acme"}},
	} {
		_, err := New(Options{Engine: e, ReadWriteTokens: []string{"admin"}, TenantTokens: tt})
		require.ErrorIs(t, err, ErrInvalidOptions, "%v", tt)
	}
}
