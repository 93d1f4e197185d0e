package flowworker

import (
	"context"
	"fmt"
	"sync"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// Step is what a workflow state's handler decides for its flow.
type Step struct {
	kind    stepKind
	to      string
	detail  []byte
	payload []byte
	runAtMs int64
	hasRun  bool
}

type stepKind uint8

const (
	stepTransition stepKind = iota + 1
	stepComplete
	stepRetry
	stepFail
)

// TransitionTo moves the flow to state, due now (or at runAtMs when not
// zero), with payload as its new payload when not nil.
func TransitionTo(state string, payload []byte, runAtMs int64) Step {
	return Step{kind: stepTransition, to: state, payload: payload, runAtMs: runAtMs, hasRun: runAtMs != 0}
}

// CompleteWith completes the flow with result.
func CompleteWith(result []byte) Step { return Step{kind: stepComplete, detail: result} }

// RetryWith retries the flow in its state after the policy's backoff.
func RetryWith(err error) Step { return Step{kind: stepRetry, detail: []byte(err.Error())} }

// FailWith fails the flow for good.
func FailWith(err error) Step { return Step{kind: stepFail, detail: []byte(err.Error())} }

// Workflow runs a flow type through states: each state's handler runs on
// the flows claimed in it and returns the Step to take.
type Workflow struct {
	// Worker's fields but Handler and State apply to each state's worker
	// (Name gets the state appended).
	Worker Worker
	states map[string]func(context.Context, flow.Record) Step
}

// State sets the handler of the flows waiting in state.
func (wf *Workflow) State(state string, h func(ctx context.Context, r flow.Record) Step) {
	if wf.states == nil {
		wf.states = map[string]func(context.Context, flow.Record) Step{}
	}
	wf.states[state] = h
}

// Run runs a worker for every state until ctx ends.
func (wf *Workflow) Run(ctx context.Context) error {
	if len(wf.states) == 0 {
		return ErrNoHandler
	}
	var wg sync.WaitGroup
	errs := make(chan error, len(wf.states))
	for state, h := range wf.states {
		w := wf.Worker
		w.State, w.Name = state, wf.Worker.Name+"/"+state
		w.Handler = nil
		wg.Go(func() {
			errs <- w.run(ctx, func(hctx context.Context, r flow.Record) error {
				return w.take(hctx, r, h(hctx, r))
			})
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// take applies s to r.
func (w *Worker) take(ctx context.Context, r flow.Record, s Step) error {
	var err error
	switch s.kind {
	case stepTransition:
		_, err = w.Client.Transition(ctx, flow.Transition{ID: r.ID, From: flow.Running, To: s.to, LeaseToken: r.LeaseToken, Fencing: r.Fencing,
			RunAtMs: s.runAtMs, HasRunAt: s.hasRun, Payload: s.payload, HasPayload: s.payload != nil})
	case stepComplete:
		_, err = w.Client.Complete(ctx, flow.Complete{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing, Result: s.detail})
	case stepRetry:
		_, err = w.Client.Retry(ctx, flow.Retry{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing, Error: s.detail})
	case stepFail:
		_, err = w.Client.Fail(ctx, flow.Fail{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing, Error: s.detail})
	default:
		err = fmt.Errorf("flowworker: state %s's handler returned no step", r.RunState)
	}
	return err
}
