package residenttier

import "errors"

var (
	// ErrClosed is returned by every call on a closed [Store].
	ErrClosed = errors.New("residenttier: closed")
	// ErrLocked is returned by [Open] when another process (or another
	// Store in this process) has the directory open.
	ErrLocked = errors.New("residenttier: directory is locked by another store")
	// ErrInvalidOptions wraps every [Options.Validate] failure.
	ErrInvalidOptions = errors.New("residenttier: invalid options")
	// ErrTooLarge is returned for a block that can never be stored: its
	// encoding is larger than the capacity.
	ErrTooLarge = errors.New("residenttier: block too large")
)
