package httpapi_test

import (
	"bytes"
	"context"
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/httpapi"
	"github.com/temporalstore/temporalstore-go/matrixark/memory"
	"github.com/temporalstore/temporalstore-go/matrixark/memstore"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

var t0 = time.UnixMilli(1_764_460_800_000)

const (
	acmeKey   = "acme-key-0123456789"
	acmeAdmin = "acme-admin-0123456789"
	globexKey = "globex-key-0123456789"
)

var testTokens = map[string]httpapi.TenantToken{
	acmeKey:   {Tenant: "acme"},
	acmeAdmin: {Tenant: "acme", Admin: true},
	globexKey: {Tenant: "globex"},
}

// faultStore is a memstore whose writes fail on demand, to reach the
// handler's 500 path.
type faultStore struct {
	*memstore.Store
	failApply atomic.Bool
}

func (s *faultStore) Apply(ctx context.Context, m []matrixark.Mutation, o matrixark.WriteOpts) error {
	if s.failApply.Load() {
		return errors.New("disk on fire")
	}
	return s.Store.Apply(ctx, m, o)
}

type server struct {
	*httptest.Server
	store *faultStore
	mems  *memory.Memories
	logs  *logBuffer
}

func newServer(t *testing.T, edit func(*httpapi.Options)) *server {
	t.Helper()
	s := &faultStore{Store: memstore.New()}
	ms := int64(0)
	clock := func() time.Time { return t0.Add(time.Duration(atomic.AddInt64(&ms, 1)) * time.Millisecond) }
	e := matrixark.New(s, matrixark.Options{Counter: tokens.Words{}, Now: clock})
	mems := memory.New(e, s, memory.Options{Now: clock})
	logs := new(logBuffer)
	o := httpapi.Options{Engine: e, Memories: mems, Tokens: testTokens, MaxBodyBytes: 64 << 10,
		Logger: slog.New(slog.NewTextHandler(logs, nil))}
	if edit != nil {
		edit(&o)
	}
	h, err := httpapi.New(o)
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return &server{Server: srv, store: s, mems: mems, logs: logs}
}

// logBuffer is a log sink safe to write from handlers while a test reads.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// do sends a request with token (none when empty) and body (a string is
// sent as is, anything else as JSON), and returns the status and body.
func (s *server) do(t *testing.T, method, path, token string, body any) (int, []byte) {
	t.Helper()
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	default:
		data, err := json.Marshal(b)
		require.NoError(t, err)
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(t.Context(), method, s.URL+path, rd)
	require.NoError(t, err)
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := s.Client().Do(req)
	require.NoError(t, err)
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	require.Equal(t, "application/json", resp.Header.Get("Content-Type"))
	return resp.StatusCode, out
}

// call is do that requires status want and decodes the body into v.
func (s *server) call(t *testing.T, method, path, token string, body any, want int, v any) {
	t.Helper()
	code, out := s.do(t, method, path, token, body)
	require.Equal(t, want, code, "%s %s: %s", method, path, out)
	if v != nil {
		require.NoError(t, json.Unmarshal(out, v), string(out))
	}
}

func detail(t *testing.T, body []byte) string {
	t.Helper()
	var d map[string]any
	require.NoError(t, json.Unmarshal(body, &d), string(body))
	require.Len(t, d, 1, string(body))
	s, ok := d["detail"].(string)
	require.True(t, ok, string(body))
	return s
}

func TestNewOptions(t *testing.T) {
	s := memstore.New()
	e := matrixark.New(s, matrixark.Options{Counter: tokens.Words{}})
	m := memory.New(e, s, memory.Options{})
	for name, o := range map[string]httpapi.Options{
		"no engine":      {Memories: m},
		"no memories":    {Engine: e},
		"empty token":    {Engine: e, Memories: m, Tokens: map[string]httpapi.TenantToken{"": {Tenant: "a"}}},
		"empty tenant":   {Engine: e, Memories: m, Tokens: map[string]httpapi.TenantToken{"k": {}}},
		"colon tenant":   {Engine: e, Memories: m, Tokens: map[string]httpapi.TenantToken{"k": {Tenant: "a:b"}}},
		"bad default":    {Engine: e, Memories: m, DefaultTenant: "a b"},
		"negative limit": {Engine: e, Memories: m, MaxBodyBytes: -1},
	} {
		_, err := httpapi.New(o)
		require.ErrorIs(t, err, httpapi.ErrOptions, name)
	}
}

func TestAuth(t *testing.T) {
	srv := newServer(t, nil)
	path := "/memories?user_id=alice"
	for _, c := range []struct {
		name   string
		header map[string]string
		want   int
		detail string
	}{
		{"no credentials", nil, http.StatusUnauthorized, "Not authenticated"},
		{"unknown bearer", map[string]string{"Authorization": "Bearer nope"}, http.StatusUnauthorized, "Invalid API key"},
		{"a token's prefix", map[string]string{"Authorization": "Bearer " + acmeKey[:5]}, http.StatusUnauthorized, "Invalid API key"},
		{"wrong scheme", map[string]string{"Authorization": "Basic " + acmeKey}, http.StatusUnauthorized, "Not authenticated"},
		{"bearer", map[string]string{"Authorization": "Bearer " + acmeKey}, http.StatusOK, ""},
		{"bearer any case", map[string]string{"Authorization": "bearer " + acmeKey}, http.StatusOK, ""},
		{"x-api-key", map[string]string{"X-API-Key": globexKey}, http.StatusOK, ""},
		{"unknown x-api-key", map[string]string{"X-API-Key": "nope"}, http.StatusUnauthorized, "Invalid API key"},
	} {
		t.Run(c.name, func(t *testing.T) {
			req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
			require.NoError(t, err)
			for k, v := range c.header {
				req.Header.Set(k, v)
			}
			resp, err := srv.Client().Do(req)
			require.NoError(t, err)
			body, err := io.ReadAll(resp.Body)
			require.NoError(t, err)
			resp.Body.Close()
			require.Equal(t, c.want, resp.StatusCode, string(body))
			if c.detail != "" {
				require.Equal(t, c.detail, detail(t, body))
				require.Equal(t, "Bearer", resp.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestNoTokensServesDefaultTenant(t *testing.T) {
	srv := newServer(t, func(o *httpapi.Options) { o.Tokens = nil; o.DefaultTenant = "solo" })
	var added struct{ Results []memory.Result }
	srv.call(t, http.MethodPost, "/memories", "", map[string]any{"messages": "I like tea.", "user_id": "alice"}, http.StatusOK, &added)
	require.Len(t, added.Results, 1)
	it, err := srv.mems.Get(t.Context(), "solo", added.Results[0].ID)
	require.NoError(t, err)
	require.Equal(t, "I like tea.", it.Memory)
	srv.call(t, http.MethodPost, "/reset", "", nil, http.StatusOK, nil)
}

func TestMem0Routes(t *testing.T) {
	srv := newServer(t, nil)
	text := "Alice's office moved to Lisbon in March."

	var added struct{ Results []map[string]any }
	srv.call(t, http.MethodPost, "/memories", acmeKey, map[string]any{
		"messages": []map[string]any{
			{"role": "system", "content": "You are a helpful assistant."},
			{"role": "user", "content": text, "name": "alice-laptop"},
			{"role": "assistant", "content": "Noted: Lisbon."},
		},
		"user_id": " alice ", "run_id": "onboarding", "metadata": map[string]any{"source": "chat", "user_id": "mallory", "run_id": "x"},
		"unknown_field": true, "memory_type": nil, "prompt": "ignored",
	}, http.StatusOK, &added)
	require.Len(t, added.Results, 2, "the system message is skipped")
	first := added.Results[0]
	require.Equal(t, []string{"actor_id", "event", "id", "memory", "role"}, slices.Sorted(maps.Keys(first)))
	require.Equal(t, "ADD", first["event"])
	require.Equal(t, text, first["memory"])
	require.Equal(t, "alice-laptop", first["actor_id"])
	require.Equal(t, "user", first["role"])
	require.Nil(t, added.Results[1]["actor_id"])
	id := first["id"].(string)

	// The item: mem0's keys, md5, metadata without id keys, trimmed ids.
	var item map[string]any
	srv.call(t, http.MethodGet, "/memories/"+id, acmeKey, nil, http.StatusOK, &item)
	require.Equal(t, []string{"actor_id", "created_at", "hash", "id", "memory", "metadata", "role", "run_id", "updated_at", "user_id"},
		slices.Sorted(maps.Keys(item)))
	sum := md5.Sum([]byte(text))
	require.Equal(t, hex.EncodeToString(sum[:]), item["hash"])
	require.Equal(t, map[string]any{"source": "chat"}, item["metadata"])
	require.Equal(t, "alice", item["user_id"])
	require.Equal(t, "onboarding", item["run_id"])
	_, err := time.Parse(time.RFC3339Nano, item["created_at"].(string))
	require.NoError(t, err)

	var all struct{ Results []map[string]any }
	srv.call(t, http.MethodGet, "/memories?user_id=alice", acmeKey, nil, http.StatusOK, &all)
	require.Len(t, all.Results, 2)
	srv.call(t, http.MethodGet, "/memories?user_id=alice&top_k=1", acmeKey, nil, http.StatusOK, &all)
	require.Len(t, all.Results, 1)
	srv.call(t, http.MethodGet, "/memories?run_id=onboarding&limit=5", acmeKey, nil, http.StatusOK, &all)
	require.Len(t, all.Results, 2)

	var found struct{ Results []map[string]any }
	srv.call(t, http.MethodPost, "/search", acmeKey, map[string]any{"query": "office in Lisbon", "user_id": "alice", "top_k": 5},
		http.StatusOK, &found)
	require.NotEmpty(t, found.Results)
	require.Equal(t, id, found.Results[0]["id"])
	score, ok := found.Results[0]["score"].(float64)
	require.True(t, ok, "search adds a score")
	require.Greater(t, score, 0.0)
	require.LessOrEqual(t, score, 1.0)
	srv.call(t, http.MethodPost, "/search", acmeKey, map[string]any{"query": "office in Lisbon", "filters": map[string]any{"user_id": "alice", "source": "chat"}, "limit": 1},
		http.StatusOK, &found)
	require.Len(t, found.Results, 1)
	srv.call(t, http.MethodPost, "/search", acmeKey, map[string]any{"query": "office in Lisbon", "user_id": "alice", "threshold": 0.99},
		http.StatusOK, &found)
	require.Empty(t, found.Results)

	var msg map[string]string
	srv.call(t, http.MethodPut, "/memories/"+id, acmeKey, map[string]any{"data": "Alice's office is in Porto now."}, http.StatusOK, &msg)
	require.Equal(t, map[string]string{"message": "Memory updated successfully!"}, msg)
	srv.call(t, http.MethodPut, "/memories/"+id, acmeKey, map[string]any{"text": "Alice's office is in Faro now.", "metadata": map[string]any{"v": 3}},
		http.StatusOK, &msg)
	var updated map[string]any
	srv.call(t, http.MethodGet, "/memories/"+id, acmeKey, nil, http.StatusOK, &updated)
	require.Equal(t, "Alice's office is in Faro now.", updated["memory"])
	require.Equal(t, item["created_at"], updated["created_at"])
	require.Equal(t, map[string]any{"v": 3.0}, updated["metadata"])

	srv.call(t, http.MethodDelete, "/memories/"+id, acmeKey, nil, http.StatusOK, &msg)
	require.Equal(t, map[string]string{"message": "Memory deleted successfully"}, msg)
	code, body := srv.do(t, http.MethodGet, "/memories/"+id, acmeKey, nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "null\n", string(body))
	srv.call(t, http.MethodPost, "/search", acmeKey, map[string]any{"query": "office Faro", "user_id": "alice"}, http.StatusOK, &found)
	for _, r := range found.Results {
		require.NotEqual(t, id, r["id"], "a deleted memory is not searchable")
	}

	var rows []map[string]any
	srv.call(t, http.MethodGet, "/memories/"+id+"/history", acmeKey, nil, http.StatusOK, &rows)
	require.Len(t, rows, 4)
	var events []string
	for _, r := range rows {
		require.Equal(t, []string{"actor_id", "created_at", "event", "id", "is_deleted", "memory_id", "new_memory", "old_memory", "role", "updated_at"},
			slices.Sorted(maps.Keys(r)))
		require.Equal(t, id, r["memory_id"])
		events = append(events, r["event"].(string))
	}
	require.Equal(t, []string{"ADD", "UPDATE", "UPDATE", "DELETE"}, events, "oldest first")
	require.Nil(t, rows[0]["old_memory"])
	require.Equal(t, text, rows[0]["new_memory"])
	require.Equal(t, text, rows[1]["old_memory"])
	require.Equal(t, "Alice's office is in Porto now.", rows[1]["new_memory"])
	require.Equal(t, "Alice's office is in Faro now.", rows[3]["old_memory"])
	require.Nil(t, rows[3]["new_memory"])
	require.Equal(t, true, rows[3]["is_deleted"])
	srv.call(t, http.MethodGet, "/memories/00000000-0000-4000-8000-000000000000/history", acmeKey, nil, http.StatusOK, &rows)
	require.Empty(t, rows)
	require.NotNil(t, rows, "an empty history is [], not null")

	srv.call(t, http.MethodDelete, "/memories?user_id=alice", acmeKey, nil, http.StatusOK, &msg)
	require.Equal(t, map[string]string{"message": "All relevant memories deleted"}, msg)
	srv.call(t, http.MethodGet, "/memories?user_id=alice", acmeKey, nil, http.StatusOK, &all)
	require.Empty(t, all.Results)

	srv.call(t, http.MethodPost, "/memories", acmeKey, map[string]any{"messages": map[string]any{"role": "user", "content": "one object"}, "agent_id": "a1"}, http.StatusOK, nil)
	srv.call(t, http.MethodPost, "/reset", acmeAdmin, nil, http.StatusOK, &msg)
	require.Equal(t, map[string]string{"message": "All memories reset"}, msg)
	srv.call(t, http.MethodGet, "/memories?agent_id=a1", acmeKey, nil, http.StatusOK, &all)
	require.Empty(t, all.Results)
}

func TestAddInferAndTimestamp(t *testing.T) {
	srv := newServer(t, nil)
	var added struct{ Results []memory.Result }
	body := map[string]any{"messages": []map[string]any{{"role": "user", "content": "I like tea."}, {"role": "user", "content": "I like tea."}},
		"user_id": "alice", "timestamp": 1_700_000_000}
	srv.call(t, http.MethodPost, "/memories", acmeKey, body, http.StatusOK, &added)
	require.Len(t, added.Results, 1, "infer defaults to true: the batch duplicate is dropped")
	srv.call(t, http.MethodPost, "/memories", acmeKey, body, http.StatusOK, &added)
	require.Empty(t, added.Results, "and so is what the scope remembers")
	body["infer"] = false
	srv.call(t, http.MethodPost, "/memories", acmeKey, body, http.StatusOK, &added)
	require.Len(t, added.Results, 2, "infer=false stores each message verbatim")

	var item memory.Item
	srv.call(t, http.MethodGet, "/memories/"+added.Results[0].ID, acmeKey, nil, http.StatusOK, &item)
	created, err := time.Parse(time.RFC3339Nano, item.CreatedAt)
	require.NoError(t, err)
	require.Equal(t, int64(1_700_000_000), created.Unix(), "timestamp sets created_at")
}

func TestMem0Errors(t *testing.T) {
	srv := newServer(t, nil)
	var added struct{ Results []memory.Result }
	srv.call(t, http.MethodPost, "/memories", acmeKey, map[string]any{"messages": "keep me", "user_id": "alice"}, http.StatusOK, &added)
	id := added.Results[0].ID
	missing := "00000000-0000-4000-8000-000000000000"
	big := map[string]any{"messages": strings.Repeat("x", 70<<10), "user_id": "alice"}

	for _, c := range []struct {
		name         string
		method, path string
		token        string
		body         any
		want         int
		detail       string // "" checks only the shape
	}{
		{"add without ids", "POST", "/memories", acmeKey, map[string]any{"messages": "x"}, 400, "At least one identifier (user_id, agent_id, run_id) is required."},
		{"add with only blank ids", "POST", "/memories", acmeKey, map[string]any{"messages": "x", "user_id": "", "agent_id": " "}, 400, "At least one identifier (user_id, agent_id, run_id) is required."},
		{"add with an empty id", "POST", "/memories", acmeKey, map[string]any{"messages": "x", "user_id": "alice", "run_id": ""}, 400, "run_id must not be empty"},
		{"add with a blank id", "POST", "/memories", acmeKey, map[string]any{"messages": "x", "user_id": "alice", "run_id": "  "}, 400, "run_id must not be empty"},
		{"add with a spaced id", "POST", "/memories", acmeKey, map[string]any{"messages": "x", "user_id": "al ice"}, 400, "user_id must not contain whitespace"},
		{"add without messages", "POST", "/memories", acmeKey, map[string]any{"user_id": "alice"}, 400, "messages is required"},
		{"add with a roleless message", "POST", "/memories", acmeKey, map[string]any{"user_id": "alice", "messages": []any{map[string]any{"content": "x"}}}, 400, "messages[0] needs a role and a content"},
		{"add with bad messages", "POST", "/memories", acmeKey, map[string]any{"user_id": "alice", "messages": 7}, 400, ""},
		{"add with a bad expiry", "POST", "/memories", acmeKey, map[string]any{"user_id": "alice", "messages": "x", "expiration_date": "soon"}, 400, ""},
		{"add with a bad timestamp", "POST", "/memories", acmeKey, map[string]any{"user_id": "alice", "messages": "x", "timestamp": "noon"}, 400, "timestamp must be Unix seconds or an ISO-8601 time"},
		{"bad JSON", "POST", "/memories", acmeKey, `{"messages": [`, 400, ""},
		{"two JSON values", "POST", "/memories", acmeKey, `{"messages":"x","user_id":"a"} {}`, 400, ""},
		{"empty body", "POST", "/memories", acmeKey, "", 400, "Request body is required"},
		{"body too large", "POST", "/memories", acmeKey, big, 413, "Request body too large"},
		{"get all without ids", "GET", "/memories", acmeKey, nil, 400, "At least one identifier is required."},
		{"get all with a bad top_k", "GET", "/memories?user_id=alice&top_k=x", acmeKey, nil, 400, "top_k must be a positive integer"},
		{"get all over the limit", "GET", "/memories?user_id=alice&limit=1001", acmeKey, nil, 400, "limit must be between 1 and 1000"},
		{"delete all without ids", "DELETE", "/memories", acmeKey, nil, 400, "At least one identifier is required."},
		{"delete all with an empty id", "DELETE", "/memories?user_id=", acmeKey, nil, 400, "At least one identifier is required."},
		{"search without ids", "POST", "/search", acmeKey, map[string]any{"query": "x"}, 400, "At least one identifier (user_id, agent_id, run_id) is required."},
		{"search without a query", "POST", "/search", acmeKey, map[string]any{"user_id": "alice"}, 400, "query is required"},
		{"search with a bad top_k", "POST", "/search", acmeKey, map[string]any{"query": "x", "user_id": "alice", "top_k": 0}, 400, "top_k and limit must be positive"},
		{"search with a bad filter", "POST", "/search", acmeKey, map[string]any{"query": "x", "filters": map[string]any{"user_id": 3}}, 400, "filters.user_id must be a string"},
		{"update missing", "PUT", "/memories/" + missing, acmeKey, map[string]any{"text": "y"}, 404, "Memory not found"},
		{"update malformed id", "PUT", "/memories/nope", acmeKey, map[string]any{"text": "y"}, 404, "Memory not found"},
		{"update nothing", "PUT", "/memories/" + id, acmeKey, map[string]any{}, 400, "nothing to update: give text, metadata or expiration_date"},
		{"update to blank", "PUT", "/memories/" + id, acmeKey, map[string]any{"text": " "}, 400, "text must not be empty"},
		{"delete missing", "DELETE", "/memories/" + missing, acmeKey, nil, 404, "Memory not found"},
		{"reset without admin", "POST", "/reset", acmeKey, nil, 403, "Admin token required"},
		{"method not allowed", "PATCH", "/memories", acmeKey, nil, 405, "Method Not Allowed"},
		{"method not allowed on an item", "POST", "/memories/" + id, acmeKey, nil, 405, "Method Not Allowed"},
		{"unknown route", "GET", "/v1/memories", acmeKey, nil, 404, "Not Found"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := srv.do(t, c.method, c.path, c.token, c.body)
			require.Equal(t, c.want, code, string(body))
			d := detail(t, body)
			if c.detail != "" {
				require.Equal(t, c.detail, d)
			}
		})
	}
	var item memory.Item
	srv.call(t, http.MethodGet, "/memories/"+id, acmeKey, nil, http.StatusOK, &item)
	require.Equal(t, "keep me", item.Memory, "no failed request changed it")

	code, _ := srv.do(t, http.MethodPatch, "/memories/"+id, acmeKey, nil)
	require.Equal(t, http.StatusMethodNotAllowed, code)
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPatch, srv.URL+"/memories/"+id, nil)
	require.NoError(t, err)
	req.Header.Set("X-API-Key", acmeKey)
	resp, err := srv.Client().Do(req)
	require.NoError(t, err)
	resp.Body.Close()
	require.Equal(t, "DELETE, GET, PUT", resp.Header.Get("Allow"))
}

func TestInternalErrorIsGeneric(t *testing.T) {
	srv := newServer(t, nil)
	srv.store.failApply.Store(true)
	code, body := srv.do(t, http.MethodPost, "/memories", acmeKey, map[string]any{"messages": "x", "user_id": "alice"})
	require.Equal(t, http.StatusInternalServerError, code)
	require.Equal(t, "Internal server error", detail(t, body))
	require.Contains(t, srv.logs.String(), "disk on fire", "the cause is logged")
	require.NotContains(t, string(body), "disk on fire", "and not sent")
}

func TestTenantIsolation(t *testing.T) {
	srv := newServer(t, nil)
	var added struct{ Results []memory.Result }
	srv.call(t, http.MethodPost, "/memories", acmeKey, map[string]any{"messages": "The vault code is 4711.", "user_id": "alice"}, http.StatusOK, &added)
	id := added.Results[0].ID

	code, body := srv.do(t, http.MethodGet, "/memories/"+id, globexKey, nil)
	require.Equal(t, http.StatusOK, code)
	require.Equal(t, "null\n", string(body))
	var found struct{ Results []memory.Item }
	srv.call(t, http.MethodPost, "/search", globexKey, map[string]any{"query": "vault code", "user_id": "alice"}, http.StatusOK, &found)
	require.Empty(t, found.Results)
	var all struct{ Results []memory.Item }
	srv.call(t, http.MethodGet, "/memories?user_id=alice", globexKey, nil, http.StatusOK, &all)
	require.Empty(t, all.Results)
	srv.call(t, http.MethodPut, "/memories/"+id, globexKey, map[string]any{"text": "stolen"}, http.StatusNotFound, nil)
	srv.call(t, http.MethodDelete, "/memories/"+id, globexKey, nil, http.StatusNotFound, nil)
	srv.call(t, http.MethodDelete, "/memories?user_id=alice", globexKey, nil, http.StatusOK, nil)
	var rows []memory.HistoryRow
	srv.call(t, http.MethodGet, "/memories/"+id+"/history", globexKey, nil, http.StatusOK, &rows)
	require.Empty(t, rows)

	var item memory.Item
	srv.call(t, http.MethodGet, "/memories/"+id, acmeKey, nil, http.StatusOK, &item)
	require.Equal(t, "The vault code is 4711.", item.Memory, "acme's memory is untouched")
	srv.call(t, http.MethodPost, "/search", acmeKey, map[string]any{"query": "vault", "user_id": "alice"}, http.StatusOK, &found)
	require.Len(t, found.Results, 1)
}

func TestContextRoutes(t *testing.T) {
	srv := newServer(t, nil)
	var ing matrixark.IngestResult
	srv.call(t, http.MethodPost, "/context/ingest", acmeKey, map[string]any{
		"kind": "doc", "source_id": "runbook-7", "title": "Checkout outage", "user_id": "alice", "durable": true,
		"body": "Customer checkout failed. Payment risk score spiked after the fraud rule change. The team rolled back at 14:05.",
	}, http.StatusOK, &ing)
	require.NotZero(t, ing.Node)
	require.Positive(t, ing.Events)
	var chat matrixark.IngestResult
	srv.call(t, http.MethodPost, "/context/ingest", acmeKey, map[string]any{"session_id": "s1", "user_id": "bob",
		"messages": []map[string]any{{"role": "user", "content": "The lunch menu has soup."}}}, http.StatusOK, &chat)
	require.NotEqual(t, ing.Node, chat.Node)
	srv.call(t, http.MethodPost, "/context/ingest", acmeKey, map[string]any{"source_id": "runbook-7", "title": "Checkout outage", "user_id": "alice",
		"body": "Customer checkout failed. Payment risk score spiked after the fraud rule change. The team rolled back at 14:05."},
		http.StatusOK, &ing)
	require.True(t, ing.Duplicate)

	var ret struct {
		Blocks []map[string]any `json:"blocks"`
	}
	srv.call(t, http.MethodPost, "/context/retrieve", acmeKey, map[string]any{"query": "checkout payment failure", "user_id": "alice"}, http.StatusOK, &ret)
	require.NotEmpty(t, ret.Blocks)
	require.Equal(t, float64(ing.Node), ret.Blocks[0]["node_hash"])
	srv.call(t, http.MethodPost, "/context/retrieve", globexKey, map[string]any{"query": "checkout payment failure"}, http.StatusOK, &ret)
	require.NotNil(t, ret.Blocks)
	require.Empty(t, ret.Blocks, "globex sees none of acme's context")

	var packed map[string]any
	srv.call(t, http.MethodPost, "/context/pack", acmeKey, map[string]any{"retrieve": map[string]any{"query": "checkout payment failure"},
		"prompt": "Why did checkout fail?", "session_id": "chat-9", "query_id": "q1", "max_prompt_tokens": 200}, http.StatusOK, &packed)
	require.Equal(t, []string{"audit", "blocked_blocks", "injected_prompt", "selected_blocks"}, slices.Sorted(maps.Keys(packed)))
	require.Contains(t, packed["injected_prompt"], "Why did checkout fail?")
	require.Contains(t, packed["injected_prompt"], "<context>")
	require.NotEmpty(t, packed["selected_blocks"])
	require.NotNil(t, packed["blocked_blocks"])
	audit := packed["audit"].(map[string]any)
	auditID := audit["audit_id"].(string)
	require.Equal(t, "q1", audit["query_id"])

	var injected map[string]any
	srv.call(t, http.MethodPost, "/context/inject", acmeKey, map[string]any{"retrieve": map[string]any{"query": "checkout"},
		"prompt": "Again?", "session_id": "chat-9", "max_prompt_tokens": 3}, http.StatusOK, &injected)
	require.Empty(t, injected["selected_blocks"], "the prompt alone fills a 3-token budget")
	require.NotEmpty(t, injected["blocked_blocks"])

	var audits struct {
		Audits []map[string]any `json:"audits"`
	}
	srv.call(t, http.MethodGet, "/context/audit?session_id=chat-9", acmeKey, nil, http.StatusOK, &audits)
	require.Len(t, audits.Audits, 2)
	require.Equal(t, auditID, audits.Audits[0]["audit_id"], "oldest first")
	srv.call(t, http.MethodGet, "/context/audit?session_id=chat-9&limit=1", acmeKey, nil, http.StatusOK, &audits)
	require.Len(t, audits.Audits, 1)
	reqMs := int64(audit["request_time_ms"].(float64))
	srv.call(t, http.MethodGet, "/context/audit?session_id=chat-9&start_ms="+itoa(reqMs+1), acmeKey, nil, http.StatusOK, &audits)
	require.Len(t, audits.Audits, 1, "the window leaves the first out")
	srv.call(t, http.MethodGet, "/context/audit?session_id=chat-9&end_ms="+itoa(reqMs), acmeKey, nil, http.StatusOK, &audits)
	require.Len(t, audits.Audits, 1)
	srv.call(t, http.MethodGet, "/context/audit?session_id=chat-9", globexKey, nil, http.StatusOK, &audits)
	require.NotNil(t, audits.Audits)
	require.Empty(t, audits.Audits)

	var one map[string]any
	srv.call(t, http.MethodGet, "/context/audit?audit_id="+auditID, acmeKey, nil, http.StatusOK, &one)
	require.Equal(t, audit, one)

	for _, c := range []struct {
		name         string
		method, path string
		token        string
		body         any
		want         int
		detail       string
	}{
		{"audit of another tenant", "GET", "/context/audit?audit_id=" + auditID, globexKey, nil, 404, "Audit not found"},
		{"malformed audit id", "GET", "/context/audit?audit_id=zz", acmeKey, nil, 404, "Audit not found"},
		{"bad start", "GET", "/context/audit?session_id=s&start_ms=x", acmeKey, nil, 400, "start_ms must be a non-negative integer"},
		{"bad limit", "GET", "/context/audit?session_id=s&limit=0", acmeKey, nil, 400, "limit must be between 1 and 1000"},
		{"bad kind", "POST", "/context/ingest", acmeKey, map[string]any{"kind": "poem", "source_id": "p", "body": "x"}, 400, ""},
		{"nothing to ingest", "POST", "/context/ingest", acmeKey, map[string]any{"source_id": "p"}, 400, "nothing to ingest: no body and no messages"},
		{"bad retrieve", "POST", "/context/retrieve", acmeKey, map[string]any{"query": "x", "user_id": "a b"}, 400, ""},
		{"bad pack JSON", "POST", "/context/pack", acmeKey, `{"retrieve": 3}`, 400, ""},
		{"pack by GET", "GET", "/context/pack", acmeKey, nil, 405, "Method Not Allowed"},
		{"audit by POST", "POST", "/context/audit", acmeKey, "{}", 405, "Method Not Allowed"},
		{"no token", "POST", "/context/retrieve", "", "{}", 401, "Not authenticated"},
	} {
		t.Run(c.name, func(t *testing.T) {
			code, body := srv.do(t, c.method, c.path, c.token, c.body)
			require.Equal(t, c.want, code, string(body))
			d := detail(t, body)
			if c.detail != "" {
				require.Equal(t, c.detail, d)
			}
		})
	}
}

// Memories are context: an added memory is packed into a prompt.
func TestMemoriesArePackable(t *testing.T) {
	srv := newServer(t, nil)
	var added struct{ Results []memory.Result }
	srv.call(t, http.MethodPost, "/memories", acmeKey, map[string]any{"messages": "Alice is allergic to peanuts.", "user_id": "alice"}, http.StatusOK, &added)
	var packed matrixark.PackResult
	srv.call(t, http.MethodPost, "/context/pack", acmeKey, map[string]any{"retrieve": map[string]any{"query": "peanuts allergy", "user_id": "alice"},
		"prompt": "Plan dinner.", "max_prompt_tokens": 200}, http.StatusOK, &packed)
	var refs []string
	for _, s := range packed.Selected {
		refs = append(refs, s.SourceRef)
	}
	require.Contains(t, refs, "mem:"+added.Results[0].ID)
	require.Contains(t, packed.InjectedPrompt, "Alice is allergic to peanuts.")
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

// Each tenant has its own budget; a request past it is refused with 429
// and Retry-After, and spends nothing.
func TestRateLimitPerTenant(t *testing.T) {
	srv := newServer(t, func(o *httpapi.Options) { o.RequestsPerMinute = 3 })
	path := "/memories?user_id=alice"
	for range 3 {
		srv.call(t, http.MethodGet, path, acmeKey, nil, http.StatusOK, nil)
	}
	for range 2 {
		req, err := http.NewRequestWithContext(t.Context(), http.MethodGet, srv.URL+path, nil)
		require.NoError(t, err)
		req.Header.Set("Authorization", "Bearer "+acmeKey)
		resp, err := srv.Client().Do(req)
		require.NoError(t, err)
		body, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		resp.Body.Close()
		require.Equal(t, http.StatusTooManyRequests, resp.StatusCode)
		require.Equal(t, "Rate limit exceeded: 3 requests per minute", detail(t, body))
		wait, err := strconv.Atoi(resp.Header.Get("Retry-After"))
		require.NoError(t, err)
		require.True(t, wait >= 1 && wait <= 20, "Retry-After %d", wait)
	}
	srv.call(t, http.MethodGet, path, globexKey, nil, http.StatusOK, nil)

	unlimited := newServer(t, func(o *httpapi.Options) { o.RequestsPerMinute = -1 })
	for range 50 {
		unlimited.call(t, http.MethodGet, path, acmeKey, nil, http.StatusOK, nil)
	}
}
