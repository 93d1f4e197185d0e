package flowworker

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

func openStore(t *testing.T) *ferricstore.Flows {
	t.Helper()
	st, err := ferricstore.Open(ferricstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	t.Cleanup(func() { st.Close() })
	return st.Flows()
}

func waitState(t *testing.T, fl *ferricstore.Flows, id, state string) {
	t.Helper()
	require.Eventually(t, func() bool {
		r, err := fl.Get(context.Background(), id)
		return err == nil && r.State == state
	}, 10*time.Second, 5*time.Millisecond, "%s never %s", id, state)
}

func TestWorkerHandlesRetriesAndFails(t *testing.T) {
	fl := openStore(t)
	ctx := t.Context()
	_, err := fl.SetPolicy(ctx, flow.SetPolicy{Type: "job", Policy: flow.Policy{Set: flow.SetBackoff | flow.SetBaseMs | flow.SetJitterPct, Backoff: flow.BackoffFixed, BaseMs: 10}})
	require.NoError(t, err)
	q := Queue{Client: fl, Type: "job"}
	var cs []flow.Create
	for i := range 100 {
		cs = append(cs, flow.Create{ID: fmt.Sprint("ok", i)})
	}
	items, err := q.EnqueueMany(ctx, cs)
	require.NoError(t, err)
	require.Len(t, items, 100)
	_, err = q.Enqueue(ctx, "flaky", nil)
	require.NoError(t, err)
	_, err = q.Enqueue(ctx, "broken", nil)
	require.NoError(t, err)

	var tries sync.Map
	var ran atomic.Int64
	w := Worker{Client: fl, Type: "job", Name: "w", Concurrency: 4, BatchSize: 16, Handler: func(ctx context.Context, r flow.Record) error {
		ran.Add(1)
		n, _ := tries.LoadOrStore(r.ID, new(atomic.Int64))
		switch k := n.(*atomic.Int64).Add(1); {
		case r.ID == "broken":
			return Permanent(errors.New("no such mailbox"))
		case r.ID == "flaky" && k < 3:
			return errors.New("try again")
		}
		return nil
	}}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(rctx) }()
	for i := range 100 {
		waitState(t, fl, fmt.Sprint("ok", i), flow.Completed)
	}
	waitState(t, fl, "flaky", flow.Completed)
	waitState(t, fl, "broken", flow.Failed)
	stop()
	require.NoError(t, <-done)
	r, _ := fl.Get(ctx, "flaky")
	require.Equal(t, int64(2), r.Attempts)
	require.Equal(t, int64(104), ran.Load())
}

// A handler slower than the lease keeps its flow: the worker extends the
// lease, and another worker reclaiming expired leases does not take it.
func TestWorkerKeepsItsLease(t *testing.T) {
	fl := openStore(t)
	ctx := t.Context()
	_, err := fl.Create(ctx, flow.Create{ID: "slow", Type: "job"})
	require.NoError(t, err)
	var ran atomic.Int64
	handler := func(ctx context.Context, r flow.Record) error {
		ran.Add(1)
		time.Sleep(400 * time.Millisecond)
		return nil
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	var wg sync.WaitGroup
	for i := range 2 {
		w := Worker{Client: fl, Type: "job", Name: fmt.Sprint("w", i), Lease: 90 * time.Millisecond, ClaimWait: 50 * time.Millisecond, Handler: handler}
		wg.Go(func() { require.NoError(t, w.Run(rctx)) })
	}
	waitState(t, fl, "slow", flow.Completed)
	stop()
	wg.Wait()
	require.Equal(t, int64(1), ran.Load(), "nobody reclaimed a lease kept alive")
	h, err := fl.History(ctx, "slow", 0, false)
	require.NoError(t, err)
	require.Equal(t, flow.EventLeaseExtended, h[2].Kind)
}

// Run returns once its context ends, after the running handlers finish.
func TestWorkerShutsDownGracefully(t *testing.T) {
	fl := openStore(t)
	ctx := t.Context()
	for i := range 3 {
		_, err := fl.Create(ctx, flow.Create{ID: fmt.Sprint("f", i), Type: "job"})
		require.NoError(t, err)
	}
	started := make(chan struct{}, 3)
	release := make(chan struct{})
	w := Worker{Client: fl, Type: "job", Name: "w", Concurrency: 3, Handler: func(ctx context.Context, r flow.Record) error {
		started <- struct{}{}
		<-release
		return nil
	}}
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- w.Run(rctx) }()
	for range 3 {
		<-started
	}
	stop()
	select {
	case <-done:
		t.Fatal("Run returned with handlers running")
	case <-time.After(50 * time.Millisecond):
	}
	close(release)
	require.NoError(t, <-done)
	for i := range 3 {
		r, err := fl.Get(ctx, fmt.Sprint("f", i))
		require.NoError(t, err)
		require.Equal(t, flow.Completed, r.State, "finished before Run returned")
	}
}

func TestWorkflowMovesThroughStates(t *testing.T) {
	fl := openStore(t)
	ctx := t.Context()
	_, err := fl.Create(ctx, flow.Create{ID: "order-1", Type: "order", Payload: []byte("cart")})
	require.NoError(t, err)
	wf := Workflow{Worker: Worker{Client: fl, Type: "order", Name: "wf", ClaimWait: 50 * time.Millisecond}}
	wf.State(flow.Queued, func(ctx context.Context, r flow.Record) Step {
		return TransitionTo("charge", append(r.Payload, "+priced"...), 0)
	})
	wf.State("charge", func(ctx context.Context, r flow.Record) Step {
		if string(r.Payload) != "cart+priced" {
			return FailWith(fmt.Errorf("payload %q", r.Payload))
		}
		return CompleteWith([]byte("charged"))
	})
	rctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- wf.Run(rctx) }()
	waitState(t, fl, "order-1", flow.Completed)
	stop()
	require.NoError(t, <-done)
	r, _ := fl.Get(ctx, "order-1")
	require.Equal(t, "charged", string(r.Result))
	h, _ := fl.History(ctx, "order-1", 0, false)
	var path []string
	for _, e := range h {
		path = append(path, e.Kind+":"+e.To)
	}
	require.Equal(t, []string{"created:queued", "claimed:running", "transitioned:charge", "claimed:running", "completed:completed"}, path)
}
