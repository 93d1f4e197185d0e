package ferricstore

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

func openFlows(t *testing.T, dir string, clk *clock, shards int, opts ...func(*Options)) *Store {
	t.Helper()
	o := Options{Dir: dir, Shards: shards, Now: clk.now}
	for _, f := range opts {
		f(&o)
	}
	st, err := Open(o)
	require.NoError(t, err)
	return st
}

// Flows in every state survive a restart, from the log and from a
// snapshot, records and histories alike.
func TestFlowsSurviveRestart(t *testing.T) {
	for _, snapEvery := range []int{DefaultSnapshotEvery, 3} {
		t.Run(fmt.Sprint("snapshot_every_", snapEvery), func(t *testing.T) {
			clk := &clock{}
			clk.ms.Store(1_000)
			dir := t.TempDir()
			withSnap := func(o *Options) { o.SnapshotEvery = snapEvery }
			st := openFlows(t, dir, clk, 2, withSnap)
			ctx := t.Context()
			fl := st.Flows()
			_, err := fl.SetPolicy(ctx, flow.SetPolicy{Type: "job", Policy: flow.Policy{Set: flow.SetMaxRetries | flow.SetBackoff | flow.SetBaseMs, MaxRetries: 5, Backoff: flow.BackoffFixed, BaseMs: 500}})
			require.NoError(t, err)
			for i := range 8 {
				_, err := fl.Create(ctx, flow.Create{ID: fmt.Sprint("f", i), Type: "job", Payload: []byte{byte(i)}, Priority: int64(i % 3)})
				require.NoError(t, err)
			}
			_, err = fl.Create(ctx, flow.Create{ID: "waiting", Type: "job", State: "review"})
			require.NoError(t, err)
			got, err := fl.Claim(ctx, flow.Claim{Type: "job", State: flow.Queued, Worker: "w", LeaseMs: 10_000, Limit: 5})
			require.NoError(t, err)
			require.Len(t, got, 5)
			_, err = fl.Complete(ctx, flow.Complete{ID: got[0].ID, LeaseToken: got[0].LeaseToken, Fencing: got[0].Fencing, Result: []byte("done")})
			require.NoError(t, err)
			_, err = fl.Fail(ctx, flow.Fail{ID: got[1].ID, LeaseToken: got[1].LeaseToken, Fencing: got[1].Fencing})
			require.NoError(t, err)
			_, err = fl.Retry(ctx, flow.Retry{ID: got[2].ID, LeaseToken: got[2].LeaseToken, Fencing: got[2].Fencing})
			require.NoError(t, err)
			_, err = fl.Cancel(ctx, flow.Cancel{ID: got[3].ID, LeaseToken: got[3].LeaseToken, Fencing: got[3].Fencing})
			require.NoError(t, err)
			_, err = fl.SetSchedule(ctx, flow.SetSchedule{Schedule: flow.Schedule{Name: "tick", Type: "job", EveryMs: 60_000}, StartMs: 5_000, HasStart: true})
			require.NoError(t, err)

			ids := []string{"waiting"}
			for i := range 8 {
				ids = append(ids, fmt.Sprint("f", i))
			}
			before := map[string]flow.Record{}
			hist := map[string][]flow.Event{}
			for _, id := range ids {
				before[id], err = fl.Get(ctx, id)
				require.NoError(t, err)
				hist[id], err = fl.History(ctx, id, 0, false)
				require.NoError(t, err)
			}
			require.NoError(t, st.Close())

			st = openFlows(t, dir, clk, 2)
			defer st.Close()
			fl = st.Flows()
			for _, id := range ids {
				r, err := fl.Get(ctx, id)
				require.NoError(t, err)
				require.Equal(t, before[id], r, id)
				h, err := fl.History(ctx, id, 0, false)
				require.NoError(t, err)
				require.Equal(t, hist[id], h, id)
			}
			sch, err := fl.Schedule(ctx, "tick")
			require.NoError(t, err)
			require.Equal(t, int64(5_000), sch.NextDueMs)
			p, ok, err := fl.Policy(ctx, "job", "")
			require.NoError(t, err)
			require.True(t, ok)
			require.Equal(t, int64(5), p.MaxRetries)
			// The lease given before the restart still finishes its flow.
			_, err = fl.Complete(ctx, flow.Complete{ID: got[4].ID, LeaseToken: got[4].LeaseToken, Fencing: got[4].Fencing})
			require.NoError(t, err)
			_, err = fl.Complete(ctx, flow.Complete{ID: got[3].ID, LeaseToken: got[3].LeaseToken, Fencing: got[3].Fencing})
			require.ErrorIs(t, err, flow.ErrTerminal)
		})
	}
}

// A blocked claim is served by the write that makes a flow due, blocked
// claims in the order they blocked; one that times out returns nothing.
func TestClaimWaitServesInOrder(t *testing.T) {
	st, err := Open(Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	fl := st.Flows()
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	got, err := fl.ClaimWait(short, flow.Claim{Type: "job", State: flow.Queued, Worker: "w", LeaseMs: 1000, Limit: 1})
	require.NoError(t, err)
	require.Nil(t, got)

	results := make([]chan []flow.Record, 3)
	for i := range results {
		results[i] = make(chan []flow.Record, 1)
		go func() {
			rs, err := fl.ClaimWait(ctx, flow.Claim{Type: "job", State: flow.Queued, Worker: fmt.Sprint("w", i), LeaseMs: 1000, Limit: 1})
			require.NoError(t, err)
			results[i] <- rs
		}()
		// Waiter i is registered before waiter i+1 starts: count the live
		// ones, as the one that timed out above may still be listed.
		require.Eventually(t, func() bool {
			st.shards[0].mu.RLock()
			defer st.shards[0].mu.RUnlock()
			live := 0
			for _, w := range st.shards[0].flowWaiters {
				if !w.finished.Load() {
					live++
				}
			}
			return live == i+1
		}, 5*time.Second, time.Millisecond)
	}
	for i := range 3 {
		_, err := fl.Create(ctx, flow.Create{ID: fmt.Sprint("f", i), Type: "job"})
		require.NoError(t, err)
		var rs []flow.Record
		select {
		case rs = <-results[i]:
		case <-time.After(10 * time.Second):
			t.Fatalf("waiter %d was not served", i)
		}
		require.Len(t, rs, 1)
		require.Equal(t, fmt.Sprint("f", i), rs[0].ID)
		require.Equal(t, fmt.Sprint("w", i), rs[0].LeaseOwner, "served in the order they blocked")
	}
}

// A blocked claim with RECLAIM_EXPIRED is woken by a lease running out,
// and one waiting for a flow due later by its due time.
func TestClaimWaitWakesOnTime(t *testing.T) {
	st, err := Open(Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	fl := st.Flows()
	now := time.Now().UnixMilli()
	_, err = fl.Create(ctx, flow.Create{ID: "later", Type: "job", RunAtMs: now + 150, HasRunAt: true})
	require.NoError(t, err)
	start := time.Now()
	rs, err := fl.ClaimWait(ctx, flow.Claim{Type: "job", State: flow.Queued, Worker: "a", LeaseMs: 100, Limit: 1})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.GreaterOrEqual(t, time.Since(start), 100*time.Millisecond)

	rs, err = fl.ClaimWait(ctx, flow.Claim{Type: "job", State: flow.Queued, Worker: "b", LeaseMs: 100, Limit: 1, ReclaimExpired: true})
	require.NoError(t, err)
	require.Len(t, rs, 1)
	require.Equal(t, uint64(2), rs[0].Fencing, "reclaimed once the first lease ran out")
	h, err := fl.History(ctx, "later", 0, false)
	require.NoError(t, err)
	require.Equal(t, flow.EventReclaimed, h[len(h)-1].Kind)
}

// Batches: all-or-nothing ones must stay on one shard; independent ones
// spread, each item alone.
func TestFlowBatches(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(1)
	st := openFlows(t, t.TempDir(), clk, 4)
	defer st.Close()
	ctx := t.Context()
	fl := st.Flows()
	var spread, tagged []flow.Command
	for i := range 20 {
		spread = append(spread, &flow.Create{ID: fmt.Sprint("f", i), Type: "job"})
		tagged = append(tagged, &flow.Create{ID: fmt.Sprintf("{order-1}:%d", i), Type: "job"})
	}
	_, err := fl.Batch(ctx, spread, false)
	require.ErrorIs(t, err, ErrCrossShardBatch)
	items, err := fl.Batch(ctx, tagged, false)
	require.NoError(t, err)
	require.Len(t, items, 20)
	_, err = fl.Batch(ctx, append(tagged[:1:1], &flow.Create{ID: "{order-1}:new", Type: "job"}), false)
	require.ErrorIs(t, err, flow.ErrExists)
	_, err = fl.Get(ctx, "{order-1}:new")
	require.ErrorIs(t, err, flow.ErrNotFound, "all or nothing")

	items, err = fl.Batch(ctx, append(spread, spread[0]), true)
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, items[i].Err)
		require.Equal(t, fmt.Sprint("f", i), items[i].Record.ID)
	}
	require.ErrorIs(t, items[20].Err, flow.ErrExists)

	// Claims gather from every shard.
	got, err := fl.Claim(ctx, flow.Claim{Type: "job", State: flow.Queued, Worker: "w", LeaseMs: 1000, Limit: 100})
	require.NoError(t, err)
	require.Len(t, got, 40)
	var done []flow.Command
	for _, r := range got {
		done = append(done, &flow.Complete{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing})
	}
	items, err = fl.Batch(ctx, done, true)
	require.NoError(t, err)
	for _, it := range items {
		require.NoError(t, it.Err)
		require.Equal(t, flow.Completed, it.Record.State)
	}
	c, err := fl.Counts(ctx)
	require.NoError(t, err)
	require.Equal(t, 40, c.Completed)
}

// Workers that die holding leases: their flows are reclaimed once the
// leases run out, and every flow is completed exactly once however many
// workers ran it.
func TestFlowsCompleteOnceUnderWorkerDeaths(t *testing.T) {
	st, err := Open(Options{Dir: t.TempDir(), Shards: 2})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	fl := st.Flows()
	const n = 300
	var cs []flow.Command
	for i := range n {
		cs = append(cs, &flow.Create{ID: fmt.Sprint("f", i), Type: "job"})
	}
	_, err = fl.Batch(ctx, cs, true)
	require.NoError(t, err)

	var completions, ran, stale atomic.Int64
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for completions.Load() < n {
				wctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
				rs, err := fl.ClaimWait(wctx, flow.Claim{Type: "job", State: flow.Queued, Worker: fmt.Sprint("w", w), LeaseMs: 40, Limit: 8, ReclaimExpired: true})
				cancel()
				if err != nil {
					return
				}
				for i, r := range rs {
					ran.Add(1)
					if w == 0 && i%3 == 0 {
						continue // this worker "dies" holding the lease
					}
					_, err := fl.Complete(ctx, flow.Complete{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing})
					switch {
					case err == nil:
						completions.Add(1)
					default:
						require.ErrorIs(t, err, flow.ErrStaleLease)
						stale.Add(1)
					}
				}
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(n), completions.Load())
	require.Greater(t, ran.Load(), int64(n), "some flows ran twice")
	for i := range n {
		h, err := fl.History(ctx, fmt.Sprint("f", i), 0, false)
		require.NoError(t, err)
		completed := 0
		for _, e := range h {
			if e.Kind == flow.EventCompleted {
				completed++
			}
		}
		require.Equal(t, 1, completed, "f%d", i)
	}
}

// Terminal flows are deleted once the retention has passed, by the
// shard's own timer.
func TestFlowRetention(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(1_000)
	st := openFlows(t, t.TempDir(), clk, 1, func(o *Options) { o.FlowRetention = time.Second })
	defer st.Close()
	ctx := t.Context()
	fl := st.Flows()
	_, err := fl.Create(ctx, flow.Create{ID: "a", Type: "job"})
	require.NoError(t, err)
	_, err = fl.Cancel(ctx, flow.Cancel{ID: "a"})
	require.NoError(t, err)
	clk.ms.Add(999)
	time.Sleep(2 * maxFlowWait)
	_, err = fl.Get(ctx, "a")
	require.NoError(t, err)
	clk.ms.Add(2)
	require.Eventually(t, func() bool {
		_, err := fl.Get(ctx, "a")
		return err != nil
	}, 5*time.Second, 10*time.Millisecond)
}

// A retried flow waits out its backoff on the store's clock, and an
// interval schedule fires on it, catching up once after a jump.
func TestFlowTimersFollowTheClock(t *testing.T) {
	clk := &clock{}
	clk.ms.Store(10_000)
	st := openFlows(t, t.TempDir(), clk, 1)
	defer st.Close()
	ctx := t.Context()
	fl := st.Flows()
	_, err := fl.SetPolicy(ctx, flow.SetPolicy{Type: "job", Policy: flow.Policy{Set: flow.SetBackoff | flow.SetBaseMs | flow.SetMaxMs | flow.SetJitterPct,
		Backoff: flow.BackoffExponential, BaseMs: 100, MaxMs: 1000}})
	require.NoError(t, err)
	_, err = fl.Create(ctx, flow.Create{ID: "a", Type: "job"})
	require.NoError(t, err)
	claim := flow.Claim{Type: "job", State: flow.Queued, Worker: "w", LeaseMs: 50, Limit: 1}
	for attempt, delay := range []int64{100, 200, 400} {
		rs, err := fl.Claim(ctx, claim)
		require.NoError(t, err)
		require.Len(t, rs, 1, "attempt %d", attempt)
		r, err := fl.Retry(ctx, flow.Retry{ID: "a", LeaseToken: rs[0].LeaseToken, Fencing: rs[0].Fencing})
		require.NoError(t, err)
		require.Equal(t, clk.ms.Load()+delay, r.NextRunAtMs)
		clk.ms.Add(delay - 1)
		rs, err = fl.Claim(ctx, claim)
		require.NoError(t, err)
		require.Empty(t, rs, "not before its backoff")
		clk.ms.Add(1)
	}

	_, err = fl.SetSchedule(ctx, flow.SetSchedule{Schedule: flow.Schedule{Name: "beat", Type: "tick", EveryMs: 100}, StartMs: clk.ms.Load() + 1000, HasStart: true})
	require.NoError(t, err)
	clk.ms.Add(1000 + 1050) // 11 occurrences came
	require.Eventually(t, func() bool {
		s, err := fl.Schedule(ctx, "beat")
		return err == nil && s.Fired == 1
	}, 5*time.Second, 10*time.Millisecond, "the writer's timer fires it")
	s, err := fl.Schedule(ctx, "beat")
	require.NoError(t, err)
	require.Equal(t, uint64(10), s.Coalesced)
	n, err := fl.Counts(ctx)
	require.NoError(t, err)
	require.Equal(t, 2, n.Waiting, "the retried flow and the schedule's")
}

// A shard keeps at most MaxTerminalFlows terminal flows: the oldest go
// first, whatever the retention.
func TestMaxTerminalFlows(t *testing.T) {
	st, err := Open(Options{Dir: t.TempDir(), MaxTerminalFlows: 10, FlowRetention: -1})
	require.NoError(t, err)
	defer st.Close()
	ctx := t.Context()
	fl := st.Flows()
	for i := range 25 {
		id := fmt.Sprint("f", i)
		_, err := fl.Create(ctx, flow.Create{ID: id, Type: "job"})
		require.NoError(t, err)
		_, err = fl.Cancel(ctx, flow.Cancel{ID: id})
		require.NoError(t, err)
	}
	require.Eventually(t, func() bool {
		c, err := fl.Counts(ctx)
		return err == nil && c.Cancelled == 10
	}, 5*time.Second, 10*time.Millisecond)
	_, err = fl.Get(ctx, "f24")
	require.NoError(t, err, "the newest stays")
	_, err = fl.Get(ctx, "f0")
	require.ErrorIs(t, err, flow.ErrNotFound, "the oldest went")
}
