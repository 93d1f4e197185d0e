package httpapi

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixark/memory"
)

// mem0's messages, kept word for word: clients match on them.
const (
	msgNoIdentifierShort = "At least one identifier is required."
	msgNotFound          = "Memory not found"
	msgUpdated           = "Memory updated successfully!"
	msgDeleted           = "Memory deleted successfully"
	msgDeletedAll        = "All relevant memories deleted"
	msgReset             = "All memories reset"
	msgAdminOnly         = "Admin token required"
)

// ids are the scope ids of a request; nil when absent. An id given as ""
// is refused rather than read as absent.
type ids struct {
	UserID  *string `json:"user_id"`
	AgentID *string `json:"agent_id"`
	RunID   *string `json:"run_id"`
}

// scope checks the ids; none given (or only blank ones) is noID.
func (x ids) scope(noID string) (memory.Scope, error) {
	var s memory.Scope
	given := false
	for _, f := range []struct {
		name string
		v    *string
		dst  *string
	}{{"user_id", x.UserID, &s.UserID}, {"agent_id", x.AgentID, &s.AgentID}, {"run_id", x.RunID, &s.RunID}} {
		if f.v == nil {
			continue
		}
		if strings.TrimSpace(*f.v) != "" {
			given = true
		}
		*f.dst = *f.v
	}
	if !given {
		if noID == "" {
			return memory.Scope{}, nil
		}
		return memory.Scope{}, &errBody{http.StatusBadRequest, noID}
	}
	for _, f := range []struct {
		name string
		v    *string
	}{{"user_id", x.UserID}, {"agent_id", x.AgentID}, {"run_id", x.RunID}} {
		if f.v != nil && *f.v == "" {
			return memory.Scope{}, &errBody{http.StatusBadRequest, f.name + " must not be empty"}
		}
	}
	return s, nil
}

// queryIDs are the ids of a query string.
func queryIDs(r *http.Request) ids {
	q := r.URL.Query()
	get := func(k string) *string {
		if !q.Has(k) {
			return nil
		}
		v := q.Get(k)
		return &v
	}
	return ids{UserID: get("user_id"), AgentID: get("agent_id"), RunID: get("run_id")}
}

type addBody struct {
	ids
	Messages       json.RawMessage `json:"messages"`
	Metadata       map[string]any  `json:"metadata"`
	Infer          *bool           `json:"infer"`
	MemoryType     *string         `json:"memory_type"` // accepted, unused: no LLM
	Prompt         *string         `json:"prompt"`      // accepted, unused: no LLM
	ExpirationDate *string         `json:"expiration_date"`
	Timestamp      json.RawMessage `json:"timestamp"`
}

// POST /memories → {"results": [{id, memory, event, actor_id, role}]}.
func (h *Handler) addMemories(w http.ResponseWriter, r *http.Request, g TenantToken) {
	var b addBody
	err := h.decode(w, r, &b)
	var req memory.AddRequest
	if err == nil {
		req.Scope, err = b.scope(memory.NoIdentifierMessage)
	}
	if err == nil {
		req.Messages, err = parseMessages(b.Messages)
	}
	if err == nil {
		req.TimestampMs, err = parseTimestamp(b.Timestamp)
	}
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	req.Metadata, req.Infer = b.Metadata, b.Infer == nil || *b.Infer
	if b.ExpirationDate != nil {
		req.ExpirationDate = *b.ExpirationDate
	}
	res, err := h.o.Memories.Add(r.Context(), g.Tenant, req)
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	writeJSON(w, http.StatusOK, map[string][]memory.Result{"results": res})
}

// parseMessages reads mem0's messages: a list of {role, content, name?},
// one such object, or a string (one user message).
func parseMessages(raw json.RawMessage) ([]memory.Message, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return nil, &errBody{http.StatusBadRequest, "messages is required"}
	}
	var text string
	if json.Unmarshal(raw, &text) == nil {
		return []memory.Message{{Role: "user", Content: text}}, nil
	}
	type wire struct {
		Role    *string `json:"role"`
		Content *string `json:"content"`
		Name    string  `json:"name"`
	}
	var list []wire
	if raw[0] == '{' {
		list = make([]wire, 1)
		if err := json.Unmarshal(raw, &list[0]); err != nil {
			return nil, &errBody{http.StatusBadRequest, "Invalid messages: " + err.Error()}
		}
	} else if err := json.Unmarshal(raw, &list); err != nil {
		return nil, &errBody{http.StatusBadRequest, "Invalid messages: " + err.Error()}
	}
	out := make([]memory.Message, len(list))
	for i, m := range list {
		if m.Role == nil || m.Content == nil {
			return nil, &errBody{http.StatusBadRequest, fmt.Sprintf("messages[%d] needs a role and a content", i)}
		}
		out[i] = memory.Message{Role: *m.Role, Content: *m.Content, Name: m.Name}
	}
	return out, nil
}

// parseTimestamp reads mem0's timestamp, Unix seconds, or an ISO-8601
// time, as ms; 0 when absent.
func parseTimestamp(raw json.RawMessage) (int64, error) {
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		return 0, nil
	}
	var secs float64
	if json.Unmarshal(raw, &secs) == nil {
		if secs < 0 || secs > math.MaxInt64/1e3 {
			return 0, &errBody{http.StatusBadRequest, "timestamp out of range"}
		}
		return int64(secs * 1e3), nil
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		if t, err := time.Parse(time.RFC3339Nano, s); err == nil && t.UnixMilli() >= 0 {
			return t.UnixMilli(), nil
		}
	}
	return 0, &errBody{http.StatusBadRequest, "timestamp must be Unix seconds or an ISO-8601 time"}
}

// limitOf is top_k ?? limit, from a query string; 0 when neither.
func limitOf(r *http.Request) (int, error) {
	q := r.URL.Query()
	for _, k := range []string{"top_k", "limit"} {
		if v := q.Get(k); v != "" {
			n, err := strconv.Atoi(v)
			if err != nil || n < 1 {
				return 0, &errBody{http.StatusBadRequest, k + " must be a positive integer"}
			}
			return n, nil
		}
	}
	return 0, nil
}

// GET /memories?user_id&agent_id&run_id[&top_k|limit][&show_expired] →
// {"results": [item]}.
func (h *Handler) getAllMemories(w http.ResponseWriter, r *http.Request, g TenantToken) {
	sc, err := queryIDs(r).scope(msgNoIdentifierShort)
	var f memory.Filter
	if err == nil {
		f.Limit, err = limitOf(r)
	}
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	f.Scope, f.ShowExpired = sc, truthy(r.URL.Query().Get("show_expired"))
	items, err := h.o.Memories.GetAll(r.Context(), g.Tenant, f)
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	writeJSON(w, http.StatusOK, map[string][]memory.Item{"results": items})
}

func truthy(s string) bool {
	b, err := strconv.ParseBool(s)
	return err == nil && b
}

// GET /memories/{id} → item, or null (200) when there is none.
func (h *Handler) getMemory(w http.ResponseWriter, r *http.Request, g TenantToken) {
	it, err := h.o.Memories.Get(r.Context(), g.Tenant, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, g, err, msgNotFound)
		return
	}
	writeJSON(w, http.StatusOK, it)
}

type searchBody struct {
	ids
	Query       *string        `json:"query"`
	Filters     map[string]any `json:"filters"`
	TopK        *int           `json:"top_k"`
	Limit       *int           `json:"limit"`
	Threshold   *float64       `json:"threshold"`
	ShowExpired bool           `json:"show_expired"`
}

// POST /search → {"results": [item + score]}.
func (h *Handler) searchMemories(w http.ResponseWriter, r *http.Request, g TenantToken) {
	var b searchBody
	err := h.decode(w, r, &b)
	var req memory.SearchRequest
	if err == nil {
		// Ids may come in filters instead; Search requires one somewhere.
		req.Scope, err = b.scope("")
	}
	if err == nil && b.Query == nil {
		err = &errBody{http.StatusBadRequest, "query is required"}
	}
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	req.Query, req.Filters, req.ShowExpired = *b.Query, b.Filters, b.ShowExpired
	for _, n := range []*int{b.TopK, b.Limit} {
		if n != nil {
			if *n < 1 {
				writeDetail(w, http.StatusBadRequest, "top_k and limit must be positive")
				return
			}
			req.Limit = *n
			break
		}
	}
	if b.Threshold != nil {
		req.Threshold = *b.Threshold
	}
	items, err := h.o.Memories.Search(r.Context(), g.Tenant, req)
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	writeJSON(w, http.StatusOK, map[string][]memory.Item{"results": items})
}

type updateBody struct {
	Text     *string        `json:"text"`
	Data     *string        `json:"data"`
	Metadata map[string]any `json:"metadata"`
	// ExpirationDate: absent keeps, null clears, a string sets.
	ExpirationDate json.RawMessage `json:"expiration_date"`
}

// PUT /memories/{id} → {"message": "Memory updated successfully!"}.
func (h *Handler) updateMemory(w http.ResponseWriter, r *http.Request, g TenantToken) {
	var b updateBody
	if err := h.decode(w, r, &b); err != nil {
		h.fail(w, r, g, err, msgNotFound)
		return
	}
	u := memory.UpdateRequest{Text: b.Text, Metadata: b.Metadata}
	if u.Text == nil {
		u.Text = b.Data
	}
	if raw := bytes.TrimSpace(b.ExpirationDate); len(raw) > 0 {
		var s *string
		if err := json.Unmarshal(raw, &s); err != nil {
			writeDetail(w, http.StatusBadRequest, "expiration_date must be a string or null")
			return
		}
		if s == nil {
			s = new(string)
		}
		u.ExpirationDate = s
	}
	if err := h.o.Memories.Update(r.Context(), g.Tenant, r.PathValue("id"), u); err != nil {
		h.fail(w, r, g, err, msgNotFound)
		return
	}
	writeMessage(w, msgUpdated)
}

// GET /memories/{id}/history → [row], oldest first.
func (h *Handler) memoryHistory(w http.ResponseWriter, r *http.Request, g TenantToken) {
	rows, err := h.o.Memories.History(r.Context(), g.Tenant, r.PathValue("id"))
	if err != nil {
		h.fail(w, r, g, err, msgNotFound)
		return
	}
	writeJSON(w, http.StatusOK, nonNil(rows))
}

// DELETE /memories/{id} → {"message": "Memory deleted successfully"}; 404
// when there is none.
func (h *Handler) deleteMemory(w http.ResponseWriter, r *http.Request, g TenantToken) {
	if err := h.o.Memories.Delete(r.Context(), g.Tenant, r.PathValue("id")); err != nil {
		h.fail(w, r, g, err, msgNotFound)
		return
	}
	writeMessage(w, msgDeleted)
}

// DELETE /memories?user_id&agent_id&run_id → {"message": "All relevant
// memories deleted"}.
func (h *Handler) deleteAllMemories(w http.ResponseWriter, r *http.Request, g TenantToken) {
	sc, err := queryIDs(r).scope(msgNoIdentifierShort)
	if err == nil {
		_, err = h.o.Memories.DeleteAll(r.Context(), g.Tenant, sc)
	}
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	writeMessage(w, msgDeletedAll)
}

// POST /reset (admin) → {"message": "All memories reset"}: the caller's
// tenant only.
func (h *Handler) reset(w http.ResponseWriter, r *http.Request, g TenantToken) {
	if !g.Admin {
		writeDetail(w, http.StatusForbidden, msgAdminOnly)
		return
	}
	if err := h.o.Memories.Reset(r.Context(), g.Tenant); err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	writeMessage(w, msgReset)
}
