package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strings"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// TenantToken is what a tenant token grants (Options.TenantTokens).
type TenantToken = ts.TenantToken

// Status codes of the table and tenant routes beyond wire's.
const (
	// CodeTableExists: POST /tables named a table that exists (409).
	CodeTableExists = "table_exists"
	// CodeTableInUse: DELETE refused for the default table or one the
	// server serves, or their databases (409).
	CodeTableInUse = "table_in_use"
)

// access returns what r's token allows on the command routes, and the
// tenant of a tenant token ("" for a global one).
func (h *Handler) access(r *http.Request) (access, string) {
	if acc := h.tokens.check(r); acc != accessNone || len(h.tokens.tenants) == 0 {
		return acc, ""
	}
	tt, ok := h.tokens.tenant(r)
	switch {
	case !ok:
		return accessNone, ""
	case tt.ReadOnly:
		return accessRead, tt.Tenant
	}
	return accessWrite, tt.Tenant
}

// confine makes cl a command of tenant's ("" for a global token: nothing
// to do): of its namespace when it names none, and of the tenant. It
// returns why cl is refused when it names another namespace or tenant.
func confine(cl *wire.Call, tenant string) string {
	if tenant == "" {
		return ""
	}
	c := cl.Lend()
	switch {
	case c.Namespace != "" && c.Namespace != tenant:
		return fmt.Sprintf("a token of tenant %q cannot reach namespace %q", tenant, c.Namespace)
	case c.Tenant != "" && c.Tenant != tenant:
		return fmt.Sprintf("a token of tenant %q cannot act as tenant %q", tenant, c.Tenant)
	}
	c.Namespace, c.Tenant = tenant, tenant
	return ""
}

// tableRequest is POST /tables' body: the table's name and its options.
type tableRequest struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	ts.TableOptions
}

// tablePatch is PATCH /tables/{ns}/{name}'s body: the limits to change,
// and the read-only mode of Shards (every shard when absent).
type tablePatch struct {
	ts.TableLimits
	ReadOnly *bool `json:"read_only,omitempty"`
	Shards   []int `json:"shards,omitempty"`
}

// shardStats is a shard's statistics in the replies.
type shardStats struct {
	Shard           int     `json:"shard"`
	Keys            int     `json:"keys"`
	Collections     int     `json:"collections"`
	Spilled         int     `json:"spilled"`
	CollectionBytes int64   `json:"collection_bytes"`
	IndexBytes      int     `json:"index_bytes"`
	LiveBytes       int64   `json:"live_bytes"`
	LogBytes        int64   `json:"log_bytes"`
	SpaceAmp        float64 `json:"space_amp"`
	LogSegments     int     `json:"log_segments"`
	LogRecords      uint64  `json:"log_records"`
	LogFsyncs       uint64  `json:"log_fsyncs"`
	LogWritten      uint64  `json:"log_written"`
	WriteAmp        float64 `json:"write_amp"`
	StaleRejects    uint64  `json:"stale_rejects"`
	ReadOnly        bool    `json:"read_only"`
}

func toShardStats(s ts.ShardStats) shardStats {
	return shardStats{Shard: s.Shard, Keys: s.Keys, Collections: s.Collections, Spilled: s.Spilled,
		CollectionBytes: s.CollectionBytes, IndexBytes: s.IndexBytes, LiveBytes: s.LiveBytes, LogBytes: s.LogBytes,
		SpaceAmp: s.SpaceAmp, LogSegments: s.LogSegments, LogRecords: s.LogRecords, LogFsyncs: s.LogFsyncs,
		LogWritten: s.LogWritten, WriteAmp: s.WriteAmp, StaleRejects: s.StaleRejects, ReadOnly: s.ReadOnly}
}

// tenantLimit is a tenant's limit in /tenants' replies and PUT's body.
type tenantLimit struct {
	Tenant string `json:"tenant,omitempty"`
	// QPS is the limit a second: above 0 limits, 0 is the default (in a
	// PUT) or none (in a reply), -1 none.
	QPS *float64 `json:"qps"`
	// Own says the limit is the tenant's, not the server's default.
	Own bool `json:"own"`
}

// admin serves the table and tenant routes:
//
//	GET    /tables                     {"status", "tables": [TableInfo...]}
//	POST   /tables                     {"namespace", "name", TableOptions...}: 201 {"status", "table"}
//	GET    /tables/{ns}/{name}         {"status", "table", "shards": [stats...]}
//	PATCH  /tables/{ns}/{name}         {"read_qps", "write_qps", "shard_rate", "shard_burst", "read_only", "shards"}
//	DELETE /tables/{ns}/{name}
//	GET    /tenants                    {"status", "tenants": [{"tenant", "qps", "own"}...]} (their own limits)
//	GET    /tenants/{tenant}           {"status", "tenant", "qps", "own"}
//	PUT    /tenants/{tenant}           {"qps"}
//
// Reads take any global token, changes a read-write one; tenant tokens are
// refused (403).
func (h *Handler) admin(w http.ResponseWriter, r *http.Request) {
	route, rest := "/tables", strings.TrimPrefix(r.URL.Path, "/tables")
	if strings.HasPrefix(r.URL.Path, "/tenants") {
		route, rest = "/tenants", strings.TrimPrefix(r.URL.Path, "/tenants")
	}
	var parts []string
	if rest != "" && rest != "/" {
		parts = strings.Split(strings.TrimPrefix(rest, "/"), "/")
	}
	var methods []string
	switch {
	case route == "/tables" && len(parts) == 0:
		methods = []string{http.MethodGet, http.MethodPost}
	case route == "/tables" && len(parts) == 2:
		route += "/{ns}/{name}"
		methods = []string{http.MethodGet, http.MethodPatch, http.MethodDelete}
	case route == "/tenants" && len(parts) == 0:
		methods = []string{http.MethodGet}
	case route == "/tenants" && len(parts) == 1:
		route += "/{tenant}"
		methods = []string{http.MethodGet, http.MethodPut}
	default:
		h.sendStatus(w, "other", http.StatusNotFound, false, Status{Code: CodeNotFound, Message: "unknown server route"})
		return
	}
	if !h.method(w, r, route, methods...) {
		return
	}
	acc := h.tokens.check(r)
	if _, isTenant := h.tokens.tenant(r); isTenant {
		h.sendStatus(w, route, http.StatusForbidden, false, Status{Code: CodeForbidden, Message: "a tenant's token cannot reach the table and tenant routes"})
		return
	}
	if acc == accessNone {
		h.unauthorized(w, route, false, false)
		return
	}
	if r.Method != http.MethodGet && acc != accessWrite {
		h.sendStatus(w, route, http.StatusForbidden, false, Status{Code: CodeForbidden, Message: "a read-only token cannot change tables or tenants"})
		return
	}
	e := h.opts.Engine
	ok := Status{OK: true, Code: CodeOK}
	switch {
	case route == "/tables" && r.Method == http.MethodGet:
		list, err := e.ListTables()
		if err != nil {
			h.adminError(w, route, err)
			return
		}
		h.replyJSON(w, route, http.StatusOK, map[string]any{"status": ok, "tables": list})
	case route == "/tables":
		var req tableRequest
		if !h.decodeJSON(w, r, route, &req) || !h.tablesLocal(w, route) {
			return
		}
		if err := e.CreateTable(r.Context(), req.Namespace, req.Name, req.TableOptions); err != nil {
			h.adminError(w, route, err)
			return
		}
		h.sendTable(w, route, http.StatusCreated, req.Namespace, req.Name, false)
	case route == "/tables/{ns}/{name}" && r.Method == http.MethodGet:
		h.sendTable(w, route, http.StatusOK, parts[0], parts[1], true)
	case route == "/tables/{ns}/{name}" && r.Method == http.MethodPatch:
		var p tablePatch
		if !h.decodeJSON(w, r, route, &p) {
			return
		}
		if p.ReadOnly == nil && len(p.Shards) > 0 {
			h.sendStatus(w, route, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: "shards without read_only"})
			return
		}
		if err := e.SetTableLimits(r.Context(), parts[0], parts[1], p.TableLimits); err != nil {
			h.adminError(w, route, err)
			return
		}
		if p.ReadOnly != nil {
			shards := p.Shards
			if len(shards) == 0 {
				shards = []int{ts.AllShards}
			}
			for _, sh := range shards {
				if err := e.SetTableReadOnly(r.Context(), parts[0], parts[1], sh, *p.ReadOnly); err != nil {
					h.adminError(w, route, err)
					return
				}
			}
		}
		h.sendTable(w, route, http.StatusOK, parts[0], parts[1], false)
	case route == "/tables/{ns}/{name}":
		if !h.tablesLocal(w, route) {
			return
		}
		if err := e.DropTable(r.Context(), parts[0], parts[1]); err != nil {
			h.adminError(w, route, err)
			return
		}
		h.replyJSON(w, route, http.StatusOK, map[string]any{"status": ok})
	case route == "/tenants":
		own := e.TenantLimits()
		out := make([]tenantLimit, 0, len(own))
		for _, t := range slices.Sorted(maps.Keys(own)) {
			out = append(out, tenantLimit{Tenant: t, QPS: ptr(own[t]), Own: true})
		}
		h.replyJSON(w, route, http.StatusOK, map[string]any{"status": ok, "tenants": out})
	default: // /tenants/{tenant}
		tenant := parts[0]
		if err := ts.CheckName(tenant); err != nil {
			h.adminError(w, route, err)
			return
		}
		if r.Method == http.MethodPut {
			var l tenantLimit
			if !h.decodeJSON(w, r, route, &l) {
				return
			}
			if l.QPS == nil {
				h.sendStatus(w, route, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: "missing field `qps`"})
				return
			}
			if err := e.SetTenantQPS(r.Context(), tenant, *l.QPS); err != nil {
				h.adminError(w, route, err)
				return
			}
		}
		q, own := e.TenantQPS(tenant)
		h.replyJSON(w, route, http.StatusOK, map[string]any{"status": ok, "tenant": tenant, "qps": q, "own": own})
	}
}

func ptr[T any](v T) *T { return &v }

// replyJSON replies with v as JSON and status code.
func (h *Handler) replyJSON(w http.ResponseWriter, route string, code int, v any) {
	b, err := json.Marshal(v)
	if err != nil {
		h.sendStatus(w, route, http.StatusInternalServerError, false, Status{Code: CodeInternal, Message: err.Error()})
		return
	}
	h.send(w, route, code, false, b)
}

// tablesLocal refuses to make or drop a table on a cluster member, whose
// catalog is not replicated: the table would be this member's alone.
func (h *Handler) tablesLocal(w http.ResponseWriter, route string) bool {
	if h.opts.Cluster != nil {
		h.sendStatus(w, route, http.StatusForbidden, false, Status{Code: CodeForbidden, Message: "tables are made and dropped on a single node only: a cluster's catalog is not replicated"})
		return false
	}
	return true
}

// decodeJSON reads r's JSON body into v, refusing unknown fields (a
// misspelt limit must not pass as no change); on failure it has replied.
func (h *Handler) decodeJSON(w http.ResponseWriter, r *http.Request, route string, v any) bool {
	d := json.NewDecoder(http.MaxBytesReader(w, r.Body, 64<<10))
	d.DisallowUnknownFields()
	if err := d.Decode(v); err != nil {
		h.sendStatus(w, route, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: err.Error()})
		return false
	}
	return true
}

// sendTable replies with table ns/name, and its shards' statistics with
// stats.
func (h *Handler) sendTable(w http.ResponseWriter, route string, code int, ns, name string, stats bool) {
	ti, err := h.opts.Engine.DescribeTable(ns, name)
	if err != nil {
		h.adminError(w, route, err)
		return
	}
	out := map[string]any{"status": Status{OK: true, Code: CodeOK}, "table": ti}
	if stats {
		st, err := h.opts.Engine.TableStats(ns, name)
		if err != nil {
			h.adminError(w, route, err)
			return
		}
		shards := make([]shardStats, 0, len(st))
		for _, s := range st {
			shards = append(shards, toShardStats(s))
		}
		out["shards"] = shards
	}
	h.replyJSON(w, route, code, out)
}

// adminError replies with an engine error of the table and tenant
// routes: 404 for an unknown table, 409 for a name taken or a table in
// use, 400 for bad input, 503 for a closed engine, 500 otherwise.
func (h *Handler) adminError(w http.ResponseWriter, route string, err error) {
	st := wire.StatusOfError(err)
	code := http.StatusInternalServerError
	switch {
	case errors.Is(err, ts.ErrNoTable):
		code = http.StatusNotFound
	case errors.Is(err, ts.ErrTableExists):
		code, st.Code = http.StatusConflict, CodeTableExists
	case errors.Is(err, ts.ErrTableInUse):
		code, st.Code = http.StatusConflict, CodeTableInUse
	case errors.Is(err, ts.ErrInvalid):
		code = http.StatusBadRequest
	case errors.Is(err, ts.ErrClosed):
		code = http.StatusServiceUnavailable
	}
	if code == http.StatusInternalServerError {
		h.opts.Logger.Warn("table route failed", "route", route, "err", err)
	}
	h.sendStatus(w, route, code, false, st)
}
