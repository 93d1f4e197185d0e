package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// asBody is b, in MessagePack when mp.
func asBody(t *testing.T, mp bool, b string) []byte {
	t.Helper()
	if mp {
		return toMsgpack(t, b)
	}
	return []byte(b)
}

// exists says whether the default table holds key.
func exists(t *testing.T, e *ts.Engine, ns, table, key string) bool {
	t.Helper()
	r, err := e.Execute(t.Context(), ts.Command{Namespace: ns, Table: table, Kind: ts.KindExists, Key: []byte(key)})
	require.NoError(t, err)
	return r.Int == 1
}

// The checked routes take load_version (required, any value) and wrap the
// reply of /execute or /batch_execute in the check's status.
func TestCheckedRoutes(t *testing.T) {
	for _, mp := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "msgpack"}[mp], func(t *testing.T) {
			srv, e, _ := newServer(t, testclock.New(epoch), nil)
			c := srv.Client()
			code, reply := post(t, c, srv.URL+"/execute_checked", mp, "", asBody(t, mp, `{"shard_id":1,"load_version":7,"command":{"kind":"string_set","key":"k","value":[118]}}`))
			require.Equal(t, http.StatusOK, code)
			require.JSONEq(t, `{"status":{"ok":true,"code":"ok","message":""},"response":{"status":{"ok":true,"code":"ok","message":""},"response":{"kind":"empty"}}}`, canonical(t, mp, reply))

			code, reply = post(t, c, srv.URL+"/batch_execute_checked", mp, "", asBody(t, mp, `{"load_version":0,"commands":[{"kind":"string_get","key":"k"},{"kind":"hash_get","key":"k","field":"f"}]}`))
			require.Equal(t, http.StatusOK, code)
			require.JSONEq(t, `{"status":{"ok":true,"code":"ok","message":""},"response":{"status":{"ok":true,"code":"ok","message":""},"responses":[
				{"status":{"ok":true,"code":"ok","message":""},"response":{"kind":"bytes","value":[118]}},
				{"status":{"ok":false,"code":"wrong_type","message":"temporalstore: WRONGTYPE Operation against a key holding the wrong kind of value"},"response":{"kind":"empty"}}]}}`, canonical(t, mp, reply))

			for _, tc := range []struct{ route, body string }{
				{"/execute_checked", `{"command":{"kind":"string_set","key":"x","value":[1]}}`},
				{"/execute_checked", `{"load_version":-1,"command":{"kind":"string_set","key":"x","value":[1]}}`},
				{"/execute_checked", `{"load_version":"7","command":{"kind":"string_set","key":"x","value":[1]}}`},
				{"/execute_checked", `{"load_version":1}`},
				{"/batch_execute_checked", `{"commands":[{"kind":"string_set","key":"x","value":[1]}]}`},
				{"/batch_execute_checked", `{"load_version":1,"commands":[{"kind":"string_set","key":"x","value":[1]},{"kind":"nope"}]}`},
			} {
				code, reply := post(t, c, srv.URL+tc.route, mp, "", asBody(t, mp, tc.body))
				require.Equal(t, http.StatusBadRequest, code, tc.body)
				var st Status
				decode(t, mp, reply, &st)
				require.Equal(t, CodeBadRequest, st.Code, tc.body)
				require.False(t, exists(t, e, "", "", "x"), tc.body)
			}
			code, reply = post(t, c, srv.URL+"/execute_checked", mp, "", asBody(t, mp, `{"command":{"kind":"string_set","key":"x","value":[1]}}`))
			require.Equal(t, http.StatusBadRequest, code)
			require.Contains(t, canonical(t, mp, reply), "load_version")
		})
	}
}

// replicated posts a /batch_execute_replicated body and returns its
// commands' status codes and replication reports.
func replicated(t *testing.T, srv *httptest.Server, mp bool, b string) ([]string, []replicationReport) {
	t.Helper()
	code, reply := post(t, srv.Client(), srv.URL+"/batch_execute_replicated", mp, "", asBody(t, mp, b))
	require.Equal(t, http.StatusOK, code, canonical(t, mp, reply))
	var r struct {
		Status      Status              `json:"status"`
		Responses   []ExecuteResponse   `json:"responses"`
		Replication []replicationReport `json:"replication"`
	}
	decode(t, mp, reply, &r)
	require.True(t, r.Status.OK)
	require.Len(t, r.Replication, len(r.Responses))
	codes := make([]string, len(r.Responses))
	for i, x := range r.Responses {
		codes[i] = x.Status.Code
	}
	return codes, r.Replication
}

// A command's replication_mode is served when its table acknowledges
// writes so (or better): sync_storage on a durable table, async_storage
// on either, raft on a table Options.Raft names; else the command is
// refused "unsupported", and nothing written. Reads run whatever their
// mode.
func TestReplicatedRoutes(t *testing.T) {
	for _, mp := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "msgpack"}[mp], func(t *testing.T) {
			srv, e, _ := newServer(t, testclock.New(epoch), nil)
			ctx := t.Context()
			require.NoError(t, e.CreateTable(ctx, "ns", "async", ts.TableOptions{Shards: 1, Async: true}))
			c := srv.Client()
			for _, tc := range []struct {
				mode, table, key, code string
			}{
				{"", "", "a", CodeOK},
				{"inherit", "", "b", CodeOK},
				{"sync_storage", "", "c", CodeOK},
				{"async_storage", "", "d", CodeOK},
				{"raft", "", "e", CodeUnsupported},
				{"async_storage", "async", "f", CodeOK},
				{"sync_storage", "async", "g", CodeUnsupported},
				{"raft", "async", "h", CodeUnsupported},
			} {
				ns := ""
				if tc.table != "" {
					ns = "ns"
				}
				b := fmt.Sprintf(`{"namespace":%q,"table_name":%q,"replication_mode":%q,"command":{"kind":"string_set","key":%q,"value":[1]}}`, ns, tc.table, tc.mode, tc.key)
				code, reply := post(t, c, srv.URL+"/execute_replicated", mp, "", asBody(t, mp, b))
				require.Equal(t, http.StatusOK, code)
				var r ExecuteResponse
				decode(t, mp, reply, &r)
				require.Equal(t, tc.code, r.Status.Code, "%s on %q: %s", tc.mode, tc.table, r.Status.Message)
				require.Equal(t, tc.code == CodeOK, exists(t, e, ns, tc.table, tc.key), tc.mode)
			}

			codes, reps := replicated(t, srv, mp, `{"namespace":"ns","table_name":"async","commands":[
				{"command":{"kind":"string_set","key":"k1","value":[1]},"replication_mode":"sync_storage"},
				{"command":{"kind":"string_set","key":"k2","value":[1]}},
				{"command":{"kind":"string_get","key":"k2"},"replication_mode":"sync_storage"},
				{"command":{"kind":"string_set","key":"k3","value":[1]},"replication_mode":"raft"}]}`)
			require.Equal(t, []string{CodeUnsupported, CodeOK, CodeOK, CodeUnsupported}, codes)
			require.Equal(t, replicationReport{Requested: replSync, Effective: replAsync, Write: true, Reason: reps[0].Reason}, reps[0])
			require.Contains(t, reps[0].Reason, "durable table")
			require.Equal(t, replicationReport{Requested: replInherit, Effective: replAsync, Write: true, Accepted: true}, reps[1])
			require.Equal(t, replicationReport{Requested: replSync, Effective: replInherit, Accepted: true}, reps[2])
			require.False(t, reps[3].Accepted)
			require.Contains(t, reps[3].Reason, "single node")
			require.False(t, exists(t, e, "ns", "async", "k1"))
			require.True(t, exists(t, e, "ns", "async", "k2"))
			require.False(t, exists(t, e, "ns", "async", "k3"))

			codes, reps = replicated(t, srv, mp, `{"commands":[]}`)
			require.Empty(t, codes)
			require.Empty(t, reps)

			for _, b := range []string{
				`{"replication_mode":"quorum","command":{"kind":"string_set","key":"x","value":[1]}}`,
				`{"replication_mode":7,"command":{"kind":"string_set","key":"x","value":[1]}}`,
				`{"replication_mode":"raft"}`,
			} {
				code, reply := post(t, c, srv.URL+"/execute_replicated", mp, "", asBody(t, mp, b))
				require.Equal(t, http.StatusBadRequest, code, b)
				var st Status
				decode(t, mp, reply, &st)
				require.Equal(t, CodeBadRequest, st.Code)
			}
			for _, b := range []string{
				`{"commands":[{"command":{"kind":"string_set","key":"x","value":[1]}},{"replication_mode":"raft"}]}`,
				`{"commands":[{"command":{"kind":"string_set","key":"x","value":[1]},"replication_mode":"paxos"}]}`,
				`{"commands":[{"kind":"string_set","key":"x","value":[1]}]}`,
				`{"commands":{"command":{}}}`,
			} {
				code, reply := post(t, c, srv.URL+"/batch_execute_replicated", mp, "", asBody(t, mp, b))
				require.Equal(t, http.StatusBadRequest, code, b)
				var st Status
				decode(t, mp, reply, &st)
				require.Equal(t, CodeBadRequest, st.Code, b)
			}
			require.False(t, exists(t, e, "", "", "x"))
		})
	}
}

// With Options.Raft naming a table, replication_mode raft runs on it, and
// is refused on another.
func TestReplicatedRaft(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), func(o *Options) {
		o.Raft = func(ns, name string) bool { return ns == ts.DefaultNamespace && name == ts.DefaultTable }
	})
	require.NoError(t, e.CreateTable(t.Context(), "ns", "local", ts.TableOptions{Shards: 1}))
	codes, reps := replicated(t, srv, false, `{"commands":[
		{"command":{"kind":"string_set","key":"a","value":[1]},"replication_mode":"raft"},
		{"command":{"kind":"string_set","key":"b","value":[1]},"replication_mode":"sync_storage"}]}`)
	require.Equal(t, []string{CodeOK, CodeOK}, codes)
	require.Equal(t, replRaft, reps[0].Effective)
	require.Equal(t, replRaft, reps[1].Effective)
	codes, reps = replicated(t, srv, false, `{"namespace":"ns","table_name":"local","commands":[
		{"command":{"kind":"string_set","key":"a","value":[1]},"replication_mode":"raft"}]}`)
	require.Equal(t, []string{CodeUnsupported}, codes)
	require.Contains(t, reps[0].Reason, "ns/local is not replicated by raft")
	require.False(t, exists(t, e, "ns", "local", "a"))
}

// fakeContext serves context_probe, echoing its tenant_hash.
type fakeContext struct{}

func (fakeContext) Serves(kind string) (bool, bool) { return kind == "context_probe", false }

func (fakeContext) ExecuteContext(_ context.Context, _, _ string, raw []byte, mp bool) (any, error) {
	var v struct {
		TenantHash uint64 `json:"tenant_hash"`
	}
	err := wire.DecodeValue(raw, mp, &v)
	return map[string]any{"kind": "probe", "tenant_hash": v.TenantHash}, err
}

// A kind of Options.Context runs from a replicated batch as from a
// batch: it gets the command as sent, not its envelope.
func TestReplicatedContextKinds(t *testing.T) {
	srv, _, _ := newServer(t, testclock.New(epoch), func(o *Options) { o.Context = fakeContext{} })
	for _, mp := range []bool{false, true} {
		code, reply := post(t, srv.Client(), srv.URL+"/batch_execute_replicated", mp, "", asBody(t, mp, `{"commands":[
			{"command":{"kind":"string_set","key":"a","value":[1]},"replication_mode":"async_storage"},
			{"command":{"kind":"context_probe","tenant_hash":9},"replication_mode":"raft"}]}`))
		require.Equal(t, http.StatusOK, code)
		require.Contains(t, canonical(t, mp, reply), `{"kind":"probe","tenant_hash":9}`)
	}
}

// waitJob polls /jobs/{id} until the job has finished.
func waitJob(t *testing.T, srv *httptest.Server, token string, id uint64) jobReply {
	t.Helper()
	var j jobReply
	require.Eventually(t, func() bool {
		j = getJob(t, srv, token, id)
		return j.FinishedAtMs != nil
	}, 10*time.Second, 5*time.Millisecond)
	return j
}

// jobReply is a job as a client reads it.
type jobReply struct {
	JobID         uint64                     `json:"job_id"`
	Kind          string                     `json:"kind"`
	Status        Status                     `json:"status"`
	Output        map[string]json.RawMessage `json:"output"`
	SubmittedAtMs int64                      `json:"submitted_at_ms"`
	FinishedAtMs  *int64                     `json:"finished_at_ms"`
}

func getJob(t *testing.T, srv *httptest.Server, token string, id uint64) jobReply {
	t.Helper()
	code, reply := do(t, srv.Client(), http.MethodGet, fmt.Sprintf("%s/jobs/%d", srv.URL, id), token, false, nil)
	require.Equal(t, http.StatusOK, code, string(reply))
	var j jobReply
	// A job answers in its submitter's encoding.
	mp := len(reply) > 0 && reply[0] != '{'
	require.NoError(t, json.Unmarshal([]byte(canonical(t, mp, reply)), &j))
	return j
}

// submitJob posts to an async or maintenance route and returns the job.
func submitJob(t *testing.T, srv *httptest.Server, route, token string, mp bool, b string) jobReply {
	t.Helper()
	code, reply := do(t, srv.Client(), http.MethodPost, srv.URL+route, token, mp, asBody(t, mp, b))
	require.Equal(t, http.StatusOK, code, canonical(t, mp, reply))
	var j jobReply
	require.NoError(t, json.Unmarshal([]byte(canonical(t, mp, reply)), &j))
	require.NotZero(t, j.JobID)
	require.True(t, j.Status.OK)
	require.Contains(t, []string{jobQueued, jobRunning}, j.Status.Code)
	return j
}

// The async routes take a request as their route does, at once, and run
// it as a job whose reply /jobs/{id} gives, in the request's encoding.
func TestAsyncRoutes(t *testing.T) {
	for _, mp := range []bool{false, true} {
		t.Run(map[bool]string{false: "json", true: "msgpack"}[mp], func(t *testing.T) {
			srv, e, h := newServer(t, testclock.New(epoch), nil)
			for _, tc := range []struct {
				route, kind, body, output string
			}{
				{"/async_execute", "Execute", `{"command":{"kind":"string_set","key":"a","value":[1]}}`,
					`{"status":{"ok":true,"code":"ok","message":""},"response":{"kind":"empty"}}`},
				{"/async_batch_execute", "BatchExecute", `{"commands":[{"kind":"string_get","key":"a"}]}`,
					`{"status":{"ok":true,"code":"ok","message":""},"responses":[{"status":{"ok":true,"code":"ok","message":""},"response":{"kind":"bytes","value":[1]}}]}`},
				{"/async_execute_checked", "CheckedExecute", `{"load_version":1,"command":{"kind":"hash_get","key":"a","field":"f"}}`,
					`{"status":{"ok":true,"code":"ok","message":""},"response":{"status":{"ok":false,"code":"wrong_type","message":"temporalstore: WRONGTYPE Operation against a key holding the wrong kind of value"},"response":{"kind":"empty"}}}`},
				{"/async_batch_execute_checked", "CheckedBatchExecute", `{"load_version":1,"commands":[]}`,
					`{"status":{"ok":true,"code":"ok","message":""},"response":{"status":{"ok":true,"code":"ok","message":""},"responses":[]}}`},
			} {
				j := submitJob(t, srv, tc.route, "", mp, tc.body)
				require.Equal(t, tc.kind, j.Kind)
				require.Nil(t, j.Output)
				j = waitJob(t, srv, "", j.JobID)
				require.Equal(t, Status{OK: true, Code: CodeOK}, j.Status, tc.route)
				require.JSONEq(t, tc.output, string(j.Output[tc.kind]), tc.route)
				require.GreaterOrEqual(t, *j.FinishedAtMs, j.SubmittedAtMs)
			}
			require.True(t, exists(t, e, "", "", "a"))

			// A job's failure is its status.
			j := submitJob(t, srv, "/async_execute", "", mp, `{"command":{"kind":"incr_by","key":"a","delta":1}}`)
			j = waitJob(t, srv, "", j.JobID)
			require.Equal(t, "not_integer", j.Status.Code)

			// Bad input is refused at once, and no job is made.
			before := h.jobs.stats().Submitted
			for _, b := range []string{`{"command":`, `{}`, `{"command":{"kind":"nope","key":"b"}}`, `{"load_version":1,"command":{"kind":"string_set"}}`} {
				raw := []byte(b)
				if json.Valid(raw) {
					raw = asBody(t, mp, b)
				}
				code, reply := do(t, srv.Client(), http.MethodPost, srv.URL+"/async_execute", "", mp, raw)
				require.Equal(t, http.StatusBadRequest, code, b)
				var st Status
				decode(t, mp, reply, &st)
				require.Equal(t, CodeBadRequest, st.Code)
			}
			code, _ := do(t, srv.Client(), http.MethodPost, srv.URL+"/async_execute_checked", "", mp, asBody(t, mp, `{"command":{"kind":"string_set","key":"b","value":[1]}}`))
			require.Equal(t, http.StatusBadRequest, code)
			require.Equal(t, before, h.jobs.stats().Submitted)
			require.False(t, exists(t, e, "", "", "b"))
		})
	}
}

// Jobs: unknown and malformed ids, tokens (a tenant sees its own jobs),
// cancellation of a queued job, the queue's bound and the retention of
// finished jobs.
func TestJobs(t *testing.T) {
	srv, e, h := newServer(t, testclock.New(epoch), func(o *Options) {
		o.ReadWriteTokens, o.ReadOnlyTokens = []string{"rw"}, []string{"ro"}
		o.TenantTokens = map[string]TenantToken{"t1": {Tenant: "acme"}, "t2": {Tenant: "other"}}
		o.JobWorkers, o.MaxJobs = 1, 2
	})
	c := srv.Client()
	for _, tc := range []struct {
		method, path, token string
		code                int
	}{
		{http.MethodGet, "/jobs/1", "", http.StatusUnauthorized},
		{http.MethodGet, "/jobs/abc", "ro", http.StatusBadRequest},
		{http.MethodGet, "/jobs/", "ro", http.StatusBadRequest},
		{http.MethodGet, "/jobs/99", "ro", http.StatusNotFound},
		{http.MethodPost, "/jobs/99", "rw", http.StatusMethodNotAllowed},
		{http.MethodPost, "/jobs/99/cancel", "ro", http.StatusForbidden},
		{http.MethodPost, "/jobs/99/cancel", "rw", http.StatusNotFound},
		{http.MethodPost, "/async_execute", "", http.StatusUnauthorized},
	} {
		code, reply := do(t, c, tc.method, srv.URL+tc.path, tc.token, false, nil)
		require.Equal(t, tc.code, code, "%s %s: %s", tc.method, tc.path, reply)
	}
	code, _ := do(t, c, http.MethodPost, srv.URL+"/async_execute", "ro", false, []byte(`{"command":{"kind":"string_set","key":"k","value":[1]}}`))
	require.Equal(t, http.StatusForbidden, code)
	j := submitJob(t, srv, "/async_execute", "ro", false, `{"command":{"kind":"string_get","key":"k"}}`)
	require.Equal(t, CodeOK, waitJob(t, srv, "ro", j.JobID).Status.Code)

	// A tenant's job is its own.
	require.NoError(t, e.CreateTable(t.Context(), "acme", ts.DefaultTable, ts.TableOptions{Shards: 1}))
	j = submitJob(t, srv, "/async_execute", "t1", false, `{"command":{"kind":"string_set","key":"k","value":[1]}}`)
	require.Equal(t, CodeOK, waitJob(t, srv, "t1", j.JobID).Status.Code)
	require.True(t, exists(t, e, "acme", ts.DefaultTable, "k"))
	code, _ = do(t, c, http.MethodGet, fmt.Sprintf("%s/jobs/%d", srv.URL, j.JobID), "t2", false, nil)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, j.JobID, getJob(t, srv, "rw", j.JobID).JobID)

	// One worker, wedged on a frozen shard: the next job waits, and is
	// canceled before it runs; a third does not fit.
	key := "wedge"
	unfreeze, err := e.FreezeShard(t.Context(), ts.DefaultNamespace, ts.DefaultTable, ts.ShardOf([]byte(key), ts.DefaultShards))
	require.NoError(t, err)
	defer unfreeze()
	running := submitJob(t, srv, "/async_execute", "rw", false, `{"command":{"kind":"string_set","key":"wedge","value":[1]}}`)
	require.Eventually(t, func() bool { return getJob(t, srv, "rw", running.JobID).Status.Code == jobRunning }, 5*time.Second, time.Millisecond)
	queued := submitJob(t, srv, "/async_execute", "rw", false, `{"command":{"kind":"string_set","key":"never","value":[1]}}`)
	require.Equal(t, jobQueued, queued.Status.Code)
	code, reply := do(t, c, http.MethodPost, srv.URL+"/async_execute", "rw", false, []byte(`{"command":{"kind":"string_get","key":"k"}}`))
	require.Equal(t, http.StatusServiceUnavailable, code)
	var st Status
	decode(t, false, reply, &st)
	require.Equal(t, CodeQueueFull, st.Code)
	code, reply = do(t, c, http.MethodPost, fmt.Sprintf("%s/jobs/%d/cancel", srv.URL, queued.JobID), "rw", false, nil)
	require.Equal(t, http.StatusOK, code)
	var canceled jobReply
	require.NoError(t, json.Unmarshal(reply, &canceled))
	require.Equal(t, jobCanceled, canceled.Status.Code)
	require.NotNil(t, canceled.FinishedAtMs)
	unfreeze()
	require.Equal(t, CodeOK, waitJob(t, srv, "rw", running.JobID).Status.Code)
	require.True(t, exists(t, e, "", "", "wedge"))
	require.False(t, exists(t, e, "", "", "never"))
	require.Equal(t, jobCanceled, getJob(t, srv, "rw", queued.JobID).Status.Code)

	// The last two jobs to finish are kept: the older ones are forgotten.
	last := submitJob(t, srv, "/async_execute", "rw", false, `{"command":{"kind":"string_get","key":"k"}}`)
	waitJob(t, srv, "rw", last.JobID)
	code, _ = do(t, c, http.MethodGet, fmt.Sprintf("%s/jobs/%d", srv.URL, queued.JobID), "rw", false, nil)
	require.Equal(t, http.StatusNotFound, code)
	require.Equal(t, CodeOK, getJob(t, srv, "rw", running.JobID).Status.Code)
	s := h.jobs.stats()
	require.Equal(t, 2, s.Held)
	require.Zero(t, s.Pending)
	require.EqualValues(t, 1, s.Rejected)
	require.EqualValues(t, 1, s.Canceled)
}

// The maintenance routes run a checkpoint (/dump) or a maintenance round
// as a job, for read-write tokens; a body that is not JSON is refused and
// starts nothing.
func TestMaintenanceRoutes(t *testing.T) {
	srv, e, h := newServer(t, testclock.New(epoch), func(o *Options) {
		o.ReadWriteTokens, o.ReadOnlyTokens = []string{"rw"}, []string{"ro"}
	})
	_, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindSet, Key: []byte("k"), Value: []byte("v")})
	require.NoError(t, err)
	for route, kind := range maintenanceRoutes {
		j := submitJob(t, srv, route, "rw", false, `{"shard_id":1}`)
		require.Equal(t, kind, j.Kind)
		j = waitJob(t, srv, "rw", j.JobID)
		require.Equal(t, Status{OK: true, Code: CodeOK}, j.Status, route)
		var out struct {
			Status Status `json:"status"`
			Round  *struct {
				Stages []stageReport `json:"stages"`
			} `json:"round"`
		}
		require.NoError(t, json.Unmarshal(j.Output[kind], &out), route)
		require.True(t, out.Status.OK)
		if kind == "Dump" {
			require.Nil(t, out.Round)
			continue
		}
		require.Len(t, out.Round.Stages, len(ts.Stages), route)
	}
	j := submitJob(t, srv, "/compact", "rw", false, ``)
	waitJob(t, srv, "rw", j.JobID)
	rounds := e.MaintenanceStats().Rounds
	require.EqualValues(t, 5, rounds)
	submitted := h.jobs.stats().Submitted
	for _, tc := range []struct {
		method, token, body string
		code                int
	}{
		{http.MethodPost, "", `{}`, http.StatusUnauthorized},
		{http.MethodPost, "ro", `{}`, http.StatusForbidden},
		{http.MethodPost, "rw", `{"shard_id":`, http.StatusBadRequest},
		{http.MethodPost, "rw", `[1]`, http.StatusBadRequest},
		{http.MethodGet, "rw", ``, http.StatusMethodNotAllowed},
	} {
		code, reply := do(t, srv.Client(), tc.method, srv.URL+"/gc", tc.token, false, []byte(tc.body))
		require.Equal(t, tc.code, code, string(reply))
	}
	require.Equal(t, submitted, h.jobs.stats().Submitted)
	require.Equal(t, rounds, e.MaintenanceStats().Rounds)
}

// The shard reports read a shard of a table (the default one unless
// named): its table's options as the original's config, its routing and
// mode, its statistics.
func TestShardReports(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), func(o *Options) { o.ReadOnlyTokens = []string{"ro"} })
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "ns", "tbl", ts.TableOptions{Shards: 2, Async: true, WriteQPS: 50, FeatureMaxSize: 7}))
	require.NoError(t, e.SetTableReadOnly(ctx, "ns", "tbl", 1, true))
	for i := range 10 {
		_, err := e.Execute(ctx, ts.Command{Namespace: "ns", Table: "tbl", Kind: ts.KindSet, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")})
		if err != nil {
			require.ErrorIs(t, err, ts.ErrReadOnly)
		}
	}
	get := func(path string, code int) map[string]any {
		t.Helper()
		got, reply := do(t, srv.Client(), http.MethodGet, srv.URL+path, "ro", false, nil)
		require.Equal(t, code, got, string(reply))
		var v map[string]any
		require.NoError(t, json.Unmarshal(reply, &v))
		return v
	}
	v := get("/get_config/0?namespace=ns&table_name=tbl", http.StatusOK)
	cfg := v["config"].(map[string]any)
	require.Equal(t, true, cfg["async_storage"])
	require.EqualValues(t, 50, cfg["table_write_qps"])
	require.Nil(t, cfg["table_read_qps"])
	require.EqualValues(t, 7, cfg["feature_max_size"])

	v = get("/get_info/1?namespace=ns&table_name=tbl", http.StatusOK)
	info := v["info"].(map[string]any)
	require.Equal(t, true, info["readonly"])
	require.EqualValues(t, 1, info["shard_id"])
	require.EqualValues(t, ts.DefaultRangeHi, info["end_routing_bucket"])
	require.Equal(t, false, get("/get_info/0?namespace=ns&table_name=tbl", http.StatusOK)["info"].(map[string]any)["readonly"])

	keys := 0
	for sh := range 2 {
		st := get(fmt.Sprintf("/get_stats/%d?namespace=ns&table_name=tbl", sh), http.StatusOK)["stats"].(map[string]any)
		require.EqualValues(t, sh, st["shard"])
		require.Equal(t, st["keys"], st["total_records"])
		keys += int(st["keys"].(float64))
	}
	require.Positive(t, keys)
	require.EqualValues(t, 3, get("/get_stats/3", http.StatusOK)["stats"].(map[string]any)["shard_id"])

	for path, code := range map[string]int{
		"/get_info/2?namespace=ns&table_name=tbl": http.StatusNotFound,
		"/get_info/x":   http.StatusBadRequest,
		"/get_stats/-1": http.StatusBadRequest,
		"/get_config/":  http.StatusBadRequest,
		"/get_config/0?namespace=no&table_name=x": http.StatusNotFound,
	} {
		st := get(path, code)
		require.Equal(t, false, st["ok"], path)
	}
	code, _ := do(t, srv.Client(), http.MethodGet, srv.URL+"/get_info/0", "", false, nil)
	require.Equal(t, http.StatusUnauthorized, code)
	code, _ = do(t, srv.Client(), http.MethodPost, srv.URL+"/get_info/0", "ro", false, nil)
	require.Equal(t, http.StatusMethodNotAllowed, code)
}

// /readiness is /ready's probe shard by shard; /server/info every shard's
// statistics; /server/runtime_stats the jobs' and maintenance's totals.
func TestReadinessAndServerReports(t *testing.T) {
	var notReady atomic.Bool
	srv, e, _ := newServer(t, testclock.New(epoch), func(o *Options) {
		o.ReadWriteTokens = []string{"rw"}
		o.Ready = func(context.Context) error {
			if notReady.Load() {
				return errors.New("shard 3 has no leader")
			}
			return nil
		}
	})
	require.NoError(t, e.CreateTable(t.Context(), "ns", "tbl", ts.TableOptions{Shards: 2}))
	var r struct {
		Status Status       `json:"status"`
		Ready  bool         `json:"ready"`
		Shards []shardProbe `json:"shards"`
	}
	code, reply := do(t, srv.Client(), http.MethodGet, srv.URL+"/readiness", "", false, nil)
	require.Equal(t, http.StatusOK, code)
	require.NoError(t, json.Unmarshal(reply, &r))
	require.True(t, r.Ready)
	require.Len(t, r.Shards, ts.DefaultShards+2)
	for _, s := range r.Shards {
		require.True(t, s.OK)
	}
	notReady.Store(true)
	code, reply = do(t, srv.Client(), http.MethodGet, srv.URL+"/readiness", "", false, nil)
	require.Equal(t, http.StatusServiceUnavailable, code)
	require.NoError(t, json.Unmarshal(reply, &r))
	require.False(t, r.Ready)
	require.Equal(t, Status{Code: CodeNotReady, Message: "shard 3 has no leader"}, r.Status)

	code, reply = do(t, srv.Client(), http.MethodGet, srv.URL+"/server/info", "rw", false, nil)
	require.Equal(t, http.StatusOK, code)
	var info struct {
		Shards []struct {
			Namespace string `json:"namespace"`
			Table     string `json:"table"`
			Shard     int    `json:"shard"`
		} `json:"shards"`
	}
	require.NoError(t, json.Unmarshal(reply, &info))
	require.Len(t, info.Shards, ts.DefaultShards+2)

	code, reply = do(t, srv.Client(), http.MethodGet, srv.URL+"/server/runtime_stats", "rw", false, nil)
	require.Equal(t, http.StatusOK, code)
	var rs struct {
		Jobs        jobStats `json:"jobs"`
		Maintenance struct {
			Stages []stageReport `json:"stages"`
		} `json:"maintenance"`
	}
	require.NoError(t, json.Unmarshal(reply, &rs))
	require.Equal(t, DefaultJobWorkers, rs.Jobs.Workers)
	require.Equal(t, DefaultMaxJobs, rs.Jobs.MaxJobs)
	require.Len(t, rs.Maintenance.Stages, len(ts.Stages))
	code, _ = do(t, srv.Client(), http.MethodGet, srv.URL+"/server/info", "", false, nil)
	require.Equal(t, http.StatusUnauthorized, code)
}

// The original's routes of concepts the engine does not have answer 501
// "unsupported", naming what replaces them, and change nothing.
func TestUnsupportedRoutes(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), func(o *Options) { o.ReadOnlyTokens = []string{"ro"} })
	for _, tc := range []struct{ path, names string }{
		{"/load", "POST /tables"}, {"/reload", "DELETE /tables"}, {"/unload", "PATCH /tables"},
		{"/async_load", "/tables"}, {"/async_reload", "/tables"}, {"/async_unload", "/tables"},
		{"/set_config", "PATCH /tables/{ns}/{name}"}, {"/update_membership", "/cluster/members"},
		{"/heartbeat", "GET /ready"}, {"/read_stream", "XRANGE"}, {"/scan_stream", "/backup"},
		{"/server/lifecycle", "GET /server/info"}, {"/server/storage/slots/1", "/metrics"},
	} {
		t.Run(tc.path, func(t *testing.T) {
			code, reply := do(t, srv.Client(), http.MethodPost, srv.URL+tc.path, "ro", false, []byte(`{"shard_id":1}`))
			require.Equal(t, http.StatusNotImplemented, code)
			var st Status
			require.NoError(t, json.Unmarshal(reply, &st))
			require.Equal(t, CodeUnsupported, st.Code)
			require.True(t, strings.HasPrefix(st.Message, tc.path+" is not served: "), st.Message)
			require.Contains(t, st.Message, tc.names)
			code, _ = do(t, srv.Client(), http.MethodGet, srv.URL+tc.path, "", false, nil)
			require.Equal(t, http.StatusUnauthorized, code)
		})
	}
	tables, err := e.ListTables()
	require.NoError(t, err)
	require.Len(t, tables, 1)
	code, _ := do(t, srv.Client(), http.MethodGet, srv.URL+"/no_such_route", "ro", false, nil)
	require.Equal(t, http.StatusNotFound, code)
}

// /health answers GET and POST (the Python SDK POSTs), with no token.
func TestHealthMethods(t *testing.T) {
	srv, _, _ := newServer(t, testclock.New(epoch), func(o *Options) { o.ReadWriteTokens = []string{"rw"} })
	for _, m := range []string{http.MethodGet, http.MethodPost} {
		code, reply := do(t, srv.Client(), m, srv.URL+"/health", "", false, nil)
		require.Equal(t, http.StatusOK, code)
		require.JSONEq(t, `{"ok":true,"code":"ok","message":""}`, string(reply))
	}
}

// FuzzOriginalRoutes: any body, JSON or MessagePack, to the routes with
// decoders of their own is answered without a panic, with a status the
// routes document, and one refused (400, 413) changes nothing.
func FuzzOriginalRoutes(f *testing.F) {
	routes := []string{"/execute_checked", "/batch_execute_checked", "/execute_replicated", "/batch_execute_replicated",
		proxyPrefix + "Set", proxyPrefix + "FeatureAdd", proxyPrefix + "HMSet", proxyPrefix + "ControlStateHset", proxyPrefix + "SequenceAdd"}
	for i, b := range []string{
		`{"load_version":1,"command":{"kind":"string_set","key":"k","value":[1]}}`,
		`{"load_version":1,"commands":[{"kind":"string_set","key":"k","value":"dg=="}]}`,
		`{"replication_mode":"raft","command":{"kind":"string_set","key":"k","value":[1]}}`,
		`{"commands":[{"command":{"kind":"hash_set","key":"h","field":"f","value":[1]},"replication_mode":"sync_storage"}]}`,
		`{"namespace":"default","table_name":"default","key":"k","value":[1,2]}`,
		`{"key":"f","points":[{"timestamp_ms":1,"value":[1]}],"policy":"nx"}`,
		`{"key":"h","entries":[["f",[1]]]}`,
		`{"key":"c","timestamp_ms":1,"amount":2}`,
		`{"key":"q","rows":[{"timestamp_ms":1}]}`,
	} {
		f.Add(uint8(i), []byte(b), false)
		f.Add(uint8(i), []byte(b), true)
	}
	e := newEngine(f, testclock.New(epoch))
	h, err := New(Options{Engine: e})
	require.NoError(f, err)
	keys := func(t *testing.T) int {
		st, err := e.Stats()
		require.NoError(t, err)
		n := 0
		for _, s := range st {
			n += s.Keys
		}
		return n
	}
	f.Fuzz(func(t *testing.T, route uint8, b []byte, mp bool) {
		if mp {
			// The same body, as a MessagePack client would send it, when
			// it is JSON; else the bytes as they are.
			var v any
			if json.Unmarshal(b, &v) == nil {
				if m, err := wire.EncodeValue(v, true); err == nil {
					b = m
				}
			}
		}
		before := keys(t)
		r := httptest.NewRequestWithContext(t.Context(), http.MethodPost, routes[int(route)%len(routes)], bytes.NewReader(b))
		if mp {
			r.Header.Set("Content-Type", ContentTypeMsgpack)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch w.Code {
		case http.StatusOK, http.StatusInsufficientStorage:
		case http.StatusBadRequest, http.StatusRequestEntityTooLarge:
			require.Equal(t, before, keys(t), "a refused request changed nothing")
		default:
			t.Fatalf("HTTP %d: %s", w.Code, w.Body.Bytes())
		}
	})
}

// A running job canceled: its commands end with the job's context where
// they check it (a write waiting on a frozen shard, once the shard lets
// it go, before its record is queued), none lands, and the job ends with
// each command's error while the worker takes the next.
func TestJobCanceledWhileRunning(t *testing.T) {
	srv, e, _ := newServer(t, testclock.New(epoch), func(o *Options) {
		o.ReadWriteTokens = []string{"rw"}
		o.JobWorkers, o.MaxJobs = 1, 2
	})
	c := srv.Client()
	key := "wedge"
	unfreeze, err := e.FreezeShard(t.Context(), ts.DefaultNamespace, ts.DefaultTable, ts.ShardOf([]byte(key), ts.DefaultShards))
	require.NoError(t, err)
	defer unfreeze()
	running := submitJob(t, srv, "/async_batch_execute", "rw", false,
		`{"commands":[{"kind":"string_set","key":"wedge","value":[1]},{"kind":"string_set","key":"after","value":[1]}]}`)
	require.Eventually(t, func() bool { return getJob(t, srv, "rw", running.JobID).Status.Code == jobRunning }, 5*time.Second, time.Millisecond)
	code, reply := do(t, c, http.MethodPost, fmt.Sprintf("%s/jobs/%d/cancel", srv.URL, running.JobID), "rw", false, nil)
	require.Equal(t, http.StatusOK, code, "%s", reply)
	unfreeze()
	done := waitJob(t, srv, "rw", running.JobID)
	require.NotNil(t, done.FinishedAtMs)
	// The batch answers; each of its commands says it was canceled.
	out := string(done.Output["BatchExecute"])
	require.Equal(t, 2, strings.Count(out, `"code":"canceled"`), out)
	require.False(t, exists(t, e, "", "", "wedge"))
	require.False(t, exists(t, e, "", "", "after"))
	// The worker is free again.
	next := submitJob(t, srv, "/async_execute", "rw", false, `{"command":{"kind":"string_set","key":"after","value":[2]}}`)
	require.Equal(t, CodeOK, waitJob(t, srv, "rw", next.JobID).Status.Code)
	require.True(t, exists(t, e, "", "", "after"))
}
