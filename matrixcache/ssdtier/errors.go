package ssdtier

import "errors"

var (
	// ErrClosed is returned by every call on a closed [Store].
	ErrClosed = errors.New("ssdtier: closed")
	// ErrLocked is returned by [Open] when another process holds the file.
	ErrLocked = errors.New("ssdtier: file is locked by another process")
	// ErrInvalidOptions wraps every [Options.Validate] failure.
	ErrInvalidOptions = errors.New("ssdtier: invalid options")
	// ErrTooLarge is returned for a block that can never be stored: larger
	// than the capacity, or a key longer than bbolt allows.
	ErrTooLarge = errors.New("ssdtier: block too large")
	// ErrBudgetExceeded is returned when the write budget refused a block.
	// The block was not written; the store is otherwise unaffected, so a
	// cache treats this as "kept in a faster tier only".
	ErrBudgetExceeded = errors.New("ssdtier: write budget exceeded")
	// ErrUnsupportedVersion is returned by [Open] for a file written by a
	// newer version of this package.
	ErrUnsupportedVersion = errors.New("ssdtier: unsupported file format version")
	// ErrFailed wraps the error of a failed commit. After one, every write
	// fails with it: the in-memory index no longer matches the file, and a
	// failed fsync may have dropped data the kernel had accepted.
	ErrFailed = errors.New("ssdtier: store failed")
)
