package httpapi

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/http/pprof"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// Handler serves the HTTP command surface. It is safe for concurrent use.
type Handler struct {
	opts    Options
	tokens  tokens
	metrics *metrics
	prom    http.Handler
	// Reused across requests, so a batch does not allocate its commands,
	// its calls and its growing reply afresh: *batchBuf, and *wire.Encoder
	// by encoding ([0] JSON, [1] MessagePack).
	batches  sync.Pool
	encoders [2]sync.Pool
	// client forwards requests to other members (Options.Cluster).
	client *http.Client
}

// batchBuf is one /batch_execute's decoded request and translated calls.
type batchBuf struct {
	req   BatchRequest
	calls []wire.Call
}

func encIndex(mp bool) int {
	if mp {
		return 1
	}
	return 0
}

// encoder is a reply encoder from the pool; release returns it once its
// bytes are written.
func (h *Handler) encoder(mp bool) *wire.Encoder {
	if e, ok := h.encoders[encIndex(mp)].Get().(*wire.Encoder); ok {
		return e
	}
	return wire.NewEncoder(mp)
}

func (h *Handler) release(mp bool, e *wire.Encoder) {
	if e.Reset() {
		h.encoders[encIndex(mp)].Put(e)
	}
}

// New returns a handler serving opts.Engine.
func New(opts Options) (*Handler, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	h := &Handler{opts: opts, tokens: newTokens(opts.ReadWriteTokens, opts.ReadOnlyTokens, opts.TenantTokens), client: &http.Client{Timeout: forwardTimeout}}
	m, err := newMetrics(opts.Engine, opts.Registry)
	if err != nil {
		return nil, err
	}
	h.metrics = m
	h.prom = promhttp.HandlerFor(h.metrics.reg, promhttp.HandlerOpts{})
	return h, nil
}

// Registry is the registry served on /metrics (Options.Registry, or the
// handler's own).
func (h *Handler) Registry() *prometheus.Registry { return h.metrics.reg }

// Routes. The original's aliases of /execute and /batch_execute (its
// proxy's table routes and service names) are served too.
var (
	executeRoutes = map[string]bool{
		"/execute": true, "/table_execute": true, "/proxy/table_execute": true,
		"/ProxyService/ExecuteCmd": true, "/ProxyService/ExecuteTableCmd": true, "/ProxyService/TableExecuteCmd": true,
	}
	batchRoutes = map[string]bool{
		"/batch_execute": true, "/table_batch_execute": true, "/proxy/table_batch_execute": true,
		"/ProxyService/BatchExecuteCmd": true,
	}
	healthRoutes = map[string]bool{"/health": true, "/ping": true, "/ServerService/Ping": true}
)

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case executeRoutes[p]:
		if h.method(w, r, "/execute", http.MethodPost) {
			h.execute(w, r)
		}
	case batchRoutes[p]:
		if h.method(w, r, "/batch_execute", http.MethodPost) {
			h.batch(w, r)
		}
	case healthRoutes[p]:
		if h.method(w, r, "/health", http.MethodGet, http.MethodPost) {
			h.sendStatus(w, "/health", http.StatusOK, false, Status{OK: true, Code: CodeOK})
		}
	case p == "/ingest":
		if h.method(w, r, "/ingest", http.MethodPost) {
			h.ingest(w, r)
		}
	case p == "/ingest_offset":
		if h.method(w, r, "/ingest_offset", http.MethodGet) {
			h.ingestOffset(w, r)
		}
	case p == "/dead_letters":
		if h.method(w, r, "/dead_letters", http.MethodGet) {
			h.deadLetters(w, r)
		}
	case p == "/ready":
		if h.method(w, r, "/ready", http.MethodGet, http.MethodPost) {
			h.ready(w, r)
		}
	case (p == blobRoute || strings.HasPrefix(p, blobRoute+"/")) && h.opts.Blobs != nil:
		h.blobs(w, r)
	case p == "/backup" && h.opts.Backups != nil:
		if h.method(w, r, "/backup", http.MethodGet, http.MethodPost) {
			h.backup(w, r)
		}
	case p == "/tables" || strings.HasPrefix(p, "/tables/") || p == "/tenants" || strings.HasPrefix(p, "/tenants/"):
		h.admin(w, r)
	case p == "/metrics":
		if !h.method(w, r, "/metrics", http.MethodGet) {
			return
		}
		if h.tokens.check(r) == accessNone {
			h.unauthorized(w, "/metrics", false, false)
			return
		}
		h.metrics.request("/metrics", http.StatusOK)
		h.prom.ServeHTTP(w, r)
	case h.opts.Profiling && strings.HasPrefix(p, "/debug/pprof/"):
		h.profile(w, r)
	default:
		h.sendStatus(w, "other", http.StatusNotFound, isMsgpack(r), Status{Code: CodeNotFound, Message: "unknown server route"})
	}
}

// profile serves net/http/pprof's pages to read-write tokens.
func (h *Handler) profile(w http.ResponseWriter, r *http.Request) {
	switch h.tokens.check(r) {
	case accessNone:
		h.unauthorized(w, "/debug/pprof", false, false)
		return
	case accessRead:
		h.sendStatus(w, "/debug/pprof", http.StatusForbidden, false, Status{Code: CodeForbidden, Message: "a read-only token cannot take profiles"})
		return
	}
	switch strings.TrimPrefix(r.URL.Path, "/debug/pprof/") {
	case "cmdline":
		pprof.Cmdline(w, r)
	case "profile":
		pprof.Profile(w, r)
	case "symbol":
		pprof.Symbol(w, r)
	case "trace":
		pprof.Trace(w, r)
	default:
		pprof.Index(w, r) // the index, and the named profiles (heap, goroutine, ...)
	}
}

func (h *Handler) method(w http.ResponseWriter, r *http.Request, route string, allowed ...string) bool {
	for _, m := range allowed {
		if r.Method == m {
			return true
		}
	}
	w.Header().Set("Allow", strings.Join(allowed, ", "))
	h.sendStatus(w, route, http.StatusMethodNotAllowed, isMsgpack(r), Status{Code: CodeBadRequest, Message: "method not allowed"})
	return false
}

// isMsgpack says the request's body (and so the reply) is MessagePack.
func isMsgpack(r *http.Request) bool {
	ct := r.Header.Get("Content-Type")
	switch ct { // the usual ones, without a parse
	case ContentTypeMsgpack:
		return true
	case ContentTypeJSON, "":
		return false
	}
	mt, _, err := mime.ParseMediaType(ct)
	if err != nil {
		return false
	}
	switch mt {
	case ContentTypeMsgpack, "application/x-msgpack", "application/vnd.msgpack":
		return true
	}
	return false
}

func (h *Handler) send(w http.ResponseWriter, route string, code int, mp bool, body []byte) {
	ct := ContentTypeJSON
	if mp {
		ct = ContentTypeMsgpack
	}
	w.Header().Set("Content-Type", ct)
	// The whole body is at hand: its length spares a reply past net/http's
	// 2 KiB buffer the chunked encoding (and its extra writes).
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(code)
	_, _ = w.Write(body)
	h.metrics.request(route, code)
}

// sendStatus replies with a bare status object.
func (h *Handler) sendStatus(w http.ResponseWriter, route string, code int, mp bool, s Status) {
	enc := h.encoder(mp)
	enc.Status(s)
	h.send(w, route, code, mp, enc.Bytes())
	h.release(mp, enc)
}

// sendExecuteError replies to /execute with a failed status and the empty
// response, as the original does for a request it cannot take.
func (h *Handler) sendExecuteError(w http.ResponseWriter, code int, mp bool, s Status) {
	enc := h.encoder(mp)
	enc.ExecuteFailed(s)
	h.send(w, "/execute", code, mp, enc.Bytes())
	h.release(mp, enc)
}

// fail replies to a request of route that cannot be run.
func (h *Handler) fail(w http.ResponseWriter, route string, code int, mp bool, s Status) {
	h.opts.Logger.Debug("http request refused", "route", route, "status", code, "code", s.Code, "message", s.Message)
	if route == "/execute" {
		h.sendExecuteError(w, code, mp, s)
		return
	}
	h.sendStatus(w, route, code, mp, s)
}

func (h *Handler) unauthorized(w http.ResponseWriter, route string, mp, execute bool) {
	w.Header().Set("WWW-Authenticate", `Bearer realm="temporalstore"`)
	if !execute {
		h.sendStatus(w, route, http.StatusUnauthorized, mp, Status{Code: CodeUnauthorized, Message: "missing or invalid bearer token"})
		return
	}
	h.fail(w, route, http.StatusUnauthorized, mp, Status{Code: CodeUnauthorized, Message: "missing or invalid bearer token"})
}

// readBody reads and decodes r's body into v; on failure it has replied.
// presizeBody bounds the declared length body trusts: a header alone must
// not make the server allocate much before the bytes arrive.
const presizeBody = 1 << 20

// body reads r's body, at most MaxBodyBytes. A declared length up to
// presizeBody sizes the buffer once (io.ReadAll would grow it from 512
// bytes, copying as it goes); the decoded request may point into it, so it
// is not reused.
func (h *Handler) body(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	rd := http.MaxBytesReader(w, r.Body, h.opts.MaxBodyBytes)
	if n := r.ContentLength; n > 0 && n <= min(presizeBody, h.opts.MaxBodyBytes) {
		buf := make([]byte, n)
		if _, err := io.ReadFull(rd, buf); err != nil {
			return nil, err
		}
		return buf, nil
	}
	return io.ReadAll(rd)
}

func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, route string, mp bool, v any) ([]byte, bool) {
	body, err := h.body(w, r)
	if err != nil {
		var tooLarge *http.MaxBytesError
		if errors.As(err, &tooLarge) {
			h.fail(w, route, http.StatusRequestEntityTooLarge, mp, Status{Code: CodeTooLarge, Message: fmt.Sprintf("request body exceeds %d bytes", h.opts.MaxBodyBytes)})
			return nil, false
		}
		h.fail(w, route, http.StatusBadRequest, mp, Status{Code: CodeBadRequest, Message: err.Error()})
		return nil, false
	}
	if err := wire.Decode(body, mp, v); err != nil {
		h.fail(w, route, http.StatusBadRequest, mp, Status{Code: CodeBadRequest, Message: err.Error()})
		return nil, false
	}
	return body, true
}

func (h *Handler) execute(w http.ResponseWriter, r *http.Request) {
	mp := isMsgpack(r)
	acc, tenant := h.access(r)
	if acc == accessNone {
		h.unauthorized(w, "/execute", mp, true)
		return
	}
	var req Request
	body, ok := h.readBody(w, r, "/execute", mp, &req)
	if !ok {
		return
	}
	if req.Command == nil {
		h.fail(w, "/execute", http.StatusBadRequest, mp, Status{Code: CodeBadRequest, Message: "missing field `command`"})
		return
	}
	cl, err := wire.Translate(req.Command, req.Namespace, req.TableName, req.Tenant)
	if err != nil {
		h.fail(w, "/execute", http.StatusBadRequest, mp, Status{Code: CodeBadRequest, Message: err.Error()})
		return
	}
	served, write := h.serves(&cl)
	if (cl.Write() || write) && acc != accessWrite {
		h.fail(w, "/execute", http.StatusForbidden, mp, Status{Code: CodeForbidden, Message: fmt.Sprintf("a read-only token cannot run %s", cl.Kind())})
		return
	}
	if msg := confine(&cl, tenant); msg != "" {
		h.fail(w, "/execute", http.StatusForbidden, mp, Status{Code: CodeForbidden, Message: msg})
		return
	}
	if h.opts.Cluster != nil {
		to, err := h.route(r.Context(), r, []wire.Call{cl})
		if err != nil {
			h.sendExecuteError(w, http.StatusServiceUnavailable, mp, wire.StatusOfError(err))
			return
		}
		if to != "" {
			h.forward(w, r, "/execute", to, body, mp)
			return
		}
	}
	enc := h.encoder(mp)
	status := http.StatusOK
	if served {
		raws, err := wire.RawCommands(body, mp, false)
		if err != nil {
			h.fail(w, "/execute", http.StatusBadRequest, mp, Status{Code: CodeBadRequest, Message: err.Error()})
			return
		}
		h.runContext(r.Context(), enc, mp, cmp.Or(tenant, req.Command.Tenant, req.Tenant), cl.Kind(), raws[0])
	} else if code := h.run(r.Context(), enc, &cl); code == wire.CodeDiskFull || code == wire.CodeStorageFault {
		// The shard refuses writes until its log writes again: Insufficient
		// Storage, the status object saying which shard and why.
		status = http.StatusInsufficientStorage
	}
	h.send(w, "/execute", status, mp, enc.Bytes())
	h.release(mp, enc)
}

// serves says whether Options.Context serves cl's kind (one the engine
// does not model), and whether it writes.
func (h *Handler) serves(cl *wire.Call) (served, write bool) {
	if !cl.Unsupported() || h.opts.Context == nil {
		return false, false
	}
	return h.opts.Context.Serves(cl.Kind())
}

// runContext runs a command of a kind Options.Context serves and writes
// its result.
func (h *Handler) runContext(ctx context.Context, enc *wire.Encoder, mp bool, tenant, kind string, raw []byte) {
	t0 := time.Now()
	resp, err := h.opts.Context.ExecuteContext(ctx, tenant, kind, raw, mp)
	h.metrics.duration(kind).Observe(time.Since(t0).Seconds())
	st := Status{OK: true, Code: CodeOK}
	if err != nil {
		st = contextStatus(err)
		if st.Code == CodeInternal {
			h.opts.Logger.Warn("command failed", "kind", kind, "err", err)
		}
		resp = nil
	}
	h.metrics.command(kind, st.Code).Inc()
	enc.Value(st, resp, mp)
}

// contextStatus is the status of a ContextKinds error.
func contextStatus(err error) Status {
	for _, c := range []struct {
		code string
		err  error
	}{{CodeBadRequest, ErrBadRequest}, {CodeNotFound, ErrNotFound}, {CodeForbidden, ErrForbidden}, {CodeUnsupported, ErrUnsupported}} {
		if errors.Is(err, c.err) {
			return Status{Code: c.code, Message: err.Error()}
		}
	}
	return wire.StatusOfError(err)
}

// run executes cl, writes its result, and returns its status code.
func (h *Handler) run(ctx context.Context, enc *wire.Encoder, cl *wire.Call) string {
	var resp ts.Response
	var err error
	if !cl.Unsupported() {
		t0 := time.Now()
		// In place: a command is some 840 bytes, and a copy of each cost
		// a batch more than its reads did, with the caches cold.
		resp, err = h.opts.Engine.ExecuteInPlace(ctx, cl.Lend())
		h.metrics.duration(cl.Kind()).Observe(time.Since(t0).Seconds())
	}
	st := wire.StatusOf(cl, &resp, err)
	h.metrics.command(cl.Kind(), st.Code).Inc()
	if st.Code == CodeInternal {
		h.opts.Logger.Warn("command failed", "kind", cl.Kind(), "err", err)
	}
	enc.Result(cl, &resp, st)
	return st.Code
}

func (h *Handler) batch(w http.ResponseWriter, r *http.Request) {
	const route = "/batch_execute"
	mp := isMsgpack(r)
	acc, tenant := h.access(r)
	if acc == accessNone {
		h.unauthorized(w, route, mp, false)
		return
	}
	buf, _ := h.batches.Get().(*batchBuf)
	if buf == nil {
		buf = &batchBuf{}
	}
	defer h.putBatch(buf)
	req := &buf.req
	body, ok := h.readBody(w, r, route, mp, req)
	if !ok {
		return
	}
	if len(req.Commands) > h.opts.MaxBatchCommands {
		h.fail(w, route, http.StatusRequestEntityTooLarge, mp, Status{Code: CodeTooLarge, Message: fmt.Sprintf("batch of %d commands exceeds %d", len(req.Commands), h.opts.MaxBatchCommands)})
		return
	}
	calls := slices.Grow(buf.calls[:0], len(req.Commands))[:len(req.Commands)]
	buf.calls = calls
	var raws [][]byte // the commands as sent, once a kind of Options.Context needs them
	for i := range req.Commands {
		cl := &calls[i]
		if err := wire.TranslateInto(cl, &req.Commands[i], req.Namespace, req.TableName, req.Tenant); err != nil {
			h.fail(w, route, http.StatusBadRequest, mp, Status{Code: CodeBadRequest, Message: fmt.Sprintf("commands[%d]: %v", i, err)})
			return
		}
		served, write := h.serves(cl)
		if (cl.Write() || write) && acc != accessWrite {
			h.fail(w, route, http.StatusForbidden, mp, Status{Code: CodeForbidden, Message: fmt.Sprintf("commands[%d]: a read-only token cannot run %s", i, cl.Kind())})
			return
		}
		if msg := confine(cl, tenant); msg != "" {
			h.fail(w, route, http.StatusForbidden, mp, Status{Code: CodeForbidden, Message: fmt.Sprintf("commands[%d]: %s", i, msg)})
			return
		}
		if served && raws == nil {
			var err error
			if raws, err = wire.RawCommands(body, mp, true); err == nil && len(raws) != len(calls) {
				err = fmt.Errorf("%d commands as sent, %d decoded", len(raws), len(calls))
			}
			if err != nil {
				h.fail(w, route, http.StatusBadRequest, mp, Status{Code: CodeBadRequest, Message: fmt.Sprintf("commands[%d]: %v", i, err)})
				return
			}
		}
	}
	if h.opts.Cluster != nil {
		to, err := h.route(r.Context(), r, calls)
		if err != nil {
			h.fail(w, route, http.StatusServiceUnavailable, mp, wire.StatusOfError(err))
			return
		}
		if to != "" {
			h.forward(w, r, route, to, body, mp)
			return
		}
	}
	enc := h.encoder(mp)
	enc.BeginBatch(len(calls))
	for i := range calls {
		if served, _ := h.serves(&calls[i]); served {
			h.runContext(r.Context(), enc, mp, cmp.Or(tenant, req.Commands[i].Tenant, req.Tenant), calls[i].Kind(), raws[i])
			continue
		}
		h.run(r.Context(), enc, &calls[i])
	}
	enc.EndBatch()
	h.send(w, route, http.StatusOK, mp, enc.Bytes())
	h.release(mp, enc)
}

// putBatch returns buf to the pool, emptied; one that held a huge batch is
// left to the collector.
func (h *Handler) putBatch(buf *batchBuf) {
	buf.req.Reset()
	if cap(buf.calls) > 256 {
		return
	}
	clear(buf.calls)
	buf.calls = buf.calls[:0]
	h.batches.Put(buf)
}

// ready replies 200 when every shard answers its probe within
// ReadyTimeout, 503 naming the shards that did not otherwise.
func (h *Handler) ready(w http.ResponseWriter, r *http.Request) {
	ctx, cancel := context.WithTimeout(r.Context(), h.opts.ReadyTimeout)
	defer cancel()
	res, err := h.opts.Engine.Probe(ctx)
	if err != nil {
		h.sendStatus(w, "/ready", http.StatusServiceUnavailable, false, Status{Code: CodeNotReady, Message: err.Error()})
		return
	}
	var bad []string
	for _, p := range res {
		if p.Err != nil {
			bad = append(bad, fmt.Sprintf("%s/%s shard %d: %v", p.Namespace, p.Table, p.Shard, p.Err))
		}
	}
	if len(bad) > 0 {
		h.opts.Logger.Warn("not ready", "shards", bad)
		h.sendStatus(w, "/ready", http.StatusServiceUnavailable, false, Status{Code: CodeNotReady, Message: strings.Join(bad, "; ")})
		return
	}
	if h.opts.Ready != nil {
		if err := h.opts.Ready(ctx); err != nil {
			h.sendStatus(w, "/ready", http.StatusServiceUnavailable, false, Status{Code: CodeNotReady, Message: err.Error()})
			return
		}
	}
	h.sendStatus(w, "/ready", http.StatusOK, false, Status{OK: true, Code: CodeOK})
}
