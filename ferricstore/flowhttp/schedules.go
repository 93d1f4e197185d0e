package flowhttp

import (
	"net/http"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// scheduleBody is PUT /flows/schedules/{name} (FLOW.SCHEDULE.SET).
type scheduleBody struct {
	Type string `json:"type"`
	// EveryMs is the interval; 0 fires once. Required.
	EveryMs *int64 `json:"every_ms"`
	// StartAtMs is the first occurrence (Unix ms); now when absent.
	StartAtMs     *int64  `json:"start_at_ms"`
	State         string  `json:"state"`
	Payload       *string `json:"payload"`
	PayloadBase64 *string `json:"payload_base64"`
	Priority      int64   `json:"priority"`
	PartitionKey  string  `json:"partition_key"`
	// Overlap is allow (when absent), skip, queue_after_previous or
	// fail_schedule.
	Overlap string `json:"overlap"`
	// Replace replaces a schedule of the name; without it one is
	// schedule_exists.
	Replace bool `json:"replace"`
}

func (b *scheduleBody) command(name string) (flow.SetSchedule, error) {
	ss := flow.SetSchedule{Replace: b.Replace}
	if b.EveryMs == nil {
		return ss, required("every_ms")
	}
	payload, _, err := bytesArg("payload", b.Payload, b.PayloadBase64)
	if err != nil {
		return ss, err
	}
	ss.Schedule = flow.Schedule{
		Name: name, Type: b.Type, State: b.State, Partition: b.PartitionKey, Payload: payload,
		Priority: b.Priority, EveryMs: *b.EveryMs,
	}
	if b.StartAtMs != nil {
		ss.StartMs, ss.HasStart = *b.StartAtMs, true
	}
	if b.Overlap != "" {
		var ok bool
		if ss.Schedule.Overlap, ok = flow.ParseOverlap(b.Overlap); !ok {
			return ss, invalid("overlap must be allow, skip, queue_after_previous or fail_schedule")
		}
	}
	return ss, nil
}

// setSchedule serves PUT /flows/schedules/{name}: the schedule.
func (h *handler) setSchedule(w http.ResponseWriter, r *http.Request) {
	var b scheduleBody
	if err := decodeBody(r, &b); err != nil {
		h.fail(w, r, err)
		return
	}
	ss, err := b.command(r.PathValue("name"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	s, err := h.fl.SetSchedule(r.Context(), ss)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, schedule(s))
}

// getSchedule serves GET /flows/schedules/{name}.
func (h *handler) getSchedule(w http.ResponseWriter, r *http.Request) {
	s, err := h.fl.Schedule(r.Context(), r.PathValue("name"))
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, schedule(s))
}

// deleteSchedule serves DELETE /flows/schedules/{name}: 204, or 404
// schedule_not_found. The flows it made stay.
func (h *handler) deleteSchedule(w http.ResponseWriter, r *http.Request) {
	if err := h.fl.DeleteSchedule(r.Context(), r.PathValue("name")); err != nil {
		h.fail(w, r, err)
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// listSchedules serves GET /flows/schedules: {"schedules": [names]}, in
// order.
func (h *handler) listSchedules(w http.ResponseWriter, r *http.Request) {
	names, err := h.fl.Schedules(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	if names == nil {
		names = []string{}
	}
	writeJSON(w, http.StatusOK, struct {
		Schedules []string `json:"schedules"`
	}{names})
}

// stats serves GET /flows/stats (FLOW.STATS).
func (h *handler) stats(w http.ResponseWriter, r *http.Request) {
	n, err := h.fl.Counts(r.Context())
	if err != nil {
		h.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, countsJSON{
		Waiting: n.Waiting, Due: n.Due, Running: n.Running, ExpiredLeases: n.Expired,
		Completed: n.Completed, Failed: n.Failed, Cancelled: n.Cancelled, Schedules: n.Schedules,
	})
}
