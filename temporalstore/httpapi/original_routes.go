package httpapi

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// The original's execute variants, each a cmdSpec on /execute's path:
//
//	/execute_checked, /batch_execute_checked   + "load_version"; the reply wrapped {"status", "response": reply}
//	/execute_replicated                        + "replication_mode"
//	/batch_execute_replicated                  "commands": [{"command", "replication_mode"}]; + "replication": [report]
//
// load_version is required, as the original's, and not compared: shards
// open with their table and are never reloaded here, so whatever version
// a client holds names the one load there is.
var variantSpecs = map[string]*cmdSpec{
	"/execute_checked":          {name: "/execute_checked", single: true, decode: checked(decodeExecute), finish: finishChecked},
	"/batch_execute_checked":    {name: "/batch_execute_checked", decode: checked(decodeBatch), finish: finishChecked},
	"/execute_replicated":       {name: "/execute_replicated", single: true, decode: decodeReplicated},
	"/batch_execute_replicated": {name: "/batch_execute_replicated", decode: decodeReplicatedBatch, raws: rawsReplicatedBatch, finish: finishReplicatedBatch},
}

// asyncRoutes submit the request of a route as a job (jobs.go), by the
// original's job kind.
var asyncRoutes = map[string]struct {
	spec *cmdSpec
	kind string
}{
	"/async_execute":               {&executeSpec, "Execute"},
	"/async_batch_execute":         {&batchSpec, "BatchExecute"},
	"/async_execute_checked":       {variantSpecs["/execute_checked"], "CheckedExecute"},
	"/async_batch_execute_checked": {variantSpecs["/batch_execute_checked"], "CheckedBatchExecute"},
}

// original serves the original's routes beyond /execute and
// /batch_execute: the execute variants, the typed proxy routes, jobs,
// the maintenance and report routes, and a documented refusal of those
// whose concept the engine does not have. It returns false for a path
// that is none of them.
func (h *Handler) original(w http.ResponseWriter, r *http.Request) bool {
	p := r.URL.Path
	if spec := cmp.Or(variantSpecs[p], proxySpecs[p]); spec != nil {
		if h.method(w, r, spec.name, http.MethodPost) {
			h.commands(w, r, spec)
		}
		return true
	}
	if a, ok := asyncRoutes[p]; ok {
		if h.method(w, r, p, http.MethodPost) {
			h.async(w, r, p, a.spec, a.kind)
		}
		return true
	}
	if strings.HasPrefix(p, proxyPrefix) {
		h.unsupported(w, r, proxyPrefix+"*", "no such typed route: the proxy's verbs are "+proxyVerbList+", and /ProxyService/ExecuteCmd takes any command")
		return true
	}
	return h.operator(w, r)
}

// unsupported answers a route of a concept the engine does not have: 501
// "unsupported", and what replaces it, to any global token.
func (h *Handler) unsupported(w http.ResponseWriter, r *http.Request, route, instead string) {
	if h.allow(w, r, route, false) {
		h.sendStatus(w, route, http.StatusNotImplemented, false, Status{Code: CodeUnsupported, Message: fmt.Sprintf("%s is not served: %s", r.URL.Path, instead)})
	}
}

// allow checks r's token on an operator's route: any global token reads,
// a read-write one changes (write). It replies and returns false when the
// token does not allow it.
func (h *Handler) allow(w http.ResponseWriter, r *http.Request, route string, write bool) bool {
	switch acc := h.tokens.check(r); {
	case acc == accessNone:
		h.unauthorized(w, route, false, false)
		return false
	case write && acc != accessWrite:
		h.sendStatus(w, route, http.StatusForbidden, false, Status{Code: CodeForbidden, Message: "a read-only token cannot run " + route})
		return false
	}
	return true
}

// loadVersion is the checked routes' field beyond /execute's.
type loadVersion struct {
	LoadVersion *unsigned `json:"load_version"`
}

// unsigned is an unsigned integer field: in MessagePack as in JSON, a
// negative or fractional one is refused.
type unsigned uint64

// errLoadVersion refuses a load_version that is not an unsigned integer.
var errLoadVersion = fmt.Errorf("%w: load_version is not an unsigned integer", ErrBadRequest)

// DecodeMsgpack implements msgpack.CustomDecoder.
func (u *unsigned) DecodeMsgpack(d *msgpack.Decoder) error {
	var v wire.ShardID // the same rule
	if v.DecodeMsgpack(d) != nil {
		return errLoadVersion
	}
	*u = unsigned(v)
	return nil
}

// checked is decode, then the checked routes' load_version, required.
func checked(decode func([]byte, bool, *cmdReq) error) func([]byte, bool, *cmdReq) error {
	return func(body []byte, mp bool, x *cmdReq) error {
		if err := decode(body, mp, x); err != nil {
			return err
		}
		var v loadVersion
		if err := wire.DecodeValue(body, mp, &v); err != nil {
			return err
		}
		if v.LoadVersion == nil {
			return fmt.Errorf("%w: missing field `load_version`", ErrBadRequest)
		}
		return nil
	}
}

// finishChecked wraps the reply as the original's checked routes do: the
// check's status (always ok) and the reply of /execute or /batch_execute.
func finishChecked(x *cmdReq, reply []byte) ([]byte, error) {
	return wire.EncodeValue(struct {
		Status   Status   `json:"status"`
		Response rawValue `json:"response"`
	}{Status{OK: true, Code: CodeOK}, reply}, x.mp)
}

// rawValue is a value kept as it is encoded, JSON or MessagePack, to be
// placed in a reply as it is.
type rawValue []byte

// UnmarshalJSON implements json.Unmarshaler.
func (v *rawValue) UnmarshalJSON(b []byte) error {
	*v = append((*v)[:0], b...)
	return nil
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (v *rawValue) DecodeMsgpack(d *msgpack.Decoder) error {
	b, err := d.DecodeRaw()
	*v = rawValue(b)
	return err
}

// MarshalJSON implements json.Marshaler.
func (v rawValue) MarshalJSON() ([]byte, error) {
	if v == nil {
		return []byte("null"), nil
	}
	return v, nil
}

// EncodeMsgpack implements msgpack.CustomEncoder.
func (v rawValue) EncodeMsgpack(e *msgpack.Encoder) error {
	if v == nil {
		return e.EncodeNil()
	}
	return msgpack.RawMessage(v).EncodeMsgpack(e)
}

// replicationMode is a command's replication_mode on the replicated
// routes: how its write is to be acknowledged.
type replicationMode string

const (
	// replInherit: as its table does.
	replInherit replicationMode = "inherit"
	// replAsync: once the write reached the operating system.
	replAsync replicationMode = "async_storage"
	// replSync: once it is on stable storage.
	replSync replicationMode = "sync_storage"
	// replRaft: once a quorum of the shard's replicas has it.
	replRaft replicationMode = "raft"
)

func parseReplication(s string) (replicationMode, error) {
	switch m := replicationMode(s); m {
	case "":
		return replInherit, nil
	case replInherit, replAsync, replSync, replRaft:
		return m, nil
	}
	return "", fmt.Errorf("%w: unknown variant `%s` of replication_mode, expected one of inherit, async_storage, sync_storage, raft", ErrBadRequest, s)
}

// replicationReport is what came of a command's replication_mode, as the
// original reports it: the mode asked for, the one the write had (a
// read's is inherit), and why not when it was refused.
type replicationReport struct {
	Requested       replicationMode `json:"requested_mode"`
	Effective       replicationMode `json:"effective_mode"`
	Write           bool            `json:"write_command"`
	Accepted        bool            `json:"accepted"`
	RestartRequired bool            `json:"restart_required"`
	Reason          string          `json:"reason"`
}

func decodeReplicated(body []byte, mp bool, x *cmdReq) error {
	if err := decodeExecute(body, mp, x); err != nil {
		return err
	}
	var v struct {
		Mode string `json:"replication_mode"`
	}
	if err := wire.DecodeValue(body, mp, &v); err != nil {
		return err
	}
	m, err := parseReplication(v.Mode)
	x.modes = append(x.modes[:0], m)
	return err
}

// replicatedBatch is /batch_execute_replicated's body: each command with
// its replication_mode.
type replicatedBatch struct {
	requestAddress
	Commands []struct {
		Command *Command `json:"command"`
		Mode    string   `json:"replication_mode"`
	} `json:"commands"`
}

func decodeReplicatedBatch(body []byte, mp bool, x *cmdReq) error {
	var b replicatedBatch
	if err := decodeAddressed(body, mp, &b, &b.requestAddress, x); err != nil {
		return err
	}
	x.req.Commands, x.modes = x.req.Commands[:0], x.modes[:0]
	for i, c := range b.Commands {
		if c.Command == nil {
			return fmt.Errorf("%w: commands[%d]: missing field `command`", ErrBadRequest, i)
		}
		m, err := parseReplication(c.Mode)
		if err != nil {
			return fmt.Errorf("commands[%d]: %w", i, err)
		}
		x.req.Commands = append(x.req.Commands, *c.Command)
		x.modes = append(x.modes, m)
	}
	return nil
}

// rawsReplicatedBatch are the commands of a /batch_execute_replicated
// body as sent.
func rawsReplicatedBatch(body []byte, mp bool) ([][]byte, error) {
	var b struct {
		Commands []struct {
			Command rawValue `json:"command"`
		} `json:"commands"`
	}
	err := wire.DecodeValue(body, mp, &b)
	out := make([][]byte, len(b.Commands))
	for i, c := range b.Commands {
		out[i] = c.Command
	}
	return out, err
}

// finishReplicatedBatch adds the commands' replication reports to the
// batch's reply.
func finishReplicatedBatch(x *cmdReq, reply []byte) ([]byte, error) {
	var out struct {
		Status      Status              `json:"status"`
		Responses   rawValue            `json:"responses"`
		Replication []replicationReport `json:"replication"`
	}
	if err := wire.DecodeValue(reply, x.mp, &out); err != nil {
		return nil, err
	}
	out.Replication = append([]replicationReport{}, x.reports...)
	return wire.EncodeValue(out, x.mp)
}

// replicate checks command i's replication_mode against what its table
// does, and reports it (x.reports): false, and the status to answer, when
// the table cannot acknowledge the write so. A read runs whatever its
// mode; a write to a table that does not exist runs, to fail as it does.
func (h *Handler) replicate(x *cmdReq, i int) (Status, bool) {
	cl := &x.calls[i]
	rep := replicationReport{Requested: x.modes[i], Effective: replInherit, Write: cl.Write(), Accepted: true}
	if rep.Write {
		c := cl.Lend()
		ns, name := cmp.Or(c.Namespace, ts.DefaultNamespace), cmp.Or(c.Table, ts.DefaultTable)
		has := h.replicationOf(ns, name)
		rep.Effective = cmp.Or(has, rep.Requested)
		switch {
		case rep.Requested == replRaft && has != "" && has != replRaft:
			rep.Accepted = false
			if h.opts.Raft == nil {
				rep.Reason = "replication_mode raft needs a table replicated by raft, which only a cluster member on the raft backend has; a single node serves inherit, sync_storage and async_storage"
			} else {
				rep.Reason = fmt.Sprintf("table %s/%s is not replicated by raft here: a cluster replicates its routed table only (on the raft backend)", ns, name)
			}
		case rep.Requested == replSync && has == replAsync:
			rep.Accepted = false
			rep.Reason = fmt.Sprintf("table %s/%s acknowledges writes before fsync (async): sync_storage needs a durable table (POST /tables without async), or send inherit", ns, name)
		case rep.Requested == replAsync && has != replAsync && has != "":
			rep.Reason = "the table acknowledges a write once it is durable, which async_storage allows"
		}
	}
	x.reports = append(x.reports, rep)
	if !rep.Accepted {
		return Status{Code: CodeUnsupported, Message: rep.Reason}, false
	}
	return Status{}, true
}

// replicationOf is how table namespace/name acknowledges writes: raft,
// async_storage or sync_storage; "" for a table that does not exist.
func (h *Handler) replicationOf(namespace, name string) replicationMode {
	if h.opts.Raft != nil && h.opts.Raft(namespace, name) {
		return replRaft
	}
	o, err := h.opts.Engine.TableOptions(namespace, name)
	switch {
	case err != nil:
		return ""
	case o.Async:
		return replAsync
	}
	return replSync
}

// async serves an async route: the request is taken as spec's route
// takes it, refused at once if it cannot be, else run as a job whose
// reply /jobs/{id} gives.
func (h *Handler) async(w http.ResponseWriter, r *http.Request, route string, spec *cmdSpec, kind string) {
	x := h.prepare(w, r, spec, route)
	if x == nil {
		return
	}
	// The job outlives the request: it keeps its headers (a cluster
	// forwards them), not its end.
	rr := r.Clone(context.WithoutCancel(r.Context()))
	run := func(ctx context.Context) (int, []byte) {
		defer h.putReq(x)
		rec := &recorder{header: http.Header{}}
		h.dispatch(rec, rr.WithContext(ctx), x)
		return rec.code, rec.body.Bytes()
	}
	h.submit(w, route, kind, x.tenant, x.mp, run)
}
