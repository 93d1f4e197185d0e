package flowsbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// A worker whose claim came back empty sleeps idleMin, doubling up to
// idleMax while claims stay empty: short enough that a flow waits little
// past its creation, long enough that idle workers do not take the CPU
// from the producers on a small machine.
const (
	idleMin = time.Millisecond
	idleMax = 10 * time.Millisecond
)

// progressEvery is the period of the progress lines and of the stall
// check.
const progressEvery = 2 * time.Second

// stallAfter ends a run in which no flow was completed for this long: far
// past any pause of a healthy run, so a system that lost flows fails
// rather than hangs.
const stallAfter = time.Minute

// errStalled is returned by a run that stopped making progress.
var errStalled = errors.New("flowsbench: no flow completed for " + stallAfter.String())

// runResult is one run of one system.
type runResult struct {
	Repeat int `json:"repeat"`
	Flows  int `json:"flows"`
	// E2EPerS is Flows over E2ESeconds, the time from the first create
	// until the last completion.
	E2EPerS    float64 `json:"e2e_per_s"`
	E2ESeconds float64 `json:"e2e_seconds"`
	// CreateSeconds is from the first create until the last was
	// acknowledged: how far the producers ran ahead of the workers.
	CreateSeconds float64 `json:"create_seconds"`
	// DueToClaim* are percentiles of the time from a flow's creation
	// (its create call sent) to its claim.
	DueToClaimP50Ms float64 `json:"due_to_claim_p50_ms"`
	DueToClaimP95Ms float64 `json:"due_to_claim_p95_ms"`
	DueToClaimP99Ms float64 `json:"due_to_claim_p99_ms"`
	// CompletedOnce is the system's own count, queried after the run, of
	// flows completed exactly once; it must equal Flows.
	CompletedOnce int `json:"completed_once"`
	// Violations are the exactly-once checks that failed, by the harness
	// or the system's Verify; any is an error of the benchmark.
	Violations []string `json:"violations,omitempty"`
}

// live runs one started system: producers create items while the
// system's flows are claimed and completed, until every one is.
func live(ctx context.Context, cfg Config, s system, items []item, log *slog.Logger) (runResult, *tracker, error) {
	t := newTracker(len(items))
	t.payloadBytes = cfg.PayloadBytes
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	g, gctx := errgroup.WithContext(ctx)
	t.t0 = time.Now()
	switch q := s.(type) {
	case consumer:
		g.Go(func() error {
			return q.Consume(gctx, len(items), hooks{Claimed: t.claimed, Completed: t.completed})
		})
	case poller:
		for w := range cfg.Workers {
			g.Go(func() error { return work(gctx, t, q, fmt.Sprintf("w%d", w), cfg.ClaimLimit) })
		}
	default:
		return runResult{}, nil, fmt.Errorf("system %s neither polls (Claim, CompleteMany) nor consumes (Consume)", s.Name())
	}
	var next atomic.Int64
	for range cfg.Producers {
		g.Go(func() error { return produce(gctx, t, s, items, cfg.CreateBatch, &next) })
	}
	g.Go(func() error { return watch(gctx, t, s.Name(), log) })
	if err := g.Wait(); err != nil {
		return runResult{}, t, err
	}
	res := runResult{
		Flows:         t.n,
		E2ESeconds:    time.Duration(t.doneNs.Load() - 1).Seconds(),
		CreateSeconds: time.Duration(t.createdNs.Load() - 1).Seconds(),
	}
	res.E2EPerS = float64(t.n) / res.E2ESeconds
	res.DueToClaimP50Ms, res.DueToClaimP95Ms, res.DueToClaimP99Ms = t.dueToClaim()
	return res, t, nil
}

// produce creates the batches of items it takes in turn from next until
// none is left.
func produce(ctx context.Context, t *tracker, s system, items []item, batch int, next *atomic.Int64) error {
	for {
		lo := int(next.Add(1)-1) * batch
		if lo >= len(items) {
			return nil
		}
		hi := min(lo+batch, len(items))
		t.creating(lo, hi)
		if err := s.CreateMany(ctx, items[lo:hi]); err != nil {
			return fmt.Errorf("create %s..%s: %w", items[lo].ID, items[hi-1].ID, err)
		}
		t.createdBatch(hi - lo)
	}
}

// work is one worker: claim, complete what was claimed, until every flow
// is completed.
func work(ctx context.Context, t *tracker, p poller, name string, limit int) error {
	idle := idleMin
	for {
		select {
		case <-t.finished:
			return nil
		default:
		}
		cs, err := p.Claim(ctx, name, limit)
		if err != nil {
			return fmt.Errorf("worker %s: claim: %w", name, err)
		}
		if len(cs) == 0 {
			select {
			case <-t.finished:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(idle):
			}
			idle = min(2*idle, idleMax)
			continue
		}
		idle = idleMin
		for _, c := range cs {
			if len(c.Payload) != t.payloadBytes {
				return fmt.Errorf("worker %s: flow %s came with %d payload bytes, not %d", name, c.ID, len(c.Payload), t.payloadBytes)
			}
			t.claimed(c.ID)
		}
		if err := p.CompleteMany(ctx, cs); err != nil {
			return fmt.Errorf("worker %s: complete %d flows: %w", name, len(cs), err)
		}
		for _, c := range cs {
			t.completed(c.ID)
		}
	}
}

// watch logs progress with an ETA and fails the run when it stalls; it
// returns when every flow is completed.
func watch(ctx context.Context, t *tracker, name string, log *slog.Logger) error {
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
	last, lastAt := int64(0), time.Now()
	for {
		select {
		case <-t.finished:
			return nil
		case <-ctx.Done():
			return ctx.Err()
		case now := <-tick.C:
			done := t.done.Load()
			elapsed := now.Sub(t.t0)
			perS := float64(done) / elapsed.Seconds()
			eta := "n/a"
			if done > 0 {
				eta = time.Duration(float64(int64(t.n)-done) / perS * float64(time.Second)).Round(time.Second).String()
			}
			log.Info("flows", "system", name, "created", fmt.Sprintf("%d/%d", t.created.Load(), t.n),
				"completed", fmt.Sprintf("%d/%d", done, t.n), "per_s", benchkit.FormatNumber(perS, 0),
				"elapsed", elapsed.Round(time.Second), "eta", eta)
			if done != last {
				last, lastAt = done, now
			} else if now.Sub(lastAt) >= stallAfter {
				return fmt.Errorf("%w: %d of %d completed, %d created", errStalled, done, t.n, t.created.Load())
			}
		}
	}
}
