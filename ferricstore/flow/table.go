package flow

import (
	"cmp"
	"math"
	"slices"
	"strconv"

	"github.com/google/btree"
)

// qkey names a queue: a type's flows in one state.
type qkey struct{ typ, state string }

// lkey names a lane: a queue's flows of one partition.
type lkey struct{ typ, state, partition string }

// item is a flow's place in an index; its fields are copied from the
// record when it is indexed, so that changing the record does not
// reorder the tree under it.
type item struct {
	prio int64
	at   int64
	seq  uint64
	r    *Record
}

// byClaim orders a queue as claims take it: priority, highest first,
// then due time, then creation order.
func byClaim(a, b item) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

// byTime orders by time, then creation order.
func byTime(a, b item) bool {
	if a.at != b.at {
		return a.at < b.at
	}
	return a.seq < b.seq
}

func newTree(less btree.LessFunc[item]) *btree.BTreeG[item] { return btree.NewG(16, less) }

// Table is a store shard's flows, policies and schedules.
type Table struct {
	flows map[string]*Record
	seq   uint64

	// waiting holds the waiting flows (neither running nor terminal) of
	// each queue, and lanes the same by partition, in claim order.
	waiting map[qkey]*btree.BTreeG[item]
	lanes   map[lkey]*btree.BTreeG[item]
	// running holds the running flows of each (type, run state) by lease
	// deadline; inFlight counts them by lane, for FIFO lanes.
	running  map[qkey]*btree.BTreeG[item]
	inFlight map[lkey]int
	// active holds the non-terminal flows with a MaxActiveMs by the time
	// it runs out; done the terminal flows by when they ended.
	active *btree.BTreeG[item]
	done   *btree.BTreeG[item]

	// policies by (type, state), state "" being the type's own.
	policies  map[qkey]*Policy
	schedules map[string]*Schedule
}

// NewTable returns an empty table.
func NewTable() *Table {
	return &Table{
		flows: map[string]*Record{}, waiting: map[qkey]*btree.BTreeG[item]{}, lanes: map[lkey]*btree.BTreeG[item]{},
		running: map[qkey]*btree.BTreeG[item]{}, inFlight: map[lkey]int{}, active: newTree(byTime), done: newTree(byTime),
		policies: map[qkey]*Policy{}, schedules: map[string]*Schedule{},
	}
}

// Len is the number of flows.
func (t *Table) Len() int { return len(t.flows) }

// Get returns a copy of flow id.
func (t *Table) Get(id string) (Record, bool) {
	r, ok := t.flows[id]
	if !ok {
		return Record{}, false
	}
	return r.clone(), true
}

// History returns up to count (all when count ≤ 0) of flow id's events,
// oldest first, or newest first when rev.
func (t *Table) History(id string, count int, rev bool) ([]Event, bool) {
	r, ok := t.flows[id]
	if !ok {
		return nil, false
	}
	h := r.history
	if count <= 0 || count > len(h) {
		count = len(h)
	}
	var out []Event
	if rev {
		out = slices.Clone(h[len(h)-count:])
		slices.Reverse(out)
	} else {
		out = slices.Clone(h[:count])
	}
	for i := range out {
		out[i].ID = strconv.FormatInt(out[i].Ms, 10) + "-" + strconv.FormatUint(out[i].Version, 10)
	}
	return out, true
}

// Counts are a table's flows by state.
type Counts struct {
	// Waiting are the flows waiting in any non-terminal state, Due those
	// of them due at the time asked.
	Waiting, Due int
	Running      int
	// Expired are the running flows whose lease has run out.
	Expired                      int
	Completed, Failed, Cancelled int
	Schedules                    int
}

// Counts counts the flows by state at now.
func (t *Table) Counts(now int64) Counts {
	var c Counts
	for _, r := range t.flows {
		switch r.State {
		case Running:
			c.Running++
			if r.LeaseDeadlineMs <= now {
				c.Expired++
			}
		case Completed:
			c.Completed++
		case Failed:
			c.Failed++
		case Cancelled:
			c.Cancelled++
		default:
			c.Waiting++
			if r.NextRunAtMs <= now {
				c.Due++
			}
		}
	}
	c.Schedules = len(t.schedules)
	return c
}

// Policy returns the policy set for typ (state "") or for typ's state.
func (t *Table) Policy(typ, state string) (Policy, bool) {
	p, ok := t.policies[qkey{typ, state}]
	if !ok {
		return Policy{}, false
	}
	return *p, true
}

// Effective is the policy that applies to typ's flows in state: the
// defaults, then the type's, then the state's.
func (t *Table) Effective(typ, state string) Policy {
	p := defaultPolicy
	if tp, ok := t.policies[qkey{typ, ""}]; ok {
		p = p.over(*tp)
	}
	if state != "" {
		if sp, ok := t.policies[qkey{typ, state}]; ok {
			p = p.over(*sp)
		}
	}
	return p
}

// index puts r in the indexes its state calls for.
func (t *Table) index(r *Record) {
	switch {
	case Terminal(r.State):
		t.done.ReplaceOrInsert(item{at: r.UpdatedMs, seq: r.seq, r: r})
		return
	case r.State == Running:
		tree(t.running, qkey{r.Type, r.RunState}, byTime).ReplaceOrInsert(item{at: r.LeaseDeadlineMs, seq: r.seq, r: r})
		t.inFlight[lkey{r.Type, r.RunState, r.Partition}]++
	default:
		it := item{prio: r.Priority, at: r.NextRunAtMs, seq: r.seq, r: r}
		tree(t.waiting, qkey{r.Type, r.State}, byClaim).ReplaceOrInsert(it)
		tree(t.lanes, lkey{r.Type, r.State, r.Partition}, byClaim).ReplaceOrInsert(it)
	}
	if r.MaxActiveMs > 0 {
		t.active.ReplaceOrInsert(item{at: activeDeadline(r), seq: r.seq, r: r})
	}
}

// unindex takes r out of the indexes index put it in.
func (t *Table) unindex(r *Record) {
	switch {
	case Terminal(r.State):
		t.done.Delete(item{at: r.UpdatedMs, seq: r.seq})
		return
	case r.State == Running:
		untree(t.running, qkey{r.Type, r.RunState}, item{at: r.LeaseDeadlineMs, seq: r.seq})
		lk := lkey{r.Type, r.RunState, r.Partition}
		if t.inFlight[lk]--; t.inFlight[lk] <= 0 {
			delete(t.inFlight, lk)
		}
	default:
		it := item{prio: r.Priority, at: r.NextRunAtMs, seq: r.seq}
		untree(t.waiting, qkey{r.Type, r.State}, it)
		untree(t.lanes, lkey{r.Type, r.State, r.Partition}, it)
	}
	if r.MaxActiveMs > 0 {
		t.active.Delete(item{at: activeDeadline(r), seq: r.seq})
	}
}

// activeDeadline is when r has been alive for its MaxActiveMs.
func activeDeadline(r *Record) int64 {
	if r.CreatedMs > math.MaxInt64-r.MaxActiveMs {
		return math.MaxInt64
	}
	return r.CreatedMs + r.MaxActiveMs
}

// tree returns m's tree for k, made if need be.
func tree[K comparable](m map[K]*btree.BTreeG[item], k K, less btree.LessFunc[item]) *btree.BTreeG[item] {
	tr, ok := m[k]
	if !ok {
		tr = newTree(less)
		m[k] = tr
	}
	return tr
}

// untree deletes it from m's tree for k, and the tree once empty.
func untree[K comparable](m map[K]*btree.BTreeG[item], k K, it item) {
	if tr, ok := m[k]; ok {
		tr.Delete(it)
		if tr.Len() == 0 {
			delete(m, k)
		}
	}
}

// NextDue is the earliest time a claim of typ's flows in state could
// find one: the earliest due time among those waiting, and with
// expired, the earliest lease deadline among those running from state.
// ok is false when there is none.
func (t *Table) NextDue(typ, state string, expired bool) (ms int64, ok bool) {
	ms = math.MaxInt64
	if tr, found := t.waiting[qkey{typ, state}]; found {
		eachBlock(tr, func(first item) bool {
			ms, ok = min(ms, first.at), true
			return true
		})
	}
	if expired {
		if tr, found := t.running[qkey{typ, state}]; found {
			if first, has := tr.Min(); has {
				ms, ok = min(ms, first.at), true
			}
		}
	}
	return ms, ok
}

// eachBlock calls fn with the first item of each priority in tr, highest
// priority first, until fn returns false.
func eachBlock(tr *btree.BTreeG[item], fn func(first item) bool) {
	first, ok := tr.Min()
	for ok {
		if !fn(first) {
			return
		}
		if first.prio == math.MinInt64 {
			return
		}
		ok = false
		tr.AscendGreaterOrEqual(item{prio: first.prio - 1, at: math.MinInt64}, func(it item) bool {
			first, ok = it, true
			return false
		})
	}
}

// NextWake is the earliest time Tick has something to do: a flow's
// MaxActiveMs running out or a schedule's occurrence. ok is false when
// there is none.
func (t *Table) NextWake() (ms int64, ok bool) {
	ms = math.MaxInt64
	if first, has := t.active.Min(); has {
		ms, ok = first.at, true
	}
	for _, s := range t.schedules {
		if !s.Failed {
			ms, ok = min(ms, s.NextDueMs), true
		}
	}
	return ms, ok
}

// DoneLen is how many flows are terminal.
func (t *Table) DoneLen() int { return t.done.Len() }

// OldestDone is when the flow that became terminal first did; ok is
// false when none is.
func (t *Table) OldestDone() (ms int64, ok bool) {
	first, ok := t.done.Min()
	return first.at, ok
}

// sortedKeys returns m's keys in order.
func sortedKeys[K cmp.Ordered, V any](m map[K]V) []K {
	ks := make([]K, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
