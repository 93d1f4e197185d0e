package flowhttp

import (
	"log/slog"
	"time"
)

// Defaults of Options.
const (
	// DefaultMaxBodyBytes is Options.MaxBodyBytes's default: 8 MiB.
	DefaultMaxBodyBytes = 8 << 20
	// DefaultMaxBlock is Options.MaxBlock's default.
	DefaultMaxBlock = 5 * time.Minute
)

// Options configure New. The zero value serves without tokens, with the
// defaults below.
type Options struct {
	// ReadWriteTokens and ReadOnlyTokens are the bearer tokens accepted
	// (Authorization: Bearer <token>). GET needs either; every other
	// method a read-write token. A request without an accepted token is
	// answered 401, a read-only token's write 403. When both are empty no
	// token is asked for. Default: none.
	ReadWriteTokens []string
	ReadOnlyTokens  []string
	// MaxBodyBytes bounds a request body; a longer one is answered 413
	// and changes nothing. Default (0 or less): DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// MaxBlock bounds how long a claim's block_ms waits, so that a
	// request ends even when its client asked for more. Default (0 or
	// less): DefaultMaxBlock.
	MaxBlock time.Duration
	// Logger receives the failures of the store (answers 5xx). Default:
	// discarded.
	Logger *slog.Logger
}

// withDefaults returns a copy of o with its defaults filled in; the
// caller's slices are copied too, so changing them later changes nothing.
func (o Options) withDefaults() Options {
	o.ReadWriteTokens = append([]string(nil), o.ReadWriteTokens...)
	o.ReadOnlyTokens = append([]string(nil), o.ReadOnlyTokens...)
	if o.MaxBodyBytes <= 0 {
		o.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if o.MaxBlock <= 0 {
		o.MaxBlock = DefaultMaxBlock
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}
