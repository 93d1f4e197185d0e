package flowhttp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// reqError is a request the handler refuses before the store sees it:
// its status, code and message.
type reqError struct {
	status int
	code   string
	msg    string
}

func (e *reqError) Error() string { return e.msg }

// invalid is a 400 invalid_argument.
func invalid(format string, args ...any) error {
	return &reqError{http.StatusBadRequest, "invalid_argument", fmt.Sprintf(format, args...)}
}

// codes maps the store's errors to an answer. The first that matches
// wins.
var codes = []struct {
	err    error
	status int
	code   string
}{
	{flow.ErrNotFound, http.StatusNotFound, "not_found"},
	{flow.ErrScheduleNotFound, http.StatusNotFound, "schedule_not_found"},
	{flow.ErrExists, http.StatusConflict, "exists"},
	{flow.ErrScheduleExists, http.StatusConflict, "schedule_exists"},
	{flow.ErrIdempotentConflict, http.StatusConflict, "idempotency_conflict"},
	{flow.ErrStaleLease, http.StatusConflict, "stale_lease"},
	{flow.ErrTerminal, http.StatusConflict, "terminal"},
	{flow.ErrNotTerminal, http.StatusConflict, "not_terminal"},
	{flow.ErrWrongState, http.StatusConflict, "wrong_state"},
	{flow.ErrPolicyGeneration, http.StatusConflict, "policy_generation"},
	// Naming running as a target is wrong whatever the flow's state.
	{flow.ErrRunningState, http.StatusBadRequest, "running_state"},
	{flow.ErrInvalid, http.StatusBadRequest, "invalid_argument"},
	{ferricstore.ErrCrossShardBatch, http.StatusBadRequest, "batch_crosses_shards"},
	{ferricstore.ErrClosed, http.StatusServiceUnavailable, "closed"},
	{ferricstore.ErrFailed, http.StatusServiceUnavailable, "failed"},
	{context.Canceled, http.StatusServiceUnavailable, "canceled"},
	{context.DeadlineExceeded, http.StatusServiceUnavailable, "deadline_exceeded"},
}

// errorJSON is an error's body: {"error": {...}}, also a batch item's.
type errorJSON struct {
	Code    string `json:"code"`
	Message string `json:"message"`
	// Index is the failed item of an all-or-nothing batch.
	Index *int `json:"index,omitempty"`
}

// classify returns err's status and body.
func classify(err error) (int, errorJSON) {
	var be *flow.BatchError
	if errors.As(err, &be) {
		status, body := classify(be.Err)
		body.Index = &be.Index
		return status, body
	}
	var re *reqError
	if errors.As(err, &re) {
		return re.status, errorJSON{Code: re.code, Message: re.msg}
	}
	var mb *http.MaxBytesError
	if errors.As(err, &mb) {
		return http.StatusRequestEntityTooLarge, errorJSON{Code: "body_too_large", Message: fmt.Sprintf("the body is over %d bytes", mb.Limit)}
	}
	for _, c := range codes {
		if errors.Is(err, c.err) {
			return c.status, errorJSON{Code: c.code, Message: err.Error()}
		}
	}
	return http.StatusInternalServerError, errorJSON{Code: "internal", Message: err.Error()}
}

// fail answers err, and logs it when the store failed rather than the
// request.
func (h *handler) fail(w http.ResponseWriter, r *http.Request, err error) {
	status, body := classify(err)
	if status >= 500 {
		h.log.Warn("flow request failed", "method", r.Method, "path", r.URL.Path, "status", status, "err", err)
	}
	writeJSON(w, status, struct {
		Error errorJSON `json:"error"`
	}{body})
}

// writeJSON answers v with status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	enc := json.NewEncoder(w)
	// Payloads are data, not HTML: keep <, > and & as they were sent.
	enc.SetEscapeHTML(false)
	_ = enc.Encode(v)
}
