package s3api

import (
	"encoding/xml"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// newScopedServer serves a store holding the buckets "bucket" and
// "acme-data" to the test key, confined to scope.
func newScopedServer(t *testing.T, scope Scope) *testServer {
	t.Helper()
	st, err := matrixobject.Open(t.TempDir(), matrixobject.Options{})
	require.NoError(t, err)
	h, err := New(st, Options{Credentials: map[string]string{testKey: testSecret}, Scopes: map[string]Scope{testKey: scope},
		Now: func() time.Time { return testNow }})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(func() { srv.Close(); st.Close() })
	for _, b := range []string{"bucket", "acme-data"} {
		require.NoError(t, st.CreateBucket(t.Context(), b, matrixobject.Quota{}))
	}
	return &testServer{Server: srv, store: st}
}

// A scoped key lists and reaches the buckets of its prefix alone, and a
// read-only one only reads them.
func TestScopes(t *testing.T) {
	rw := newScopedServer(t, Scope{BucketPrefix: "acme-"})
	res, body := rw.do(t, "GET", "/", nil, nil, "")
	require.Equal(t, http.StatusOK, res.StatusCode, string(body))
	var list listBucketsXML
	require.NoError(t, xml.Unmarshal(body, &list))
	require.Len(t, list.Buckets, 1)
	require.Equal(t, "acme-data", list.Buckets[0].Name)
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"PUT", "/acme-data/k", http.StatusOK},
		{"GET", "/acme-data/k", http.StatusOK},
		{"PUT", "/acme-new", http.StatusOK},
		{"GET", "/bucket?list-type=2", http.StatusForbidden},
		{"PUT", "/bucket/k", http.StatusForbidden},
		{"PUT", "/other", http.StatusForbidden},
		{"DELETE", "/bucket", http.StatusForbidden},
		{"HEAD", "/bucket", http.StatusForbidden},
	} {
		var b []byte
		if tc.method == "PUT" {
			b = []byte("v")
		}
		res, body := rw.do(t, tc.method, tc.path, b, nil, "")
		require.Equal(t, tc.code, res.StatusCode, "%s %s: %s", tc.method, tc.path, body)
		if tc.code == http.StatusForbidden && tc.method != "HEAD" {
			require.Equal(t, "AccessDenied", errorCode(t, body).Code)
		}
	}

	ro := newScopedServer(t, Scope{BucketPrefix: "acme-", ReadOnly: true})
	_, err := ro.store.PutObject(t.Context(), "acme-data", "k", strings.NewReader("v"), matrixobject.PutOptions{})
	require.NoError(t, err)
	for _, tc := range []struct {
		method, path string
		code         int
	}{
		{"GET", "/acme-data/k", http.StatusOK},
		{"GET", "/acme-data?list-type=2", http.StatusOK},
		{"PUT", "/acme-data/k2", http.StatusForbidden},
		{"DELETE", "/acme-data/k", http.StatusForbidden},
		{"PUT", "/acme-new", http.StatusForbidden},
	} {
		var b []byte
		if tc.method == "PUT" {
			b = []byte("v")
		}
		res, body := ro.do(t, tc.method, tc.path, b, nil, "")
		require.Equal(t, tc.code, res.StatusCode, "%s %s: %s", tc.method, tc.path, body)
	}

	// A scope names a credential, with a prefix.
	for _, o := range []Options{
		{Credentials: map[string]string{testKey: testSecret}, Scopes: map[string]Scope{"other": {BucketPrefix: "a-"}}},
		{Credentials: map[string]string{testKey: testSecret}, Scopes: map[string]Scope{testKey: {}}},
	} {
		_, err := New(ro.store, o)
		require.ErrorIs(t, err, ErrInvalidOptions)
	}
}
