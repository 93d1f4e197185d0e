package flow

import (
	"errors"
	"strconv"
)

// The states the package gives a meaning to. Any other non-empty name is
// a state of the caller's workflow: a flow waits in it until claimed.
const (
	// Queued is a new flow's state unless Create names another.
	Queued = "queued"
	// Running is a claimed flow's state, entered only by a claim.
	Running = "running"
	// Completed, Failed and Cancelled are terminal: a flow in one stays.
	Completed = "completed"
	Failed    = "failed"
	Cancelled = "cancelled"
)

// Terminal reports whether state is terminal.
func Terminal(state string) bool {
	return state == Completed || state == Failed || state == Cancelled
}

// Errors of Apply. Their texts are the RESP errors' without "ERR ".
var (
	ErrNotFound           = errors.New("flow not found")
	ErrExists             = errors.New("flow already exists")
	ErrIdempotentConflict = errors.New("flow idempotency conflict")
	ErrStaleLease         = errors.New("stale flow lease")
	ErrTerminal           = errors.New("flow is terminal; use FLOW.REWIND")
	ErrNotTerminal        = errors.New("flow is not terminal")
	ErrWrongState         = errors.New("flow wrong state")
	ErrRunningState       = errors.New("flow running state is only entered by FLOW.CLAIM_DUE")
	ErrPolicyGeneration   = errors.New("flow policy generation mismatch")
	ErrScheduleNotFound   = errors.New("flow schedule not found")
	ErrScheduleExists     = errors.New("flow schedule already exists")
	// ErrInvalid wraps an argument Apply cannot take (an empty ID or
	// type, a negative lease, an unknown backoff kind...).
	ErrInvalid = errors.New("flow invalid argument")
)

// Attr is one named attribute of a flow.
type Attr struct{ Key, Value string }

// Record is one flow. Records returned by a Table are copies that share
// their byte slices and attributes with the table, which never changes
// those in place (it replaces them): treat them as read-only.
type Record struct {
	ID, Type, State string
	Partition       string
	Payload         []byte
	// Result is what COMPLETE left; Error what the last FAIL, RETRY or
	// CANCEL said.
	Result, Error []byte
	// Version rises by one with every change; History has one event per
	// version.
	Version  uint64
	Attempts int64
	Priority int64
	// Times are Unix milliseconds. NextRunAtMs is when a waiting flow is
	// due, and a running one's lease deadline.
	CreatedMs, UpdatedMs, NextRunAtMs int64
	// LeaseOwner and LeaseToken name the lease of a running flow, which
	// ends at LeaseDeadlineMs; Fencing rises by one with every claim.
	LeaseOwner, LeaseToken string
	LeaseDeadlineMs        int64
	Fencing                uint64
	// RunState is the state a running flow was claimed from, where a
	// retry sends it back.
	RunState                        string
	ParentID, RootID, CorrelationID string
	Attributes                      []Attr
	// MaxActiveMs fails the flow once it has been alive that long
	// without reaching a terminal state (0: no bound).
	MaxActiveMs int64

	seq     uint64 // creation order, for claims
	history []Event
}

// Event is one change of a flow.
type Event struct {
	// ID is "<ms>-<version>" (filled in by Table.History).
	ID       string
	Kind     string
	From, To string
	Worker   string
	Fencing  uint64
	Ms       int64
	Version  uint64
	Detail   string
}

// Event kinds.
const (
	EventCreated       = "created"
	EventClaimed       = "claimed"
	EventReclaimed     = "reclaimed"
	EventLeaseExtended = "lease_extended"
	EventTransitioned  = "transitioned"
	EventRetry         = "retry"
	EventCompleted     = "completed"
	EventFailed        = "failed"
	EventCancelled     = "cancelled"
	EventRewound       = "rewound"
	EventExpired       = "expired"
)

// clone returns a copy of r without its history.
func (r *Record) clone() Record {
	c := *r
	c.history = nil
	return c
}

// event records a change of r at ms: the version rises, the event is
// appended.
func (r *Record) event(ms int64, kind, from, to, worker, detail string) {
	r.Version++
	r.UpdatedMs = ms
	if r.history == nil {
		r.history = make([]Event, 0, 3) // created, claimed, finished: most flows' whole life
	}
	r.history = append(r.history, Event{Kind: kind, From: from, To: to, Worker: worker, Fencing: r.Fencing, Ms: ms, Version: r.Version, Detail: detail})
}

// leaseToken is the token of a claim: "worker:now:fencing".
func leaseToken(worker string, now int64, fencing uint64) string {
	return worker + ":" + strconv.FormatInt(now, 10) + ":" + strconv.FormatUint(fencing, 10)
}
