package httpapi

import (
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
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
	// Logger receives the handler's logs. Default: slog.Default().
	Logger *slog.Logger
	// ReadyTimeout is the deadline of /ready's probe of every shard.
	// Default: DefaultReadyTimeout.
	ReadyTimeout time.Duration
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
	return o
}

// Validate reports options the handler cannot take.
func (o Options) Validate() error {
	switch {
	case o.Engine == nil:
		return fmt.Errorf("%w: Engine is required", ErrInvalidOptions)
	case o.ReadyTimeout < 0 || o.MaxBodyBytes < 0 || o.MaxBatchCommands < 0:
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
	return nil
}
