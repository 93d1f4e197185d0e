package flow

import (
	"bytes"
	"errors"
	"fmt"
	"math"
	"slices"
)

// Limits of a command's arguments.
const (
	// MaxClaimLimit bounds Claim.Limit.
	MaxClaimLimit = 10_000
	// MaxBatch bounds a Batch's commands.
	MaxBatch = 10_000
)

// Command is one change Apply can make: *Create, *Claim, *Transition,
// *Complete, *Fail, *Retry, *Cancel, *ExtendLease, *Rewind, *SetPolicy,
// *SetSchedule, *DeleteSchedule, *Batch or *Tick.
type Command interface{ kind() byte }

// Result is what Apply did.
type Result struct {
	// Flow is the flow a command on one flow made or changed.
	Flow Record
	// Records are the flows a claim took.
	Records []Record
	// Items are a batch's results, one per command.
	Items []ItemResult
	// Changed reports whether the table changed: a command that did not
	// change it need not be logged.
	Changed bool
	// Fired, Coalesced, Skipped, Expired and Purged count what a Tick did.
	Fired, Coalesced, Skipped, Expired, Purged int
	// Reclaimed is how many of a claim's Records (the first ones) were
	// reclaimed from an expired lease.
	Reclaimed int
	// Waited is, for each record a claim took, how long it had been due
	// (ms; for a reclaimed flow, since its lease ran out).
	Waited []int64
	// Policy is SetPolicy's result; Schedule SetSchedule's.
	Policy   Policy
	Schedule Schedule
}

// ItemResult is one command's result in a Batch.
type ItemResult struct {
	Record Record
	Err    error
}

// BatchError is an all-or-nothing batch's failure: the command at Index
// failed with Err, and the batch changed nothing.
type BatchError struct {
	Index int
	Err   error
}

func (e *BatchError) Error() string { return fmt.Sprintf("%v (batch item %d)", e.Err, e.Index) }
func (e *BatchError) Unwrap() error { return e.Err }

// Apply applies c at now (Unix ms). On error the table is unchanged.
// The table keeps the byte slices and attributes of c (payloads,
// results): the caller must not change them afterwards.
func (t *Table) Apply(now int64, c Command) (Result, error) {
	// A single command checks everything before it changes anything; only
	// an all-or-nothing batch must undo the items before the one that
	// failed.
	var u *undo
	switch c := c.(type) {
	case *Batch:
		if !c.Independent {
			u = &undo{}
		}
	case *Tick:
		u = &undo{}
	}
	res, err := t.apply(now, c, u)
	if err != nil && u != nil {
		u.rollback(t)
	}
	if err != nil {
		return Result{}, err
	}
	return res, nil
}

func (t *Table) apply(now int64, c Command, u *undo) (Result, error) {
	switch c := c.(type) {
	case *Create:
		return t.create(now, c, u)
	case *Claim:
		return t.claim(now, c, u)
	case *Transition:
		return t.transition(now, c, u)
	case *Complete:
		return t.finish(now, c.ID, c.LeaseToken, c.Fencing, Completed, c.Result, u)
	case *Fail:
		return t.finish(now, c.ID, c.LeaseToken, c.Fencing, Failed, c.Error, u)
	case *Retry:
		return t.retry(now, c, u)
	case *Cancel:
		return t.cancel(now, c, u)
	case *ExtendLease:
		return t.extend(now, c, u)
	case *Rewind:
		return t.rewind(now, c, u)
	case *SetPolicy:
		return t.setPolicy(c, u)
	case *SetSchedule:
		return t.setSchedule(now, c, u)
	case *DeleteSchedule:
		return t.deleteSchedule(c, u)
	case *Batch:
		return t.batch(now, c, u)
	case *Tick:
		return t.tick(now, c, u)
	}
	return Result{}, fmt.Errorf("%w: unknown command %T", ErrInvalid, c)
}

// undo restores what a failed command changed.
type undo struct {
	saved []savedRecord
	seq   uint64
	seqOK bool
	fns   []func(*Table)
}

type savedRecord struct {
	id      string
	existed bool
	rec     Record
	hist    int
	ptr     *Record
}

// save remembers r (nil for a flow about to be made) before a change.
func (u *undo) save(t *Table, id string, r *Record) {
	if u == nil {
		return
	}
	if !u.seqOK {
		u.seq, u.seqOK = t.seq, true
	}
	if r == nil {
		u.saved = append(u.saved, savedRecord{id: id})
		return
	}
	u.saved = append(u.saved, savedRecord{id: id, existed: true, rec: *r, hist: len(r.history), ptr: r})
}

// onUndo adds fn to what rollback runs.
func (u *undo) onUndo(fn func(*Table)) {
	if u != nil {
		u.fns = append(u.fns, fn)
	}
}

func (u *undo) rollback(t *Table) {
	for i := len(u.fns) - 1; i >= 0; i-- {
		u.fns[i](t)
	}
	for i := len(u.saved) - 1; i >= 0; i-- {
		s := u.saved[i]
		if cur, ok := t.flows[s.id]; ok {
			t.unindex(cur)
			delete(t.flows, s.id)
		}
		if s.existed {
			*s.ptr = s.rec
			s.ptr.history = s.rec.history[:s.hist]
			t.flows[s.id] = s.ptr
			t.index(s.ptr)
		}
	}
	if u.seqOK {
		t.seq = u.seq
	}
}

// Create makes a flow.
type Create struct {
	ID, Type string
	// State is where it waits: Queued when empty; not Running nor a
	// terminal state.
	State   string
	Payload []byte
	// RunAtMs is when it is due (with HasRunAt); now otherwise.
	RunAtMs                         int64
	HasRunAt                        bool
	Priority                        int64
	Partition                       string
	ParentID, RootID, CorrelationID string
	Attributes                      []Attr
	// MaxActiveMs bounds its life (0: the policy's; negative: none).
	MaxActiveMs int64
	// Idempotent returns the existing flow of the same ID when it was
	// made with the same type, payload, partition, priority, relations
	// and attributes (ErrIdempotentConflict otherwise); without it an
	// existing ID is ErrExists.
	Idempotent bool
}

func (*Create) kind() byte { return kCreate }

func (t *Table) create(now int64, c *Create, u *undo) (Result, error) {
	state := c.State
	if state == "" {
		state = Queued
	}
	switch {
	case c.ID == "" || c.Type == "":
		return Result{}, fmt.Errorf("%w: a flow needs an id and a type", ErrInvalid)
	case state == Running:
		return Result{}, ErrRunningState
	case Terminal(state):
		return Result{}, ErrWrongState
	}
	if r, ok := t.flows[c.ID]; ok {
		if !c.Idempotent {
			return Result{}, ErrExists
		}
		if r.Type != c.Type || !bytes.Equal(r.Payload, c.Payload) || r.Partition != c.Partition || r.Priority != c.Priority ||
			r.ParentID != c.ParentID || r.RootID != c.RootID || r.CorrelationID != c.CorrelationID || !slices.Equal(r.Attributes, c.Attributes) {
			return Result{}, ErrIdempotentConflict
		}
		return Result{Flow: r.clone()}, nil
	}
	u.save(t, c.ID, nil)
	t.seq++
	r := &Record{
		ID: c.ID, Type: c.Type, State: state, Partition: c.Partition, Payload: c.Payload, Priority: c.Priority,
		CreatedMs: now, NextRunAtMs: now, ParentID: c.ParentID, RootID: c.RootID, CorrelationID: c.CorrelationID,
		Attributes: c.Attributes, seq: t.seq,
	}
	if c.HasRunAt {
		r.NextRunAtMs = c.RunAtMs
	}
	switch {
	case c.MaxActiveMs > 0:
		r.MaxActiveMs = c.MaxActiveMs
	case c.MaxActiveMs == 0:
		r.MaxActiveMs = t.Effective(c.Type, state).MaxActiveMs
	}
	r.event(now, EventCreated, "", state, "", "")
	t.flows[c.ID] = r
	t.index(r)
	return Result{Flow: r.clone(), Changed: true}, nil
}

// Claim leases due flows of a type in a state to a worker.
type Claim struct {
	Type, State, Worker string
	LeaseMs             int64
	Limit               int
	// Priority, with HasPriority, claims only flows of that priority.
	Priority    int64
	HasPriority bool
	// Partition, with HasPartition, claims only that partition's flows.
	Partition    string
	HasPartition bool
	// ReclaimExpired also takes running flows claimed from State whose
	// lease ran out, before due ones; OnlyExpired takes only those.
	ReclaimExpired, OnlyExpired bool
}

func (*Claim) kind() byte { return kClaim }

// Check reports whether a table would refuse c whatever it holds.
func (c *Claim) Check() error {
	switch {
	case c.Type == "" || c.State == "" || c.Worker == "":
		return fmt.Errorf("%w: a claim needs a type, a state and a worker", ErrInvalid)
	case c.State == Running || Terminal(c.State):
		return ErrWrongState
	case c.LeaseMs <= 0:
		return fmt.Errorf("%w: LEASE_MS must be positive", ErrInvalid)
	case c.Limit <= 0 || c.Limit > MaxClaimLimit:
		return fmt.Errorf("%w: LIMIT must be between 1 and %d", ErrInvalid, MaxClaimLimit)
	}
	return nil
}

func (t *Table) claim(now int64, c *Claim, u *undo) (Result, error) {
	if err := c.Check(); err != nil {
		return Result{}, err
	}
	match := func(r *Record) bool {
		return (!c.HasPartition || r.Partition == c.Partition) && (!c.HasPriority || r.Priority == c.Priority)
	}
	var expired, due []*Record
	if c.ReclaimExpired || c.OnlyExpired {
		if tr, ok := t.running[qkey{c.Type, c.State}]; ok {
			tr.Ascend(func(it item) bool {
				if it.at > now || len(expired) == c.Limit {
					return false
				}
				if match(it.r) {
					expired = append(expired, it.r)
				}
				return true
			})
		}
	}
	if !c.OnlyExpired && len(expired) < c.Limit {
		due = t.dueFlows(now, c, c.Limit-len(expired), match)
	}
	if len(expired)+len(due) == 0 {
		return Result{}, nil
	}
	res := Result{Changed: true, Records: make([]Record, 0, len(expired)+len(due))}
	lease := func(r *Record, kind string) {
		u.save(t, r.ID, r)
		t.unindex(r)
		res.Waited = append(res.Waited, max(0, now-r.NextRunAtMs))
		from := r.State
		if from != Running {
			r.RunState = from
		}
		r.State = Running
		r.Fencing++
		r.LeaseOwner, r.LeaseToken = c.Worker, leaseToken(c.Worker, now, r.Fencing)
		r.LeaseDeadlineMs = addCap(now, c.LeaseMs)
		r.NextRunAtMs = r.LeaseDeadlineMs
		r.event(now, kind, from, Running, c.Worker, "")
		t.index(r)
		res.Records = append(res.Records, r.clone())
	}
	for _, r := range expired {
		lease(r, EventReclaimed)
	}
	res.Reclaimed = len(expired)
	for _, r := range due {
		lease(r, EventClaimed)
	}
	return res, nil
}

// dueFlows returns up to n flows c may claim, in claim order.
func (t *Table) dueFlows(now int64, c *Claim, n int, match func(*Record) bool) []*Record {
	var tr = t.waiting[qkey{c.Type, c.State}]
	if c.HasPartition {
		tr = t.lanes[lkey{c.Type, c.State, c.Partition}]
	}
	if tr == nil {
		return nil
	}
	fifo := t.Effective(c.Type, c.State).Mode == FIFO
	var out []*Record
	var taken map[string]bool // FIFO partitions already given one
	start := item{prio: math.MaxInt64, at: math.MinInt64}
	if c.HasPriority {
		start.prio = c.Priority
	}
	for len(out) < n {
		var next *item
		tr.AscendGreaterOrEqual(start, func(it item) bool {
			if c.HasPriority && it.prio != c.Priority {
				return false
			}
			if it.at > now {
				// The rest of this priority is not due: on to the next.
				next = &it
				return false
			}
			r := it.r
			if !match(r) {
				return true
			}
			if fifo {
				lk := lkey{r.Type, r.State, r.Partition}
				if t.inFlight[lk] > 0 || taken[r.Partition] {
					return true
				}
				if head, _ := t.lanes[lk].Min(); head.r != r {
					return true
				}
				if taken == nil {
					taken = map[string]bool{}
				}
				taken[r.Partition] = true
			}
			out = append(out, r)
			return len(out) < n
		})
		if next == nil || c.HasPriority || next.prio == math.MinInt64 {
			break
		}
		start = item{prio: next.prio - 1, at: math.MinInt64}
	}
	return out
}

// addCap is a+b, at most math.MaxInt64.
func addCap(a, b int64) int64 {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// leased returns flow id when it is running under the lease token and
// fencing given, and ErrStaleLease otherwise.
func (t *Table) leased(id, token string, fencing uint64) (*Record, error) {
	r, ok := t.flows[id]
	if !ok {
		return nil, ErrNotFound
	}
	if r.State != Running || r.LeaseToken != token || r.Fencing != fencing {
		if Terminal(r.State) && r.LeaseToken == token && r.Fencing == fencing {
			return r, ErrTerminal
		}
		return nil, ErrStaleLease
	}
	return r, nil
}

// finish ends a running flow in state (Completed or Failed) with detail
// as its result or error. Finishing it again the same way under the
// lease that finished it is answered with the record and changes
// nothing, so a worker that lost the reply may retry.
func (t *Table) finish(now int64, id, token string, fencing uint64, state string, detail []byte, u *undo) (Result, error) {
	r, err := t.leased(id, token, fencing)
	if errors.Is(err, ErrTerminal) && r.State == state {
		return Result{Flow: r.clone()}, nil
	}
	if err != nil {
		return Result{}, err
	}
	u.save(t, id, r)
	t.unindex(r)
	r.State = state
	if state == Completed {
		r.Result = detail
	} else {
		r.Error = detail
	}
	r.LeaseDeadlineMs, r.NextRunAtMs = 0, 0
	r.event(now, state, Running, state, r.LeaseOwner, "")
	t.index(r)
	return Result{Flow: r.clone(), Changed: true}, nil
}

// Complete ends a running flow as Completed.
type Complete struct {
	ID, LeaseToken string
	Fencing        uint64
	Result         []byte
}

func (*Complete) kind() byte { return kComplete }

// Fail ends a running flow as Failed.
type Fail struct {
	ID, LeaseToken string
	Fencing        uint64
	Error          []byte
}

func (*Fail) kind() byte { return kFail }

// Transition moves a flow from one waiting state to another, or a
// running one (under its lease) out of Running.
type Transition struct {
	ID, From, To string
	// LeaseToken is required when the flow is running; Fencing always.
	LeaseToken  string
	Fencing     uint64
	RunAtMs     int64
	HasRunAt    bool
	Priority    int64
	HasPriority bool
	Payload     []byte
	HasPayload  bool
}

func (*Transition) kind() byte { return kTransition }

func (t *Table) transition(now int64, c *Transition, u *undo) (Result, error) {
	switch {
	case c.To == Running:
		return Result{}, ErrRunningState
	case c.To == "" || Terminal(c.To):
		return Result{}, ErrWrongState
	}
	r, ok := t.flows[c.ID]
	if !ok {
		return Result{}, ErrNotFound
	}
	switch {
	case Terminal(r.State):
		return Result{}, ErrTerminal
	case r.State != c.From:
		return Result{}, ErrWrongState
	case r.State == Running && (r.LeaseToken != c.LeaseToken || r.Fencing != c.Fencing):
		return Result{}, ErrStaleLease
	case r.Fencing != c.Fencing:
		return Result{}, ErrStaleLease
	}
	u.save(t, c.ID, r)
	t.unindex(r)
	from := r.State
	r.State, r.RunState = c.To, ""
	r.LeaseOwner, r.LeaseToken, r.LeaseDeadlineMs = "", "", 0
	r.NextRunAtMs = now
	if c.HasRunAt {
		r.NextRunAtMs = c.RunAtMs
	}
	if c.HasPriority {
		r.Priority = c.Priority
	}
	if c.HasPayload {
		r.Payload = c.Payload
	}
	r.event(now, EventTransitioned, from, c.To, "", "")
	t.index(r)
	return Result{Flow: r.clone(), Changed: true}, nil
}

// Retry sends a running flow back to the state it was claimed from, due
// after the policy's backoff, or, once its retries are spent, to the
// policy's exhaustion state.
type Retry struct {
	ID, LeaseToken string
	Fencing        uint64
	Error          []byte
	// RunAtMs (with HasRunAt) is when it is due again instead of the
	// backoff's delay.
	RunAtMs  int64
	HasRunAt bool
	// MaxRetries and ExhaustedTo (with Policy.Set bits SetMaxRetries,
	// SetExhaustedTo) override the policy for this call.
	Override Policy
}

func (*Retry) kind() byte { return kRetry }

func (t *Table) retry(now int64, c *Retry, u *undo) (Result, error) {
	if !c.Override.validate() {
		return Result{}, fmt.Errorf("%w: retry options", ErrInvalid)
	}
	r, err := t.leased(c.ID, c.LeaseToken, c.Fencing)
	if err != nil {
		return Result{}, err
	}
	p := t.Effective(r.Type, r.RunState).over(c.Override)
	u.save(t, c.ID, r)
	t.unindex(r)
	worker := r.LeaseOwner
	r.Attempts++
	r.Error = c.Error
	r.LeaseDeadlineMs = 0
	if r.Attempts <= p.MaxRetries {
		r.State = r.RunState
		r.NextRunAtMs = addCap(now, p.Delay(r.ID, r.Attempts, now))
		if c.HasRunAt {
			r.NextRunAtMs = c.RunAtMs
		}
		r.event(now, EventRetry, Running, r.State, worker, "")
	} else {
		r.State = p.ExhaustedTo
		r.NextRunAtMs = now
		kind := EventRetry
		if r.State == Failed {
			kind, r.NextRunAtMs = EventFailed, 0
		}
		r.event(now, kind, Running, r.State, worker, "retries exhausted")
	}
	if !Terminal(r.State) {
		r.RunState, r.LeaseOwner, r.LeaseToken = "", "", ""
	}
	t.index(r)
	return Result{Flow: r.clone(), Changed: true}, nil
}

// Cancel ends a flow that is not terminal as Cancelled; a running one
// only under its lease.
type Cancel struct {
	ID         string
	LeaseToken string
	Fencing    uint64
	Reason     []byte
}

func (*Cancel) kind() byte { return kCancel }

func (t *Table) cancel(now int64, c *Cancel, u *undo) (Result, error) {
	r, ok := t.flows[c.ID]
	if !ok {
		return Result{}, ErrNotFound
	}
	switch {
	case Terminal(r.State):
		return Result{}, ErrTerminal
	case r.State == Running && (r.LeaseToken != c.LeaseToken || r.Fencing != c.Fencing):
		return Result{}, ErrStaleLease
	}
	u.save(t, c.ID, r)
	t.unindex(r)
	from := r.State
	r.State = Cancelled
	r.Error = c.Reason
	r.LeaseDeadlineMs, r.NextRunAtMs = 0, 0
	r.event(now, EventCancelled, from, Cancelled, r.LeaseOwner, string(c.Reason))
	t.index(r)
	return Result{Flow: r.clone(), Changed: true}, nil
}

// ExtendLease moves a running flow's lease deadline to LeaseMs from now.
type ExtendLease struct {
	ID, LeaseToken string
	Fencing        uint64
	LeaseMs        int64
}

func (*ExtendLease) kind() byte { return kExtend }

func (t *Table) extend(now int64, c *ExtendLease, u *undo) (Result, error) {
	if c.LeaseMs <= 0 {
		return Result{}, fmt.Errorf("%w: LEASE_MS must be positive", ErrInvalid)
	}
	r, err := t.leased(c.ID, c.LeaseToken, c.Fencing)
	if err != nil {
		if errors.Is(err, ErrTerminal) {
			err = ErrTerminal
		}
		return Result{}, err
	}
	u.save(t, c.ID, r)
	t.unindex(r)
	r.LeaseDeadlineMs = addCap(now, c.LeaseMs)
	r.NextRunAtMs = r.LeaseDeadlineMs
	r.event(now, EventLeaseExtended, Running, Running, r.LeaseOwner, "")
	t.index(r)
	return Result{Flow: r.clone(), Changed: true}, nil
}

// Rewind puts a terminal flow back in a waiting state (Queued when To is
// empty), due now, its attempts at zero.
type Rewind struct {
	ID, To string
}

func (*Rewind) kind() byte { return kRewind }

func (t *Table) rewind(now int64, c *Rewind, u *undo) (Result, error) {
	to := c.To
	if to == "" {
		to = Queued
	}
	switch {
	case to == Running:
		return Result{}, ErrRunningState
	case Terminal(to):
		return Result{}, ErrWrongState
	}
	r, ok := t.flows[c.ID]
	if !ok {
		return Result{}, ErrNotFound
	}
	if !Terminal(r.State) {
		return Result{}, ErrNotTerminal
	}
	u.save(t, c.ID, r)
	t.unindex(r)
	from := r.State
	r.State, r.RunState, r.Attempts = to, "", 0
	r.LeaseOwner, r.LeaseToken, r.LeaseDeadlineMs = "", "", 0
	r.NextRunAtMs = now
	r.event(now, EventRewound, from, to, "", "")
	t.index(r)
	return Result{Flow: r.clone(), Changed: true}, nil
}

// SetPolicy sets the fields Policy.Set names of a type's policy (State
// empty) or of a type's state's.
type SetPolicy struct {
	Type, State string
	Policy      Policy
	// ExpectedGeneration, with HasExpected, makes the change conditional
	// on the policy's generation (0 for one never set).
	ExpectedGeneration uint64
	HasExpected        bool
}

func (*SetPolicy) kind() byte { return kSetPolicy }

func (t *Table) setPolicy(c *SetPolicy, u *undo) (Result, error) {
	switch {
	case c.Type == "":
		return Result{}, fmt.Errorf("%w: a policy needs a type", ErrInvalid)
	case c.State == Running || Terminal(c.State):
		return Result{}, ErrWrongState
	case c.Policy.Set == 0 || !c.Policy.validate():
		return Result{}, fmt.Errorf("%w: policy fields", ErrInvalid)
	}
	k := qkey{c.Type, c.State}
	old, had := t.policies[k]
	var cur Policy
	if had {
		cur = *old
	}
	if c.HasExpected && cur.Generation != c.ExpectedGeneration {
		return Result{}, ErrPolicyGeneration
	}
	next := cur.over(c.Policy)
	next.Generation = cur.Generation + 1
	u.onUndo(func(t *Table) {
		if had {
			t.policies[k] = old
		} else {
			delete(t.policies, k)
		}
	})
	t.policies[k] = &next
	return Result{Changed: true, Policy: next}, nil
}

// Batch applies its commands in order: all or none of them, unless
// Independent, where each succeeds or fails alone.
type Batch struct {
	Commands    []Command
	Independent bool
}

func (*Batch) kind() byte { return kBatch }

func (t *Table) batch(now int64, c *Batch, u *undo) (Result, error) {
	if len(c.Commands) == 0 || len(c.Commands) > MaxBatch {
		return Result{}, fmt.Errorf("%w: a batch holds 1 to %d commands", ErrInvalid, MaxBatch)
	}
	for i, cmd := range c.Commands {
		switch cmd.(type) {
		case *Batch, *Tick, *Claim, nil:
			return Result{}, &BatchError{Index: i, Err: fmt.Errorf("%w: %T in a batch", ErrInvalid, cmd)}
		}
	}
	res := Result{Items: make([]ItemResult, len(c.Commands))}
	for i, cmd := range c.Commands {
		r, err := t.apply(now, cmd, u)
		if err != nil && !c.Independent {
			return Result{}, &BatchError{Index: i, Err: err}
		}
		res.Items[i].Err, res.Items[i].Record = err, r.Flow
		res.Changed = res.Changed || r.Changed
	}
	return res, nil
}
