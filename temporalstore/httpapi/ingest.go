package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strconv"

	"github.com/vmihailenco/msgpack/v5"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// IngestRequest is the body of POST /ingest: a batch of one source's
// partition (see temporalstore.Engine.Ingest). Each record is a wire
// command (any single-key write kind, native or the original's) and its
// offset.
type IngestRequest struct {
	Namespace string         `json:"namespace,omitempty" msgpack:"namespace,omitempty"`
	TableName string         `json:"table_name,omitempty" msgpack:"table_name,omitempty"`
	Source    string         `json:"source" msgpack:"source"`
	Partition int32          `json:"partition" msgpack:"partition"`
	Records   []IngestRecord `json:"records" msgpack:"records"`
}

// IngestRecord is one record of an IngestRequest.
type IngestRecord struct {
	Offset  int64   `json:"offset" msgpack:"offset"`
	Command Command `json:"command" msgpack:"command"`
}

// IngestResponse is the reply of /ingest: the batch status, one result per
// record ("applied", "duplicate" or "dead_lettered" with the error), and
// the partition's committed offset.
type IngestResponse struct {
	Status    Status         `json:"status" msgpack:"status"`
	Results   []IngestResult `json:"results" msgpack:"results"`
	Committed int64          `json:"committed" msgpack:"committed"`
}

// IngestResult is one record's outcome.
type IngestResult struct {
	Status string `json:"status" msgpack:"status"`
	Error  string `json:"error,omitempty" msgpack:"error,omitempty"`
}

var ingestStatusNames = map[ts.IngestStatus]string{
	ts.IngestApplied: "applied", ts.IngestDuplicate: "duplicate", ts.IngestDeadLettered: "dead_lettered",
}

// ingest serves POST /ingest. A record that does not translate is dead
// lettered like one the engine refuses; a batch that cannot be taken is
// 400; a failure that is not the records' is 503 with the engine's code,
// and the source retries the batch.
func (h *Handler) ingest(w http.ResponseWriter, r *http.Request) {
	const route = "/ingest"
	mp := isMsgpack(r)
	switch h.tokens.check(r) {
	case accessNone:
		h.unauthorized(w, route, mp, false)
		return
	case accessRead:
		h.fail(w, route, http.StatusForbidden, mp, Status{Code: CodeForbidden, Message: "a read-only token cannot ingest"})
		return
	}
	var req IngestRequest
	if _, ok := h.readBody(w, r, route, mp, &req); !ok {
		return
	}
	if len(req.Records) > h.opts.MaxBatchCommands {
		h.fail(w, route, http.StatusRequestEntityTooLarge, mp, Status{Code: CodeTooLarge, Message: fmt.Sprintf("batch of %d records exceeds %d", len(req.Records), h.opts.MaxBatchCommands)})
		return
	}
	b := ts.IngestBatch{Namespace: req.Namespace, Table: req.TableName, Source: req.Source, Partition: req.Partition}
	for _, rec := range req.Records {
		cl, err := wire.Translate(&rec.Command, req.Namespace, req.TableName, "")
		cmd := cl.Command()
		if err != nil || cl.Unsupported() {
			// Not understood: the engine will dead-letter it as invalid.
			cmd = ts.Command{Kind: ts.Kind("untranslatable:" + rec.Command.Kind), Key: rec.Command.Key}
		}
		b.Records = append(b.Records, ts.IngestRecord{Offset: rec.Offset, Command: cmd})
	}
	res, err := h.opts.Engine.Ingest(r.Context(), b)
	switch {
	case errors.Is(err, ts.ErrIngest):
		h.fail(w, route, http.StatusBadRequest, mp, Status{Code: CodeBadRequest, Message: err.Error()})
		return
	case err != nil:
		s := wire.StatusOfError(err)
		h.fail(w, route, http.StatusServiceUnavailable, mp, s)
		return
	}
	out := IngestResponse{Status: Status{OK: true, Code: CodeOK}, Committed: res.Committed}
	for i, st := range res.Statuses {
		ir := IngestResult{Status: ingestStatusNames[st]}
		if res.Errors[i] != nil {
			ir.Error = res.Errors[i].Error()
		}
		out.Results = append(out.Results, ir)
	}
	h.sendValue(w, route, mp, out)
}

// ingestOffset serves GET /ingest_offset?source=&partition=[&namespace=&table_name=]:
// {"status":…,"next_offset":n}, where the source resumes.
func (h *Handler) ingestOffset(w http.ResponseWriter, r *http.Request) {
	const route = "/ingest_offset"
	if h.tokens.check(r) == accessNone {
		h.unauthorized(w, route, false, false)
		return
	}
	q := r.URL.Query()
	part, err := strconv.ParseInt(q.Get("partition"), 10, 32)
	if err != nil || part < 0 {
		h.fail(w, route, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: "partition must be an unsigned integer"})
		return
	}
	next, err := h.opts.Engine.IngestOffset(r.Context(), q.Get("namespace"), q.Get("table_name"), q.Get("source"), int32(part))
	if err != nil {
		code := http.StatusServiceUnavailable
		if errors.Is(err, ts.ErrIngest) {
			code = http.StatusBadRequest
		}
		h.fail(w, route, code, false, wire.StatusOfError(err))
		return
	}
	h.sendValue(w, route, false, map[string]any{"status": Status{OK: true, Code: CodeOK}, "next_offset": next})
}

// deadLetters serves GET /dead_letters?source=[&namespace=&table_name=]:
// the source's dead letters as JSON lines (application/x-ndjson), oldest
// first.
func (h *Handler) deadLetters(w http.ResponseWriter, r *http.Request) {
	const route = "/dead_letters"
	if h.tokens.check(r) == accessNone {
		h.unauthorized(w, route, false, false)
		return
	}
	q := r.URL.Query()
	dl, err := h.opts.Engine.DeadLetters(r.Context(), q.Get("namespace"), q.Get("table_name"), q.Get("source"))
	if err != nil {
		code := http.StatusServiceUnavailable
		if errors.Is(err, ts.ErrIngest) {
			code = http.StatusBadRequest
		}
		h.fail(w, route, code, false, wire.StatusOfError(err))
		return
	}
	w.Header().Set("Content-Type", "application/x-ndjson")
	w.WriteHeader(http.StatusOK)
	enc := json.NewEncoder(w)
	for _, d := range dl {
		_ = enc.Encode(d)
	}
	h.metrics.request(route, http.StatusOK)
}

// sendValue writes v as the reply, in JSON or MessagePack.
func (h *Handler) sendValue(w http.ResponseWriter, route string, mp bool, v any) {
	var body []byte
	var err error
	if mp {
		body, err = msgpack.Marshal(v)
	} else {
		body, err = json.Marshal(v)
	}
	if err != nil {
		h.fail(w, route, http.StatusInternalServerError, mp, Status{Code: "internal", Message: err.Error()})
		return
	}
	h.send(w, route, http.StatusOK, mp, body)
}
