package httpapi

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// Jobs: the async routes' requests and the maintenance routes' rounds run
// in the background, Options.JobWorkers at once, and are read at
//
//	GET  /jobs/{id}         {"job_id", "kind", "status", "output": {kind: reply} | null, "submitted_at_ms", "finished_at_ms"}
//	POST /jobs/{id}/cancel  the same, once canceled
//
// as the original's data node answers. A submission answers 200 with the
// job as it stands (status code "queued"); "running" follows, then the
// reply's own status (ok, or the request's failure) with the route's
// reply as output, or "canceled". A job answers in the encoding it was
// submitted in. At most Options.MaxJobs are held: a submission beyond
// them waiting or running is refused (503 "queue_full"), and the oldest
// finished beyond them are forgotten (404).

// CodeQueueFull refuses a job while Options.MaxJobs wait or run (503).
const CodeQueueFull = "queue_full"

// Job states, the code of a job's status until it has finished.
const (
	jobQueued   = "queued"
	jobRunning  = "running"
	jobCanceled = "canceled"
)

// jobTimeout bounds a job's run.
const jobTimeout = 5 * time.Minute

// job is one submitted job. Its fields past the first are guarded by its
// table's mu.
type job struct {
	id        uint64
	kind      string
	tenant    string // a tenant token's tenant: only it, or a global token, sees the job
	mp        bool
	submitted time.Time

	state    string // jobQueued, jobRunning, or "" once finished
	finished time.Time
	status   Status
	output   []byte // the reply, in the job's encoding
	cancel   context.CancelFunc
}

// jobTable holds the jobs and runs them.
type jobTable struct {
	sem chan struct{} // a slot for each job running
	max int

	mu      sync.Mutex
	next    uint64
	byID    map[uint64]*job
	done    []uint64 // finished jobs, oldest first
	pending int
	// Totals since the handler was made.
	submitted, completed, rejected, canceled uint64
}

func newJobTable(workers, max int) *jobTable {
	return &jobTable{sem: make(chan struct{}, workers), max: max, byID: make(map[uint64]*job)}
}

// jobView is a job as /jobs/{id} shows it.
type jobView struct {
	JobID         uint64              `json:"job_id"`
	Kind          string              `json:"kind"`
	Status        Status              `json:"status"`
	Output        map[string]rawValue `json:"output"`
	SubmittedAtMs int64               `json:"submitted_at_ms"`
	FinishedAtMs  *int64              `json:"finished_at_ms"`
}

// view is j as it stands; the table's mu is held.
func (j *job) view() jobView {
	v := jobView{JobID: j.id, Kind: j.kind, Status: j.status, SubmittedAtMs: j.submitted.UnixMilli()}
	if j.state != "" {
		v.Status = Status{OK: true, Code: j.state}
		return v
	}
	v.FinishedAtMs = ptr(j.finished.UnixMilli())
	if j.output != nil {
		v.Output = map[string]rawValue{j.kind: j.output}
	}
	return v
}

// submit queues run as a job of kind and replies with it, or refuses it
// when the table is full. run returns the HTTP status and the reply.
func (h *Handler) submit(w http.ResponseWriter, route, kind, tenant string, mp bool, run func(ctx context.Context) (int, []byte)) {
	t := h.jobs
	t.mu.Lock()
	if t.pending >= t.max {
		t.rejected++
		t.mu.Unlock()
		h.fail(w, route, http.StatusServiceUnavailable, mp, Status{Code: CodeQueueFull, Message: fmt.Sprintf("%d jobs wait or run: retry later", t.max)})
		return
	}
	t.next++
	t.pending++
	t.submitted++
	ctx, cancel := context.WithTimeout(context.Background(), jobTimeout)
	j := &job{id: t.next, kind: kind, tenant: tenant, mp: mp, submitted: time.Now(), state: jobQueued, cancel: cancel}
	t.byID[j.id] = j
	v := j.view()
	t.mu.Unlock()
	go h.runJob(ctx, j, run)
	h.replyJob(w, route, v, mp)
}

// runJob runs j once a worker's slot is free, unless it was canceled.
func (h *Handler) runJob(ctx context.Context, j *job, run func(ctx context.Context) (int, []byte)) {
	t := h.jobs
	defer j.cancel()
	select {
	case t.sem <- struct{}{}:
	case <-ctx.Done():
		t.finish(j, Status{Code: jobCanceled, Message: ctx.Err().Error()}, nil)
		return
	}
	defer func() { <-t.sem }()
	t.mu.Lock()
	queued := j.state == jobQueued
	if queued {
		j.state = jobRunning
	}
	t.mu.Unlock()
	if !queued {
		return // canceled while it waited
	}
	defer func() {
		// A job's failure is the job's, not the server's.
		if p := recover(); p != nil {
			h.opts.Logger.Error("job panicked", "job", j.id, "kind", j.kind, "panic", p)
			t.finish(j, Status{Code: CodeInternal, Message: fmt.Sprintf("job panicked: %v", p)}, nil)
		}
	}()
	code, out := run(ctx)
	t.finish(j, replyStatus(code, out, j.mp), out)
}

// finish records j's end, and forgets the oldest finished jobs beyond
// the table's bound.
func (t *jobTable) finish(j *job, st Status, out []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.finishLocked(j, st, out)
}

// finishLocked is finish with t.mu held.
func (t *jobTable) finishLocked(j *job, st Status, out []byte) {
	if j.state == "" {
		return
	}
	if st.Code == jobCanceled {
		t.canceled++
	} else {
		t.completed++
	}
	j.state, j.status, j.output, j.finished = "", st, out, time.Now()
	t.pending--
	t.done = append(t.done, j.id)
	for len(t.done) > t.max {
		delete(t.byID, t.done[0])
		t.done = t.done[1:]
	}
}

// replyStatus is the status a reply of the command routes carries: its
// own "status" (an ExecuteResponse's, a batch's), or itself (a bare
// status); ok for any 200 that holds neither.
func replyStatus(code int, reply []byte, mp bool) Status {
	var v struct {
		Status *Status `json:"status"`
		OK     bool    `json:"ok"`
		Code   string  `json:"code"`
		Msg    string  `json:"message"`
	}
	switch err := wire.DecodeValue(reply, mp, &v); {
	case err == nil && v.Status != nil:
		return *v.Status
	case err == nil && v.Code != "":
		return Status{OK: v.OK, Code: v.Code, Message: v.Msg}
	case code == http.StatusOK:
		return Status{OK: true, Code: CodeOK}
	}
	return Status{Code: CodeInternal, Message: fmt.Sprintf("HTTP %d", code)}
}

// replyJob replies with a job, in its encoding.
func (h *Handler) replyJob(w http.ResponseWriter, route string, v jobView, mp bool) {
	b, err := wire.EncodeValue(v, mp)
	if err != nil {
		h.fail(w, route, http.StatusInternalServerError, mp, Status{Code: CodeInternal, Message: err.Error()})
		return
	}
	h.send(w, route, http.StatusOK, mp, b)
}

// jobRoute serves GET /jobs/{id} and POST /jobs/{id}/cancel. A tenant's
// token sees its tenant's jobs only; canceling takes a token that writes.
func (h *Handler) jobRoute(w http.ResponseWriter, r *http.Request) {
	rest := strings.TrimPrefix(r.URL.Path, "/jobs/")
	id, cancel := strings.CutSuffix(rest, "/cancel")
	route, method := "/jobs/{id}", http.MethodGet
	if cancel {
		route, method = "/jobs/{id}/cancel", http.MethodPost
	}
	if !h.method(w, r, route, method) {
		return
	}
	acc, tenant := h.access(r)
	switch {
	case acc == accessNone:
		h.unauthorized(w, route, false, false)
		return
	case cancel && acc != accessWrite:
		h.sendStatus(w, route, http.StatusForbidden, false, Status{Code: CodeForbidden, Message: "a read-only token cannot cancel a job"})
		return
	}
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		h.sendStatus(w, route, http.StatusBadRequest, false, Status{Code: CodeBadRequest, Message: fmt.Sprintf("job id %q is not an unsigned integer", id)})
		return
	}
	t := h.jobs
	t.mu.Lock()
	j := t.byID[n]
	if j == nil || tenant != "" && j.tenant != tenant {
		t.mu.Unlock()
		h.sendStatus(w, route, http.StatusNotFound, false, Status{Code: CodeNotFound, Message: fmt.Sprintf("no job %d: never submitted, or forgotten after %d more finished", n, t.max)})
		return
	}
	if cancel {
		// A running job's commands not yet run end with its context.
		j.cancel()
		if j.state == jobQueued {
			t.finishLocked(j, Status{Code: jobCanceled, Message: "canceled before it ran"}, nil)
		}
	}
	v := j.view()
	t.mu.Unlock()
	h.replyJob(w, route, v, j.mp)
}

// jobStats are the job table's totals, for /server/runtime_stats.
type jobStats struct {
	Workers   int    `json:"worker_threads"`
	MaxJobs   int    `json:"max_jobs"`
	Pending   int    `json:"queue_depth"`
	Held      int    `json:"jobs_held"`
	Submitted uint64 `json:"submitted_total"`
	Completed uint64 `json:"completed_total"`
	Rejected  uint64 `json:"rejected_total"`
	Canceled  uint64 `json:"canceled_total"`
}

func (t *jobTable) stats() jobStats {
	t.mu.Lock()
	defer t.mu.Unlock()
	return jobStats{Workers: cap(t.sem), MaxJobs: t.max, Pending: t.pending, Held: len(t.byID),
		Submitted: t.submitted, Completed: t.completed, Rejected: t.rejected, Canceled: t.canceled}
}

// recorder is a ResponseWriter keeping a job's reply.
type recorder struct {
	header http.Header
	code   int
	body   bytes.Buffer
}

func (rc *recorder) Header() http.Header { return rc.header }

func (rc *recorder) WriteHeader(code int) {
	if rc.code == 0 {
		rc.code = code
	}
}

func (rc *recorder) Write(p []byte) (int, error) {
	rc.WriteHeader(http.StatusOK)
	return rc.body.Write(p)
}
