package flowworker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// Client is the flows API the helpers use. *ferricstore.Flows is one.
type Client interface {
	Create(ctx context.Context, c flow.Create) (flow.Record, error)
	Batch(ctx context.Context, cmds []flow.Command, independent bool) ([]flow.ItemResult, error)
	ClaimWait(ctx context.Context, c flow.Claim) ([]flow.Record, error)
	Complete(ctx context.Context, c flow.Complete) (flow.Record, error)
	Fail(ctx context.Context, c flow.Fail) (flow.Record, error)
	Retry(ctx context.Context, c flow.Retry) (flow.Record, error)
	Transition(ctx context.Context, c flow.Transition) (flow.Record, error)
	ExtendLease(ctx context.Context, c flow.ExtendLease) (flow.Record, error)
}

// Defaults of a Worker.
const (
	DefaultLease         = 30 * time.Second
	DefaultShutdownGrace = 30 * time.Second
	// DefaultClaimWait is how long one blocked claim waits before it is
	// made again (it also bounds how long Run takes to notice its end).
	DefaultClaimWait = 5 * time.Second
)

// ErrNoHandler is Run's error for a Worker without a Handler.
var ErrNoHandler = errors.New("flowworker: no handler")

// permanent marks a handler error that fails the flow instead of
// retrying it.
type permanent struct{ err error }

func (p permanent) Error() string { return p.err.Error() }
func (p permanent) Unwrap() error { return p.err }

// Permanent wraps err so that the flow fails now instead of being
// retried.
func Permanent(err error) error { return permanent{err} }

// Queue enqueues flows of one type.
type Queue struct {
	Client Client
	Type   string
}

// Enqueue creates flow id with payload, due now; opts may set the
// create's other fields (its ID and Type are the queue's).
func (q Queue) Enqueue(ctx context.Context, id string, payload []byte, opts ...func(*flow.Create)) (flow.Record, error) {
	c := flow.Create{ID: id, Type: q.Type, Payload: payload}
	for _, o := range opts {
		o(&c)
	}
	c.ID, c.Type = id, q.Type
	return q.Client.Create(ctx, c)
}

// EnqueueMany creates flows in one write, each on its own (a batch
// across shards): the results say which were made.
func (q Queue) EnqueueMany(ctx context.Context, cs []flow.Create) ([]flow.ItemResult, error) {
	cmds := make([]flow.Command, len(cs))
	for i := range cs {
		c := cs[i]
		c.Type = q.Type
		cmds[i] = &c
	}
	return q.Client.Batch(ctx, cmds, true)
}

// Worker claims due flows of Type in State and runs Handler on each.
type Worker struct {
	Client Client
	// Type and State are the flows it claims (State: flow.Queued when
	// empty).
	Type, State string
	// Name is the worker's name in leases and histories. Required.
	Name string
	// Handler runs one flow; see the package doc for what its result
	// does. Required.
	Handler func(ctx context.Context, r flow.Record) error
	// Concurrency is how many handlers run at once (default 1);
	// BatchSize how many flows one claim may take at most (default
	// Concurrency).
	Concurrency, BatchSize int
	// Lease is each claim's lease (default DefaultLease); while a
	// handler runs, the lease is extended every third of it.
	Lease time.Duration
	// ReclaimExpired also claims flows whose worker's lease ran out
	// (default true: set NoReclaim to turn it off).
	NoReclaim bool
	// ShutdownGrace is how long Run waits, once its context ends, for
	// running handlers before it cancels theirs (default
	// DefaultShutdownGrace). Their flows stay leased and are reclaimed
	// when the leases run out.
	ShutdownGrace time.Duration
	// ClaimWait bounds one blocked claim (default DefaultClaimWait).
	ClaimWait time.Duration
	// Logger receives handler errors and refused calls. Default:
	// discarded.
	Logger *slog.Logger
}

func (w *Worker) defaults() {
	if w.State == "" {
		w.State = flow.Queued
	}
	if w.Concurrency <= 0 {
		w.Concurrency = 1
	}
	if w.BatchSize <= 0 {
		w.BatchSize = w.Concurrency
	}
	if w.Lease <= 0 {
		w.Lease = DefaultLease
	}
	if w.ShutdownGrace <= 0 {
		w.ShutdownGrace = DefaultShutdownGrace
	}
	if w.ClaimWait <= 0 {
		w.ClaimWait = DefaultClaimWait
	}
	if w.Logger == nil {
		w.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
}

// Run claims and handles flows until ctx ends, then waits for the running
// handlers (up to ShutdownGrace) and returns nil; a claim that fails
// other than by ctx ending is returned as the error.
func (w *Worker) Run(ctx context.Context) error {
	if w.Handler == nil {
		return ErrNoHandler
	}
	return w.run(ctx, func(hctx context.Context, r flow.Record) error {
		return w.finish(hctx, r, w.Handler(hctx, r))
	})
}

// run is Run with the step that handles one claimed flow.
func (w *Worker) run(ctx context.Context, handle func(context.Context, flow.Record) error) error {
	if w.Name == "" {
		return fmt.Errorf("flowworker: a worker needs a name")
	}
	w.defaults()
	// Handlers run under their own context, cancelled only once the
	// grace after ctx's end has passed.
	hctx, cancelHandlers := context.WithCancel(context.WithoutCancel(ctx))
	defer cancelHandlers()
	slots := make(chan struct{}, w.Concurrency)
	var wg sync.WaitGroup
	defer func() {
		done := make(chan struct{})
		go func() { wg.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(w.ShutdownGrace):
			cancelHandlers()
			<-done
		}
	}()
	for ctx.Err() == nil {
		// Claim only as many as there are free slots.
		select {
		case slots <- struct{}{}:
		case <-ctx.Done():
			return nil
		}
		free := 1
		for free < w.BatchSize {
			select {
			case slots <- struct{}{}:
				free++
				continue
			default:
			}
			break
		}
		cctx, cancel := context.WithTimeout(ctx, w.ClaimWait)
		rs, err := w.Client.ClaimWait(cctx, flow.Claim{Type: w.Type, State: w.State, Worker: w.Name,
			LeaseMs: w.Lease.Milliseconds(), Limit: free, ReclaimExpired: !w.NoReclaim})
		cancel()
		for range free - len(rs) {
			<-slots
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("flowworker: claim: %w", err)
		}
		for _, r := range rs {
			wg.Go(func() {
				defer func() { <-slots }()
				stop := w.keepLease(hctx, r)
				err := handle(hctx, r)
				stop()
				if err != nil {
					w.Logger.Warn("flowworker: flow not finished", "flow", r.ID, "err", err)
				}
			})
		}
	}
	return nil
}

// keepLease extends r's lease every third of it until stop is called.
func (w *Worker) keepLease(ctx context.Context, r flow.Record) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() {
		defer close(done)
		t := time.NewTicker(w.Lease / 3)
		defer t.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
				if _, err := w.Client.ExtendLease(ctx, flow.ExtendLease{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing, LeaseMs: w.Lease.Milliseconds()}); err != nil {
					if ctx.Err() == nil {
						w.Logger.Warn("flowworker: lease not extended", "flow", r.ID, "err", err)
					}
					return
				}
			}
		}
	}()
	return func() {
		cancel()
		<-done
	}
}

// finish completes, retries or fails r by the handler's result.
func (w *Worker) finish(ctx context.Context, r flow.Record, herr error) error {
	var err error
	var p permanent
	switch {
	case herr == nil:
		_, err = w.Client.Complete(ctx, flow.Complete{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing})
	case errors.As(herr, &p):
		_, err = w.Client.Fail(ctx, flow.Fail{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing, Error: []byte(herr.Error())})
	default:
		_, err = w.Client.Retry(ctx, flow.Retry{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing, Error: []byte(herr.Error())})
	}
	return err
}
