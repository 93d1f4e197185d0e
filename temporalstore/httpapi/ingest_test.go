package httpapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// POST /ingest takes a partition's batch in JSON and MessagePack, with a
// result per record; a replay is all duplicates; /ingest_offset gives the
// resume point and /dead_letters the refused records as JSON lines.
func TestIngestOverHTTP(t *testing.T) {
	for _, mp := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "msgpack"}[mp], func(t *testing.T) {
			srv, e, _ := newServer(t, testclock.New(epoch), nil)
			body := `{"source":"orders","partition":2,"records":[
				{"offset":5,"command":{"kind":"control_state_increment","key":"u1","timestamp_ms":1000,"amount":3}},
				{"offset":6,"command":{"kind":"feature_append","key":"f","points":[{"timestamp_ms":1,"value":[49]}]}},
				{"offset":7,"command":{"kind":"feature_append","key":"f","points":[{"timestamp_ms":-5,"value":[49]}]}},
				{"offset":8,"command":{"kind":"no_such_kind","key":"x"}},
				{"offset":9,"command":{"kind":"incr_by","key":"n","delta":4}}]}`
			raw := []byte(body)
			if mp {
				raw = toMsgpack(t, body)
			}
			var results []string
			for range 2 {
				code, reply := post(t, srv.Client(), srv.URL+"/ingest", mp, "", raw)
				require.Equal(t, http.StatusOK, code, "%s", reply)
				var ir IngestResponse
				decode(t, mp, reply, &ir)
				require.True(t, ir.Status.OK)
				require.Equal(t, int64(9), ir.Committed)
				for _, r := range ir.Results {
					results = append(results, r.Status)
				}
			}
			require.Equal(t, []string{"applied", "applied", "dead_lettered", "dead_lettered", "applied",
				"duplicate", "duplicate", "duplicate", "duplicate", "duplicate"}, results)
			r, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindCCount, Key: []byte("u1"), End: 5000})
			require.NoError(t, err)
			require.Equal(t, int64(3), r.Int)
			r, err = e.Execute(t.Context(), ts.Command{Kind: ts.KindGet, Key: []byte("n")})
			require.NoError(t, err)
			require.Equal(t, "4", string(r.Value))

			resp, err := srv.Client().Get(srv.URL + "/ingest_offset?source=orders&partition=2")
			require.NoError(t, err)
			var off struct {
				NextOffset int64 `json:"next_offset"`
			}
			require.NoError(t, json.NewDecoder(resp.Body).Decode(&off))
			resp.Body.Close()
			require.Equal(t, int64(10), off.NextOffset)

			resp, err = srv.Client().Get(srv.URL + "/dead_letters?source=orders")
			require.NoError(t, err)
			require.Equal(t, "application/x-ndjson", resp.Header.Get("Content-Type"))
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			var offsets []int64
			sc := bufio.NewScanner(bytes.NewReader(b))
			for sc.Scan() {
				var d ts.DeadLetter
				require.NoError(t, json.Unmarshal(sc.Bytes(), &d))
				offsets = append(offsets, d.Offset)
			}
			require.Equal(t, []int64{7, 8}, offsets)

			code, _ := post(t, srv.Client(), srv.URL+"/ingest", false, "", []byte(`{"source":"bad name","partition":0,"records":[]}`))
			require.Equal(t, http.StatusBadRequest, code)
		})
	}
}
