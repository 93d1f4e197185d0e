package flowhttp_test

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore/flowhttp"
)

// A flow's life over HTTP: made, claimed, completed (again as a no-op),
// refused under a stale lease and once terminal, read, rewound.
func TestFlowLifecycle(t *testing.T) {
	c, _ := serve(t, flowhttp.Options{})
	var lease obj
	steps := []struct {
		name         string
		method, path string
		body         func() any
		status       int
		code         string
		check        func(t *testing.T, r reply)
	}{
		{"create", "POST", "/flows", func() any {
			return obj{"id": "mail-1", "type": "email", "payload": "hi", "attributes": obj{"b": "2", "a": "1"}, "priority": 3}
		}, 201, "", func(t *testing.T, r reply) {
			require.Equal(t, "queued", r.body["state"])
			require.Equal(t, "hi", r.body["payload"])
			require.Nil(t, r.body["result"])
			require.Nil(t, r.body["max_active_ms"])
			require.Equal(t, "/flows/mail-1", r.header.Get("Location"))
			require.Contains(t, r.raw, `"attributes":{"a":"1","b":"2"}`)
		}},
		{"create again", "POST", "/flows", func() any { return obj{"id": "mail-1", "type": "email", "payload": "hi"} }, 409, "exists", nil},
		{"idempotent create finds it", "POST", "/flows", func() any {
			return obj{"id": "mail-1", "type": "email", "payload": "hi", "attributes": obj{"a": "1", "b": "2"}, "priority": 3, "idempotent": true}
		}, 200, "", func(t *testing.T, r reply) { require.EqualValues(t, 1, r.body["version"]) }},
		{"idempotent create of another payload", "POST", "/flows", func() any {
			return obj{"id": "mail-1", "type": "email", "payload": "other", "idempotent": true}
		}, 409, "idempotency_conflict", nil},
		{"claim", "POST", "/flows/claim", func() any { return obj{"type": "email", "worker": "w1", "lease_ms": 30_000} }, 200, "",
			func(t *testing.T, r reply) {
				fs := r.body["flows"].([]any)
				require.Len(t, fs, 1)
				lease = fs[0].(obj)
				require.Equal(t, "running", lease["state"])
				require.Equal(t, "w1", lease["lease_owner"])
			}},
		{"claim finds nothing", "POST", "/flows/claim", func() any { return obj{"type": "email", "worker": "w2", "lease_ms": 30_000, "limit": 5} }, 200, "",
			func(t *testing.T, r reply) { require.Contains(t, r.raw, `"flows":[]`) }},
		{"extend", "POST", "/flows/mail-1/extend_lease", func() any {
			return obj{"lease_token": lease["lease_token"], "fencing_token": lease["fencing_token"], "lease_ms": 60_000}
		}, 200, "", nil},
		{"stale lease", "POST", "/flows/mail-1/complete", func() any {
			return obj{"lease_token": lease["lease_token"], "fencing_token": 99}
		}, 409, "stale_lease", nil},
		{"complete", "POST", "/flows/mail-1/complete", func() any {
			return obj{"lease_token": lease["lease_token"], "fencing_token": lease["fencing_token"], "result": "sent"}
		}, 200, "", func(t *testing.T, r reply) {
			require.Equal(t, "completed", r.body["state"])
			require.Equal(t, "sent", r.body["result"])
			require.EqualValues(t, 4, r.body["version"])
		}},
		{"complete again is a no-op", "POST", "/flows/mail-1/complete", func() any {
			return obj{"id": "mail-1", "lease_token": lease["lease_token"], "fencing_token": lease["fencing_token"], "result": "sent"}
		}, 200, "", func(t *testing.T, r reply) { require.EqualValues(t, 4, r.body["version"]) }},
		{"fail once terminal", "POST", "/flows/mail-1/fail", func() any {
			return obj{"lease_token": lease["lease_token"], "fencing_token": lease["fencing_token"]}
		}, 409, "terminal", nil},
		{"cancel once terminal", "POST", "/flows/mail-1/cancel", func() any { return obj{} }, 409, "terminal", nil},
		{"transition once terminal", "POST", "/flows/mail-1/transition", func() any {
			return obj{"from": "completed", "to": "queued", "fencing_token": lease["fencing_token"]}
		}, 409, "terminal", nil},
		{"get", "GET", "/flows/mail-1", nil, 200, "", func(t *testing.T, r reply) {
			require.Equal(t, "completed", r.body["state"])
			require.EqualValues(t, 0, r.body["lease_deadline_ms"])
		}},
		{"history", "GET", "/flows/mail-1/history?count=2&rev=true", nil, 200, "", func(t *testing.T, r reply) {
			es := r.body["events"].([]any)
			require.Len(t, es, 2)
			require.Equal(t, "completed", es[0].(obj)["event"])
			require.Equal(t, "lease_extended", es[1].(obj)["event"])
		}},
		{"rewind", "POST", "/flows/mail-1/rewind", nil, 200, "", func(t *testing.T, r reply) {
			require.Equal(t, "queued", r.body["state"])
		}},
		{"rewind once waiting", "POST", "/flows/mail-1/rewind", func() any { return obj{"to": "later"} }, 409, "not_terminal", nil},
		{"stats", "GET", "/flows/stats", nil, 200, "", func(t *testing.T, r reply) {
			require.EqualValues(t, 1, r.body["waiting"])
			require.EqualValues(t, 0, r.body["completed"])
		}},
		{"missing", "GET", "/flows/nope", nil, 404, "not_found", nil},
		{"missing history", "GET", "/flows/nope/history", nil, 404, "not_found", nil},
		{"bytes that are not UTF-8", "POST", "/flows", func() any {
			return obj{"id": "bin", "type": "raw", "payload_base64": "/wA="}
		}, 201, "", func(t *testing.T, r reply) {
			require.Equal(t, "/wA=", r.body["payload_base64"])
			require.NotContains(t, r.body, "payload")
		}},
		{"an ID with a slash", "POST", "/flows", func() any { return obj{"id": "a/b{x}", "type": "t", "max_active_ms": 5000} }, 201, "", nil},
		{"read by its escaped path", "GET", "/flows/" + url.PathEscape("a/b{x}"), nil, 200, "", func(t *testing.T, r reply) {
			require.Equal(t, "a/b{x}", r.body["id"])
			require.EqualValues(t, 5000, r.body["max_active_ms"])
		}},
	}
	for _, s := range steps {
		var body any
		if s.body != nil {
			body = s.body()
		}
		r := c.do(s.method, s.path, body)
		require.Equal(t, s.status, r.status, "%s: %s", s.name, r.raw)
		require.Equal(t, s.code, r.code(), s.name)
		if s.check != nil {
			s.check(t, r)
		}
	}
}

// A retry goes back to the flow's state, and fail and transition work
// under the lease.
func TestFlowRetryFailTransition(t *testing.T) {
	c, _ := serve(t, flowhttp.Options{})
	c.must(201, "POST", "/flows", obj{"id": "j1", "type": "job"})
	claim := func() obj {
		fs := c.must(200, "POST", "/flows/claim", obj{"type": "job", "worker": "w", "lease_ms": 10_000})["flows"].([]any)
		require.Len(t, fs, 1)
		return fs[0].(obj)
	}
	l := claim()
	r := c.must(200, "POST", "/flows/j1/retry", obj{"lease_token": l["lease_token"], "fencing_token": l["fencing_token"], "error": "again", "run_at_ms": 0})
	require.Equal(t, "queued", r["state"])
	require.Equal(t, "again", r["error"])
	require.EqualValues(t, 1, r["attempts"])
	l = claim()
	r = c.must(200, "POST", "/flows/j1/transition", obj{"from": "running", "to": "review", "lease_token": l["lease_token"], "fencing_token": l["fencing_token"], "priority": 7, "payload": "<p&2>"})
	require.Equal(t, "review", r["state"])
	require.EqualValues(t, 7, r["priority"])
	require.Equal(t, "<p&2>", r["payload"])
	require.Contains(t, c.do("GET", "/flows/j1", nil).raw, `"payload":"<p&2>"`, "payloads are not HTML-escaped")
	fs := c.must(200, "POST", "/flows/claim", obj{"type": "job", "state": "review", "worker": "w", "lease_ms": 10_000, "priority": 7})["flows"].([]any)
	require.Len(t, fs, 1)
	l = fs[0].(obj)
	r = c.must(200, "POST", "/flows/j1/fail", obj{"lease_token": l["lease_token"], "fencing_token": l["fencing_token"], "error_base64": "/w=="})
	require.Equal(t, "failed", r["state"])
	require.Equal(t, "/w==", r["error_base64"])
}

// A batch that is not independent is applied whole or not at all; an
// independent one item by item.
func TestFlowBatch(t *testing.T) {
	c, st := serve(t, flowhttp.Options{})
	create := func(ids ...string) []any {
		var items []any
		for _, id := range ids {
			items = append(items, obj{"id": id, "type": "t"})
		}
		return items
	}
	r := c.do("POST", "/flows/batch", obj{"op": "create", "items": create("{g}a", "{g}b", "{g}a")})
	require.Equal(t, 409, r.status, r.raw)
	require.Equal(t, "exists", r.code())
	require.EqualValues(t, 2, r.body["error"].(obj)["index"])
	require.Zero(t, flows(t, st))

	r = c.do("POST", "/flows/batch", obj{"op": "create", "items": create("c0", "c1", "c2", "c3", "c4", "c5", "c6", "c7")})
	require.Equal(t, 400, r.status, r.raw)
	require.Equal(t, "batch_crosses_shards", r.code())
	require.Zero(t, flows(t, st))

	r = c.do("POST", "/flows/batch", obj{"op": "create", "items": []any{obj{"id": "{g}a", "type": "t"}, obj{"id": "{g}b", "type": "t", "colour": "red"}}})
	require.Equal(t, 400, r.status, r.raw)
	require.EqualValues(t, 1, r.body["error"].(obj)["index"])
	require.Zero(t, flows(t, st))

	items := c.must(200, "POST", "/flows/batch", obj{"op": "create", "items": create("{g}a", "{g}b")})["items"].([]any)
	require.Len(t, items, 2)
	require.Equal(t, "{g}b", items[1].(obj)["flow"].(obj)["id"])

	items = c.must(200, "POST", "/flows/batch", obj{"op": "create", "independent": true, "items": create("x", "{g}a", "y")})["items"].([]any)
	require.Equal(t, "x", items[0].(obj)["flow"].(obj)["id"])
	require.Equal(t, "exists", items[1].(obj)["error"].(obj)["code"])
	require.NotContains(t, items[1].(obj), "flow")
	require.Equal(t, "y", items[2].(obj)["flow"].(obj)["id"])
	require.Equal(t, 4, flows(t, st))

	fs := c.must(200, "POST", "/flows/claim", obj{"type": "t", "worker": "w", "lease_ms": 10_000, "limit": 10})["flows"].([]any)
	require.Len(t, fs, 4)
	var done []any
	for _, f := range fs {
		f := f.(obj)
		done = append(done, obj{"id": f["id"], "lease_token": f["lease_token"], "fencing_token": f["fencing_token"], "result": "ok"})
	}
	done = append(done, obj{"id": "missing", "lease_token": "x", "fencing_token": 1})
	items = c.must(200, "POST", "/flows/batch", obj{"op": "complete", "independent": true, "items": done})["items"].([]any)
	for _, it := range items[:4] {
		require.Equal(t, "completed", it.(obj)["flow"].(obj)["state"])
	}
	require.Equal(t, "not_found", items[4].(obj)["error"].(obj)["code"])
}

// A blocked claim is woken by a create made while it waits; one that
// finds nothing ends at its block_ms, or at Options.MaxBlock.
func TestFlowClaimBlocks(t *testing.T) {
	c, _ := serve(t, flowhttp.Options{})
	got := make(chan reply, 1)
	go func() {
		got <- c.do("POST", "/flows/claim", obj{"type": "late", "worker": "w", "lease_ms": 10_000, "block_ms": 60_000})
	}()
	time.Sleep(50 * time.Millisecond)
	c.must(201, "POST", "/flows", obj{"id": "late-1", "type": "late"})
	select {
	case r := <-got:
		require.Equal(t, 200, r.status, r.raw)
		fs := r.body["flows"].([]any)
		require.Len(t, fs, 1)
		require.Equal(t, "late-1", fs[0].(obj)["id"])
	case <-time.After(10 * time.Second):
		t.Fatal("the blocked claim was not woken by the create")
	}

	start := time.Now()
	r := c.do("POST", "/flows/claim", obj{"type": "none", "worker": "w", "lease_ms": 10_000, "block_ms": 30})
	require.Equal(t, 200, r.status)
	require.Empty(t, r.body["flows"])
	require.GreaterOrEqual(t, time.Since(start), 30*time.Millisecond)

	capped, _ := serve(t, flowhttp.Options{MaxBlock: 100 * time.Millisecond})
	start = time.Now()
	r = capped.do("POST", "/flows/claim", obj{"type": "none", "worker": "w", "lease_ms": 10_000, "block_ms": 600_000})
	require.Equal(t, 200, r.status)
	require.Contains(t, r.raw, `"flows":[]`)
	took := time.Since(start)
	require.GreaterOrEqual(t, took, 100*time.Millisecond)
	require.Less(t, took, 5*time.Second, "MaxBlock bounds block_ms")
}

// Policies and schedules round trip.
func TestFlowPoliciesAndSchedules(t *testing.T) {
	c, _ := serve(t, flowhttp.Options{})
	p := c.must(200, "GET", "/flows/policies/email", nil)
	require.EqualValues(t, 3, p["max_retries"])
	require.Equal(t, "exponential", p["backoff"])
	require.Equal(t, "infinity", p["max_active_ms"])
	require.EqualValues(t, 0, p["generation"])
	require.Empty(t, p["set_fields"])

	p = c.must(200, "PUT", "/flows/policies/email", obj{"max_retries": 5, "backoff": "fixed", "base_ms": 10, "mode": "FIFO", "max_active_ms": 60_000})
	require.EqualValues(t, 5, p["max_retries"])
	require.Equal(t, "fixed", p["backoff"])
	require.Equal(t, "fifo", p["mode"])
	require.EqualValues(t, 60_000, p["max_active_ms"])
	require.EqualValues(t, 1, p["generation"])
	require.Equal(t, []any{"max_retries", "backoff", "base_ms", "mode", "max_active_ms"}, p["set_fields"])

	r := c.do("PUT", "/flows/policies/email", obj{"max_retries": 1, "expected_generation": 0})
	require.Equal(t, 409, r.status)
	require.Equal(t, "policy_generation", r.code())
	c.must(200, "PUT", "/flows/policies/email", obj{"max_active_ms": "infinity", "expected_generation": 1})

	p = c.must(200, "PUT", "/flows/policies/email?state=review", obj{"jitter_pct": 0, "exhausted_to": "dead"})
	require.EqualValues(t, 1, p["generation"])
	p = c.must(200, "GET", "/flows/policies/email?state=review", nil)
	require.EqualValues(t, 5, p["max_retries"], "the type's policy applies to its states")
	require.EqualValues(t, 0, p["jitter_pct"])
	require.Equal(t, "dead", p["exhausted_to"])
	require.Equal(t, "infinity", p["max_active_ms"])
	p = c.must(200, "GET", "/flows/policies/email", nil)
	require.EqualValues(t, 2, p["generation"])
	require.EqualValues(t, 20, p["jitter_pct"])

	c.must(400, "PUT", "/flows/policies/email", obj{})
	c.must(400, "PUT", "/flows/policies/email", obj{"backoff": "sometimes"})
	c.must(400, "PUT", "/flows/policies/email", obj{"jitter_pct": 101})

	far := time.Now().Add(time.Hour).UnixMilli()
	s := c.must(200, "PUT", "/flows/schedules/nightly", obj{"type": "report", "every_ms": 60_000, "start_at_ms": far, "payload": "x", "overlap": "skip"})
	require.Equal(t, "nightly", s["name"])
	require.Equal(t, "queued", s["state"])
	require.Equal(t, "skip", s["overlap"])
	require.EqualValues(t, far, s["next_due_ms"])
	require.Equal(t, "active", s["status"])
	r = c.do("PUT", "/flows/schedules/nightly", obj{"type": "report", "every_ms": 1000})
	require.Equal(t, 409, r.status)
	require.Equal(t, "schedule_exists", r.code())
	s = c.must(200, "PUT", "/flows/schedules/nightly", obj{"type": "report", "every_ms": 120_000, "start_at_ms": far, "replace": true})
	require.EqualValues(t, 120_000, s["every_ms"])
	c.must(200, "PUT", "/flows/schedules/hourly", obj{"type": "report", "every_ms": 3_600_000, "start_at_ms": far})
	require.Equal(t, []any{"hourly", "nightly"}, c.must(200, "GET", "/flows/schedules", nil)["schedules"])
	require.EqualValues(t, 120_000, c.must(200, "GET", "/flows/schedules/nightly", nil)["every_ms"])
	require.EqualValues(t, 2, c.must(200, "GET", "/flows/stats", nil)["schedules"])
	c.must(204, "DELETE", "/flows/schedules/nightly", nil)
	require.Equal(t, "schedule_not_found", c.do("GET", "/flows/schedules/nightly", nil).code())
	require.Equal(t, "schedule_not_found", c.do("DELETE", "/flows/schedules/nightly", nil).code())
	c.must(400, "PUT", "/flows/schedules/nightly", obj{"type": "report"})
	c.must(400, "PUT", "/flows/schedules/nightly", obj{"type": "report", "every_ms": 1, "overlap": "never"})
	require.Equal(t, []any{"hourly"}, c.must(200, "GET", "/flows/schedules", nil)["schedules"])
}

// Tokens: none is 401, a read-only one reads but cannot write (403).
func TestFlowAuth(t *testing.T) {
	c, st := serve(t, flowhttp.Options{ReadWriteTokens: []string{"rw"}, ReadOnlyTokens: []string{"ro"}})
	create := obj{"id": "f", "type": "t"}
	cases := []struct {
		token, method, path string
		body                any
		status              int
		code                string
	}{
		{"", "GET", "/flows/stats", nil, 401, "unauthorized"},
		{"wrong", "GET", "/flows/stats", nil, 401, "unauthorized"},
		{"", "POST", "/flows", create, 401, "unauthorized"},
		{"ro", "POST", "/flows", create, 403, "forbidden"},
		{"ro", "PUT", "/flows/policies/t", obj{"max_retries": 1}, 403, "forbidden"},
		{"ro", "GET", "/flows/stats", nil, 200, ""},
		{"rw", "POST", "/flows", create, 201, ""},
		{"ro", "GET", "/flows/f", nil, 200, ""},
		{"ro", "DELETE", "/flows/schedules/s", nil, 403, "forbidden"},
	}
	for _, tc := range cases {
		c.token = tc.token
		r := c.do(tc.method, tc.path, tc.body)
		require.Equal(t, tc.status, r.status, "%+v: %s", tc, r.raw)
		require.Equal(t, tc.code, r.code())
	}
	require.Equal(t, 1, flows(t, st))
	req, err := http.NewRequest("GET", c.url+"/flows/stats", nil)
	require.NoError(t, err)
	req.Header.Set("Authorization", "Basic cnc=")
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 401, res.StatusCode)
	require.Contains(t, res.Header.Get("WWW-Authenticate"), "Bearer")
}

// Bad input is refused with its status and changes nothing.
func TestFlowBadInput(t *testing.T) {
	c, st := serve(t, flowhttp.Options{MaxBodyBytes: 4096})
	c.must(201, "POST", "/flows", obj{"id": "f", "type": "t"})
	huge := fmt.Sprintf(`{"id":"big","type":"t","payload":"%s"}`, strings.Repeat("x", 5000))
	cases := []struct {
		method, path, body string
		status             int
		code               string
	}{
		{"POST", "/flows", `{`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t","colour":"red"}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t","priority":"high"}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t","priority":1.5}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t"}{"id":"y","type":"t"}`, 400, "invalid_argument"},
		{"POST", "/flows", `[{"id":"x","type":"t"}]`, 400, "invalid_argument"},
		{"POST", "/flows", `"x"`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x"}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"type":"t"}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t","payload":"a","payload_base64":"YQ=="}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t","payload_base64":"%%%"}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t","max_active_ms":0}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t","max_active_ms":"forever"}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t","attributes":["a"]}`, 400, "invalid_argument"},
		{"POST", "/flows", `{"id":"x","type":"t","state":"running"}`, 400, "running_state"},
		{"POST", "/flows", `{"id":"x","type":"t","state":"completed"}`, 409, "wrong_state"},
		{"POST", "/flows", huge, 413, "body_too_large"},
		{"POST", "/flows/claim", `{"type":"t","worker":"w"}`, 400, "invalid_argument"},
		{"POST", "/flows/claim", `{"type":"t","worker":"w","lease_ms":1000,"limit":0}`, 400, "invalid_argument"},
		{"POST", "/flows/claim", `{"type":"t","worker":"w","lease_ms":1000,"limit":100000}`, 400, "invalid_argument"},
		{"POST", "/flows/claim", `{"type":"t","worker":"w","lease_ms":1000,"block_ms":-1}`, 400, "invalid_argument"},
		{"POST", "/flows/claim", `{"type":"t","lease_ms":1000,"block_ms":10}`, 400, "invalid_argument"},
		{"POST", "/flows/claim", `{"type":"t","worker":"w","lease_ms":1000,"state":"completed"}`, 409, "wrong_state"},
		{"POST", "/flows/f/complete", `{"lease_token":"x"}`, 400, "invalid_argument"},
		{"POST", "/flows/f/complete", `{"lease_token":"x","fencing_token":-1}`, 400, "invalid_argument"},
		{"POST", "/flows/f/complete", `{"lease_token":"x","fencing_token":"1"}`, 400, "invalid_argument"},
		{"POST", "/flows/f/complete", `{"id":"g","lease_token":"x","fencing_token":1}`, 400, "invalid_argument"},
		{"POST", "/flows/f/cancel", `{"reason":"a","reason_base64":"YQ=="}`, 400, "invalid_argument"},
		{"POST", "/flows/f/transition", `{"from":"queued","to":"later"}`, 400, "invalid_argument"},
		{"POST", "/flows/f/transition", `{"from":"queued","to":"running","fencing_token":0}`, 400, "running_state"},
		{"POST", "/flows/f/transition", `{"from":"later","to":"soon","fencing_token":0}`, 409, "wrong_state"},
		{"POST", "/flows/f/extend_lease", `{"lease_token":"x","fencing_token":1}`, 400, "invalid_argument"},
		{"POST", "/flows/f/retry", `{"lease_token":"x","fencing_token":1,"max_retries":-1}`, 400, "invalid_argument"},
		{"POST", "/flows/f/bogus", `{}`, 404, "not_found"},
		{"POST", "/flows/f/history", `{}`, 405, "method_not_allowed"},
		{"GET", "/flows/f/complete", ``, 405, "method_not_allowed"},
		{"GET", "/flows/f/bogus", ``, 404, "not_found"},
		{"PUT", "/flows/f", `{}`, 405, "method_not_allowed"},
		{"DELETE", "/flows", ``, 405, "method_not_allowed"},
		{"GET", "/flows/f/history?count=0", ``, 400, "invalid_argument"},
		{"GET", "/flows/f/history?rev=maybe", ``, 400, "invalid_argument"},
		{"GET", "/flows/a/b/c", ``, 404, "not_found"},
		{"POST", "/flows/batch", `{"op":"explode","items":[{"id":"x"}]}`, 400, "invalid_argument"},
		{"POST", "/flows/batch", `{"op":"create","items":[]}`, 400, "invalid_argument"},
		{"POST", "/flows/batch", `{"op":"create","items":[null]}`, 400, "invalid_argument"},
		{"POST", "/flows/batch", `{"op":"cancel","items":[{}]}`, 400, "invalid_argument"},
		{"POST", "/flows/batch", `{"op":"create","items":{"id":"x"}}`, 400, "invalid_argument"},
		{"PUT", "/flows/policies/t", `{"mode":"lifo"}`, 400, "invalid_argument"},
		{"PUT", "/flows/policies/t", `{"max_active_ms":-5}`, 400, "invalid_argument"},
		{"PUT", "/flows/schedules/s", `{"type":"t","every_ms":-1}`, 400, "invalid_argument"},
	}
	before := c.must(200, "GET", "/flows/f", nil)
	for _, tc := range cases {
		r := c.do(tc.method, tc.path, tc.body)
		require.Equal(t, tc.status, r.status, "%s %s %s: %s", tc.method, tc.path, tc.body, r.raw)
		require.Equal(t, tc.code, r.code(), "%s %s %s", tc.method, tc.path, tc.body)
		require.NotEmpty(t, r.body["error"].(obj)["message"])
	}
	require.Equal(t, 1, flows(t, st))
	require.Equal(t, before, c.must(200, "GET", "/flows/f", nil))
	require.Equal(t, "not_found", c.do("GET", "/flows/x", nil).code())
	require.Empty(t, c.must(200, "GET", "/flows/schedules", nil)["schedules"])
	require.EqualValues(t, 0, c.must(200, "GET", "/flows/policies/t", nil)["generation"])
}

// A closed store is 503 closed.
func TestFlowClosedStore(t *testing.T) {
	c, st := serve(t, flowhttp.Options{})
	require.NoError(t, st.Close())
	r := c.do("POST", "/flows", obj{"id": "x", "type": "t"})
	require.Equal(t, 503, r.status, r.raw)
	require.Equal(t, "closed", r.code())
	require.Equal(t, 503, c.do("GET", "/flows/x", nil).status)
}
