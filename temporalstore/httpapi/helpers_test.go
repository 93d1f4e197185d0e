package httpapi

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

var epoch = time.Unix(1_764_460_800, 0)

func newEngine(t testing.TB, clk *testclock.Clock) *ts.Engine {
	t.Helper()
	e, err := local.Open(t.Context(), ts.Options{Dir: t.TempDir(), Now: clk.Now, MaintenanceInterval: ts.Disabled})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

// newServer serves a new engine over a live httptest server.
func newServer(t *testing.T, clk *testclock.Clock, edit func(*Options)) (*httptest.Server, *ts.Engine, *Handler) {
	t.Helper()
	e := newEngine(t, clk)
	o := Options{Engine: e}
	if edit != nil {
		edit(&o)
	}
	h, err := New(o)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, e, h
}

func encode(t testing.TB, mp bool, v any) []byte {
	t.Helper()
	if mp {
		var buf bytes.Buffer
		enc := msgpack.NewEncoder(&buf)
		enc.SetCustomStructTag("json")
		require.NoError(t, enc.Encode(v))
		return buf.Bytes()
	}
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return b
}

func decode(t *testing.T, mp bool, data []byte, v any) {
	t.Helper()
	if mp {
		d := msgpack.NewDecoder(bytes.NewReader(data))
		d.SetCustomStructTag("json")
		require.NoError(t, d.Decode(v), "%x", data)
		return
	}
	require.NoError(t, json.Unmarshal(data, v), string(data))
}

// post sends body to url and returns the HTTP status and reply body,
// checking the reply is in the request's encoding.
func post(t *testing.T, c *http.Client, url string, mp bool, token string, body []byte) (int, []byte) {
	t.Helper()
	code, ct, out := send(t, c, http.MethodPost, url, token, mp, body)
	if code != http.StatusNotFound {
		want := ContentTypeJSON
		if mp {
			want = ContentTypeMsgpack
		}
		require.Equal(t, want, ct)
	}
	return code, out
}

// do sends a request of method to url with body (JSON, or MessagePack
// when mp) and token, and returns the HTTP status and reply.
func do(t *testing.T, c *http.Client, method, url, token string, mp bool, body []byte) (int, []byte) {
	t.Helper()
	code, _, out := send(t, c, method, url, token, mp, body)
	return code, out
}

// send is do, with the reply's Content-Type.
func send(t *testing.T, c *http.Client, method, url, token string, mp bool, body []byte) (int, string, []byte) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, url, bytes.NewReader(body))
	require.NoError(t, err)
	ct := ContentTypeJSON
	if mp {
		ct = ContentTypeMsgpack
	}
	req.Header.Set("Content-Type", ct)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := c.Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return resp.StatusCode, resp.Header.Get("Content-Type"), out
}

// execWire runs one wire command through /execute.
func execWire(t *testing.T, srv *httptest.Server, mp bool, req Request) ExecuteResponse {
	t.Helper()
	code, body := post(t, srv.Client(), srv.URL+"/execute", mp, "", encode(t, mp, req))
	require.Equal(t, http.StatusOK, code, string(body))
	var r ExecuteResponse
	decode(t, mp, body, &r)
	return r
}

// batchJSON posts a /batch_execute body written in JSON, as MessagePack
// when mp, and returns its decoded reply after checking the batch is ok.
func batchJSON(t *testing.T, srv *httptest.Server, mp bool, body string) BatchResponse {
	t.Helper()
	raw := []byte(body)
	if mp {
		raw = toMsgpack(t, body)
	}
	code, reply := post(t, srv.Client(), srv.URL+"/batch_execute", mp, "", raw)
	require.Equal(t, http.StatusOK, code)
	var br BatchResponse
	decode(t, mp, reply, &br)
	require.True(t, br.Status.OK)
	return br
}

// execEngine runs an engine command through /execute and turns the reply
// back into the engine's response and error.
func execEngine(t *testing.T, srv *httptest.Server, mp bool, c ts.Command) (ts.Response, error) {
	t.Helper()
	w := wire.FromEngine(c)
	r := execWire(t, srv, mp, Request{Command: &w, Namespace: c.Namespace, TableName: c.Table})
	if err := r.Status.Err(); err != nil {
		return ts.Response{}, err
	}
	return r.Response.Engine(c)
}

// requireSameError checks got is want as a client sees it: the same text,
// and the same engine error under errors.Is.
func requireSameError(t *testing.T, want, got error, msg ...any) {
	t.Helper()
	if want == nil {
		require.NoError(t, got, msg...)
		return
	}
	require.Error(t, got, msg...)
	require.Equal(t, want.Error(), got.Error(), msg...)
	for _, sentinel := range engineSentinels {
		if errors.Is(want, sentinel) {
			require.ErrorIs(t, got, sentinel, msg...)
			return
		}
	}
}

// engineSentinels are the engine's errors a reply's status stands for.
var engineSentinels = []error{
	ts.ErrInvalid, ts.ErrSeriesTooLarge, ts.ErrUnknownKind, ts.ErrWrongType, ts.ErrNotInteger, ts.ErrNotFloat,
	ts.ErrOverflow, ts.ErrTooLarge, ts.ErrCrossShard, ts.ErrNotHLL, ts.ErrCorruptHLL, ts.ErrNoSuchKey, ts.ErrOutOfRange,
	ts.ErrNoTable, ts.ErrReadOnly, ts.ErrReadQPS, ts.ErrWriteQPS, ts.ErrTenantQPS, ts.ErrShardRate, ts.ErrClosed,
}
