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
	// its calls and its growing reply afresh: *cmdReq, and *wire.Encoder
	// by encoding ([0] JSON, [1] MessagePack).
	reqs     sync.Pool
	encoders [2]sync.Pool
	// client forwards requests to other members (Options.Cluster).
	client *http.Client
	// jobs run the async routes' requests and the maintenance routes.
	jobs *jobTable
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
	h := &Handler{opts: opts, tokens: newTokens(opts.ReadWriteTokens, opts.ReadOnlyTokens, opts.TenantTokens), client: &http.Client{Timeout: forwardTimeout},
		jobs: newJobTable(opts.JobWorkers, opts.MaxJobs)}
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
		"/ProxyService/BatchExecuteCmd": true, "/ProxyService/TableBatchExecuteCmd": true, "/ProxyService/BatchExecuteTableCmd": true,
	}
	healthRoutes = map[string]bool{"/health": true, "/ping": true, "/ServerService/Ping": true}
)

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p := r.URL.Path
	switch {
	case executeRoutes[p]:
		if h.method(w, r, "/execute", http.MethodPost) {
			h.commands(w, r, &executeSpec)
		}
	case batchRoutes[p]:
		if h.method(w, r, "/batch_execute", http.MethodPost) {
			h.commands(w, r, &batchSpec)
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
		// The original's other routes (original_routes.go), or none.
		if !h.original(w, r) {
			h.sendStatus(w, "other", http.StatusNotFound, isMsgpack(r), Status{Code: CodeNotFound, Message: "unknown server route"})
		}
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
func (h *Handler) sendExecuteError(w http.ResponseWriter, route string, code int, mp bool, s Status) {
	enc := h.encoder(mp)
	enc.ExecuteFailed(s)
	h.send(w, route, code, mp, enc.Bytes())
	h.release(mp, enc)
}

// execShaped says route refuses a request as /execute does, with a failed
// status and the empty response (/execute and the typed proxy routes, as
// the original's); the other routes answer a bare status.
func execShaped(route string) bool {
	return route == "/execute" || strings.HasPrefix(route, proxyPrefix)
}

// fail replies to a request of route that cannot be run.
func (h *Handler) fail(w http.ResponseWriter, route string, code int, mp bool, s Status) {
	h.opts.Logger.Debug("http request refused", "route", route, "status", code, "code", s.Code, "message", s.Message)
	if execShaped(route) {
		h.sendExecuteError(w, route, code, mp, s)
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

// readRaw reads r's body; on failure it has replied.
func (h *Handler) readRaw(w http.ResponseWriter, r *http.Request, route string, mp bool) ([]byte, bool) {
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
	return body, true
}

// readBody reads and decodes r's body into v; on failure it has replied.
func (h *Handler) readBody(w http.ResponseWriter, r *http.Request, route string, mp bool, v any) ([]byte, bool) {
	body, ok := h.readRaw(w, r, route, mp)
	if !ok {
		return nil, false
	}
	if err := wire.Decode(body, mp, v); err != nil {
		h.fail(w, route, http.StatusBadRequest, mp, Status{Code: CodeBadRequest, Message: err.Error()})
		return nil, false
	}
	return body, true
}

// cmdSpec is a route of the execute family: how its body is read and its
// reply shaped. /execute and /batch_execute are two; the original's
// checked, replicated and typed proxy routes are others
// (original_routes.go, proxy_routes.go), each a translation onto the same
// path.
type cmdSpec struct {
	// name labels the route's metrics and logs; a request a leader
	// serves is forwarded to the same route on it.
	name string
	// single: the body holds one command, answered with an
	// ExecuteResponse; else a batch, answered with a BatchResponse.
	single bool
	// decode reads the body into x.req (and x.modes).
	decode func(body []byte, mp bool, x *cmdReq) error
	// raws are the commands as sent, for the kinds of Options.Context;
	// nil: the body's "command" or "commands" (wire.RawCommands).
	raws func(body []byte, mp bool) ([][]byte, error)
	// finish makes the route's reply of /execute's or /batch_execute's;
	// nil: that reply as it is.
	finish func(x *cmdReq, reply []byte) ([]byte, error)
}

var (
	executeSpec = cmdSpec{name: "/execute", single: true, decode: decodeExecute}
	batchSpec   = cmdSpec{name: "/batch_execute", decode: decodeBatch}
)

// cmdReq is one request of the execute family as it is taken: decoded,
// its commands translated and admitted. Reused across requests
// (Handler.reqs), so that a batch does not allocate its commands and
// calls afresh.
type cmdReq struct {
	spec   *cmdSpec
	mp     bool
	tenant string // a tenant token's tenant, "" for a global token
	body   []byte // as sent: forwarded to a leader, read again for raws
	one    Request
	req    BatchRequest // the address and the commands (/execute's one too)
	calls  []wire.Call
	// raws are the commands as sent, once a kind of Options.Context
	// needs them.
	raws [][]byte
	// modes are the replicated routes' replication_mode of each command,
	// reports what came of them.
	modes   []replicationMode
	reports []replicationReport
}

// errMissingCommand refuses an /execute body without its command.
var errMissingCommand = errors.New("missing field `command`")

func decodeExecute(body []byte, mp bool, x *cmdReq) error {
	if err := wire.Decode(body, mp, &x.one); err != nil {
		return err
	}
	if x.one.Command == nil {
		return errMissingCommand
	}
	x.req.Namespace, x.req.TableName, x.req.Tenant = x.one.Namespace, x.one.TableName, x.one.Tenant
	x.req.Commands = append(x.req.Commands[:0], *x.one.Command)
	return nil
}

func decodeBatch(body []byte, mp bool, x *cmdReq) error { return wire.Decode(body, mp, &x.req) }

// commands serves a route of the execute family.
func (h *Handler) commands(w http.ResponseWriter, r *http.Request, spec *cmdSpec) {
	if x := h.prepare(w, r, spec, spec.name); x != nil {
		h.dispatch(w, r, x)
		h.putReq(x)
	}
}

// prepare reads a request of spec and readies it to run: decoded, every
// command translated and admitted for r's token. It replies on route and
// returns nil when the request cannot be taken; else the caller puts x
// back once it ran.
func (h *Handler) prepare(w http.ResponseWriter, r *http.Request, spec *cmdSpec, route string) *cmdReq {
	mp := isMsgpack(r)
	acc, tenant := h.access(r)
	if acc == accessNone {
		h.unauthorized(w, route, mp, execShaped(route))
		return nil
	}
	body, ok := h.readRaw(w, r, route, mp)
	if !ok {
		return nil
	}
	x, _ := h.reqs.Get().(*cmdReq)
	if x == nil {
		x = &cmdReq{}
	}
	x.spec, x.mp, x.tenant, x.body = spec, mp, tenant, body
	if code, st := h.admit(x, acc); code != 0 {
		h.fail(w, route, code, mp, st)
		h.putReq(x)
		return nil
	}
	return x
}

// admit decodes x's body and translates and admits its commands: the
// HTTP status and the status refusing it, 0 when it may run.
func (h *Handler) admit(x *cmdReq, acc access) (int, Status) {
	if err := x.spec.decode(x.body, x.mp, x); err != nil {
		return http.StatusBadRequest, Status{Code: CodeBadRequest, Message: err.Error()}
	}
	req := &x.req
	if len(req.Commands) > h.opts.MaxBatchCommands {
		return http.StatusRequestEntityTooLarge, Status{Code: CodeTooLarge, Message: fmt.Sprintf("batch of %d commands exceeds %d", len(req.Commands), h.opts.MaxBatchCommands)}
	}
	x.calls = slices.Grow(x.calls[:0], len(req.Commands))[:len(req.Commands)]
	for i := range req.Commands {
		cl := &x.calls[i]
		if err := wire.TranslateInto(cl, &req.Commands[i], req.Namespace, req.TableName, req.Tenant); err != nil {
			return http.StatusBadRequest, x.refusal(i, CodeBadRequest, err.Error())
		}
		served, write := h.serves(cl)
		if (cl.Write() || write) && acc != accessWrite {
			return http.StatusForbidden, x.refusal(i, CodeForbidden, fmt.Sprintf("a read-only token cannot run %s", cl.Kind()))
		}
		if msg := confine(cl, x.tenant); msg != "" {
			return http.StatusForbidden, x.refusal(i, CodeForbidden, msg)
		}
		if served && x.raws == nil {
			raws, err := x.commandsAsSent()
			if err != nil {
				return http.StatusBadRequest, x.refusal(i, CodeBadRequest, err.Error())
			}
			x.raws = raws
		}
	}
	return 0, Status{}
}

// refusal is the status refusing command i of x, named by its index in a
// batch.
func (x *cmdReq) refusal(i int, code, msg string) Status {
	if !x.spec.single {
		msg = fmt.Sprintf("commands[%d]: %s", i, msg)
	}
	return Status{Code: code, Message: msg}
}

// commandsAsSent decodes the body again for its commands as they were
// sent: only a request holding a kind of Options.Context pays for it.
func (x *cmdReq) commandsAsSent() ([][]byte, error) {
	var raws [][]byte
	var err error
	if x.spec.raws != nil {
		raws, err = x.spec.raws(x.body, x.mp)
	} else {
		raws, err = wire.RawCommands(x.body, x.mp, !x.spec.single)
	}
	if err == nil && len(raws) != len(x.calls) {
		err = fmt.Errorf("%d commands as sent, %d decoded", len(raws), len(x.calls))
	}
	return raws, err
}

// putReq returns x to the pool, emptied; one that held a huge batch is
// left to the collector.
func (h *Handler) putReq(x *cmdReq) {
	x.req.Reset()
	if cap(x.calls) > 256 {
		return
	}
	clear(x.calls)
	clear(x.reports)
	*x = cmdReq{req: x.req, calls: x.calls[:0], modes: x.modes[:0], reports: x.reports[:0]}
	h.reqs.Put(x)
}

// dispatch runs a prepared request, or forwards it to the member leading
// its keys' shard, and replies.
func (h *Handler) dispatch(w http.ResponseWriter, r *http.Request, x *cmdReq) {
	route, mp := x.spec.name, x.mp
	if h.opts.Cluster != nil {
		to, err := h.route(r.Context(), r, x.calls)
		if err != nil {
			h.fail(w, route, http.StatusServiceUnavailable, mp, wire.StatusOfError(err))
			return
		}
		if to != "" {
			h.forward(w, r, route, to, x.body, mp)
			return
		}
	}
	if x.spec.single && x.spec.finish == nil && len(x.modes) == 0 && h.sendFromFile(w, r, x) {
		return
	}
	enc := h.encoder(mp)
	defer h.release(mp, enc)
	status := http.StatusOK
	if x.spec.single {
		if code := h.runAt(r.Context(), enc, x, 0); code == wire.CodeDiskFull || code == wire.CodeStorageFault {
			// The shard refuses writes until its log writes again:
			// Insufficient Storage, the status object saying which
			// shard and why.
			status = http.StatusInsufficientStorage
		}
	} else {
		enc.BeginBatch(len(x.calls))
		for i := range x.calls {
			h.runAt(r.Context(), enc, x, i)
		}
		enc.EndBatch()
	}
	reply := enc.Bytes()
	if x.spec.finish != nil {
		var err error
		if reply, err = x.spec.finish(x, reply); err != nil {
			h.fail(w, route, http.StatusInternalServerError, mp, Status{Code: CodeInternal, Message: err.Error()})
			return
		}
	}
	h.send(w, route, status, mp, reply)
}

// sendFromFile replies to a GET of a value kept in a file of its own
// (Engine.OpenString) from the file: the reply's bytes before the value
// and after it are encoded as for any reply (wire.ResultAround), and
// StringFile.WriteTo sends the value's, in MessagePack by sendfile(2),
// never through a buffer of the value's size, checking the file
// meanwhile. A check that fails aborts the reply unfinished, so the
// client sees a cut connection, never a wrong value. It returns false,
// having written nothing, for any other request, which the usual path
// serves (and reports the errors of).
func (h *Handler) sendFromFile(w http.ResponseWriter, r *http.Request, x *cmdReq) bool {
	cl := &x.calls[0]
	c := cl.Lend()
	if c.Kind != ts.KindGet || !cl.ValueReply() {
		return false
	}
	t0 := time.Now()
	f, ok, err := h.opts.Engine.OpenString(r.Context(), c.Tenant, c.Namespace, c.Table, c.Key)
	if err != nil || !ok {
		return false
	}
	defer f.Close()
	enc := h.encoder(x.mp)
	defer h.release(x.mp, enc)
	resp := ts.Response{Found: true}
	st := wire.StatusOf(cl, &resp, nil)
	before, after, ok := enc.ResultAround(cl, st)
	if !ok {
		return false
	}
	ct := ContentTypeJSON
	if x.mp {
		ct = ContentTypeMsgpack
	}
	w.Header().Set("Content-Type", ct)
	if n := enc.ValueLen(f.Len); n >= 0 {
		w.Header().Set("Content-Length", strconv.FormatInt(int64(len(before))+n+int64(len(after)), 10))
	}
	w.WriteHeader(http.StatusOK)
	_, err = w.Write(before)
	var vw io.Writer
	var end func() error
	if err == nil {
		vw, end, err = enc.ValueWriter(w, f.Len)
	}
	if err == nil {
		_, err = f.WriteTo(vw)
	}
	if err == nil {
		err = end()
	}
	if err == nil {
		_, err = w.Write(after)
	}
	h.metrics.duration(cl.Kind()).Observe(time.Since(t0).Seconds())
	if err != nil {
		h.metrics.command(cl.Kind(), CodeInternal).Inc()
		h.opts.Logger.Warn("a value sent from its file failed; the reply is cut", "err", err)
		panic(http.ErrAbortHandler)
	}
	h.metrics.command(cl.Kind(), st.Code).Inc()
	h.metrics.request(x.spec.name, http.StatusOK)
	return true
}

// runAt runs command i of x and writes its result; it returns its status
// code ("" for a kind of Options.Context).
func (h *Handler) runAt(ctx context.Context, enc *wire.Encoder, x *cmdReq, i int) string {
	cl := &x.calls[i]
	if i < len(x.modes) {
		if st, ok := h.replicate(x, i); !ok {
			h.metrics.command(cl.Kind(), st.Code).Inc()
			enc.Value(st, nil, x.mp)
			return st.Code
		}
	}
	if served, _ := h.serves(cl); served {
		h.runContext(ctx, enc, x.mp, cmp.Or(x.tenant, x.req.Commands[i].Tenant, x.req.Tenant), cl.Kind(), x.raws[i])
		return ""
	}
	return h.run(ctx, enc, cl)
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

// ready replies 200 when every shard answers its probe within
// ReadyTimeout, 503 naming the shards that did not otherwise.
func (h *Handler) ready(w http.ResponseWriter, r *http.Request) {
	if _, why := h.probe(r.Context()); why != "" {
		h.sendStatus(w, "/ready", http.StatusServiceUnavailable, false, Status{Code: CodeNotReady, Message: why})
		return
	}
	h.sendStatus(w, "/ready", http.StatusOK, false, Status{OK: true, Code: CodeOK})
}

// probe probes every shard within ReadyTimeout, then asks Options.Ready:
// the shards' probes, and why the server is not ready ("" when it is).
func (h *Handler) probe(ctx context.Context) ([]ts.ShardProbe, string) {
	ctx, cancel := context.WithTimeout(ctx, h.opts.ReadyTimeout)
	defer cancel()
	res, err := h.opts.Engine.Probe(ctx)
	if err != nil {
		return nil, err.Error()
	}
	var bad []string
	for _, p := range res {
		if p.Err != nil {
			bad = append(bad, fmt.Sprintf("%s/%s shard %d: %v", p.Namespace, p.Table, p.Shard, p.Err))
		}
	}
	if len(bad) > 0 {
		h.opts.Logger.Warn("not ready", "shards", bad)
		return res, strings.Join(bad, "; ")
	}
	if h.opts.Ready != nil {
		if err := h.opts.Ready(ctx); err != nil {
			return res, err.Error()
		}
	}
	return res, ""
}
