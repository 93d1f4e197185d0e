package disk

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// probeFile is the file Recover's probe writes in the log's directory and
// removes; neither the wal nor the shard reads it.
const probeFile = "space-probe.tmp"

// probeBlock is what the probe writes and syncs: one block, so that a
// device that fails writes fails the probe.
const probeBlock = 4096

// Recover makes the log a storage.Recoverer: the wal cuts what its failed
// appends left and checks what was not synced (wal.Log.Recover), then a
// probe checks that the disk takes a write and has room for a segment, the
// next thing the log needs. On a full disk a failure shows first where a
// segment is created, since segments are preallocated: writes go on while
// the active one has room, and resuming before another fits would fail
// again at the next rollover.
func (w *walLog) Recover(ctx context.Context, last uint64) error {
	if _, err := w.l.Recover(ctx, last); err != nil {
		return WALError(err)
	}
	return probeSpace(filepath.Join(w.dir, probeFile), w.l.MaxGroupSize())
}

// probeSpace writes and syncs a block at path, reserves size bytes for it,
// and removes it.
func probeSpace(path string, size int64) (err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_RDWR, 0o644)
	if err != nil {
		return fmt.Errorf("disk: probe: %w", err)
	}
	defer func() {
		err = errors.Join(err, f.Close(), os.Remove(path))
		if err != nil {
			err = fmt.Errorf("disk: probe: %w", err)
		}
	}()
	if _, err := f.WriteAt(make([]byte, probeBlock), 0); err != nil {
		return err
	}
	if err := reserve(f, size); err != nil {
		return err
	}
	return f.Sync()
}
