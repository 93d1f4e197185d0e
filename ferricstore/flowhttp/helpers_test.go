package flowhttp_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/flowhttp"
)

// client calls a test server's routes.
type client struct {
	t     *testing.T
	url   string
	token string
}

// reply is an answer: its status, headers, raw body and decoded object.
type reply struct {
	status int
	header http.Header
	raw    string
	body   map[string]any
}

// code is an error answer's code.
func (r reply) code() string {
	e, _ := r.body["error"].(map[string]any)
	s, _ := e["code"].(string)
	return s
}

// serve starts a handler over a new store; both stop with the test.
func serve(t *testing.T, opts flowhttp.Options) (*client, *ferricstore.Store) {
	t.Helper()
	st, err := ferricstore.Open(ferricstore.Options{Dir: t.TempDir(), Shards: 2, Async: true})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	srv := httptest.NewServer(flowhttp.New(st.Flows(), opts))
	t.Cleanup(srv.Close)
	return &client{t: t, url: srv.URL}, st
}

// do sends body (a string is sent as it is, anything else as JSON).
func (c *client) do(method, path string, body any) reply {
	c.t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		raw, err := json.Marshal(b)
		require.NoError(c.t, err)
		rd = bytes.NewReader(raw)
	}
	req, err := http.NewRequestWithContext(c.t.Context(), method, c.url+path, rd)
	require.NoError(c.t, err)
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(c.t, err)
	defer res.Body.Close()
	raw, err := io.ReadAll(res.Body)
	require.NoError(c.t, err)
	out := reply{status: res.StatusCode, header: res.Header, raw: string(raw)}
	if len(raw) > 0 {
		require.NoError(c.t, json.Unmarshal(raw, &out.body), "%s %s: %s", method, path, raw)
	}
	return out
}

// must sends and requires status.
func (c *client) must(status int, method, path string, body any) map[string]any {
	c.t.Helper()
	r := c.do(method, path, body)
	require.Equal(c.t, status, r.status, "%s %s: %s", method, path, r.raw)
	return r.body
}

// flows is how many flows the store holds.
func flows(t *testing.T, st *ferricstore.Store) int {
	t.Helper()
	n, err := st.Flows().Counts(t.Context())
	require.NoError(t, err)
	return n.Waiting + n.Running + n.Completed + n.Failed + n.Cancelled
}

// obj is a JSON object.
type obj = map[string]any
