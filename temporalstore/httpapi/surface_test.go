package httpapi

import (
	"context"
	"crypto/tls"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// A batch runs its commands in order, each with its own status, in a
// table it names; the batch status is ok.
func TestBatchPerCommandStatus(t *testing.T) {
	for _, mp := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "msgpack"}[mp], func(t *testing.T) {
			srv, e, _ := newServer(t, testclock.New(epoch), nil)
			require.NoError(t, e.CreateTable(t.Context(), "ads", "caps", ts.TableOptions{Shards: 2}))
			body := `{"namespace":"ads","table_name":"caps","commands":[
				{"kind":"string_set","key":"k","value":"djE="},
				{"kind":"hash_get","key":"k","field":"f"},
				{"kind":"common_expire","key":"missing","ttl_ms":5},
				{"kind":"context_get_node","tenant_hash":1,"node_hash":2},
				{"kind":"incr_by","key":"k","delta":1},
				{"kind":"string_get","key":"k"}]}`
			br := batchJSON(t, srv, mp, body)
			codes := []string{}
			for _, r := range br.Responses {
				codes = append(codes, r.Status.Code)
			}
			require.Equal(t, []string{"ok", "wrong_type", "not_found", "unsupported", "not_integer", "ok"}, codes)
			var v Bytes
			require.NoError(t, br.Responses[5].Response.Value.Decode(&v))
			require.Equal(t, "v1", string(v))
			// The write went to ads/caps, not to the default table.
			r, err := e.Execute(t.Context(), ts.Command{Namespace: "ads", Table: "caps", Kind: ts.KindGet, Key: []byte("k")})
			require.NoError(t, err)
			require.Equal(t, "v1", string(r.Value))
			r, err = e.Execute(t.Context(), ts.Command{Kind: ts.KindExists, Key: []byte("k")})
			require.NoError(t, err)
			require.Zero(t, r.Int)

			code, reply := post(t, srv.Client(), srv.URL+"/batch_execute", mp, "", encode(t, mp, BatchRequest{Commands: []Command{}}))
			require.Equal(t, http.StatusOK, code)
			decode(t, mp, reply, &br)
			require.True(t, br.Status.OK)
			require.Empty(t, br.Responses)
		})
	}
}

// The engine's refusals carry the original's codes.
func TestEngineRefusalCodes(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), nil)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "ns", "limited", ts.TableOptions{Shards: 1, WriteQPS: 1}))
	key := []byte("k")
	require.NoError(t, e.SetReadOnly(ts.DefaultNamespace, ts.DefaultTable, ts.ShardOf(key, ts.DefaultShards), true))
	set := Command{Kind: "string_set", Key: Text(key), Value: Bytes("v")}
	r := execWire(t, srv, false, Request{Command: &set})
	require.Equal(t, "readonly_shard", r.Status.Code)
	require.ErrorIs(t, r.Status.Err(), ts.ErrReadOnly)
	get := Command{Kind: "string_get", Key: Text(key)}
	r = execWire(t, srv, false, Request{Command: &get})
	require.True(t, r.Status.OK)

	r = execWire(t, srv, false, Request{Namespace: "ns", TableName: "limited", Command: &set})
	require.True(t, r.Status.OK)
	r = execWire(t, srv, false, Request{Namespace: "ns", TableName: "limited", Command: &set})
	require.Equal(t, "admission_rejected", r.Status.Code)
	require.ErrorIs(t, r.Status.Err(), ts.ErrWriteQPS)

	r = execWire(t, srv, false, Request{Namespace: "no", TableName: "such", Command: &get})
	require.Equal(t, "table_not_found", r.Status.Code)
	require.ErrorIs(t, r.Status.Err(), ts.ErrNoTable)
}

// Bearer tokens: none or a wrong one is 401; a read-only token reads but
// cannot write, and a batch holding a write runs nothing; probes need no
// token, metrics do.
func TestAuth(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), func(o *Options) {
		o.ReadWriteTokens = []string{"rw-secret"}
		o.ReadOnlyTokens = []string{"ro-secret"}
	})
	c := srv.Client()
	set := `{"command":{"kind":"string_set","key":"k","value":"djE="}}`
	get := `{"command":{"kind":"string_get","key":"k"}}`

	for _, tok := range []string{"", "wrong", "rw-secret-but-longer", "ro-secre"} {
		code, body := post(t, c, srv.URL+"/execute", false, tok, []byte(get))
		require.Equal(t, http.StatusUnauthorized, code, tok)
		var r ExecuteResponse
		decode(t, false, body, &r)
		require.Equal(t, CodeUnauthorized, r.Status.Code)
	}
	req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/execute", strings.NewReader(get))
	req.Header.Set("Authorization", "Basic cnctc2VjcmV0")
	resp, err := c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusUnauthorized, resp.StatusCode)
	require.Contains(t, resp.Header.Get("WWW-Authenticate"), "Bearer")

	code, body := post(t, c, srv.URL+"/execute", false, "ro-secret", []byte(set))
	require.Equal(t, http.StatusForbidden, code)
	var r ExecuteResponse
	decode(t, false, body, &r)
	require.Equal(t, CodeForbidden, r.Status.Code)
	code, _ = post(t, c, srv.URL+"/batch_execute", false, "ro-secret", []byte(`{"commands":[{"kind":"string_set","key":"k","value":"djE="},{"kind":"set","key":"k2","value":"eA=="}]}`))
	require.Equal(t, http.StatusForbidden, code)
	n, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindExistsKeys, Keys: [][]byte{[]byte("k"), []byte("k2")}})
	require.NoError(t, err)
	require.Zero(t, n.Int, "a refused write ran")

	code, _ = post(t, c, srv.URL+"/execute", false, "rw-secret", []byte(set))
	require.Equal(t, http.StatusOK, code)
	code, body = post(t, c, srv.URL+"/execute", false, "ro-secret", []byte(get))
	require.Equal(t, http.StatusOK, code)
	require.JSONEq(t, ok(`{"kind":"bytes","value":[118,49]}`), string(body))
	code, _ = post(t, c, srv.URL+"/batch_execute", false, "ro-secret", []byte(`{"commands":[{"kind":"string_get","key":"k"},{"kind":"mget","keys":["k"]}]}`))
	require.Equal(t, http.StatusOK, code)

	for path, want := range map[string]int{"/health": 200, "/ready": 200, "/metrics": 401} {
		resp, err := c.Get(srv.URL + path)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, want, resp.StatusCode, path)
	}
	req, _ = http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+"/metrics", nil)
	req.Header.Set("Authorization", "Bearer ro-secret")
	resp, err = c.Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)

	_, err = New(Options{Engine: e, ReadWriteTokens: []string{"a"}, ReadOnlyTokens: []string{"a"}})
	require.ErrorIs(t, err, ErrInvalidOptions)
	_, err = New(Options{Engine: e, ReadOnlyTokens: []string{""}})
	require.ErrorIs(t, err, ErrInvalidOptions)
	_, err = New(Options{})
	require.ErrorIs(t, err, ErrInvalidOptions)
}

// The handler under TLS (a self-signed certificate): commands run over
// it, and a plain-text request is refused.
func TestTLS(t *testing.T) {
	e := newEngine(t, testclock.New(epoch))
	h, err := New(Options{Engine: e})
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	defer srv.Close()
	require.True(t, strings.HasPrefix(srv.URL, "https://"))

	code, body := post(t, srv.Client(), srv.URL+"/execute", false, "", []byte(`{"command":{"kind":"string_set","key":"k","value":"djE="}}`))
	require.Equal(t, http.StatusOK, code, string(body))
	code, body = post(t, srv.Client(), srv.URL+"/execute", true, "", encode(t, true, Request{Command: &Command{Kind: "get", Key: Text("k")}}))
	require.Equal(t, http.StatusOK, code)
	var r ExecuteResponse
	decode(t, true, body, &r)
	var v Bytes
	require.NoError(t, r.Response.Value.Decode(&v))
	require.Equal(t, "v1", string(v))

	// An untrusting client refuses the certificate; plain HTTP gets no
	// answer from the TLS listener.
	_, err = (&http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{}}}).Get(srv.URL + "/health")
	require.Error(t, err)
	resp, err := http.Get("http://" + strings.TrimPrefix(srv.URL, "https://") + "/health")
	if err == nil {
		defer resp.Body.Close()
		require.NotEqual(t, http.StatusOK, resp.StatusCode)
	}
}

// /ready goes 503 while a shard is wedged (its append gate held) and 200
// once it is released; /health stays 200 throughout.
func TestReadyWhileAShardIsWedged(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), func(o *Options) { o.ReadyTimeout = 100 * time.Millisecond })
	get := func(path string) (int, Status) {
		resp, err := srv.Client().Get(srv.URL + path)
		require.NoError(t, err)
		defer resp.Body.Close()
		var st Status
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		decode(t, false, b, &st)
		return resp.StatusCode, st
	}
	code, st := get("/ready")
	require.Equal(t, http.StatusOK, code, st.Message)

	unfreeze, err := e.FreezeShard(t.Context(), ts.DefaultNamespace, ts.DefaultTable, 2)
	require.NoError(t, err)
	defer unfreeze()
	t0 := time.Now()
	code, st = get("/ready")
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, CodeNotReady, st.Code)
	require.Contains(t, st.Message, "default/default shard 2")
	require.NotContains(t, st.Message, "shard 1")
	require.Less(t, time.Since(t0), 2*time.Second)
	code, _ = get("/health")
	require.Equal(t, http.StatusOK, code)

	unfreeze()
	code, st = get("/ready")
	require.Equal(t, http.StatusOK, code, st.Message)
}

// /metrics has a latency histogram per command kind, command counts by
// status code, every shard's statistics and the record cache's.
func TestMetrics(t *testing.T) {
	srv, _, _ := newServer(t, testclock.New(epoch), nil)
	for i := range 5 {
		body := `{"command":{"kind":"set","key":"k` + strconv.Itoa(i) + `","value":"eA=="}}`
		code, _ := post(t, srv.Client(), srv.URL+"/execute", false, "", []byte(body))
		require.Equal(t, http.StatusOK, code)
	}
	code, _ := post(t, srv.Client(), srv.URL+"/batch_execute", false, "", []byte(`{"commands":[{"kind":"hash_get","key":"k0","field":"f"},{"kind":"get","key":"k1"},{"kind":"get","key":"k2"}]}`))
	require.Equal(t, http.StatusOK, code)
	resp, err := srv.Client().Get(srv.URL + "/metrics")
	require.NoError(t, err)
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	text := string(b)
	metric := func(re string) float64 {
		t.Helper()
		m := regexp.MustCompile(`(?m)^` + re + ` (\S+)$`).FindStringSubmatch(text)
		require.NotNil(t, m, re)
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		return v
	}
	require.Equal(t, 5.0, metric(`temporalstore_http_command_duration_seconds_count\{kind="set"\}`))
	require.Equal(t, 2.0, metric(`temporalstore_http_command_duration_seconds_count\{kind="get"\}`))
	require.Equal(t, 5.0, metric(`temporalstore_http_command_duration_seconds_bucket\{kind="set",le="\+Inf"\}`))
	require.Equal(t, 1.0, metric(`temporalstore_http_commands_total\{code="wrong_type",kind="hash_get"\}`))
	require.Equal(t, 5.0, metric(`temporalstore_http_requests_total\{route="/execute",status="200"\}`))
	keys, recent, fsyncs := 0.0, 0.0, 0.0
	for i := range ts.DefaultShards {
		l := `namespace="default",shard="` + strconv.Itoa(i) + `",table="default"`
		keys += metric(`temporalstore_shard_keys\{` + l + `\}`)
		metric(`temporalstore_shard_log_records_total\{` + l + `\}`)
		recent += metric(`temporalstore_shard_recent_record_bytes\{` + l + `\}`)
		n := metric(`temporalstore_shard_log_fsyncs_total\{` + l + `\}`)
		fsyncs += n
		// The histogram counts every fsync; its last finite bucket, 2^20
		// µs, leaves longer ones to +Inf.
		require.Equal(t, n, metric(`temporalstore_shard_log_fsync_duration_seconds_count\{`+l+`\}`))
		require.Equal(t, n, metric(`temporalstore_shard_log_fsync_duration_seconds_bucket\{`+l+`,le="\+Inf"\}`))
		require.LessOrEqual(t, metric(`temporalstore_shard_log_fsync_duration_seconds_bucket\{`+l+`,le="1e-06"\}`),
			metric(`temporalstore_shard_log_fsync_duration_seconds_bucket\{`+l+`,le="1.048576"\}`), "cumulative")
	}
	require.Equal(t, 5.0, keys)
	require.Positive(t, fsyncs, "durable sets fsync the log")
	require.Positive(t, recent, "the sets' records are held as written")
	metric(`temporalstore_record_cache_entries`)
	metric(`temporalstore_record_cache_misses_total`)
	metric(`go_goroutines`)
}

// Profiles are served only when asked for, and then only to read-write
// tokens.
func TestProfiling(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	get := func(t *testing.T, url, token string) (int, string) {
		t.Helper()
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, url, nil)
		require.NoError(t, err)
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}

	off, _, _ := newServer(t, clk, nil)
	code, _ := get(t, off.URL+"/debug/pprof/", "")
	require.Equal(t, http.StatusNotFound, code, "off by default")

	on, _, _ := newServer(t, clk, func(o *Options) {
		o.Profiling = true
		o.ReadWriteTokens, o.ReadOnlyTokens = []string{"rw"}, []string{"ro"}
	})
	tests := []struct {
		path, token string
		code        int
		body        string
	}{
		{"/debug/pprof/", "", http.StatusUnauthorized, "bearer"},
		{"/debug/pprof/", "ro", http.StatusForbidden, "read-only"},
		{"/debug/pprof/", "rw", http.StatusOK, "goroutine"},
		{"/debug/pprof/goroutine?debug=1", "rw", http.StatusOK, "goroutine profile"},
		{"/debug/pprof/cmdline", "rw", http.StatusOK, ""},
	}
	for _, tc := range tests {
		t.Run(tc.path+" "+tc.token, func(t *testing.T) {
			code, body := get(t, on.URL+tc.path, tc.token)
			require.Equal(t, tc.code, code, body)
			require.Contains(t, body, tc.body)
		})
	}
}

// Row writes over the wire: a row without an event time is refused, not
// stamped at the epoch; event_time_ns and ts_format reach the engine, so a
// write 1 µs newer applies; both times at once are a bad request.
func TestRowWriteTimes(t *testing.T) {
	srv, _, _ := newServer(t, testclock.New(epoch), nil)
	ns := epoch.UnixNano()
	batch := func(rows ...wire.Row) ExecuteResponse {
		return execWire(t, srv, false, Request{Command: &Command{Kind: "row_write_batch", TSField: "_ts:v", TSFormat: "proto", Rows: rows}})
	}
	r := batch(wire.Row{Key: Text("e1"), Args: []Bytes{Bytes("f"), Bytes("v")}})
	require.Equal(t, "invalid_argument", r.Status.Code)
	r = batch(wire.Row{Key: Text("e1"), Args: []Bytes{Bytes("f"), Bytes("1")}, EventTimeNs: ns},
		wire.Row{Key: Text("e1"), Args: []Bytes{Bytes("f"), Bytes("2")}, EventTimeNs: ns + 1000},
		wire.Row{Key: Text("e1"), Args: []Bytes{Bytes("f"), Bytes("3")}, EventTimeNs: ns + 1000})
	require.True(t, r.Status.OK, r.Status.Message)
	require.Equal(t, []int64{1, 1, 0}, r.Response.Integers)
	ms, nsv := epoch.UnixMilli(), ns
	both := Request{Command: &Command{Kind: "row_write", Key: Text("e2"), Args: []Bytes{Bytes("f"), Bytes("v")}, EventTimeMs: &ms, EventTimeNs: &nsv}}
	code, body := post(t, srv.Client(), srv.URL+"/execute", false, "", encode(t, false, both))
	require.Equal(t, http.StatusBadRequest, code)
	require.Contains(t, string(body), "not both")
}

// A reply carries its length, however large: no chunked encoding.
func TestReplyLength(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), nil)
	_, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindSet, Key: []byte("big"), Value: []byte(strings.Repeat("x", 64<<10))})
	require.NoError(t, err)
	body := `{"commands":[{"kind":"get","key":"big"},{"kind":"get","key":"big"}]}`
	resp, err := srv.Client().Post(srv.URL+"/batch_execute", "application/json", strings.NewReader(body))
	require.NoError(t, err)
	defer resp.Body.Close()
	got, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Empty(t, resp.TransferEncoding)
	require.Equal(t, int64(len(got)), resp.ContentLength)
	require.Greater(t, len(got), 128<<10)
}

// Options.Ready has the last word on /ready: its error is the 503's
// message.
func TestReadyAsksOptionsReady(t *testing.T) {
	var why atomic.Pointer[string]
	srv, _, _ := newServer(t, testclock.New(epoch), func(o *Options) {
		o.Ready = func(context.Context) error {
			if w := why.Load(); w != nil {
				return errors.New(*w)
			}
			return nil
		}
	})
	get := func() (int, Status) {
		resp, err := srv.Client().Get(srv.URL + "/ready")
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		var st Status
		decode(t, false, b, &st)
		return resp.StatusCode, st
	}
	code, _ := get()
	require.Equal(t, http.StatusOK, code)
	msg := "shard 1 has no leader"
	why.Store(&msg)
	code, st := get()
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.Equal(t, CodeNotReady, st.Code)
	require.Equal(t, msg, st.Message)
}

// fakeCluster sends every key of table "c/t" to leader, and counts the
// read barriers and those asked on the lease.
type fakeCluster struct {
	leader   string
	barriers atomic.Int64
	leases   atomic.Int64
}

func (f *fakeCluster) Leader(namespace, name string, key []byte) (string, error) {
	if namespace == "c" && name == "t" {
		return f.leader, nil
	}
	return "", nil
}

func (f *fakeCluster) ReadBarrier(_ context.Context, _, _ string, _ []byte, lease bool) error {
	f.barriers.Add(1)
	if lease {
		f.leases.Add(1)
	}
	return nil
}

// With Options.Cluster a request for another member's shard is forwarded
// there, once: a forwarded request runs where it lands.
func TestClusterForwarding(t *testing.T) {
	leaderSrv, leaderEngine, _ := newServer(t, testclock.New(epoch), nil)
	require.NoError(t, leaderEngine.CreateTable(t.Context(), "c", "t", ts.TableOptions{Shards: 1}))
	fc := &fakeCluster{leader: leaderSrv.URL}
	srv, e, _ := newServer(t, testclock.New(epoch), func(o *Options) { o.Cluster = fc })
	require.NoError(t, e.CreateTable(t.Context(), "c", "t", ts.TableOptions{Shards: 1}))
	post := func(url, body string) (int, string) {
		resp, err := srv.Client().Post(url, "application/json", strings.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return resp.StatusCode, string(b)
	}
	code, body := post(srv.URL+"/execute", `{"namespace":"c","table_name":"t","command":{"kind":"string_set","key":"k","value":"dg=="}}`)
	require.Equal(t, http.StatusOK, code, body)
	r, err := leaderEngine.Execute(t.Context(), ts.Command{Namespace: "c", Table: "t", Kind: ts.KindGet, Key: []byte("k")})
	require.NoError(t, err)
	require.Equal(t, "v", string(r.Value), "written on the leader")
	r, err = e.Execute(t.Context(), ts.Command{Namespace: "c", Table: "t", Kind: ts.KindGet, Key: []byte("k")})
	require.NoError(t, err)
	require.False(t, r.Found, "not here")
	// Another table's commands run here, reads after a barrier.
	code, body = post(srv.URL+"/batch_execute", `{"commands":[{"kind":"string_set","key":"k","value":"dw=="},{"kind":"string_get","key":"k"}]}`)
	require.Equal(t, http.StatusOK, code, body)
	require.Contains(t, body, `"value":[119]`)
	require.Equal(t, int64(1), fc.barriers.Load())
	require.Zero(t, fc.leases.Load())
	// Asked per request, the barrier is the leader's lease.
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/execute", strings.NewReader(`{"command":{"kind":"string_get","key":"k"}}`))
	require.NoError(t, err)
	req.Header.Set(staleHeader, "lease")
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.Equal(t, int64(1), fc.leases.Load())
	// A request forwarded once runs where it lands.
	req, err = http.NewRequest(http.MethodPost, srv.URL+"/execute", strings.NewReader(`{"namespace":"c","table_name":"t","command":{"kind":"string_set","key":"k2","value":"dg=="}}`))
	require.NoError(t, err)
	req.Header.Set(forwardedHeader, "1")
	resp, err = srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode)
	r, err = e.Execute(t.Context(), ts.Command{Namespace: "c", Table: "t", Kind: ts.KindGet, Key: []byte("k2")})
	require.NoError(t, err)
	require.True(t, r.Found, "run here, not sent on again")
	// A stale read runs here, without forwarding or barrier; a write
	// with the header is forwarded as ever.
	before := fc.barriers.Load()
	req, err = http.NewRequest(http.MethodPost, srv.URL+"/execute", strings.NewReader(`{"namespace":"c","table_name":"t","command":{"kind":"string_get","key":"k2"}}`))
	require.NoError(t, err)
	req.Header.Set(staleHeader, "stale")
	resp, err = srv.Client().Do(req)
	require.NoError(t, err)
	body2, err := io.ReadAll(resp.Body)
	resp.Body.Close()
	require.NoError(t, err)
	require.Contains(t, string(body2), `"value":[118]`, "this member's k2, which the leader has not")
	require.Equal(t, before, fc.barriers.Load())
	req, err = http.NewRequest(http.MethodPost, srv.URL+"/execute", strings.NewReader(`{"namespace":"c","table_name":"t","command":{"kind":"string_set","key":"k3","value":"dg=="}}`))
	require.NoError(t, err)
	req.Header.Set(staleHeader, "stale")
	resp, err = srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	r, err = leaderEngine.Execute(t.Context(), ts.Command{Namespace: "c", Table: "t", Kind: ts.KindGet, Key: []byte("k3")})
	require.NoError(t, err)
	require.True(t, r.Found, "a write goes to the leader, header or not")
}
