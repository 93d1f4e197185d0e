package httpapi

import (
	"bufio"
	"net"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// Batches reuse their decoded commands and reply buffers: a batch after a
// larger one must see none of its fields (a TTL, a table), and its reply
// none of its bytes.
func TestBatchReuseLeavesNothingBehind(t *testing.T) {
	for _, mp := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "msgpack"}[mp], func(t *testing.T) {
			srv, e, _ := newServer(t, testclock.New(epoch), nil)
			ctx := t.Context()
			require.NoError(t, e.CreateTable(ctx, "ads", "caps", ts.TableOptions{Shards: 1}))
			big := `{"namespace":"ads","table_name":"caps","commands":[` +
				strings.Repeat(`{"kind":"string_set","key":"a","value":"`+strings.Repeat("QUFB", 400)+`","ttl_ms":60000},`, 8) +
				`{"kind":"string_get","key":"a"}]}`
			br := batchJSON(t, srv, mp, big)
			require.Len(t, br.Responses, 9)

			br = batchJSON(t, srv, mp, `{"commands":[{"kind":"string_set","key":"b","value":"dg=="},{"kind":"string_get","key":"b"}]}`)
			require.Len(t, br.Responses, 2)
			var v Bytes
			require.NoError(t, br.Responses[1].Response.Value.Decode(&v))
			require.Equal(t, "v", string(v))

			// b went to the default table, without the TTL of the batch before.
			r, err := e.Execute(ctx, ts.Command{Kind: ts.KindPTTL, Key: []byte("b")})
			require.NoError(t, err)
			require.EqualValues(t, -1, r.Int)
			r, err = e.Execute(ctx, ts.Command{Namespace: "ads", Table: "caps", Kind: ts.KindExists, Key: []byte("b")})
			require.NoError(t, err)
			require.Zero(t, r.Int)
		})
	}
}

// A body shorter than its Content-Length is a bad request, not a partial
// one run.
func TestBatchBodyShorterThanDeclared(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), nil)
	conn, err := net.Dial("tcp", strings.TrimPrefix(srv.URL, "http://"))
	require.NoError(t, err)
	defer conn.Close()
	body := `{"commands":[{"kind":"string_set","key":"k","value":"dg=="}]}`
	_, err = conn.Write([]byte("POST /batch_execute HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n" +
		"Content-Length: 500\r\n\r\n" + body))
	require.NoError(t, err)
	require.NoError(t, conn.(*net.TCPConn).CloseWrite())
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusBadRequest, resp.StatusCode)
	r, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindExists, Key: []byte("k")})
	require.NoError(t, err)
	require.Zero(t, r.Int)
}
