package wal

import (
	"errors"
	"fmt"
)

// Sentinel errors. Match them with errors.Is.
var (
	// ErrClosed is returned by every method called after Close.
	ErrClosed = errors.New("wal: closed")
	// ErrLocked is returned by Open when another Log holds the directory.
	ErrLocked = errors.New("wal: directory is locked by another process")
	// ErrRecordTooLarge is returned by Append for a record over
	// Options.MaxRecordSize. Nothing is appended.
	ErrRecordTooLarge = errors.New("wal: record too large")
	// ErrGroupTooLarge is returned by AppendGroup for a group whose frames
	// do not fit in one segment (Log.MaxGroupSize). Nothing is appended.
	ErrGroupTooLarge = errors.New("wal: group too large")
	// ErrCompacted is returned for an index before the first retained record.
	ErrCompacted = errors.New("wal: index compacted")
	// ErrNotFound is returned for an index after the last record.
	ErrNotFound = errors.New("wal: index beyond last record")
	// ErrCorrupt is matched by every *CorruptionError.
	ErrCorrupt = errors.New("wal: corrupt")
	// ErrUnsupportedFormat is returned by Open for a segment written in a
	// format version this build does not know.
	ErrUnsupportedFormat = errors.New("wal: unsupported segment format")
	// ErrInvalidOptions is wrapped by Validate's errors.
	ErrInvalidOptions = errors.New("wal: invalid options")
	// ErrInvalidIndex is returned for a truncation or reset index outside the
	// range the operation accepts. Nothing is changed.
	ErrInvalidIndex = errors.New("wal: invalid index")
)

// CorruptionError describes damage found in a segment. It matches ErrCorrupt.
type CorruptionError struct {
	Segment string // segment file name
	Offset  int64  // byte offset of the damaged frame or header
	Reason  string
}

func (e *CorruptionError) Error() string {
	return fmt.Sprintf("wal: corrupt segment %s at offset %d: %s", e.Segment, e.Offset, e.Reason)
}

// Is makes errors.Is(err, ErrCorrupt) true.
func (e *CorruptionError) Is(target error) bool { return target == ErrCorrupt }
