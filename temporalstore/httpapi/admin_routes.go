package httpapi

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// The original's operator routes, on what the engine has:
//
//	POST /dump                              a checkpoint of every shard (Engine.Checkpoint), a job
//	POST /compact, /gc, /storage_manager/cycle, /server/storage/manager/cycle
//	                                        a maintenance round (Engine.Maintain), a job
//	GET  /get_config/{shard}, /get_info/{shard}, /get_stats/{shard}
//	                                        a shard of the table named by ?namespace=&table_name=
//	                                        (the default table): its table's limits and options,
//	                                        its routing and mode, its statistics
//	GET  /readiness                         /ready's probe, shard by shard
//	GET  /server/info, /server/runtime_stats every shard's statistics; the jobs' and maintenance's totals
//
// and the routes of concepts it does not have, answered 501 "unsupported"
// with what replaces them (unsupportedRoutes). The reports take any
// global token, the jobs a read-write one; /readiness none, as /ready.

// maintenanceRoutes run a job of the original's kind.
var maintenanceRoutes = map[string]string{
	"/dump":                         "Dump",
	"/compact":                      "Compact",
	"/gc":                           "Gc",
	"/storage_manager/cycle":        "StorageManager",
	"/server/storage/manager/cycle": "StorageManager",
}

// Why the original's routes the engine has no concept for are not served,
// and what serves their purpose.
const (
	shardLifecycle = "shards open with their table when the server starts, and are never loaded, reloaded or unloaded by hand: make and drop tables with POST /tables and DELETE /tables/{ns}/{name}, and set shards read-only with PATCH /tables/{ns}/{name}"
	storageStreams = "the original reads a shard's storage files by offset to copy it to a replica; here replicas catch up in cluster mode, and copies are taken with POST /backup. Redis streams are read over RESP (XRANGE, XREVRANGE, XREAD)"
)

var unsupportedRoutes = map[string]string{
	"/load":              shardLifecycle,
	"/reload":            shardLifecycle,
	"/unload":            shardLifecycle,
	"/async_load":        shardLifecycle,
	"/async_reload":      shardLifecycle,
	"/async_unload":      shardLifecycle,
	"/set_config":        "a table's limits change with PATCH /tables/{ns}/{name} {read_qps, write_qps, shard_rate, shard_burst}, a tenant's with PUT /tenants/{tenant} {qps}; durability (async) and feature_max_size are set when a table is made (POST /tables), memory when the server starts. GET /get_config/{shard} shows them",
	"/update_membership": "a shard's members are the cluster's: members join and leave through the cluster's admin routes (/cluster/members) or CLUSTER ADDMEMBER and CLUSTER FORGET over RESP, and a single node has none",
	"/heartbeat":         "there is no metaserver to report to: a node's health is GET /ready (/readiness shard by shard) and /metrics, and cluster members watch each other (/cluster/liveness)",
	"/read_stream":       storageStreams,
	"/scan_stream":       storageStreams,
}

// serverReports is why the original's other /server/ routes are not
// served.
const serverReports = "they report on storage internals this engine does not have (slots, dumps, lifecycle tokens, replica replay): GET /server/info, GET /server/runtime_stats, GET /tables/{ns}/{name} and /metrics report on it"

// shardRoutes report on one shard.
var shardRoutes = []string{"/get_config/", "/get_info/", "/get_stats/"}

// operator serves the operator routes (see above); false for a path that
// is none of them.
func (h *Handler) operator(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	if kind, ok := maintenanceRoutes[p]; ok {
		if h.method(w, r, p, http.MethodPost) && h.allow(w, r, p, true) {
			h.maintenance(w, r, p, kind)
		}
		return true
	}
	if instead, ok := unsupportedRoutes[p]; ok {
		h.unsupported(w, r, p, instead)
		return true
	}
	for _, prefix := range shardRoutes {
		if strings.HasPrefix(p, prefix) {
			route := prefix + "{shard}"
			if h.method(w, r, route, http.MethodGet) && h.allow(w, r, route, false) {
				h.shardReport(w, r, route, strings.TrimPrefix(p, prefix))
			}
			return true
		}
	}
	switch {
	case p == "/jobs" || strings.HasPrefix(p, "/jobs/"):
		h.jobRoute(w, r)
	case p == "/readiness":
		if h.method(w, r, p, http.MethodGet) {
			h.readiness(w, r)
		}
	case p == "/server/info" || p == "/server/runtime_stats":
		if h.method(w, r, p, http.MethodGet) && h.allow(w, r, p, false) {
			h.serverReport(w, r, p)
		}
	case strings.HasPrefix(p, "/server/"):
		h.unsupported(w, r, "/server/*", serverReports)
	default:
		return false
	}
	return true
}

// maintenance submits a maintenance route's job. Its body, the original's
// request ({"shard_id", ...}), may be empty; it is read to refuse one
// that is not JSON, and is otherwise unused: the engine checkpoints and
// maintains every shard of every table at once.
func (h *Handler) maintenance(w http.ResponseWriter, r *http.Request, route, kind string) {
	if err := decodeOptional(http.MaxBytesReader(w, r.Body, 64<<10)); err != nil {
		h.sendStatus(w, route, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: err.Error()})
		return
	}
	e := h.opts.Engine
	h.submit(w, route, kind, "", false, func(ctx context.Context) (int, []byte) {
		var out any
		var err error
		if kind == "Dump" {
			err = e.Checkpoint(ctx)
		} else {
			var round ts.Round
			round, err = e.Maintain(ctx)
			out = roundReport(round)
		}
		st := Status{OK: true, Code: CodeOK}
		if err != nil {
			st = wire.StatusOfError(err)
		}
		b, _ := json.Marshal(map[string]any{"status": st, "round": out})
		return http.StatusOK, b
	})
}

// decodeOptional reads an optional JSON object: nothing, or one object.
func decodeOptional(r io.Reader) error {
	var v map[string]any
	err := json.NewDecoder(r).Decode(&v)
	if errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// stageReport is a maintenance stage in the replies.
type stageReport struct {
	Name       string  `json:"name"`
	DurationMs float64 `json:"duration_ms"`
	Items      int64   `json:"items"`
	Bytes      int64   `json:"bytes"`
}

func stageReports(st []ts.StageReport) []stageReport {
	out := make([]stageReport, 0, len(st))
	for _, s := range st {
		out = append(out, stageReport{Name: s.Name, DurationMs: ms(s.Duration), Items: s.Items, Bytes: s.Bytes})
	}
	return out
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func roundReport(r ts.Round) map[string]any {
	return map[string]any{"duration_ms": ms(r.Duration), "stages": stageReports(r.Stages)}
}

// shardReport serves /get_config/{shard}, /get_info/{shard} and
// /get_stats/{shard}: shard is an index of the table ?namespace=
// &table_name= names (the default table).
func (h *Handler) shardReport(w http.ResponseWriter, r *http.Request, route, shard string) {
	q := r.URL.Query()
	ns, name := cmp.Or(q.Get("namespace"), ts.DefaultNamespace), cmp.Or(q.Get("table_name"), ts.DefaultTable)
	sh, err := strconv.ParseUint(shard, 10, 31)
	if err != nil {
		h.sendStatus(w, route, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: fmt.Sprintf("shard %q is not an unsigned integer", shard)})
		return
	}
	e := h.opts.Engine
	ti, err := e.DescribeTable(ns, name)
	if err != nil {
		h.adminError(w, route, err)
		return
	}
	if int(sh) >= ti.Options.Shards {
		h.sendStatus(w, route, http.StatusNotFound, false, Status{Code: CodeNotFound, Message: fmt.Sprintf("table %s/%s has shards 0 to %d", ns, name, ti.Options.Shards-1)})
		return
	}
	stats, err := e.TableStats(ns, name)
	if err != nil || int(sh) >= len(stats) {
		h.adminError(w, route, cmp.Or(err, ts.ErrNoTable))
		return
	}
	s := stats[sh]
	ok := Status{OK: true, Code: CodeOK}
	o := ti.Options
	switch route {
	case "/get_config/{shard}":
		// The original's Config, from the table's options: its limits
		// are the table's (there is no shard's own), 0 none.
		h.replyJSON(w, route, http.StatusOK, map[string]any{"status": ok, "table": ti, "config": map[string]any{
			"version": 1, "maxmemory_bytes": nil, "tenant_name": nil, "read_qps": nil, "write_qps": nil,
			"table_read_qps": nonZero(o.ReadQPS), "table_write_qps": nonZero(o.WriteQPS), "tenant_read_qps": nil, "tenant_write_qps": nil,
			"extend_config": map[string]string{}, "feature_max_size": o.FeatureMaxSize, "async_storage": o.Async,
		}})
	case "/get_info/{shard}":
		// The original's ShardInfo: a shard is loaded while its table
		// is, covers its table's routing range, and has no load version
		// or membership of its own here.
		h.replyJSON(w, route, http.StatusOK, map[string]any{"status": ok, "info": map[string]any{
			"shard_id": sh, "loaded": true, "namespace": ns, "table_name": name, "shard_uri": "",
			"start_routing_bucket": o.RangeLo, "end_routing_bucket": o.RangeHi, "readonly": s.ReadOnly,
			"load_version": 0, "local_node_id": nil, "membership_version": 0, "replica_membership_version": 0,
			"membership_valid": true, "replica_node_ids": []uint64{}, "leader_node_id": nil, "recovering": false,
		}})
	default:
		h.replyJSON(w, route, http.StatusOK, map[string]any{"status": ok, "stats": struct {
			ShardID      uint64 `json:"shard_id"`
			Loaded       bool   `json:"loaded"`
			TotalRecords int    `json:"total_records"`
			StorageBytes int64  `json:"storage_bytes"`
			shardStats
		}{sh, true, s.Keys, s.LogBytes, toShardStats(s)}})
	}
}

func nonZero(v float64) *float64 {
	if v == 0 {
		return nil
	}
	return &v
}

// shardProbe is a shard's probe in /readiness.
type shardProbe struct {
	Namespace  string  `json:"namespace"`
	Table      string  `json:"table"`
	Shard      int     `json:"shard"`
	OK         bool    `json:"ok"`
	DurationMs float64 `json:"duration_ms"`
	Error      string  `json:"error,omitempty"`
}

// readiness serves GET /readiness: /ready's answer, with every shard's
// probe.
func (h *Handler) readiness(w http.ResponseWriter, r *http.Request) {
	const route = "/readiness"
	res, why := h.probe(r.Context())
	shards := make([]shardProbe, 0, len(res))
	for _, p := range res {
		sp := shardProbe{Namespace: p.Namespace, Table: p.Table, Shard: p.Shard, OK: p.Err == nil, DurationMs: ms(p.Duration)}
		if p.Err != nil {
			sp.Error = p.Err.Error()
		}
		shards = append(shards, sp)
	}
	code, st := http.StatusOK, Status{OK: true, Code: CodeOK}
	if why != "" {
		code, st = http.StatusServiceUnavailable, Status{Code: CodeNotReady, Message: why}
	}
	h.replyJSON(w, route, code, map[string]any{"status": st, "ready": why == "", "shards": shards})
}

// serverReport serves GET /server/info (every shard's statistics) and
// /server/runtime_stats (the jobs' and the maintenance rounds' totals).
func (h *Handler) serverReport(w http.ResponseWriter, r *http.Request, route string) {
	ok := Status{OK: true, Code: CodeOK}
	e := h.opts.Engine
	if route == "/server/runtime_stats" {
		m := e.MaintenanceStats()
		h.replyJSON(w, route, http.StatusOK, map[string]any{"status": ok, "jobs": h.jobs.stats(), "maintenance": map[string]any{
			"rounds": m.Rounds, "failed": m.Failed, "last_ms": ms(m.Last), "total_ms": ms(m.Total), "stages": stageReports(m.Stages),
		}})
		return
	}
	stats, err := e.Stats()
	if err != nil {
		h.adminError(w, route, err)
		return
	}
	type serverShard struct {
		Namespace string `json:"namespace"`
		Table     string `json:"table"`
		shardStats
	}
	out := make([]serverShard, 0, len(stats))
	for _, s := range stats {
		out = append(out, serverShard{s.Namespace, s.Table, toShardStats(s)})
	}
	h.replyJSON(w, route, http.StatusOK, map[string]any{"status": ok, "shards": out})
}
