package flowhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// createBody is POST /flows (FLOW.CREATE).
type createBody struct {
	ID            string  `json:"id"`
	Type          string  `json:"type"`
	State         string  `json:"state"`
	Payload       *string `json:"payload"`
	PayloadBase64 *string `json:"payload_base64"`
	// RunAtMs is when the flow is due (Unix ms); now when absent.
	RunAtMs       *int64            `json:"run_at_ms"`
	Priority      int64             `json:"priority"`
	PartitionKey  string            `json:"partition_key"`
	ParentFlowID  string            `json:"parent_flow_id"`
	RootFlowID    string            `json:"root_flow_id"`
	CorrelationID string            `json:"correlation_id"`
	Attributes    map[string]string `json:"attributes"`
	// MaxActiveMs is positive, or "infinity" for no bound; the policy's
	// when absent.
	MaxActiveMs *maxActive `json:"max_active_ms"`
	Idempotent  bool       `json:"idempotent"`
}

func (b *createBody) flowID() *string { return &b.ID }

func (b *createBody) command() (flow.Command, error) {
	if b.ID == "" {
		return nil, required("id")
	}
	if b.Type == "" {
		return nil, required("type")
	}
	payload, _, err := bytesArg("payload", b.Payload, b.PayloadBase64)
	if err != nil {
		return nil, err
	}
	c := &flow.Create{
		ID: b.ID, Type: b.Type, State: b.State, Payload: payload, Priority: b.Priority, Partition: b.PartitionKey,
		ParentID: b.ParentFlowID, RootID: b.RootFlowID, CorrelationID: b.CorrelationID,
		Attributes: attrs(b.Attributes), Idempotent: b.Idempotent,
	}
	if b.RunAtMs != nil {
		c.RunAtMs, c.HasRunAt = *b.RunAtMs, true
	}
	if m := b.MaxActiveMs; m != nil {
		switch {
		case m.Inf:
			c.MaxActiveMs = -1
		case m.Ms <= 0:
			return nil, invalid("max_active_ms must be positive or \"infinity\"")
		default:
			c.MaxActiveMs = m.Ms
		}
	}
	return c, nil
}

// apply runs the command of POST /flows/{id}/{op}.
func (h *handler) apply(ctx context.Context, c flow.Command) (flow.Record, error) {
	switch c := c.(type) {
	case *flow.Complete:
		return h.fl.Complete(ctx, *c)
	case *flow.Fail:
		return h.fl.Fail(ctx, *c)
	case *flow.Retry:
		return h.fl.Retry(ctx, *c)
	case *flow.Cancel:
		return h.fl.Cancel(ctx, *c)
	case *flow.ExtendLease:
		return h.fl.ExtendLease(ctx, *c)
	case *flow.Transition:
		return h.fl.Transition(ctx, *c)
	case *flow.Rewind:
		return h.fl.Rewind(ctx, *c)
	}
	return flow.Record{}, fmt.Errorf("%w: %T", flow.ErrInvalid, c)
}

// create serves POST /flows: 201 when this request made the flow, 200
// when an idempotent create found it made already (by the same
// arguments).
func (h *handler) create(w http.ResponseWriter, r *http.Request) {
	var b createBody
	if err := decodeBody(r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	cmd, err := b.command()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	c := cmd.(*flow.Create)
	// The record does not say whether the call made it: an idempotent
	// create is first tried as a plain one, which refuses an existing
	// flow without changing anything.
	plain := *c
	plain.Idempotent = false
	status := http.StatusCreated
	rec, err := h.fl.Create(r.Context(), plain)
	if c.Idempotent && errors.Is(err, flow.ErrExists) {
		status = http.StatusOK
		rec, err = h.fl.Create(r.Context(), *c)
	}
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if status == http.StatusCreated {
		w.Header().Set("Location", "/flows/"+url.PathEscape(rec.ID))
	}
	writeJSON(w, status, record(rec))
}

// one serves POST /flows/{id}/{op}.
func (h *handler) one(w http.ResponseWriter, r *http.Request) {
	mk := oneOps[r.PathValue("op")]
	if mk == nil {
		h.noRoute(w, r)
		return
	}
	b := mk()
	if err := decodeBody(r, b); err != nil {
		h.fail(w, r, err)
		return
	}
	id := r.PathValue("id")
	if p := b.flowID(); *p != "" && *p != id {
		h.fail(w, r, invalid("the body's id %q is not the path's %q", *p, id))
		return
	}
	*b.flowID() = id
	cmd, err := b.command()
	if err != nil {
		h.fail(w, r, err)
		return
	}
	rec, err := h.apply(r.Context(), cmd)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, record(rec))
}

// get serves GET /flows/{id}.
func (h *handler) get(w http.ResponseWriter, r *http.Request) {
	rec, err := h.fl.Get(r.Context(), r.PathValue("id"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, record(rec))
}

// history serves GET /flows/{id}/history?count=n&rev=true.
func (h *handler) history(w http.ResponseWriter, r *http.Request) {
	if r.PathValue("sub") != "history" {
		h.noRoute(w, r)
		return
	}
	q := r.URL.Query()
	count, rev := 0, false
	if s := q.Get("count"); s != "" {
		n, err := strconv.Atoi(s)
		if err != nil || n <= 0 {
			h.fail(w, r, invalid("count must be a positive integer"))
			return
		}
		count = n
	}
	if s := q.Get("rev"); s != "" {
		var err error
		if rev, err = strconv.ParseBool(s); err != nil {
			h.fail(w, r, invalid("rev must be true or false"))
			return
		}
	}
	es, err := h.fl.History(r.Context(), r.PathValue("id"), count, rev)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, struct {
		Events []eventJSON `json:"events"`
	}{events(es)})
}
