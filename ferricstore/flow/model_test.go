package flow

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"
)

// mrec is the model's flow: the fields the rules read and write, kept in
// a plain map and searched by scanning, to check the table's indexes.
type mrec struct {
	id, typ, state, part, runState, token string
	prio, runAt, deadline, attempts       int64
	seq, fencing, version                 uint64
	maxActiveAt                           int64 // 0: none
}

type model struct {
	flows map[string]*mrec
	seq   uint64
	fifo  map[string]bool // types in FIFO mode
}

// Policies the random test runs with: t1's lanes are FIFO; t2 retries
// once after 5 ms.
func modelPolicies() []*SetPolicy {
	return []*SetPolicy{
		{Type: "t1", Policy: Policy{Set: SetMode, Mode: FIFO}},
		{Type: "t2", Policy: Policy{Set: SetMaxRetries | SetBackoff | SetBaseMs | SetJitterPct, MaxRetries: 1, Backoff: BackoffFixed, BaseMs: 5}},
	}
}

func (m *model) policy(typ string) Policy {
	p := defaultPolicy
	if typ == "t2" {
		p = p.over(modelPolicies()[1].Policy)
	}
	return p
}

func (m *model) bump(r *mrec) { r.version++ }

func claimLess(a, b *mrec) bool {
	if a.prio != b.prio {
		return a.prio > b.prio
	}
	if a.runAt != b.runAt {
		return a.runAt < b.runAt
	}
	return a.seq < b.seq
}

func (m *model) sorted(keep func(*mrec) bool, less func(a, b *mrec) bool) []*mrec {
	var out []*mrec
	for _, r := range m.flows {
		if keep(r) {
			out = append(out, r)
		}
	}
	sort.Slice(out, func(i, j int) bool { return less(out[i], out[j]) })
	return out
}

func (m *model) claim(now int64, c *Claim) []string {
	match := func(r *mrec) bool {
		return r.typ == c.Type && (!c.HasPartition || r.part == c.Partition) && (!c.HasPriority || r.prio == c.Priority)
	}
	var got []*mrec
	if c.ReclaimExpired || c.OnlyExpired {
		exp := m.sorted(func(r *mrec) bool {
			return r.state == Running && r.runState == c.State && r.deadline <= now && match(r)
		}, func(a, b *mrec) bool {
			if a.deadline != b.deadline {
				return a.deadline < b.deadline
			}
			return a.seq < b.seq
		})
		got = append(got, exp[:min(len(exp), c.Limit)]...)
	}
	nExpired := len(got)
	if !c.OnlyExpired {
		taken := map[string]bool{}
		for _, r := range m.sorted(func(r *mrec) bool { return r.state == c.State && r.runAt <= now && match(r) }, claimLess) {
			if len(got) == c.Limit {
				break
			}
			if m.fifo[r.typ] {
				busy := false
				for _, o := range m.flows {
					if o.state == Running && o.typ == r.typ && o.runState == c.State && o.part == r.part {
						busy = true
					}
				}
				lane := m.sorted(func(o *mrec) bool { return o.typ == r.typ && o.state == c.State && o.part == r.part }, claimLess)
				if busy || taken[r.part] || lane[0] != r {
					continue
				}
				taken[r.part] = true
			}
			got = append(got, r)
		}
	}
	var ids []string
	for i, r := range got {
		if i >= nExpired {
			r.runState = r.state
		}
		r.state = Running
		r.fencing++
		r.token = leaseToken(c.Worker, now, r.fencing)
		r.deadline = now + c.LeaseMs
		r.runAt = r.deadline
		m.bump(r)
		ids = append(ids, r.id)
	}
	return ids
}

// lease checks a lease call as the rules say.
func (m *model) lease(id, token string, fencing uint64) (*mrec, error) {
	r, ok := m.flows[id]
	switch {
	case !ok:
		return nil, ErrNotFound
	case r.state == Running && r.token == token && r.fencing == fencing:
		return r, nil
	case Terminal(r.state) && r.token == token && r.fencing == fencing:
		return r, ErrTerminal
	}
	return nil, ErrStaleLease
}

func (m *model) apply(now int64, c Command) ([]string, error) {
	switch c := c.(type) {
	case *Create:
		if _, ok := m.flows[c.ID]; ok {
			return nil, ErrExists
		}
		m.seq++
		r := &mrec{id: c.ID, typ: c.Type, state: Queued, part: c.Partition, prio: c.Priority, runAt: c.RunAtMs, seq: m.seq, version: 1}
		if c.MaxActiveMs > 0 {
			r.maxActiveAt = now + c.MaxActiveMs
		}
		m.flows[c.ID] = r
		return []string{c.ID}, nil
	case *Claim:
		return m.claim(now, c), nil
	case *Complete, *Fail:
		id, token, fencing, to := "", "", uint64(0), Completed
		if cc, ok := c.(*Complete); ok {
			id, token, fencing = cc.ID, cc.LeaseToken, cc.Fencing
		} else {
			f := c.(*Fail)
			id, token, fencing, to = f.ID, f.LeaseToken, f.Fencing, Failed
		}
		r, err := m.lease(id, token, fencing)
		if errors.Is(err, ErrTerminal) && r.state == to {
			return []string{id}, nil
		}
		if err != nil {
			return nil, err
		}
		r.state, r.deadline, r.runAt = to, 0, 0
		m.bump(r)
		return []string{id}, nil
	case *Retry:
		r, err := m.lease(c.ID, c.LeaseToken, c.Fencing)
		if err != nil {
			return nil, err
		}
		p := m.policy(r.typ)
		r.attempts++
		r.deadline = 0
		if r.attempts <= p.MaxRetries {
			r.state, r.runAt = r.runState, now+p.Delay(r.id, r.attempts, now)
		} else {
			r.state, r.runAt = Failed, 0
		}
		if !Terminal(r.state) {
			r.runState, r.token = "", ""
		}
		m.bump(r)
		return []string{c.ID}, nil
	case *ExtendLease:
		r, err := m.lease(c.ID, c.LeaseToken, c.Fencing)
		if err != nil {
			return nil, err
		}
		r.deadline, r.runAt = now+c.LeaseMs, now+c.LeaseMs
		m.bump(r)
		return []string{c.ID}, nil
	case *Cancel:
		r, ok := m.flows[c.ID]
		switch {
		case !ok:
			return nil, ErrNotFound
		case Terminal(r.state):
			return nil, ErrTerminal
		case r.state == Running && (r.token != c.LeaseToken || r.fencing != c.Fencing):
			return nil, ErrStaleLease
		}
		r.state, r.deadline, r.runAt = Cancelled, 0, 0
		m.bump(r)
		return []string{c.ID}, nil
	case *Transition:
		r, ok := m.flows[c.ID]
		switch {
		case !ok:
			return nil, ErrNotFound
		case Terminal(r.state):
			return nil, ErrTerminal
		case r.state != c.From:
			return nil, ErrWrongState
		case r.state == Running && r.token != c.LeaseToken, r.fencing != c.Fencing:
			return nil, ErrStaleLease
		}
		r.state, r.runState, r.token, r.deadline, r.runAt = c.To, "", "", 0, now
		m.bump(r)
		return []string{c.ID}, nil
	case *Rewind:
		r, ok := m.flows[c.ID]
		switch {
		case !ok:
			return nil, ErrNotFound
		case !Terminal(r.state):
			return nil, ErrNotTerminal
		}
		r.state, r.runState, r.attempts, r.token, r.deadline, r.runAt = Queued, "", 0, "", 0, now
		m.bump(r)
		return []string{c.ID}, nil
	case *Tick:
		for _, r := range m.sorted(func(r *mrec) bool { return !Terminal(r.state) && r.maxActiveAt > 0 && r.maxActiveAt <= now }, func(a, b *mrec) bool { return a.seq < b.seq }) {
			r.state, r.deadline, r.runAt = Failed, 0, 0
			m.bump(r)
		}
		return nil, nil
	}
	panic(fmt.Sprintf("model: %T", c))
}

// randomCommand picks a command, using the tokens handed out so far to
// make lease calls that are current or stale.
func randomCommand(rng *rand.Rand, now int64, m *model, tokens []Record) Command {
	id := fmt.Sprintf("f%d", rng.IntN(24))
	types := []string{"t1", "t2", "t3"}
	tok := func() (string, string, uint64) {
		if len(tokens) == 0 || rng.IntN(8) == 0 {
			return id, "nobody:0:0", 1
		}
		t := tokens[rng.IntN(len(tokens))]
		if r, ok := m.flows[t.ID]; ok && rng.IntN(3) > 0 && r.token != "" {
			return r.id, r.token, r.fencing // the current lease, most of the time
		}
		return t.ID, t.LeaseToken, t.Fencing
	}
	switch n := rng.IntN(100); {
	case n < 25:
		c := &Create{ID: id, Type: types[rng.IntN(3)], Partition: fmt.Sprint("p", rng.IntN(3)), Priority: int64(rng.IntN(3)),
			RunAtMs: now + int64(rng.IntN(20)), HasRunAt: true, MaxActiveMs: -1}
		if rng.IntN(6) == 0 {
			c.MaxActiveMs = int64(20 + rng.IntN(200))
		}
		return c
	case n < 45:
		c := &Claim{Type: types[rng.IntN(3)], State: Queued, Worker: fmt.Sprint("w", rng.IntN(3)), LeaseMs: int64(5 + rng.IntN(30)),
			Limit: 1 + rng.IntN(4), ReclaimExpired: rng.IntN(2) == 0}
		if rng.IntN(6) == 0 {
			c.State = "s2"
		}
		if rng.IntN(4) == 0 {
			c.Partition, c.HasPartition = fmt.Sprint("p", rng.IntN(3)), true
		}
		if rng.IntN(6) == 0 {
			c.Priority, c.HasPriority = int64(rng.IntN(3)), true
		}
		if rng.IntN(8) == 0 {
			c.OnlyExpired, c.ReclaimExpired = true, false
		}
		return c
	case n < 57:
		id, token, f := tok()
		return &Complete{ID: id, LeaseToken: token, Fencing: f}
	case n < 62:
		id, token, f := tok()
		return &Fail{ID: id, LeaseToken: token, Fencing: f}
	case n < 72:
		id, token, f := tok()
		return &Retry{ID: id, LeaseToken: token, Fencing: f}
	case n < 78:
		id, token, f := tok()
		return &ExtendLease{ID: id, LeaseToken: token, Fencing: f, LeaseMs: int64(1 + rng.IntN(20))}
	case n < 82:
		id, token, f := tok()
		if rng.IntN(2) == 0 {
			token, f = "", 0
		}
		return &Cancel{ID: id, LeaseToken: token, Fencing: f}
	case n < 90:
		r, ok := m.flows[id]
		from, to, f, token := Queued, "s2", uint64(0), ""
		if ok {
			from, f, token = r.state, r.fencing, r.token
			if rng.IntN(5) == 0 {
				f++
			}
		}
		if from == "s2" {
			to = Queued
		}
		return &Transition{ID: id, From: from, To: to, LeaseToken: token, Fencing: f}
	case n < 93:
		return &Rewind{ID: id}
	default:
		return &Tick{}
	}
}

// TestTableAgainstModel runs random commands on a table and on the
// model, with a clock that moves by random steps, and compares every
// result and every flow after each command; every few hundred commands
// the table is also rebuilt from its log and from its snapshot.
func TestTableAgainstModel(t *testing.T) {
	for seed := range uint64(20) {
		t.Run(fmt.Sprint("seed", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(seed, 42))
			tb := NewTable()
			m := &model{flows: map[string]*mrec{}, fifo: map[string]bool{"t1": true}}
			var log [][]byte
			now := int64(0)
			for _, p := range modelPolicies() {
				apply(t, tb, now, p)
				log = append(log, AppendRecord(nil, now, p))
			}
			var tokens []Record
			for step := range 3000 {
				now += int64(rng.IntN(6))
				c := randomCommand(rng, now, m, tokens)
				res, err := tb.Apply(now, c)
				want, werr := m.apply(now, c)
				if werr == nil {
					require.NoError(t, err, "step %d %T %+v", step, c, c)
				} else {
					require.ErrorIs(t, err, werr, "step %d %T %+v", step, c, c)
				}
				if _, ok := c.(*Claim); ok {
					var got []string
					for _, r := range res.Records {
						got = append(got, r.ID)
						tokens = append(tokens, r)
					}
					require.Equal(t, want, got, "step %d claim %+v", step, c)
				}
				if res.Changed {
					log = append(log, AppendRecord(nil, now, c))
				}
				compareModel(t, tb, m, step)
				if step%500 == 499 {
					replayed := NewTable()
					for _, rec := range log {
						at, cmd, err := DecodeRecord(rec)
						require.NoError(t, err)
						_, err = replayed.Apply(at, cmd)
						require.NoError(t, err)
					}
					require.Equal(t, tb.Snapshot(), replayed.Snapshot(), "the log replays into the same table")
					loaded, err := LoadSnapshot(tb.Snapshot())
					require.NoError(t, err)
					require.Equal(t, tb.Snapshot(), loaded.Snapshot())
					for _, typ := range []string{"t1", "t2", "t3"} {
						for _, st := range []string{Queued, "s2"} {
							a, aok := tb.NextDue(typ, st, true)
							b, bok := loaded.NextDue(typ, st, true)
							require.Equal(t, aok, bok)
							require.Equal(t, a, b)
						}
					}
				}
			}
		})
	}
}

func compareModel(t *testing.T, tb *Table, m *model, step int) {
	t.Helper()
	require.Equal(t, len(m.flows), tb.Len(), "step %d", step)
	ids := slices.Sorted(func(yield func(string) bool) {
		for id := range m.flows {
			if !yield(id) {
				return
			}
		}
	})
	for _, id := range ids {
		w := m.flows[id]
		g, ok := tb.Get(id)
		require.True(t, ok)
		require.Equal(t,
			[]any{w.state, w.fencing, w.version, w.runAt, w.attempts},
			[]any{g.State, g.Fencing, g.Version, g.NextRunAtMs, g.Attempts}, "step %d flow %s", step, id)
		if w.state == Running {
			require.Equal(t, []any{w.token, w.deadline, w.runState}, []any{g.LeaseToken, g.LeaseDeadlineMs, g.RunState}, "step %d flow %s", step, id)
		}
	}
}
