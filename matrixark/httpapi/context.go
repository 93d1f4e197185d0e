package httpapi

import (
	"net/http"
	"strconv"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/pack"
)

// ingestBody is matrixark.Input on the wire: the kind by name, the scope
// by the ids of a query.
type ingestBody struct {
	Kind      string              `json:"kind"`
	SourceID  string              `json:"source_id"`
	Title     string              `json:"title"`
	Body      string              `json:"body"`
	Messages  []matrixark.Message `json:"messages"`
	UserID    string              `json:"user_id"`
	SessionID string              `json:"session_id"`
	AgentID   string              `json:"agent_id"`
	TimeMs    int64               `json:"time_ms"`
	Durable   bool                `json:"durable"`
	Batch     bool                `json:"batch"`
}

// POST /context/ingest: ingestBody → matrixark.IngestResult.
func (h *Handler) contextIngest(w http.ResponseWriter, r *http.Request, g TenantToken) {
	var b ingestBody
	if err := h.decode(w, r, &b); err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	in := matrixark.Input{SourceID: b.SourceID, Title: b.Title, Body: b.Body, Messages: b.Messages,
		User: b.UserID, Session: b.SessionID, Agent: b.AgentID, TimeMs: b.TimeMs, Durable: b.Durable, Batch: b.Batch}
	if b.Kind != "" {
		k, err := matrixark.ParseKind(b.Kind)
		if err != nil {
			h.fail(w, r, g, err, "")
			return
		}
		in.Kind = k
	}
	res, err := h.o.Engine.Ingest(r.Context(), g.Tenant, in)
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	writeJSON(w, http.StatusOK, res)
}

// POST /context/retrieve: matrixark.Query → {"blocks": [...]}.
func (h *Handler) contextRetrieve(w http.ResponseWriter, r *http.Request, g TenantToken) {
	var q matrixark.Query
	if err := h.decode(w, r, &q); err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	blocks, err := h.o.Engine.Retrieve(r.Context(), g.Tenant, q)
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	writeJSON(w, http.StatusOK, map[string][]pack.Block{"blocks": nonNil(blocks)})
}

// POST /context/pack and /context/inject: matrixark.PackRequest →
// matrixark.PackResult.
func (h *Handler) contextPack(w http.ResponseWriter, r *http.Request, g TenantToken) {
	var req matrixark.PackRequest
	if err := h.decode(w, r, &req); err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	res, err := h.o.Engine.Pack(r.Context(), g.Tenant, req)
	if err != nil {
		h.fail(w, r, g, err, "")
		return
	}
	res.Selected, res.Blocked = nonNil(res.Selected), nonNil(res.Blocked)
	writeJSON(w, http.StatusOK, res)
}

// GET /context/audit?audit_id=… → one audit (404 when absent);
// GET /context/audit?session_id=&start_ms=&end_ms=&limit= → {"audits": [...]}.
func (h *Handler) contextAudit(w http.ResponseWriter, r *http.Request, g TenantToken) {
	q := r.URL.Query()
	if id := q.Get("audit_id"); id != "" {
		a, err := h.o.Engine.Audit(r.Context(), g.Tenant, id)
		if err != nil {
			h.fail(w, r, g, err, "Audit not found")
			return
		}
		writeJSON(w, http.StatusOK, a)
		return
	}
	aq := matrixark.AuditQuery{Session: q.Get("session_id")}
	for _, p := range []struct {
		name string
		dst  *int64
	}{{"start_ms", &aq.StartMs}, {"end_ms", &aq.EndMs}} {
		if v := q.Get(p.name); v != "" {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				writeDetail(w, http.StatusBadRequest, p.name+" must be a non-negative integer")
				return
			}
			*p.dst = n
		}
	}
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > matrixark.MaxLimit {
			writeDetail(w, http.StatusBadRequest, "limit must be between 1 and "+strconv.Itoa(matrixark.MaxLimit))
			return
		}
		aq.Limit = n
	}
	audits, err := h.o.Engine.Audits(r.Context(), g.Tenant, aq)
	if err != nil {
		h.fail(w, r, g, err, "Audit not found")
		return
	}
	writeJSON(w, http.StatusOK, map[string][]pack.Audit{"audits": nonNil(audits)})
}

// nonNil makes an empty list [] on the wire rather than null.
func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}
