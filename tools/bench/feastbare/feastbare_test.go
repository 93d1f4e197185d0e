package feastbare

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

type status struct {
	OK bool `msgpack:"ok"`
}

type reply struct {
	Status    status `msgpack:"status"`
	Responses []struct {
		Status   status `msgpack:"status"`
		Response struct {
			Values   [][]byte `msgpack:"values"`
			Integers []int64  `msgpack:"integers"`
			Keys     [][]byte `msgpack:"keys"`
			Int      int64    `msgpack:"value"`
		} `msgpack:"response"`
	} `msgpack:"responses"`
}

func post(t *testing.T, url string, cmds ...map[string]any) reply {
	t.Helper()
	body, err := msgpack.Marshal(map[string]any{"commands": cmds})
	require.NoError(t, err)
	res, err := http.Post(url+"/batch_execute", "application/msgpack", bytes.NewReader(body))
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	require.Equal(t, http.StatusOK, res.StatusCode, string(data))
	var r reply
	require.NoError(t, msgpack.Unmarshal(data, &r))
	return r
}

func write(key string, ns int64, val string) map[string]any {
	return map[string]any{"kind": "row_write_batch", "ts_field": "_ts:v", "ts_format": "proto",
		"rows": []any{map[string]any{"key": []byte(key), "args": [][]byte{[]byte("f"), []byte(val)}, "event_time_ns": ns}}}
}

// Rows are written only when newer, their event time kept as the engine
// keeps it in ts_format proto (the engine test's vector), and read back per
// field; scan finds them by suffix and delete_keys removes them.
func TestBareStore(t *testing.T) {
	srv := httptest.NewServer(New())
	defer srv.Close()
	const ns = 1646263500123456000
	other := write("e1proj", ns, "x")
	other["ts_field"] = "_ts:w"
	r := post(t, srv.URL, write("e1proj", ns, "a"), write("e1proj", ns, "stale"), write("e2other", ns+1, "b"), other)
	require.True(t, r.Status.OK)
	require.Equal(t, []int64{1}, r.Responses[0].Response.Integers)
	require.Equal(t, []int64{0}, r.Responses[1].Response.Integers)
	// Another view of the same entity has its own event time.
	require.Equal(t, []int64{1}, r.Responses[3].Response.Integers)

	r = post(t, srv.URL, map[string]any{"kind": "row_read_batch", "keys": [][]byte{[]byte("e1proj"), []byte("none")}, "args": [][]byte{[]byte("f"), []byte("_ts:v")}})
	require.Equal(t, [][]byte{[]byte("x"), []byte("\x08\xcc\xf9\xff\x90\x06\x10\x80\x94\xef\x3a"), nil, nil}, r.Responses[0].Response.Values)

	// Zero seconds are left out, as protobuf serializes them.
	r = post(t, srv.URL, write("e3proj", 1, "z"), map[string]any{"kind": "row_read_batch", "keys": [][]byte{[]byte("e3proj")}, "args": [][]byte{[]byte("_ts:v")}})
	require.Equal(t, [][]byte{[]byte("\x10\x01")}, r.Responses[1].Response.Values)

	r = post(t, srv.URL, map[string]any{"kind": "scan", "cursor": 0, "count": 100, "suffix": []byte("proj")})
	require.ElementsMatch(t, [][]byte{[]byte("e1proj"), []byte("e3proj")}, r.Responses[0].Response.Keys)
	r = post(t, srv.URL, map[string]any{"kind": "delete_keys", "keys": [][]byte{[]byte("e1proj"), []byte("none")}})
	require.Equal(t, int64(1), r.Responses[0].Response.Int)

	r = post(t, srv.URL, map[string]any{"kind": "hkeys", "key": []byte("e2other")})
	require.False(t, r.Responses[0].Status.OK)
}
