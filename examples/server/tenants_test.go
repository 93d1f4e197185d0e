package main

import (
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

// The server with tenant tokens, over RESP, HTTP and S3: tables made by
// the operator, each tenant's token confined to its tenant's tables (a
// read-only one reading only), the admin verbs and routes refused to
// tenants, and a limit set over HTTP refusing RESP commands past it.
func TestTenantTokensServer(t *testing.T) {
	bin := buildServer(t)
	respAddr, httpAddr, s3Addr := servertest.FreeAddr(t), servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, bin, "--data", t.TempDir(), "--resp", respAddr, "--http", httpAddr, "--s3", s3Addr, "--shards", "1",
		"--token", "admin-tok", "--tenant-token", "a-rw=acme:rw, a-ro=acme:ro, b-rw=beta:rw")
	defer func() { require.NoError(t, srv.Stop(), srv.Log()) }()
	ctx := t.Context()
	httpDo := func(method, path, token, body string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(ctx, method, "http://"+httpAddr+path, strings.NewReader(body))
		require.NoError(t, err)
		req.Header.Set("Content-Type", "application/json")
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		b, err := io.ReadAll(res.Body)
		require.NoError(t, err)
		return res.StatusCode, string(b)
	}
	respConn := func(token string) *redis.Client {
		c := redis.NewClient(&redis.Options{Addr: respAddr, Password: token, PoolSize: 1})
		t.Cleanup(func() { c.Close() })
		return c
	}
	admin, a, aro, b := respConn("admin-tok"), respConn("a-rw"), respConn("a-ro"), respConn("b-rw")

	// The operator makes each tenant's table, over RESP and over HTTP.
	require.NoError(t, admin.Do(ctx, "TABLE", "CREATE", "acme", "default", "SHARDS", "1").Err())
	code, body := httpDo("POST", "/tables", "admin-tok", `{"namespace":"beta","name":"default","shards":1}`)
	require.Equal(t, http.StatusCreated, code, body)

	require.NoError(t, a.Set(ctx, "k", "acme's", 0).Err())
	require.Equal(t, "acme's", aro.Get(ctx, "k").Val())
	require.ErrorContains(t, aro.Set(ctx, "k", "x", 0).Err(), "NOPERM", "a read-only tenant token cannot write")
	require.ErrorIs(t, b.Get(ctx, "k").Err(), redis.Nil, "tenant beta's token does not see acme's table")
	code, body = httpDo("POST", "/execute", "b-rw", `{"namespace":"acme","command":{"kind":"string_get","key":"k"}}`)
	require.Equal(t, http.StatusForbidden, code, body)
	code, body = httpDo("POST", "/execute", "a-ro", `{"command":{"kind":"string_get","key":"k"}}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, "[97,99,109,101,39,115]", "acme's, over HTTP in the tenant's namespace")
	code, body = httpDo("POST", "/execute", "a-ro", `{"command":{"kind":"string_set","key":"k","value":"eA=="}}`)
	require.Equal(t, http.StatusForbidden, code, body)

	// The admin verbs and routes are the operator's.
	require.ErrorContains(t, a.Do(ctx, "TABLE", "LIST").Err(), "NOPERM")
	require.ErrorContains(t, b.Do(ctx, "TABLE", "DROP", "acme", "default").Err(), "NOPERM")
	require.ErrorContains(t, a.Do(ctx, "TENANT", "SET", "acme", "QPS", "1000").Err(), "NOPERM")
	require.ErrorContains(t, a.Do(ctx, "CONFIG", "SET", "slowlog-max-len", "1").Err(), "NOPERM")
	require.ErrorContains(t, a.Do(ctx, "XADD", "s", "*", "f", "v").Err(), "NOPERM", "the streams have no namespaces")
	for _, r := range []struct{ method, path, body string }{
		{"GET", "/tables", ""},
		{"PATCH", "/tables/acme/default", `{"write_qps":1000}`},
		{"DELETE", "/tables/beta/default", ""},
		{"PUT", "/tenants/acme", `{"qps":1000}`},
	} {
		code, body := httpDo(r.method, r.path, "a-rw", r.body)
		require.Equal(t, http.StatusForbidden, code, "%s %s: %s", r.method, r.path, body)
	}
	code, _ = httpDo("GET", "/tables", "", "")
	require.Equal(t, http.StatusUnauthorized, code)

	// A write limit set over HTTP refuses RESP writes past it: a burst
	// of one, refilled a hundredth a second.
	code, body = httpDo("PATCH", "/tables/acme/default", "admin-tok", `{"write_qps":0.01}`)
	require.Equal(t, http.StatusOK, code, body)
	require.NoError(t, a.Set(ctx, "k2", "v", 0).Err())
	require.ErrorContains(t, a.Set(ctx, "k3", "v", 0).Err(), "BUSY")
	require.NoError(t, a.Get(ctx, "k2").Err(), "reads are not limited")
	// And a tenant's limit its commands on any table.
	code, body = httpDo("PUT", "/tenants/beta", "admin-tok", `{"qps":0.01}`)
	require.Equal(t, http.StatusOK, code, body)
	require.ErrorIs(t, b.Get(ctx, "x").Err(), redis.Nil)
	require.ErrorContains(t, b.Get(ctx, "x").Err(), "BUSY")
	info, err := admin.Do(ctx, "TABLE", "INFO", "acme", "default").Result()
	require.NoError(t, err)
	require.Equal(t, 0.01, info.(map[any]any)["write_qps"], "TABLE INFO shows the limit set over HTTP")

	// S3: the tenant's token signs as its access key, in its buckets only.
	acme, err := sharedlog.NewS3Store(ctx, sharedlog.S3Options{Endpoint: "http://" + s3Addr, Bucket: "acme-files", AccessKey: "acme", SecretKey: "a-rw"})
	require.NoError(t, err, srv.Log())
	defer acme.Close()
	require.NoError(t, acme.Put(ctx, "o", []byte("data")))
	_, err = sharedlog.NewS3Store(ctx, sharedlog.S3Options{Endpoint: "http://" + s3Addr, Bucket: "beta-files", AccessKey: "acme", SecretKey: "a-rw"})
	require.ErrorContains(t, err, "AccessDenied", "another tenant's bucket")
	acmeRO, err := sharedlog.NewS3Store(ctx, sharedlog.S3Options{Endpoint: "http://" + s3Addr, Bucket: "acme-files", AccessKey: "acme-ro", SecretKey: "a-ro"})
	require.NoError(t, err)
	defer acmeRO.Close()
	got, err := acmeRO.Get(ctx, "o")
	require.NoError(t, err)
	require.Equal(t, "data", string(got))
	require.ErrorContains(t, acmeRO.Put(ctx, "o", []byte("x")), "AccessDenied", "a read-only key")
	_, err = sharedlog.NewS3Store(ctx, sharedlog.S3Options{Endpoint: "http://" + s3Addr, Bucket: "acme-other"})
	require.Error(t, err, "unsigned requests are refused once tenants have keys")

	var tables struct {
		Tables []struct{ Namespace, Name string } `json:"tables"`
	}
	code, body = httpDo("GET", "/tables", "admin-tok", "")
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal([]byte(body), &tables))
	require.Len(t, tables.Tables, 4, body)
	code, body = httpDo("DELETE", "/tables/matrixark/context", "admin-tok", "")
	require.Equal(t, http.StatusConflict, code, "the context store's table is in use: %s", body)
	code, body = httpDo("DELETE", "/tables/default/default", "admin-tok", "")
	require.Equal(t, http.StatusConflict, code, body)
	code, body = httpDo("DELETE", "/tables/beta/default", "admin-tok", "")
	require.Equal(t, http.StatusOK, code, body)
	require.ErrorContains(t, b.Set(ctx, "k", "v", 0).Err(), "no such table", "its tenant's table is gone")
}

// --tenant-token's syntax, and what parse refuses.
func TestTenantTokenFlag(t *testing.T) {
	env := func(k string) string { return "" }
	c, err := parse([]string{"--tenant-token", "t1=acme:rw, t2=acme:ro,t3=Beta_2:rw"}, io.Discard, env)
	require.NoError(t, err)
	require.Equal(t, []tenantToken{{"t1", "acme", false}, {"t2", "acme", true}, {"t3", "Beta_2", false}}, c.tenantTokens)
	require.True(t, c.anyToken())
	require.True(t, c.s3Signed())
	creds, scopes := s3Credentials(c, slog.New(slog.DiscardHandler))
	require.Equal(t, map[string]string{"acme": "t1", "acme-ro": "t2"}, creds, "Beta_2 is no bucket prefix")
	require.Equal(t, "acme-", scopes["acme"].BucketPrefix)
	require.True(t, scopes["acme-ro"].ReadOnly)
	require.Equal(t, "acme", contextTokens(c)["t1"].Tenant)
	require.NotContains(t, contextTokens(c), "t2", "the context routes write: no read-only token")

	c, err = parse(nil, io.Discard, func(k string) string { return map[string]string{"TS_TENANT_TOKEN": "t=acme:ro"}[k] })
	require.NoError(t, err)
	require.Len(t, c.tenantTokens, 1)

	for _, bad := range [][]string{
		{"--tenant-token", "t=acme"},
		{"--tenant-token", "t=acme:admin"},
		{"--tenant-token", "=acme:rw"},
		{"--tenant-token", "t=a/b:rw"},
		{"--tenant-token", "t=matrixark:rw"},
		{"--tenant-token", "t=acme:rw,t=beta:rw"},
		{"--tenant-token", "t=acme:rw", "--token", "t"},
		{"--tenant-token", "t=acme:rw", "--readonly-token", "t"},
		{"--tenant-token", "t=acme:rw", "--s3-credentials", "acme:secret"},
	} {
		_, err := parse(bad, io.Discard, env)
		require.Error(t, err, "%q", bad)
		require.NotContains(t, err.Error(), "t=", "the token is not echoed")
	}
}
