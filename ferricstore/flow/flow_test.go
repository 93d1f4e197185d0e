package flow

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// apply applies c at now and fails the test on error.
func apply(t *testing.T, tb *Table, now int64, c Command) Result {
	t.Helper()
	res, err := tb.Apply(now, c)
	require.NoError(t, err)
	return res
}

func claim1(t *testing.T, tb *Table, now int64, typ, worker string) Record {
	t.Helper()
	res := apply(t, tb, now, &Claim{Type: typ, State: Queued, Worker: worker, LeaseMs: 1000, Limit: 1})
	require.Len(t, res.Records, 1)
	return res.Records[0]
}

func TestFencingRisesAndOneLeaseIsValid(t *testing.T) {
	tb := NewTable()
	apply(t, tb, 0, &Create{ID: "a", Type: "job"})
	first := claim1(t, tb, 10, "job", "w1")
	require.Equal(t, uint64(1), first.Fencing)
	require.Equal(t, "w1:10:1", first.LeaseToken)
	require.Equal(t, int64(1010), first.LeaseDeadlineMs)

	// Expired, not yet reclaimed: the first lease still works.
	_, err := tb.Apply(2000, &ExtendLease{ID: "a", LeaseToken: first.LeaseToken, Fencing: 1, LeaseMs: 100})
	require.NoError(t, err)
	res := apply(t, tb, 3000, &Claim{Type: "job", State: Queued, Worker: "w2", LeaseMs: 1000, Limit: 5, ReclaimExpired: true})
	require.Len(t, res.Records, 1)
	second := res.Records[0]
	require.Equal(t, uint64(2), second.Fencing)
	require.Equal(t, Running, second.State)

	for _, c := range []Command{
		&Complete{ID: "a", LeaseToken: first.LeaseToken, Fencing: 1},
		&Fail{ID: "a", LeaseToken: first.LeaseToken, Fencing: 1},
		&Retry{ID: "a", LeaseToken: first.LeaseToken, Fencing: 1},
		&ExtendLease{ID: "a", LeaseToken: first.LeaseToken, Fencing: 1, LeaseMs: 5},
		&Complete{ID: "a", LeaseToken: second.LeaseToken, Fencing: 1},
		&Complete{ID: "a", LeaseToken: first.LeaseToken, Fencing: 2},
		&Cancel{ID: "a", LeaseToken: first.LeaseToken, Fencing: 1},
	} {
		_, err := tb.Apply(3001, c)
		require.ErrorIs(t, err, ErrStaleLease, "%T", c)
	}
	apply(t, tb, 3002, &Complete{ID: "a", LeaseToken: second.LeaseToken, Fencing: 2, Result: []byte("ok")})
	r, _ := tb.Get("a")
	require.Equal(t, Completed, r.State)
	require.Equal(t, []byte("ok"), r.Result)
}

func TestCompletionIsExactlyOnce(t *testing.T) {
	tb := NewTable()
	apply(t, tb, 0, &Create{ID: "a", Type: "job"})
	r := claim1(t, tb, 1, "job", "w")
	done := apply(t, tb, 2, &Complete{ID: "a", LeaseToken: r.LeaseToken, Fencing: r.Fencing})
	require.True(t, done.Changed)
	again := apply(t, tb, 3, &Complete{ID: "a", LeaseToken: r.LeaseToken, Fencing: r.Fencing})
	require.False(t, again.Changed, "a repeated completion under the finishing lease changes nothing")
	require.Equal(t, done.Flow.Version, again.Flow.Version)

	_, err := tb.Apply(4, &Fail{ID: "a", LeaseToken: r.LeaseToken, Fencing: r.Fencing})
	require.ErrorIs(t, err, ErrTerminal)
	for _, c := range []Command{
		&Transition{ID: "a", From: Completed, To: Queued, Fencing: r.Fencing},
		&Cancel{ID: "a"},
		&ExtendLease{ID: "a", LeaseToken: r.LeaseToken, Fencing: r.Fencing, LeaseMs: 1},
		&Retry{ID: "a", LeaseToken: r.LeaseToken, Fencing: r.Fencing},
	} {
		_, err := tb.Apply(5, c)
		require.ErrorIs(t, err, ErrTerminal, "%T", c)
	}
	h, _ := tb.History("a", 0, false)
	kinds := []string{}
	for i, e := range h {
		require.Equal(t, uint64(i+1), e.Version, "history is contiguous")
		kinds = append(kinds, e.Kind)
	}
	require.Equal(t, []string{EventCreated, EventClaimed, EventCompleted}, kinds)
	require.Equal(t, "2-3", h[2].ID)

	rw := apply(t, tb, 6, &Rewind{ID: "a"})
	require.Equal(t, Queued, rw.Flow.State)
	require.Equal(t, uint64(4), rw.Flow.Version)
}

func TestClaimOrder(t *testing.T) {
	tb := NewTable()
	for i, c := range []Create{
		{ID: "low-early", Priority: 0, RunAtMs: 1, HasRunAt: true},
		{ID: "high-late", Priority: 5, RunAtMs: 9, HasRunAt: true},
		{ID: "high-early", Priority: 5, RunAtMs: 2, HasRunAt: true},
		{ID: "high-early-2", Priority: 5, RunAtMs: 2, HasRunAt: true},
		{ID: "high-future", Priority: 5, RunAtMs: 1000, HasRunAt: true},
		{ID: "mid", Priority: 3, RunAtMs: 50, HasRunAt: true},
		{ID: "other-type", Priority: 9, RunAtMs: 0, HasRunAt: true},
	} {
		c.Type = "job"
		if c.ID == "other-type" {
			c.Type = "mail"
		}
		apply(t, tb, int64(i), &c)
	}
	res := apply(t, tb, 100, &Claim{Type: "job", State: Queued, Worker: "w", LeaseMs: 10, Limit: 10})
	var ids []string
	for _, r := range res.Records {
		ids = append(ids, r.ID)
	}
	require.Equal(t, []string{"high-early", "high-early-2", "high-late", "mid", "low-early"}, ids)
	ms, ok := tb.NextDue("job", Queued, false)
	require.True(t, ok)
	require.Equal(t, int64(1000), ms)

	res = apply(t, tb, 100, &Claim{Type: "mail", State: Queued, Worker: "w", LeaseMs: 10, Limit: 10, Priority: 1, HasPriority: true})
	require.Empty(t, res.Records, "PRIORITY claims that priority only")
	require.False(t, res.Changed)
}

func TestFIFOLanes(t *testing.T) {
	tb := NewTable()
	apply(t, tb, 0, &SetPolicy{Type: "job", Policy: Policy{Set: SetMode, Mode: FIFO}})
	for i, id := range []string{"a1", "b1", "a2", "b2"} {
		apply(t, tb, int64(i), &Create{ID: id, Type: "job", Partition: id[:1]})
	}
	res := apply(t, tb, 10, &Claim{Type: "job", State: Queued, Worker: "w", LeaseMs: 100, Limit: 10})
	require.Len(t, res.Records, 2, "one in flight a lane")
	require.Equal(t, "a1", res.Records[0].ID)
	require.Equal(t, "b1", res.Records[1].ID)
	res = apply(t, tb, 11, &Claim{Type: "job", State: Queued, Worker: "w", LeaseMs: 100, Limit: 10})
	require.Empty(t, res.Records)
	a1 := tb.flows["a1"]
	apply(t, tb, 12, &Complete{ID: "a1", LeaseToken: a1.LeaseToken, Fencing: a1.Fencing})
	res = apply(t, tb, 13, &Claim{Type: "job", State: Queued, Worker: "w", LeaseMs: 100, Limit: 10, Partition: "a", HasPartition: true})
	require.Len(t, res.Records, 1)
	require.Equal(t, "a2", res.Records[0].ID)
}

func TestCreateIsIdempotentOnID(t *testing.T) {
	tb := NewTable()
	c := &Create{ID: "a", Type: "job", Payload: []byte("p"), Attributes: []Attr{{"k", "v"}}, Idempotent: true}
	first := apply(t, tb, 0, c)
	require.True(t, first.Changed)
	again := apply(t, tb, 5, c)
	require.False(t, again.Changed)
	require.Equal(t, first.Flow.CreatedMs, again.Flow.CreatedMs)
	_, err := tb.Apply(6, &Create{ID: "a", Type: "job", Payload: []byte("q"), Idempotent: true})
	require.ErrorIs(t, err, ErrIdempotentConflict)
	_, err = tb.Apply(6, &Create{ID: "a", Type: "job", Payload: []byte("p")})
	require.ErrorIs(t, err, ErrExists)
	_, err = tb.Apply(6, &Create{ID: "b", Type: "job", State: Running})
	require.ErrorIs(t, err, ErrRunningState)
}

func TestBackoff(t *testing.T) {
	for _, tc := range []struct {
		p    Policy
		want []int64 // attempts 1..n, no jitter
	}{
		{Policy{Backoff: BackoffNone, BaseMs: 100, MaxMs: 1000}, []int64{0, 0, 0}},
		{Policy{Backoff: BackoffFixed, BaseMs: 100, MaxMs: 1000}, []int64{100, 100, 100}},
		{Policy{Backoff: BackoffLinear, BaseMs: 300, MaxMs: 1000}, []int64{300, 600, 900, 1000}},
		{Policy{Backoff: BackoffExponential, BaseMs: 100, MaxMs: 1000}, []int64{100, 200, 400, 800, 1000, 1000}},
		{Policy{Backoff: BackoffExponential, BaseMs: 1 << 62, MaxMs: 1 << 62}, []int64{1 << 62, 1 << 62}},
	} {
		for i, w := range tc.want {
			require.Equal(t, w, tc.p.Delay("a", int64(i+1), 0), "%v attempt %d", tc.p.Backoff, i+1)
		}
	}
	p := Policy{Backoff: BackoffFixed, BaseMs: 1000, MaxMs: 1100, JitterPct: 20}
	seen := map[int64]bool{}
	for now := range int64(500) {
		d := p.Delay(fmt.Sprint("id", now), 1, now)
		require.GreaterOrEqual(t, d, int64(800))
		require.LessOrEqual(t, d, int64(1100), "capped at MaxMs")
		seen[d] = true
	}
	require.Greater(t, len(seen), 50, "jitter spreads")
	require.Equal(t, p.Delay("x", 2, 7), p.Delay("x", 2, 7), "deterministic")
}

func TestRetryThenExhaustion(t *testing.T) {
	tb := NewTable()
	apply(t, tb, 0, &SetPolicy{Type: "job", Policy: Policy{Set: SetMaxRetries | SetBackoff | SetBaseMs | SetJitterPct, MaxRetries: 2, Backoff: BackoffFixed, BaseMs: 50}})
	apply(t, tb, 0, &Create{ID: "a", Type: "job"})
	now := int64(0)
	for attempt := 1; attempt <= 2; attempt++ {
		r := claim1(t, tb, now, "job", "w")
		res := apply(t, tb, now, &Retry{ID: "a", LeaseToken: r.LeaseToken, Fencing: r.Fencing, Error: []byte("boom")})
		got := res.Flow
		require.Equal(t, Queued, got.State)
		require.Equal(t, int64(attempt), got.Attempts)
		require.Equal(t, now+50, got.NextRunAtMs)
		none := apply(t, tb, now+49, &Claim{Type: "job", State: Queued, Worker: "w", LeaseMs: 10, Limit: 1})
		require.Empty(t, none.Records, "not due before its backoff")
		now += 50
	}
	r := claim1(t, tb, now, "job", "w")
	res := apply(t, tb, now, &Retry{ID: "a", LeaseToken: r.LeaseToken, Fencing: r.Fencing})
	require.Equal(t, Failed, res.Flow.State)

	// Exhaustion to a waiting state, set on the call.
	apply(t, tb, now, &Create{ID: "b", Type: "job"})
	r = claim1(t, tb, now, "job", "w")
	res = apply(t, tb, now, &Retry{ID: "b", LeaseToken: r.LeaseToken, Fencing: r.Fencing,
		Override: Policy{Set: SetMaxRetries | SetExhaustedTo, MaxRetries: 0, ExhaustedTo: "dead_letter"}})
	require.Equal(t, "dead_letter", res.Flow.State)
	require.Equal(t, now, res.Flow.NextRunAtMs)
}

func TestPolicyGeneration(t *testing.T) {
	tb := NewTable()
	res := apply(t, tb, 0, &SetPolicy{Type: "job", Policy: Policy{Set: SetMaxRetries, MaxRetries: 5}, HasExpected: true})
	require.Equal(t, uint64(1), res.Policy.Generation)
	_, err := tb.Apply(0, &SetPolicy{Type: "job", Policy: Policy{Set: SetMaxRetries, MaxRetries: 6}, ExpectedGeneration: 0, HasExpected: true})
	require.ErrorIs(t, err, ErrPolicyGeneration)
	apply(t, tb, 0, &SetPolicy{Type: "job", State: Queued, Policy: Policy{Set: SetBaseMs, BaseMs: 7}, HasExpected: true})
	eff := tb.Effective("job", Queued)
	require.Equal(t, int64(5), eff.MaxRetries)
	require.Equal(t, int64(7), eff.BaseMs)
	require.Equal(t, BackoffExponential, eff.Backoff)
	_, err = tb.Apply(0, &SetPolicy{Type: "job", Policy: Policy{Set: SetMaxRetries, MaxRetries: MaxRetriesCap + 1}})
	require.ErrorIs(t, err, ErrInvalid)
}

func TestBatchIsAllOrNothing(t *testing.T) {
	tb := NewTable()
	apply(t, tb, 0, &Create{ID: "a", Type: "job"})
	before := tb.Snapshot()
	_, err := tb.Apply(1, &Batch{Commands: []Command{
		&Create{ID: "b", Type: "job"},
		&Cancel{ID: "a"},
		&Create{ID: "a", Type: "job"},
	}})
	var be *BatchError
	require.ErrorAs(t, err, &be)
	require.Equal(t, 2, be.Index)
	require.ErrorIs(t, err, ErrExists)
	require.Equal(t, before, tb.Snapshot(), "nothing changed")
	_, ok := tb.Get("b")
	require.False(t, ok)
	ms, _ := tb.NextDue("job", Queued, false)
	require.Equal(t, int64(0), ms, "indexes restored")

	res := apply(t, tb, 2, &Batch{Independent: true, Commands: []Command{
		&Create{ID: "b", Type: "job"},
		&Create{ID: "a", Type: "job"},
		&Cancel{ID: "a"},
	}})
	require.NoError(t, res.Items[0].Err)
	require.ErrorIs(t, res.Items[1].Err, ErrExists)
	require.Equal(t, Cancelled, res.Items[2].Record.State)
}

func TestMaxActiveAndRetention(t *testing.T) {
	tb := NewTable()
	apply(t, tb, 0, &Create{ID: "a", Type: "job", MaxActiveMs: 100})
	apply(t, tb, 0, &Create{ID: "b", Type: "job"})
	ms, ok := tb.NextWake()
	require.True(t, ok)
	require.Equal(t, int64(100), ms)
	claim1(t, tb, 50, "job", "w")
	res := apply(t, tb, 99, &Tick{})
	require.False(t, res.Changed)
	res = apply(t, tb, 100, &Tick{})
	require.Equal(t, 1, res.Expired)
	r, _ := tb.Get("a")
	require.Equal(t, Failed, r.State)
	require.Equal(t, "max_active_ms", string(r.Error))
	res = apply(t, tb, 500, &Tick{PurgeBeforeMs: 101})
	require.Equal(t, 1, res.Purged)
	_, ok = tb.Get("a")
	require.False(t, ok)
	require.Equal(t, 1, tb.Len())

	// A bound on terminal flows deletes the oldest past it.
	for i := range 5 {
		id := fmt.Sprint("c", i)
		apply(t, tb, int64(600+i), &Create{ID: id, Type: "job"})
		apply(t, tb, int64(600+i), &Cancel{ID: id})
	}
	res = apply(t, tb, 700, &Tick{MaxDone: 2})
	require.Equal(t, 3, res.Purged)
	require.Equal(t, 2, tb.DoneLen())
	for i, kept := range []bool{false, false, false, true, true} {
		_, ok := tb.Get(fmt.Sprint("c", i))
		require.Equal(t, kept, ok, "c%d", i)
	}
	rec := AppendRecord(nil, 700, &Tick{PurgeBeforeMs: 5, MaxDone: 2})
	_, c, err := DecodeRecord(rec)
	require.NoError(t, err)
	require.Equal(t, &Tick{PurgeBeforeMs: 5, MaxDone: 2}, c)
}

func TestScheduleCatchUp(t *testing.T) {
	tb := NewTable()
	apply(t, tb, 0, &SetSchedule{Schedule: Schedule{Name: "s", Type: "job", EveryMs: 100}, StartMs: 1000, HasStart: true})
	res := apply(t, tb, 999, &Tick{})
	require.False(t, res.Changed)
	res = apply(t, tb, 2050, &Tick{})
	require.Equal(t, 1, res.Fired)
	require.Equal(t, 10, res.Coalesced)
	s, _ := tb.Schedule("s")
	require.Equal(t, int64(2150), s.NextDueMs)
	require.Equal(t, "s:1000:1", s.LastTarget)
	_, ok := tb.Get("s:1000:1")
	require.True(t, ok)
	res = apply(t, tb, 2150, &Tick{})
	require.Equal(t, 1, res.Fired)
	require.Equal(t, 0, res.Coalesced)
	s, _ = tb.Schedule("s")
	require.Equal(t, int64(2250), s.NextDueMs, "on time: the cadence holds")
}

func TestScheduleOverlap(t *testing.T) {
	for _, tc := range []struct {
		overlap Overlap
		fired   uint64
		skipped uint64
		failed  bool
	}{
		{OverlapAllow, 2, 0, false},
		{OverlapSkip, 1, 1, false},
		{OverlapQueue, 1, 0, false},
		{OverlapFail, 1, 0, true},
	} {
		t.Run(tc.overlap.String(), func(t *testing.T) {
			tb := NewTable()
			apply(t, tb, 0, &SetSchedule{Schedule: Schedule{Name: "s", Type: "job", EveryMs: 10, Overlap: tc.overlap}})
			apply(t, tb, 0, &Tick{})
			apply(t, tb, 10, &Tick{}) // the first flow still queued
			s, _ := tb.Schedule("s")
			require.Equal(t, tc.fired, s.Fired)
			require.Equal(t, tc.skipped, s.Skipped)
			require.Equal(t, tc.failed, s.Failed)
			if tc.overlap == OverlapQueue {
				r := claim1(t, tb, 15, "job", "w")
				apply(t, tb, 15, &Complete{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing})
				apply(t, tb, 16, &Tick{})
				s, _ = tb.Schedule("s")
				require.Equal(t, uint64(2), s.Fired, "fires once the previous is done")
			}
		})
	}
}
