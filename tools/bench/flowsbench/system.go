package flowsbench

import (
	"context"
	"fmt"
	"log/slog"
	"slices"
	"sort"
)

// item is one flow to create: its id, chosen by the harness, and its
// payload.
type item struct {
	ID      string
	Payload []byte
}

// claimed is one flow a claim returned: its id, its payload (a worker
// needs it to do the work: every system must hand it over), and whatever
// the system needs to complete it under that claim (a lease owner, a
// fencing token).
type claimed struct {
	ID      string
	Payload []byte
	Token   string
}

// system is a durable work queue under test. The harness makes one per
// run (factory), calls Start once, then CreateMany from several
// goroutines while the flows are worked, Verify after the last is done,
// and Close always, even after a failed Start.
type system interface {
	Name() string
	// Start brings the system up with its data in dir, a fresh empty
	// directory that the harness removes after Close.
	Start(ctx context.Context, dir string) error
	// CreateMany creates items, due now, durably: when it returns
	// without error every item survives a crash.
	CreateMany(ctx context.Context, items []item) error
	// Verify checks the system's own record once n flows were created
	// and reported completed: it returns how many were completed exactly
	// once, and an error when any flow is not completed, was completed
	// more than once, or is missing.
	Verify(ctx context.Context, n int) (completedOnce int, err error)
	Close() error
}

// poller is a system whose flows the harness's workers claim and
// complete. Both calls are safe for concurrent use.
type poller interface {
	// Claim takes up to limit due flows for worker under the run's
	// lease; none due is an empty result, not an error.
	Claim(ctx context.Context, worker string, limit int) ([]claimed, error)
	// CompleteMany completes cs, claimed by one worker, durably. A flow
	// whose claim no longer holds is an error.
	CompleteMany(ctx context.Context, cs []claimed) error
}

// consumer is a system that works its flows with a pool of its own rather
// than the harness's Claim/CompleteMany loop (River: its client fetches,
// runs and completes jobs itself).
type consumer interface {
	// Consume works flows as they are created until total were
	// completed, calling h.Claimed when a flow is handed to a worker and
	// h.Completed once its completion is durable, each once per flow
	// per event (a second call for a flow is a violation the harness
	// reports). It returns when total are completed, or with ctx's
	// error.
	Consume(ctx context.Context, total int, h hooks) error
}

// hooks are the harness's callbacks for a consumer; safe for concurrent
// use.
type hooks struct {
	Claimed   func(id string)
	Completed func(id string)
}

// factory makes a system for one run of cfg.
type factory func(cfg Config, log *slog.Logger) system

// registry is the systems a build knows, by name. Each system's file adds
// itself in an init function; nothing else is global.
var registry = map[string]factory{}

// register adds a system; a name registered twice is a programming error.
func register(name string, f factory) {
	if _, ok := registry[name]; ok {
		panic(fmt.Sprintf("flowsbench: system %q registered twice", name))
	}
	registry[name] = f
}

// selectSystems returns the names of systems that reg has, in order,
// without repeats, logging each one skipped.
func selectSystems(names []string, reg map[string]factory, log *slog.Logger) []string {
	known := make([]string, 0, len(reg))
	for n := range reg {
		known = append(known, n)
	}
	sort.Strings(known)
	var out []string
	for _, n := range names {
		switch {
		case slices.Contains(out, n):
		case reg[n] == nil:
			log.Warn("skipping system: not registered in this build", "system", n, "registered", known)
		default:
			out = append(out, n)
		}
	}
	return out
}
