package walbench

import (
	"context"
	"fmt"
	"strings"
	"time"
)

// SyncMode is the durability an Append waits for, the same for every
// system in a cell.
type SyncMode string

const (
	// SyncAlways: Append returns after an fdatasync covering its record
	// (group commit batches concurrent callers into one fdatasync).
	SyncAlways SyncMode = "always"
	// SyncInterval: Append returns once the record reached the OS
	// (write(2)); a background fdatasync runs every interval.
	SyncInterval SyncMode = "interval"
	// syncNever is used only by the envelope measurement, which counts bytes
	// and does not need durability.
	syncNever SyncMode = "never"
)

// ParseSyncMode parses "always" or "interval".
func ParseSyncMode(s string) (SyncMode, error) {
	switch m := SyncMode(strings.ToLower(strings.TrimSpace(s))); m {
	case SyncAlways, SyncInterval:
		return m, nil
	}
	return "", fmt.Errorf("unknown sync policy %q (want always or interval)", s)
}

// appender is the narrow view of a log the benchmark drives. Append must be
// safe for concurrent use and return only when the record has the durability
// the log was opened with.
type appender interface {
	Append(ctx context.Context, data []byte) error
	// fsyncs counts the durability points since open: fdatasync calls of
	// the log (group commits for SyncAlways, background syncs for
	// SyncInterval).
	fsyncs() uint64
	Close() error
}

// openOptions is what every system is opened with.
type openOptions struct {
	Sync SyncMode
	// Interval is the background sync period for SyncInterval.
	Interval time.Duration
}

// system is one log implementation under test.
type system struct {
	name string
	// open creates a fresh log in dir, an empty directory the system owns.
	open func(dir string, o openOptions) (appender, error)
	// envelope, when set, measures bytes per record (see envelope.go).
	envelope func(dir string, payloads [][]byte) (bytesPerRecord float64, err error)
}
