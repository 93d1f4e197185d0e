package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// toMsgpack converts a JSON body to the same body in MessagePack, as a
// client would: strings stay strings, numbers numbers.
func toMsgpack(t *testing.T, body string) []byte {
	t.Helper()
	d := json.NewDecoder(strings.NewReader(body))
	d.UseNumber()
	var v any
	require.NoError(t, d.Decode(&v))
	var conv func(any) any
	conv = func(x any) any {
		switch x := x.(type) {
		case json.Number:
			if i, err := x.Int64(); err == nil {
				return i
			}
			f, err := x.Float64()
			require.NoError(t, err)
			return f
		case []any:
			for i := range x {
				x[i] = conv(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = conv(x[k])
			}
		}
		return x
	}
	b, err := msgpack.Marshal(conv(v))
	require.NoError(t, err)
	return b
}

// canonical turns a reply, JSON or MessagePack, into JSON with bin as
// arrays of numbers, so both compare with one expected text.
func canonical(t *testing.T, mp bool, body []byte) string {
	t.Helper()
	if !mp {
		return string(body)
	}
	var v any
	require.NoError(t, msgpack.Unmarshal(body, &v), "%x", body)
	var conv func(any) any
	conv = func(x any) any {
		switch x := x.(type) {
		case []byte:
			out := make([]any, len(x))
			for i, c := range x {
				out[i] = int(c)
			}
			return out
		case []any:
			for i := range x {
				x[i] = conv(x[i])
			}
		case map[string]any:
			for k := range x {
				x[k] = conv(x[k])
			}
		}
		return x
	}
	b, err := json.Marshal(conv(v))
	require.NoError(t, err)
	return string(b)
}

func ok(response string) string {
	return `{"status":{"ok":true,"code":"ok","message":""},"response":` + response + `}`
}

func failed(code string) string {
	return `{"status":{"ok":false,"code":"` + code + `"},"response":{"kind":"empty"}}`
}

// The original's key-value kinds, with their byte encodings (base64 or
// arrays in, arrays out), response kinds and status codes, in JSON and in
// the same bodies in MessagePack.
func TestOriginalKinds(t *testing.T) {
	steps := []struct {
		cmd  string
		want string
	}{
		{`{"kind":"string_set","key":"k","value":"djE="}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"string_get","key":"k"}`, ok(`{"kind":"bytes","value":[118,49]}`)},
		{`{"kind":"string_set","key":"k","value":[118,50]}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"string_get","key":"k"}`, ok(`{"kind":"bytes","value":[118,50]}`)},
		{`{"kind":"string_get","key":"missing"}`, ok(`{"kind":"bytes","value":null}`)},
		{`{"kind":"common_exists","key":"k"}`, ok(`{"kind":"integer","value":1}`)},
		{`{"kind":"common_exists","key":"missing"}`, ok(`{"kind":"integer","value":0}`)},
		{`{"kind":"common_ttl","key":"k"}`, ok(`{"kind":"integer","value":-1}`)},
		{`{"kind":"common_ttl","key":"missing"}`, ok(`{"kind":"integer","value":-2}`)},
		{`{"kind":"common_expire","key":"k","ttl_ms":60000}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"common_ttl","key":"k"}`, ok(`{"kind":"integer","value":60000}`)},
		// string_set keeps the TTL, as the original's does.
		{`{"kind":"string_set","key":"k","value":"djM=","unknown_field":1}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"common_ttl","key":"k"}`, ok(`{"kind":"integer","value":60000}`)},
		{`{"kind":"common_expire","key":"missing","ttl_ms":5}`, failed("not_found")},
		{`{"kind":"string_set_ex","key":"k2","value":"eA==","ttl_ms":1000}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"common_ttl","key":"k2"}`, ok(`{"kind":"integer","value":1000}`)},
		{`{"kind":"string_set_conditional","key":"k2","value":"eQ==","condition":"if_not_exists","return_old":false}`, ok(`{"kind":"integer","value":0}`)},
		{`{"kind":"string_set_conditional","key":"k3","value":"eQ==","condition":"if_not_exists","return_old":false}`, ok(`{"kind":"integer","value":1}`)},
		{`{"kind":"string_set_conditional","key":"k3","value":"eg==","condition":"if_exists","return_old":true}`, ok(`{"kind":"bytes","value":[121]}`)},
		{`{"kind":"string_set_conditional","key":"k4","value":"eg==","condition":"if_exists","return_old":true}`, ok(`{"kind":"bytes","value":null}`)},
		// Without ttl_ms, string_set_conditional clears the TTL.
		{`{"kind":"string_set_conditional","key":"k2","value":"eg==","condition":"always","return_old":false,"ttl_ms":null}`, ok(`{"kind":"integer","value":1}`)},
		{`{"kind":"common_ttl","key":"k2"}`, ok(`{"kind":"integer","value":-1}`)},
		{`{"kind":"string_delete","key":"k3"}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"string_get","key":"k3"}`, ok(`{"kind":"bytes","value":null}`)},
		{`{"kind":"common_delete","key":"k2"}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"common_exists","key":"k2"}`, ok(`{"kind":"integer","value":0}`)},
		{`{"kind":"hash_set","key":"h","field":"f","value":"MQ=="}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"hash_multi_set","key":"h","entries":[["g",[50]],["x","eA=="]]}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"hash_get","key":"h","field":"f"}`, ok(`{"kind":"bytes","value":[49]}`)},
		{`{"kind":"hash_get","key":"h","field":"nope"}`, ok(`{"kind":"bytes","value":null}`)},
		{`{"kind":"hash_multi_get","key":"h","fields":["f","nope","g"]}`, ok(`{"kind":"values","values":[[49],null,[50]]}`)},
		{`{"kind":"hash_get_all","key":"h"}`, ok(`{"kind":"hash_entries","entries":[["f",[49]],["g",[50]],["x",[120]]]}`)},
		{`{"kind":"hash_get_all","key":"missing"}`, ok(`{"kind":"hash_entries","entries":[]}`)},
		{`{"kind":"hash_len","key":"h"}`, ok(`{"kind":"integer","value":3}`)},
		{`{"kind":"hash_incr_by","key":"h","field":"f","increment":5}`, ok(`{"kind":"integer","value":6}`)},
		{`{"kind":"hash_incr_by","key":"h","field":"x","increment":1}`, failed("unmatched")},
		{`{"kind":"hash_set","key":"h","field":"big","value":"OTIyMzM3MjAzNjg1NDc3NTgwNw=="}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"hash_incr_by","key":"h","field":"big","increment":1}`, failed("out_of_range")},
		{`{"kind":"hash_delete","key":"h","field":"x"}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"hash_len","key":"h"}`, ok(`{"kind":"integer","value":3}`)},
		{`{"kind":"set_add","key":"s","member":"YQ=="}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"set_add","key":"s","member":[98]}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"set_members","key":"s"}`, ok(`{"kind":"members","members":[[97],[98]]}`)},
		{`{"kind":"set_remove","key":"s","member":"YQ=="}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"set_members","key":"s"}`, ok(`{"kind":"members","members":[[98]]}`)},
		{`{"kind":"set_members","key":"missing"}`, ok(`{"kind":"members","members":[]}`)},
		{`{"kind":"hash_get","key":"k","field":"f"}`, failed("wrong_type")},
		// Feature series, in the original's shapes (values as arrays of
		// numbers).
		{`{"kind":"feature_append","key":"f","points":[{"timestamp_ms":20,"value":[50]},{"timestamp_ms":10,"value":[49]}]}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"feature_append_with_policy","key":"f","points":[{"timestamp_ms":10,"value":[57]}],"policy":"FIRST"}`, ok(`{"kind":"integer","value":0}`)},
		{`{"kind":"feature_append_with_policy","key":"f","points":[{"timestamp_ms":10,"value":[51]}],"policy":"replace_existing"}`, ok(`{"kind":"integer","value":1}`)},
		{`{"kind":"feature_append_with_policy","key":"f","points":[],"policy":"block"}`, failed("invalid_argument")},
		{`{"kind":"feature_query","key":"f","start_ms":0,"end_ms":100}`, ok(`{"kind":"feature_points","points":[{"timestamp_ms":10,"value":[51]},{"timestamp_ms":20,"value":[50]}]}`)},
		{`{"kind":"feature_query","key":"f","start_ms":0,"end_ms":100,"count":1}`, ok(`{"kind":"feature_points","points":[{"timestamp_ms":10,"value":[51]}]}`)},
		{`{"kind":"feature_agg_query","key":"f","start_ms":0,"end_ms":100,"aggregator":"sum"}`, ok(`{"kind":"aggregate","value":5}`)},
		{`{"kind":"feature_agg_query","key":"f","start_ms":0,"end_ms":100,"aggregator":"median"}`, failed("invalid_argument")},
		{`{"kind":"feature_append","key":"r","points":[{"timestamp_ms":1,"value":[8,1,16,2,24,3,32,4]},{"timestamp_ms":2,"value":[8,9,16,2,24,3,32,4]}]}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"feature_query_filtered","key":"r","start_ms":0,"end_ms":9,"filters":[{"field":"gid","op":"greater_than","value":1}]}`, ok(`{"kind":"feature_points","points":[{"timestamp_ms":2,"value":[8,9,16,2,24,3,32,4]}]}`)},
		{`{"kind":"feature_replace","key":"f","start_ms":0,"end_ms":15,"points":[{"timestamp_ms":30,"value":[55]}]}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"feature_query","key":"f","start_ms":0,"end_ms":100}`, ok(`{"kind":"feature_points","points":[{"timestamp_ms":20,"value":[50]},{"timestamp_ms":30,"value":[55]}]}`)},
		{`{"kind":"feature_delete","key":"f"}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"feature_query","key":"f","start_ms":0,"end_ms":100}`, ok(`{"kind":"feature_points","points":[]}`)},
		{`{"kind":"feature_query","key":"k","start_ms":0,"end_ms":100}`, failed("wrong_type")},
		{`{"kind":"sequence_add","key":"q","rows":[{"timestamp_ms":5,"gid":1,"action_type":2,"duration":3,"author_id":4},{"timestamp_ms":6,"gid":7,"action_type":2,"duration":9,"author_id":4}]}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"sequence_query","key":"q","start_ms":0,"end_ms":10,"count":10,"filters":[{"field":"duration","op":"less_than","value":5}]}`, ok(`{"kind":"sequence_rows","rows":[{"timestamp_ms":5,"gid":1,"action_type":2,"duration":3,"author_id":4}]}`)},
		{`{"kind":"sequence_query","key":"q","start_ms":0,"end_ms":10,"count":0,"filters":[]}`, failed("invalid_argument")},
		{`{"kind":"sequence_batch_query","queries":[{"key":"q","start_ms":6,"end_ms":6,"count":1,"filters":[]},{"key":"none","start_ms":0,"end_ms":1,"count":1}]}`, ok(`{"kind":"sequence_row_groups","groups":[["q",[{"timestamp_ms":6,"gid":7,"action_type":2,"duration":9,"author_id":4}]],["none",[]]]}`)},
		{`{"kind":"control_state_increment","key":"c","timestamp_ms":1500,"amount":2}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"control_state_increment_with_options","key":"c","timestamp_ms":1700,"amount":3,"precision_ms":1000,"ttl_ms":60000}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"control_state_count","key":"c","start_ms":0,"end_ms":2000}`, ok(`{"kind":"integer","value":5}`)},
		{`{"kind":"control_state_query","key":"c","start_ms":0,"end_ms":2000,"aggregator":"events"}`, ok(`{"kind":"integer","value":2}`)},
		{`{"kind":"control_state_detail","key":"c","start_ms":0,"end_ms":2000}`, ok(`{"kind":"feature_points","points":[{"timestamp_ms":1000,"value":[51]},{"timestamp_ms":1500,"value":[50]}]}`)},
		{`{"kind":"control_state_change_add","key":"c","timestamp_ms":1500,"value":[120]}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"control_state_query","key":"c","start_ms":0,"end_ms":2000,"aggregator":"change"}`, ok(`{"kind":"integer","value":1}`)},
		{`{"kind":"control_state_set","family":"h","key":"u","timestamp_ms":10,"amount":4}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"control_state_set_and_get_with_options","family":"h","key":"u","timestamp_ms":10,"amount":1,"start_ms":0,"end_ms":100,"aggregator":"sum","uuid":"a"}`, ok(`{"kind":"integer","value":5}`)},
		{`{"kind":"control_state_set_and_get_with_options","family":"h","key":"u","timestamp_ms":10,"amount":1,"start_ms":0,"end_ms":100,"aggregator":"sum","uuid":"a"}`, ok(`{"kind":"integer","value":5}`)},
		{`{"kind":"control_state_family_query","family":"h","key":"u","start_ms":0,"end_ms":100,"aggregator":"sum"}`, ok(`{"kind":"integer","value":5}`)},
		{`{"kind":"control_state_selection_set","key":"sel","value":[97],"occur_time_ms":5,"ttl_ms":0,"selection_type":"last"}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"control_state_fol_set","key":"sel","value":[98],"occur_time_ms":4,"ttl_ms":0,"fol_type":"last"}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"control_state_selection_query","key":"sel"}`, ok(`{"kind":"bytes","value":[97]}`)},
		{`{"kind":"control_state_query","key":"c","start_ms":0,"end_ms":2000,"aggregator":"median"}`, failed("invalid_argument")},
		{`{"kind":"control_state_debug","key":"c","start_ms":0,"end_ms":2000}`, ok(`{"kind":"hash_entries","entries":[["1000",[51]],["1500",[50]],["change:1500",[49]]]}`)},
		{`{"kind":"control_state_manager","key":"u","op_type":5}`, ok(`{"kind":"hash_entries","entries":[["key_list",[49,48]]]}`)},
		{`{"kind":"control_state_manager","key":"u","op_type":2,"field_list":[[10,""],[11,""]]}`, ok(`{"kind":"hash_entries","entries":[["10",[53]],["11",[48]]]}`)},
		{`{"kind":"control_state_manager","key":"u"}`, ok(`{"kind":"hash_entries","entries":[["h_events",[49]],["h_sum",[53]],["cpc_events",[48]],["cpc_sum",[48]]]}`)},
		{`{"kind":"context_get_node","tenant_hash":1,"node_hash":2}`, failed("unsupported")},
		{`{"kind":"common_delete","key":"h"}`, ok(`{"kind":"empty"}`)},
		{`{"kind":"hash_len","key":"h"}`, ok(`{"kind":"integer","value":0}`)},
	}
	for _, mp := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "msgpack"}[mp], func(t *testing.T) {
			srv, e, _ := newServer(t, testclock.New(epoch), nil)
			for i, st := range steps {
				body := `{"shard_id":1,"command":` + st.cmd + `}`
				raw := []byte(body)
				if mp {
					raw = toMsgpack(t, body)
				}
				code, reply := post(t, srv.Client(), srv.URL+"/execute", mp, "", raw)
				require.Equal(t, http.StatusOK, code, "step %d: %s", i, reply)
				got := canonical(t, mp, reply)
				if want := st.want; want[len(`{"status":{"ok":`)] == 'f' {
					// A failure's message is the engine's text: compare
					// the rest.
					var r ExecuteResponse
					require.NoError(t, json.Unmarshal([]byte(got), &r))
					require.NotEmpty(t, r.Status.Message, "step %d", i)
					r.Status.Message = ""
					b, err := json.Marshal(map[string]any{"status": map[string]any{"ok": r.Status.OK, "code": r.Status.Code}, "response": map[string]any{"kind": r.Response.Kind}})
					require.NoError(t, err)
					got = string(b)
				}
				require.JSONEq(t, st.want, got, "step %d: %s", i, st.cmd)
			}
			// The writes are the engine's.
			r, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindGet, Key: []byte("k")})
			require.NoError(t, err)
			require.Equal(t, "v3", string(r.Value))
			r, err = e.Execute(t.Context(), ts.Command{Kind: ts.KindSMembers, Key: []byte("s")})
			require.NoError(t, err)
			require.Equal(t, [][]byte{[]byte("b")}, r.Values)
		})
	}
}

// Requests that cannot be understood are HTTP 400 with code bad_request
// and change nothing; the batch form answers a bare status.
func TestBadRequests(t *testing.T) {
	cases := []struct {
		name, path, body string
		code             int
	}{
		{"not json", "/execute", `{"shard_id":1,"command":`, http.StatusBadRequest},
		{"unknown kind", "/execute", `{"shard_id":1,"command":{"kind":"risk_increment","key":"k"}}`, http.StatusBadRequest},
		{"no kind", "/execute", `{"shard_id":1,"command":{"key":"k"}}`, http.StatusBadRequest},
		{"missing field", "/execute", `{"shard_id":1,"command":{"kind":"string_set","key":"k"}}`, http.StatusBadRequest},
		{"missing key", "/execute", `{"shard_id":1,"command":{"kind":"string_get"}}`, http.StatusBadRequest},
		{"missing window", "/execute", `{"shard_id":1,"command":{"kind":"feature_query","key":"f","start_ms":0}}`, http.StatusBadRequest},
		{"unknown policy", "/execute", `{"shard_id":1,"command":{"kind":"feature_append_with_policy","key":"f","points":[],"policy":"sometimes"}}`, http.StatusBadRequest},
		{"unknown filter op", "/execute", `{"shard_id":1,"command":{"kind":"feature_query_filtered","key":"f","start_ms":0,"end_ms":1,"filters":[{"field":"gid","op":"~","value":1}]}}`, http.StatusBadRequest},
		{"bad base64", "/execute", `{"shard_id":1,"command":{"kind":"string_set","key":"k","value":"!!"}}`, http.StatusBadRequest},
		{"byte out of range", "/execute", `{"shard_id":1,"command":{"kind":"string_set","key":"k","value":[256]}}`, http.StatusBadRequest},
		{"negative shard_id", "/execute", `{"shard_id":-1,"command":{"kind":"string_get","key":"k"}}`, http.StatusBadRequest},
		{"no command", "/execute", `{"shard_id":1}`, http.StatusBadRequest},
		{"bad condition", "/execute", `{"command":{"kind":"string_set_conditional","key":"k","value":"eA==","condition":"sometimes","return_old":false}}`, http.StatusBadRequest},
		{"bad range", "/execute", `{"command":{"kind":"zrange","key":"z","range":{"by":"score","min":"(x","max":1}}}`, http.StatusBadRequest},
		{"batch not json", "/batch_execute", `{"commands":[`, http.StatusBadRequest},
		{"batch unknown kind", "/batch_execute", `{"commands":[{"kind":"string_set","key":"k","value":"eA=="},{"kind":"nope"}]}`, http.StatusBadRequest},
	}
	for _, mp := range []bool{false, true} {
		for _, c := range cases {
			t.Run(fmt.Sprintf("%s/msgpack=%v", c.name, mp), func(t *testing.T) {
				srv, e, _ := newServer(t, testclock.New(epoch), nil)
				raw := []byte(c.body)
				if mp {
					if json.Valid(raw) {
						raw = toMsgpack(t, c.body)
					} else {
						raw = []byte{0x82, 0xa8, 's', 'h'} // truncated MessagePack
					}
				}
				code, reply := post(t, srv.Client(), srv.URL+c.path, mp, "", raw)
				require.Equal(t, c.code, code, string(reply))
				var st Status
				if c.path == "/execute" {
					var r ExecuteResponse
					decode(t, mp, reply, &r)
					require.Equal(t, "empty", r.Response.Kind)
					st = r.Status
				} else {
					decode(t, mp, reply, &st)
				}
				require.False(t, st.OK)
				require.Equal(t, CodeBadRequest, st.Code)
				require.NotEmpty(t, st.Message)
				r, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindExists, Key: []byte("k")})
				require.NoError(t, err)
				require.Zero(t, r.Int, "a refused request wrote")
			})
		}
	}
}

// Routes, methods and the body limit.
func TestRoutes(t *testing.T) {
	srv, _, _ := newServer(t, testclock.New(epoch), func(o *Options) { o.MaxBodyBytes = 1 << 10 })
	c := srv.Client()
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		req, err := http.NewRequestWithContext(t.Context(), m, srv.URL+"/health", nil)
		require.NoError(t, err)
		resp, err := c.Do(req)
		require.NoError(t, err)
		var st Status
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&st))
		resp.Body.Close()
		require.Equal(t, http.StatusOK, resp.StatusCode, m)
		require.Equal(t, Status{OK: true, Code: CodeOK}, st)
	}
	resp, err := c.Get(srv.URL + "/execute")
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)

	code, body := post(t, c, srv.URL+"/nope", false, "", nil)
	require.Equal(t, http.StatusNotFound, code)
	require.JSONEq(t, `{"ok":false,"code":"not_found","message":"unknown server route"}`, string(body))

	big := fmt.Sprintf(`{"command":{"kind":"string_set","key":"k","value":"%0*d"}}`, 2000, 0)
	code, body = post(t, c, srv.URL+"/execute", false, "", []byte(big))
	require.Equal(t, http.StatusRequestEntityTooLarge, code)
	var r ExecuteResponse
	decode(t, false, body, &r)
	require.Equal(t, CodeTooLarge, r.Status.Code)

	// An alias of /execute, table-addressed.
	code, body = post(t, c, srv.URL+"/ProxyService/ExecuteTableCmd", false, "", []byte(`{"namespace":"default","table_name":"default","command":{"kind":"string_get","key":"k"}}`))
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, ok(`{"kind":"bytes","value":null}`), string(body))
}
