package httpapi

import (
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// proxyStep is one typed route's request, and the /execute command it
// stands for: the body's fields (but the address) with kind and extra.
type proxyStep struct {
	verb, body, kind, extra string
	// want, when set, is the reply's response (canonical JSON).
	want string
}

// proxySteps exercise every typed route, in an order whose reads see the
// writes before them.
func proxySteps(now int64) []proxyStep {
	at := func(s string) string { return strings.ReplaceAll(s, "NOW", fmt.Sprint(now)) }
	return []proxyStep{
		{verb: "Set", body: `{"key":"s","value":[118]}`, kind: "string_set", want: `{"kind":"empty"}`},
		{verb: "Get", body: `{"key":"s"}`, kind: "string_get", want: `{"kind":"bytes","value":[118]}`},
		{verb: "SetEx", body: `{"key":"sx","value":"dg==","ttl_ms":60000}`, kind: "string_set_ex"},
		{verb: "Ttl", body: `{"key":"sx"}`, kind: "common_ttl", want: `{"kind":"integer","value":60000}`},
		{verb: "Expire", body: `{"key":"s","ttl_ms":5000}`, kind: "common_expire", want: `{"kind":"empty"}`},
		{verb: "Expire", body: `{"key":"missing","ttl_ms":5000}`, kind: "common_expire"},
		{verb: "Exists", body: `{"key":"s"}`, kind: "common_exists", want: `{"kind":"integer","value":1}`},
		{verb: "Delete", body: `{"key":"s"}`, kind: "common_delete"},
		{verb: "Exists", body: `{"key":"s"}`, kind: "common_exists", want: `{"kind":"integer","value":0}`},
		{verb: "HSet", body: `{"key":"h","field":"f","value":[49]}`, kind: "hash_set"},
		{verb: "HMSet", body: `{"key":"h","entries":[["g",[50]]]}`, kind: "hash_multi_set"},
		{verb: "HGet", body: `{"key":"h","field":"f"}`, kind: "hash_get", want: `{"kind":"bytes","value":[49]}`},
		{verb: "HMGet", body: `{"key":"h","fields":["f","g","x"]}`, kind: "hash_multi_get", want: `{"kind":"values","values":[[49],[50],null]}`},
		{verb: "HGetAll", body: `{"key":"h"}`, kind: "hash_get_all", want: `{"kind":"hash_entries","entries":[["f",[49]],["g",[50]]]}`},
		{verb: "HDel", body: `{"key":"h","field":"f"}`, kind: "hash_delete"},
		{verb: "HLen", body: `{"key":"h"}`, kind: "hash_len", want: `{"kind":"integer","value":1}`},
		{verb: "SAdd", body: `{"key":"set","member":[97]}`, kind: "set_add"},
		{verb: "SAdd", body: `{"key":"set","member":[98]}`, kind: "set_add"},
		{verb: "SRem", body: `{"key":"set","member":[97]}`, kind: "set_remove"},
		{verb: "SMembers", body: `{"key":"set"}`, kind: "set_members", want: `{"kind":"members","members":[[98]]}`},
		{verb: "FeatureAdd", body: `{"key":"f","points":[{"timestamp_ms":10,"value":[55]}]}`, kind: "feature_append"},
		{verb: "FeatureAdd", body: `{"key":"f","points":[{"timestamp_ms":10,"value":[56]}],"policy":"insert_if_absent"}`, kind: "feature_append_with_policy", want: `{"kind":"integer","value":0}`},
		{verb: "FeatureQuery", body: `{"key":"f","start_ms":0,"end_ms":100}`, kind: "feature_query", want: `{"kind":"feature_points","points":[{"timestamp_ms":10,"value":[55]}]}`},
		{verb: "FeatureQuery", body: `{"key":"f","start_ms":0,"end_ms":100,"filters":[]}`, kind: "feature_query"},
		{verb: "FeatureQuery", body: `{"key":"f","start_ms":0,"end_ms":100,"count":5,"filters":[{"field":"gid","op":"equal","value":1}]}`, kind: "feature_query_filtered"},
		{verb: "FeatureReplace", body: `{"key":"f","start_ms":0,"end_ms":100,"points":[{"timestamp_ms":20,"value":[57]}]}`, kind: "feature_replace"},
		{verb: "FeatureAggQuery", body: `{"key":"f","start_ms":0,"end_ms":100,"aggregator":"count"}`, kind: "feature_agg_query", want: `{"kind":"aggregate","value":1}`},
		{verb: "FeatureDelete", body: `{"key":"f"}`, kind: "feature_delete"},
		{verb: "SequenceAdd", body: `{"key":"q","rows":[{"timestamp_ms":5,"gid":1,"action_type":2,"duration":3,"author_id":4}]}`, kind: "sequence_add"},
		{verb: "SequenceQuery", body: `{"key":"q","start_ms":0,"end_ms":10,"count":10,"filters":[]}`, kind: "sequence_query",
			want: `{"kind":"sequence_rows","rows":[{"timestamp_ms":5,"gid":1,"action_type":2,"duration":3,"author_id":4}]}`},
		{verb: "ControlStateIncrement", body: at(`{"key":"c","timestamp_ms":NOW,"amount":3}`), kind: "control_state_increment"},
		{verb: "ControlStateIncrement", body: at(`{"key":"c","timestamp_ms":NOW,"amount":2,"precision_ms":1000,"ttl_ms":600000}`), kind: "control_state_increment_with_options"},
		{verb: "ControlStateCount", body: at(`{"key":"c","start_ms":0,"end_ms":NOW}`), kind: "control_state_count", want: `{"kind":"integer","value":5}`},
		{verb: "ControlStateHset", body: at(`{"key":"c2","timestamp_ms":NOW,"amount":4}`), kind: "control_state_set", extra: `"family":"h"`},
		{verb: "ControlStateSelectionSet", body: at(`{"key":"sel","value":[120],"occur_time_ms":NOW,"ttl_ms":60000,"selection_type":"first"}`), kind: "control_state_selection_set"},
		{verb: "ControlStateFolSet", body: at(`{"key":"sel","value":[121],"occur_time_ms":NOW,"ttl_ms":60000,"selection_type":"first"}`), kind: "control_state_fol_set"},
		{verb: "ControlStateSelectionQuery", body: `{"key":"sel"}`, kind: "control_state_selection_query", want: `{"kind":"bytes","value":[120]}`},
		{verb: "ControlStateFolQuery", body: `{"key":"sel"}`, kind: "control_state_fol_query"},
		{verb: "ControlStateManager", body: `{"key":"c"}`, kind: "control_state_manager"},
	}
}

// Every typed route answers as /execute answers the command it stands
// for, on a second engine on the same clock, and leaves the same state;
// in JSON and in MessagePack.
func TestProxyVerbs(t *testing.T) {
	for _, mp := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "msgpack"}[mp], func(t *testing.T) {
			clk := testclock.New(epoch)
			srv, e, _ := newServer(t, clk, nil)
			ref, refEngine, _ := newServer(t, clk, nil)
			for _, en := range []*ts.Engine{e, refEngine} {
				require.NoError(t, en.CreateTable(t.Context(), "ns", "tbl", ts.TableOptions{Shards: 2}))
			}
			covered := map[string]bool{}
			for i, s := range proxySteps(clk.Now().UnixMilli()) {
				covered[s.verb] = true
				addr := `"namespace":"ns","table_name":"tbl",`
				body := "{" + addr + s.body[1:]
				cmd := `{"kind":"` + s.kind + `",` + s.body[1:]
				if s.extra != "" {
					cmd = `{"kind":"` + s.kind + `",` + s.extra + "," + s.body[1:]
				}
				want := `{"namespace":"ns","table_name":"tbl","command":` + cmd + "}"
				conv := func(b string) []byte {
					if mp {
						return toMsgpack(t, b)
					}
					return []byte(b)
				}
				code, got := post(t, srv.Client(), srv.URL+proxyPrefix+s.verb, mp, "", conv(body))
				refCode, refGot := post(t, ref.Client(), ref.URL+"/execute", mp, "", conv(want))
				msg := fmt.Sprintf("step %d: %s %s", i, s.verb, s.body)
				require.Equal(t, http.StatusOK, refCode, msg+": "+canonical(t, mp, refGot))
				require.Equal(t, refCode, code, msg)
				require.Equal(t, canonical(t, mp, refGot), canonical(t, mp, got), msg)
				if s.want != "" {
					var r struct {
						Status   Status          `json:"status"`
						Response json.RawMessage `json:"response"`
					}
					require.NoError(t, json.Unmarshal([]byte(canonical(t, mp, got)), &r), msg)
					require.True(t, r.Status.OK, msg+": %+v", r.Status)
					require.JSONEq(t, s.want, string(r.Response), msg)
				}
			}
			for verb := range proxyVerbs {
				require.True(t, covered[verb], "verb %s is not exercised", verb)
			}
			// The same keys hold the same values on both engines.
			for _, c := range []ts.Command{
				{Kind: ts.KindGet, Key: []byte("sx")}, {Kind: ts.KindHGetAll, Key: []byte("h")},
				{Kind: ts.KindSMembers, Key: []byte("set")}, {Kind: ts.KindExists, Key: []byte("f")},
				{Kind: ts.KindExists, Key: []byte("c2")}, {Kind: ts.KindExists, Key: []byte("control_state:h:c2")},
			} {
				c.Namespace, c.Table = "ns", "tbl"
				a, errA := e.Execute(t.Context(), c)
				b, errB := refEngine.Execute(t.Context(), c)
				require.Equal(t, errB, errA)
				require.Equal(t, b, a, "%s %s", c.Kind, c.Key)
			}
		})
	}
}

// A typed route refuses what it cannot take as /execute does (400 with
// the failed status and the empty response), and changes nothing; an
// unknown verb is a documented refusal; tokens apply as on /execute.
func TestProxyRefusals(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), func(o *Options) {
		o.ReadWriteTokens = []string{"rw"}
		o.ReadOnlyTokens = []string{"ro"}
	})
	c := srv.Client()
	for _, tc := range []struct {
		name, verb, token, body string
		code                    int
		status                  string
	}{
		{"bad json", "Set", "rw", `{"key":"k","value":`, http.StatusBadRequest, CodeBadRequest},
		{"not an object", "Set", "rw", `[1,2]`, http.StatusBadRequest, CodeBadRequest},
		{"missing key", "Set", "rw", `{"value":[1]}`, http.StatusBadRequest, CodeBadRequest},
		{"missing value", "Set", "rw", `{"key":"k"}`, http.StatusBadRequest, CodeBadRequest},
		{"missing ttl", "SetEx", "rw", `{"key":"k","value":[1]}`, http.StatusBadRequest, CodeBadRequest},
		{"bad policy", "FeatureAdd", "rw", `{"key":"k","points":[{"timestamp_ms":1,"value":[1]}],"policy":"sometimes"}`, http.StatusBadRequest, CodeBadRequest},
		{"bad bytes", "SAdd", "rw", `{"key":"k","member":[300]}`, http.StatusBadRequest, CodeBadRequest},
		{"bad shard_id", "Set", "rw", `{"shard_id":-1,"key":"k","value":[1]}`, http.StatusBadRequest, CodeBadRequest},
		{"no token", "Get", "", `{"key":"k"}`, http.StatusUnauthorized, CodeUnauthorized},
		{"read-only write", "HSet", "ro", `{"key":"k","field":"f","value":[1]}`, http.StatusForbidden, CodeForbidden},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, body := post(t, c, srv.URL+proxyPrefix+tc.verb, false, tc.token, []byte(tc.body))
			require.Equal(t, tc.code, code, string(body))
			var r ExecuteResponse
			decode(t, false, body, &r)
			require.Equal(t, tc.status, r.Status.Code)
			require.Equal(t, "empty", r.Response.Kind)
			res, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindExists, Key: []byte("k")})
			require.NoError(t, err)
			require.Zero(t, res.Int, "nothing was written")
		})
	}
	code, body := post(t, c, srv.URL+proxyPrefix+"Get", false, "ro", []byte(`{"key":"k"}`))
	require.Equal(t, http.StatusOK, code)
	require.Contains(t, string(body), `"kind":"bytes"`)

	code, body = post(t, c, srv.URL+proxyPrefix+"Incr", false, "rw", []byte(`{"key":"k"}`))
	require.Equal(t, http.StatusNotImplemented, code)
	var st Status
	decode(t, false, body, &st)
	require.Equal(t, CodeUnsupported, st.Code)
	require.Contains(t, st.Message, "ExecuteCmd")
	for _, verb := range []string{"Get", "ControlStateFolSet", "SRem"} {
		require.Contains(t, st.Message, verb)
	}
	require.True(t, slices.IsSorted(strings.Split(proxyVerbList, ", ")))

	req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+proxyPrefix+"Get", nil)
	require.NoError(t, err)
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusMethodNotAllowed, resp.StatusCode)
}
