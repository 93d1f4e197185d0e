package flowhttp

import (
	"encoding/json"
	"net/http"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// batchBody is POST /flows/batch (the FLOW.*_MANY verbs): items of one
// op, each the op's body with its id.
type batchBody struct {
	Op string `json:"op"`
	// Independent applies each item alone; otherwise they are applied all
	// or none, and must name flows of one shard (a shared {hash tag}).
	Independent bool              `json:"independent"`
	Items       []json.RawMessage `json:"items"`
}

// itemJSON is one item's answer: its flow or its error.
type itemJSON struct {
	Flow  *recordJSON `json:"flow,omitempty"`
	Error *errorJSON  `json:"error,omitempty"`
}

// batch serves POST /flows/batch. Every item is read before any is
// applied, so a malformed one changes nothing; it is answered 400 with
// its index, as is the failed item of an all-or-nothing batch with that
// failure's status. Otherwise the answer is 200, each item with its flow
// or, when independent, its own error.
func (h *handler) batch(w http.ResponseWriter, r *http.Request) {
	var b batchBody
	if err := decodeBody(r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	mk := oneOps[b.Op]
	if b.Op == "create" {
		mk = func() commandBody { return new(createBody) }
	}
	if mk == nil {
		h.fail(w, r, invalid("op must be create, complete, fail, retry, cancel, transition, extend_lease or rewind"))
		return
	}
	if len(b.Items) == 0 || len(b.Items) > flow.MaxBatch {
		h.fail(w, r, invalid("items must hold 1 to %d items", flow.MaxBatch))
		return
	}
	cmds := make([]flow.Command, len(b.Items))
	for i, raw := range b.Items {
		item := mk()
		err := decodeRaw(raw, item)
		if err == nil && *item.flowID() == "" {
			err = required("id")
		}
		if err == nil {
			cmds[i], err = item.command()
		}
		if err != nil {
			h.fail(w, r, &flow.BatchError{Index: i, Err: err})
			return
		}
	}
	res, err := h.fl.Batch(r.Context(), cmds, b.Independent)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	out := make([]itemJSON, len(res))
	for i, it := range res {
		if it.Err != nil {
			_, e := classify(it.Err)
			out[i].Error = &e
			continue
		}
		rec := record(it.Record)
		out[i].Flow = &rec
	}
	writeJSON(w, http.StatusOK, struct {
		Items []itemJSON `json:"items"`
	}{out})
}
