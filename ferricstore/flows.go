package ferricstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// flowRecordTag leads a flow command's record in a shard's log; a stream
// op's record starts with its recordVersion instead.
const flowRecordTag = 0xF1

// Defaults of the terminal flows a shard keeps (Options.FlowRetention,
// Options.MaxTerminalFlows): they are in memory, so both are bounded.
const (
	DefaultFlowRetention    = time.Hour
	DefaultMaxTerminalFlows = 1_000_000
)

// maxFlowWait bounds how long a shard's writer sleeps before it looks at
// the clock again for its flows' timers.
const maxFlowWait = 250 * time.Millisecond

// ErrCrossShardBatch is a batch that is not independent and names flows
// of more than one shard: it could not be applied all or nothing.
var ErrCrossShardBatch = errors.New("flow batch crosses shards")

// Flows is the store's durable work queues: flows created, claimed by
// workers under leases and finished, each call one logged write of the
// flow's shard (package flow holds the rules). A flow's shard is its ID's
// slot, as for a stream key, so IDs sharing a {hash tag} share a shard
// and may be batched together.
type Flows struct{ st *Store }

// Flows is the store's flows API.
func (st *Store) Flows() *Flows { return &st.flows }

// flowCounters are a shard's flow figures since Open.
type flowCounters struct {
	created, claimed, reclaimed, completed, failed, retried, cancelled, expired, fired atomic.Uint64
	// waited counts claims by how long their flow had been due
	// (flowWaitBuckets, in ms, then one past the last); waitedSum is
	// their total in ms.
	waited    [len(flowWaitBuckets) + 1]atomic.Uint64
	waitedSum atomic.Uint64
}

// flowWaitBuckets are the upper bounds (ms) of the due-to-claim
// histogram.
var flowWaitBuckets = [...]float64{1, 5, 10, 50, 100, 500, 1000, 5000, 10000, 60000}

// count adds what c did (res) to the counters.
func (fc *flowCounters) count(c flow.Command, res flow.Result) {
	switch c := c.(type) {
	case *flow.Batch:
		for i, sub := range c.Commands {
			if res.Items[i].Err == nil {
				fc.countOne(sub, &res.Items[i].Record)
			}
		}
	case *flow.Claim:
		fc.reclaimed.Add(uint64(res.Reclaimed))
		fc.claimed.Add(uint64(len(res.Records) - res.Reclaimed))
		var sum uint64
		for _, w := range res.Waited {
			sum += uint64(w)
			i, _ := slices.BinarySearch(flowWaitBuckets[:], float64(w))
			fc.waited[i].Add(1)
		}
		fc.waitedSum.Add(sum)
	case *flow.Tick:
		fc.expired.Add(uint64(res.Expired))
		fc.fired.Add(uint64(res.Fired))
		fc.created.Add(uint64(res.Fired))
	default:
		fc.countOne(c, &res.Flow)
	}
}

// countOne counts one command on one flow, r its record after it.
func (fc *flowCounters) countOne(c flow.Command, r *flow.Record) {
	switch c.(type) {
	case *flow.Create:
		fc.created.Add(1)
	case *flow.Complete:
		fc.completed.Add(1)
	case *flow.Fail:
		fc.failed.Add(1)
	case *flow.Retry:
		if r != nil && r.State == flow.Failed {
			fc.failed.Add(1)
		} else {
			fc.retried.Add(1)
		}
	case *flow.Cancel:
		fc.cancelled.Add(1)
	}
}

// retention is the flow retention in ms, 0 for none.
func (s *shard) retention() int64 {
	r := s.store.opts.FlowRetention
	if r < 0 {
		return 0
	}
	return r.Milliseconds()
}

// tickDue returns the Tick to apply at now, or nil when the flows have
// nothing to do.
func (s *shard) tickDue(now int64) *flow.Tick {
	ret := s.retention()
	maxDone := max(s.store.opts.MaxTerminalFlows, 0)
	wake, ok := s.flows.NextWake()
	due := ok && wake <= now || maxDone > 0 && s.flows.DoneLen() > maxDone
	if ret > 0 {
		if old, ok := s.flows.OldestDone(); ok && old < now-ret {
			due = true
		}
	}
	if !due {
		return nil
	}
	t := &flow.Tick{MaxDone: maxDone}
	if ret > 0 {
		t.PurgeBeforeMs = now - ret
	}
	return t
}

// flowTimer is when the writer should next look at the flows without a
// request: a Tick or a blocked claim's flow coming due.
func (s *shard) flowTimer() (int64, bool) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.failed != nil {
		return 0, false
	}
	at, ok := s.flows.NextWake()
	if m := s.store.opts.MaxTerminalFlows; m > 0 && s.flows.DoneLen() > m {
		return s.store.opts.Now().UnixMilli(), true // past the bound: now
	}
	if ret := s.retention(); ret > 0 {
		if old, has := s.flows.OldestDone(); has {
			at, ok = minOK(at, ok, addMs(old, ret+1))
		}
	}
	for _, w := range s.flowWaiters {
		if w.finished.Load() {
			continue
		}
		if due, has := s.flows.NextDue(w.claim.Type, w.claim.State, w.claim.ReclaimExpired || w.claim.OnlyExpired); has {
			at, ok = minOK(at, ok, due)
		}
	}
	return at, ok
}

func minOK(a int64, aok bool, b int64) (int64, bool) {
	if !aok {
		return b, true
	}
	return min(a, b), true
}

func addMs(a, b int64) int64 {
	if a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// claimWaiter is a blocked claim (Flows.ClaimWait), registered with
// every shard: the first shard's writer that finds flows for it claims
// them, in the batch that made them due, in the order the waiters
// blocked; ready is closed once that is durable.
type claimWaiter struct {
	claim flow.Claim
	mu    sync.Mutex
	// finished is set, under mu, once served or given up.
	finished atomic.Bool
	records  []flow.Record
	err      error
	ready    chan struct{}
}

// serveClaimsLocked gives the shard's due flows to its blocked claims in
// order, logging each claim with logFlow, and returns those it served.
func (s *shard) serveClaimsLocked(now int64, logFlow func(flow.Command)) []*claimWaiter {
	var served []*claimWaiter
	keep := s.flowWaiters[:0]
	for _, w := range s.flowWaiters {
		w.mu.Lock()
		if w.finished.Load() {
			w.mu.Unlock()
			continue
		}
		res, err := s.flows.Apply(now, &w.claim)
		switch {
		case err != nil:
			w.err = err
		case len(res.Records) > 0:
			logFlow(&w.claim)
			s.flowStats.count(&w.claim, res)
			w.records = res.Records
		default:
			w.mu.Unlock()
			keep = append(keep, w)
			continue
		}
		w.finished.Store(true)
		w.mu.Unlock()
		served = append(served, w)
	}
	clear(s.flowWaiters[len(keep):])
	s.flowWaiters = keep
	return served
}

// flowDo applies c on shard s and returns its result once durable.
func (s *shard) flowDo(ctx context.Context, c flow.Command) (flow.Result, error) {
	if s.store.closed.Load() {
		return flow.Result{}, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return flow.Result{}, err
	}
	r := &request{ctx: ctx, flow: c, done: make(chan struct{})}
	if err := s.enqueue(r); err != nil {
		return flow.Result{}, err
	}
	<-r.done
	return r.flowRes, r.err
}

// enqueue queues r for the writer.
func (s *shard) enqueue(r *request) error {
	s.qmu.Lock()
	if s.closing {
		s.qmu.Unlock()
		return ErrClosed
	}
	s.queue = append(s.queue, r)
	s.qmu.Unlock()
	select {
	case s.wake <- struct{}{}:
	default:
	}
	return nil
}

// one returns the single record of a result.
func one(res flow.Result, err error) (flow.Record, error) {
	if err != nil {
		return flow.Record{}, err
	}
	return res.Flow, nil
}

// Create makes a flow (FLOW.CREATE).
func (f *Flows) Create(ctx context.Context, c flow.Create) (flow.Record, error) {
	return one(f.st.shardOf(c.ID).flowDo(ctx, &c))
}

// Transition moves a flow to another waiting state (FLOW.TRANSITION).
func (f *Flows) Transition(ctx context.Context, c flow.Transition) (flow.Record, error) {
	return one(f.st.shardOf(c.ID).flowDo(ctx, &c))
}

// Complete finishes a running flow (FLOW.COMPLETE).
func (f *Flows) Complete(ctx context.Context, c flow.Complete) (flow.Record, error) {
	return one(f.st.shardOf(c.ID).flowDo(ctx, &c))
}

// Fail finishes a running flow as failed (FLOW.FAIL).
func (f *Flows) Fail(ctx context.Context, c flow.Fail) (flow.Record, error) {
	return one(f.st.shardOf(c.ID).flowDo(ctx, &c))
}

// Retry sends a running flow back after its backoff (FLOW.RETRY).
func (f *Flows) Retry(ctx context.Context, c flow.Retry) (flow.Record, error) {
	return one(f.st.shardOf(c.ID).flowDo(ctx, &c))
}

// Cancel cancels a flow (FLOW.CANCEL).
func (f *Flows) Cancel(ctx context.Context, c flow.Cancel) (flow.Record, error) {
	return one(f.st.shardOf(c.ID).flowDo(ctx, &c))
}

// ExtendLease moves a running flow's lease deadline (FLOW.EXTEND_LEASE).
func (f *Flows) ExtendLease(ctx context.Context, c flow.ExtendLease) (flow.Record, error) {
	return one(f.st.shardOf(c.ID).flowDo(ctx, &c))
}

// Rewind puts a terminal flow back in a waiting state (FLOW.REWIND).
func (f *Flows) Rewind(ctx context.Context, c flow.Rewind) (flow.Record, error) {
	return one(f.st.shardOf(c.ID).flowDo(ctx, &c))
}

// Batch applies commands (creates and the calls on one flow each: the
// *_MANY forms) and returns one result each. Unless independent they are
// applied all or none, and must name flows of one shard
// (ErrCrossShardBatch); independent ones are grouped by shard, one log
// record a shard, each succeeding or failing alone.
func (f *Flows) Batch(ctx context.Context, cmds []flow.Command, independent bool) ([]flow.ItemResult, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	// Most batches name flows of one shard (one shard, or a {tag}):
	// they go as they are.
	first := (*shard)(nil)
	one := true
	for _, c := range cmds {
		id, ok := flowID(c)
		if !ok {
			return nil, fmt.Errorf("%w: %T in a batch", flow.ErrInvalid, c)
		}
		sh := f.st.shardOf(id)
		if first == nil {
			first = sh
		}
		one = one && sh == first
	}
	if one {
		res, err := first.flowDo(ctx, &flow.Batch{Commands: cmds, Independent: independent})
		return res.Items, err
	}
	if !independent {
		return nil, ErrCrossShardBatch
	}
	byShard := map[*shard][]int{}
	var order []*shard
	for i, c := range cmds {
		id, _ := flowID(c)
		sh := f.st.shardOf(id)
		if _, seen := byShard[sh]; !seen {
			order = append(order, sh)
		}
		byShard[sh] = append(byShard[sh], i)
	}
	out := make([]flow.ItemResult, len(cmds))
	type part struct {
		idx []int
		res flow.Result
		err error
	}
	parts := make([]part, len(order))
	var wg sync.WaitGroup
	for pi, sh := range order {
		idx := byShard[sh]
		sub := make([]flow.Command, len(idx))
		for j, i := range idx {
			sub[j] = cmds[i]
		}
		parts[pi].idx = idx
		wg.Go(func() {
			parts[pi].res, parts[pi].err = sh.flowDo(ctx, &flow.Batch{Commands: sub, Independent: independent})
		})
	}
	wg.Wait()
	for _, p := range parts {
		if p.err != nil {
			for _, i := range p.idx {
				out[i].Err = p.err
			}
			continue
		}
		for j, i := range p.idx {
			out[i] = p.res.Items[j]
		}
	}
	return out, nil
}

// flowID is the flow a batchable command names.
func flowID(c flow.Command) (string, bool) {
	switch c := c.(type) {
	case *flow.Create:
		return c.ID, true
	case *flow.Transition:
		return c.ID, true
	case *flow.Complete:
		return c.ID, true
	case *flow.Fail:
		return c.ID, true
	case *flow.Retry:
		return c.ID, true
	case *flow.Cancel:
		return c.ID, true
	case *flow.ExtendLease:
		return c.ID, true
	case *flow.Rewind:
		return c.ID, true
	}
	return "", false
}

// Claim leases up to c.Limit due flows (FLOW.CLAIM_DUE without BLOCK),
// asking the shards in turn from a rotating first one; none is nil.
func (f *Flows) Claim(ctx context.Context, c flow.Claim) ([]flow.Record, error) {
	n := len(f.st.shards)
	if n == 1 {
		res, err := f.st.shards[0].flowDo(ctx, &c)
		return res.Records, err
	}
	first := int(f.st.claimTurn.Add(1) % uint64(n))
	var out []flow.Record
	for k := range n {
		sh := f.st.shards[(first+k)%n]
		left := c
		left.Limit = c.Limit - len(out)
		res, err := sh.flowDo(ctx, &left)
		if err != nil {
			return out, err
		}
		out = append(out, res.Records...)
		if len(out) >= c.Limit {
			break
		}
	}
	return out, nil
}

// ClaimWait claims as Claim does, and when nothing is due waits until
// something is (a create, a transition or retry coming due, an expired
// lease with ReclaimExpired) or ctx ends (FLOW.CLAIM_DUE BLOCK). Blocked
// claims are served in the order they blocked. It returns nil, and no
// error, when ctx ended first.
func (f *Flows) ClaimWait(ctx context.Context, c flow.Claim) ([]flow.Record, error) {
	// A claim the table refuses is refused now rather than when served.
	if err := c.Check(); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, nil
	}
	w := &claimWaiter{claim: c, ready: make(chan struct{})}
	for _, sh := range f.st.shards {
		r := &request{ctx: context.Background(), waiter: w, done: make(chan struct{})}
		if err := sh.enqueue(r); err != nil {
			w.giveUp()
			return nil, err
		}
	}
	select {
	case <-w.ready:
		return w.records, w.err
	case <-ctx.Done():
		if w.giveUp() {
			return nil, nil
		}
		<-w.ready
		return w.records, w.err
	}
}

// giveUp ends w unless a shard served it; it reports whether it did.
func (w *claimWaiter) giveUp() bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.finished.Load() {
		return false
	}
	w.finished.Store(true)
	return true
}

// readFlows runs fn on shard s's flows under the read lock.
func (s *shard) readFlows(fn func(t *flow.Table) error) error {
	if s.store.closed.Load() {
		return ErrClosed
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.failed != nil {
		return s.failed
	}
	return fn(s.flows)
}

// Get returns flow id (FLOW.GET), flow.ErrNotFound when there is none.
func (f *Flows) Get(ctx context.Context, id string) (flow.Record, error) {
	var r flow.Record
	err := f.st.shardOf(id).readFlows(func(t *flow.Table) error {
		var ok bool
		if r, ok = t.Get(id); !ok {
			return flow.ErrNotFound
		}
		return nil
	})
	return r, err
}

// History returns up to count of flow id's events (all when count ≤ 0),
// oldest first or, with rev, newest first (FLOW.HISTORY).
func (f *Flows) History(ctx context.Context, id string, count int, rev bool) ([]flow.Event, error) {
	var h []flow.Event
	err := f.st.shardOf(id).readFlows(func(t *flow.Table) error {
		var ok bool
		if h, ok = t.History(id, count, rev); !ok {
			return flow.ErrNotFound
		}
		return nil
	})
	return h, err
}

// SetPolicy sets a type's (or a type's state's) policy on every shard
// (FLOW.POLICY.SET) and returns it.
func (f *Flows) SetPolicy(ctx context.Context, c flow.SetPolicy) (flow.Policy, error) {
	var p flow.Policy
	for _, sh := range f.st.shards {
		res, err := sh.flowDo(ctx, &c)
		if err != nil {
			return p, err
		}
		p = res.Policy
	}
	return p, nil
}

// Policy returns the policy set for typ (state "") or typ's state, and
// whether there is one (FLOW.POLICY.GET).
func (f *Flows) Policy(ctx context.Context, typ, state string) (flow.Policy, bool, error) {
	var p flow.Policy
	var ok bool
	err := f.st.shards[0].readFlows(func(t *flow.Table) error {
		p, ok = t.Policy(typ, state)
		return nil
	})
	return p, ok, err
}

// SetSchedule makes (or with c.Replace replaces) a schedule; it lives on
// its name's shard, as do the flows it makes when their names share its
// slot (FLOW.SCHEDULE.SET).
func (f *Flows) SetSchedule(ctx context.Context, c flow.SetSchedule) (flow.Schedule, error) {
	res, err := f.st.shardOf(c.Schedule.Name).flowDo(ctx, &c)
	return res.Schedule, err
}

// DeleteSchedule deletes a schedule (FLOW.SCHEDULE.DEL).
func (f *Flows) DeleteSchedule(ctx context.Context, name string) error {
	_, err := f.st.shardOf(name).flowDo(ctx, &flow.DeleteSchedule{Name: name})
	return err
}

// Schedule returns schedule name (FLOW.SCHEDULE.GET), flow.ErrScheduleNotFound
// when there is none.
func (f *Flows) Schedule(ctx context.Context, name string) (flow.Schedule, error) {
	var s flow.Schedule
	err := f.st.shardOf(name).readFlows(func(t *flow.Table) error {
		var ok bool
		if s, ok = t.Schedule(name); !ok {
			return flow.ErrScheduleNotFound
		}
		return nil
	})
	return s, err
}

// Schedules returns every schedule's name, in order.
func (f *Flows) Schedules(ctx context.Context) ([]string, error) {
	var out []string
	for _, sh := range f.st.shards {
		if err := sh.readFlows(func(t *flow.Table) error {
			out = append(out, t.Schedules()...)
			return nil
		}); err != nil {
			return nil, err
		}
	}
	slices.Sort(out)
	return out, nil
}

// Counts counts the flows of every shard by state at the store's time.
func (f *Flows) Counts(ctx context.Context) (flow.Counts, error) {
	var c flow.Counts
	now := f.st.opts.Now().UnixMilli()
	for _, sh := range f.st.shards {
		if err := sh.readFlows(func(t *flow.Table) error {
			n := t.Counts(now)
			c.Waiting += n.Waiting
			c.Due += n.Due
			c.Running += n.Running
			c.Expired += n.Expired
			c.Completed += n.Completed
			c.Failed += n.Failed
			c.Cancelled += n.Cancelled
			c.Schedules += n.Schedules
			return nil
		}); err != nil {
			return c, err
		}
	}
	return c, nil
}

// Effective returns the policy in force for typ's flows in state (the
// defaults, the type's, then the state's).
func (f *Flows) Effective(ctx context.Context, typ, state string) flow.Policy {
	var p flow.Policy
	_ = f.st.shards[0].readFlows(func(t *flow.Table) error {
		p = t.Effective(typ, state)
		return nil
	})
	return p
}
