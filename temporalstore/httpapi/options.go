package httpapi

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/blob"
)

// ErrInvalidOptions is returned by Options.Validate (and New) for options
// the handler cannot take.
var ErrInvalidOptions = errors.New("httpapi: invalid options")

// Option defaults.
const (
	// DefaultReadyTimeout is how long /ready waits for every shard's probe.
	DefaultReadyTimeout = time.Second
	// DefaultMaxBodyBytes bounds a request body (413 beyond it). A payload
	// sent as an array of numbers takes about four bytes a byte.
	DefaultMaxBodyBytes = 64 << 20
	// DefaultMaxBatchCommands bounds the commands of one /batch_execute.
	DefaultMaxBatchCommands = 10_000
	// DefaultJobWorkers is how many jobs run at once, as the original's
	// worker pool (TS_SERVER_WORKER_THREADS).
	DefaultJobWorkers = 4
	// DefaultMaxJobs bounds the jobs held, waiting, running or finished.
	DefaultMaxJobs = 1024
)

// Options configures a Handler.
type Options struct {
	// Engine serves the commands. Required.
	Engine *ts.Engine
	// ReadWriteTokens and ReadOnlyTokens are the bearer tokens the
	// handler accepts (Authorization: Bearer <token>). A read-only token
	// runs read kinds only (temporalstore.IsReadKind). When both are
	// empty, no token is asked for. Default: none.
	ReadWriteTokens []string
	ReadOnlyTokens  []string
	// TenantTokens are bearer tokens of one tenant each, by token: such
	// a token runs /execute and /batch_execute in the namespace named as
	// its tenant only, with the tenant as every command's
	// (Command.Tenant, for the engine's tenant limit); a read-only one
	// runs read kinds only. Other routes refuse it. Default: none.
	TenantTokens map[string]TenantToken
	// Logger receives the handler's logs. Default: slog.Default().
	Logger *slog.Logger
	// ReadyTimeout is the deadline of /ready's probe of every shard.
	// Default: DefaultReadyTimeout.
	ReadyTimeout time.Duration
	// Ready, when set, is asked too by /ready once every shard answered
	// its probe: a cluster member says whether its shards have leaders
	// and its replicas caught up. Its error is /ready's 503 message.
	// Default: none.
	Ready func(ctx context.Context) error
	// Cluster, when set, makes the handler a cluster member's: a request
	// whose keyed commands all go to a shard another member leads is
	// forwarded to that member, and the reads run here pass their
	// shard's read barrier (see Cluster). Default: none.
	Cluster Cluster
	// Backups, when set, serves /backup: GET reports the running and
	// last backup (any token), POST starts one (read-write tokens).
	// Default: none (404).
	Backups Backups
	// Blobs, when set, serves /blob: the server's named blobs. Default:
	// nil, and /blob answers 404.
	Blobs *blob.Store
	// MaxBodyBytes bounds a request body. Default: DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxBatchCommands bounds a batch. Default: DefaultMaxBatchCommands.
	MaxBatchCommands int
	// Profiling serves Go's runtime profiles (net/http/pprof) under
	// /debug/pprof/, to read-write tokens when tokens are set. Default:
	// off, since profiles show the server's internals and cost CPU while
	// they are taken.
	Profiling bool
	// Registry is the Prometheus registry /metrics serves; the handler
	// registers its own metrics on it, and the program the collectors of
	// everything else it runs (package engineprom's for the engine).
	// Default: a registry of the handler's own, holding its metrics, the
	// engine's and the Go runtime's.
	Registry *prometheus.Registry
	// Context serves kinds the engine does not model (the original's
	// context_* kinds) for a program that has them. Default: none, and
	// those kinds are answered "unsupported".
	Context ContextKinds
	// Raft, when set, says whether the writes of table namespace/name
	// are replicated by raft here (a cluster member's routed table, on
	// the raft backend): the replicated routes run a command asking
	// replication_mode "raft" on such a table only. Default: none, no
	// table is.
	Raft func(namespace, name string) bool
	// JobWorkers bounds the jobs (the async routes', /dump's, /compact's,
	// ...) running at once. Default: DefaultJobWorkers.
	JobWorkers int
	// MaxJobs bounds the jobs held: a job submitted while that many wait
	// or run is refused (503 "queue_full"), and the oldest finished ones
	// beyond it are forgotten (/jobs/{id} answers 404). Default:
	// DefaultMaxJobs.
	MaxJobs int
}

// ContextKinds serves command kinds of /execute and /batch_execute that
// the engine does not run: the original's context_* kinds, which a server
// with a context engine (matrixark) answers. It must be safe for
// concurrent use.
type ContextKinds interface {
	// Serves says whether kind is one it serves, and whether that kind
	// writes (a read-only token cannot send a write).
	Serves(kind string) (served, write bool)
	// ExecuteContext runs one command of a served kind. raw is the
	// command as it was sent (JSON, or MessagePack when mp; wire.DecodeValue
	// reads it) and tenant the command's or the request's (empty when
	// neither names one). The response is encoded in the request's
	// encoding, MessagePack naming fields by their json tags. An error
	// matching ErrBadRequest, ErrNotFound, ErrForbidden or ErrUnsupported
	// is answered with that code, any other as the engine's errors are.
	ExecuteContext(ctx context.Context, tenant, kind string, raw []byte, mp bool) (any, error)
}

// ContextLeader is an optional interface of a ContextKinds in a cluster:
// its kinds are served by one member (the one leading the context's
// table), and a request of them reaching another is forwarded there.
type ContextLeader interface {
	// ContextLeader returns the HTTP base URL of the member serving the
	// context kinds, "" when it is this one; it fails when there is none
	// now.
	ContextLeader(ctx context.Context) (string, error)
}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ReadyTimeout == 0 {
		o.ReadyTimeout = DefaultReadyTimeout
	}
	if o.MaxBodyBytes == 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxBatchCommands == 0 {
		o.MaxBatchCommands = DefaultMaxBatchCommands
	}
	if o.JobWorkers == 0 {
		o.JobWorkers = DefaultJobWorkers
	}
	if o.MaxJobs == 0 {
		o.MaxJobs = DefaultMaxJobs
	}
	return o
}

// Validate reports options the handler cannot take.
func (o Options) Validate() error {
	switch {
	case o.Engine == nil:
		return fmt.Errorf("%w: Engine is required", ErrInvalidOptions)
	case o.ReadyTimeout < 0 || o.MaxBodyBytes < 0 || o.MaxBatchCommands < 0 || o.JobWorkers < 0 || o.MaxJobs < 0:
		return fmt.Errorf("%w: negative limit", ErrInvalidOptions)
	}
	seen := map[string]bool{}
	for _, t := range append(append([]string(nil), o.ReadWriteTokens...), o.ReadOnlyTokens...) {
		if t == "" {
			return fmt.Errorf("%w: empty token", ErrInvalidOptions)
		}
		if seen[t] {
			return fmt.Errorf("%w: a token is listed twice", ErrInvalidOptions)
		}
		seen[t] = true
	}
	if err := ts.CheckTenantTokens(o.TenantTokens, o.ReadWriteTokens, o.ReadOnlyTokens); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return nil
}
