package blockfmt

import "errors"

var (
	// ErrCorrupt reports a block or ordered key that is truncated, damaged
	// or otherwise not something [Encode] or [AppendOrderedKey] wrote.
	ErrCorrupt = errors.New("blockfmt: corrupt block")
	// ErrUnsupportedVersion reports a block written by a newer format
	// version than this package reads.
	ErrUnsupportedVersion = errors.New("blockfmt: unsupported block format version")
	// ErrTooLarge reports a value or key longer than the format allows
	// (see [MaxValueLen] and [MaxKeyFieldLen]).
	ErrTooLarge = errors.New("blockfmt: block too large")
	// ErrInvalidOptions reports [Options] that fail [Options.Validate].
	ErrInvalidOptions = errors.New("blockfmt: invalid options")
)
