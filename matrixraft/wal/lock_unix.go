//go:build unix

package wal

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock on dir/LOCK. The lock belongs to the open
// file description, so a second Open in the same process is refused too.
func lockDir(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		f.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w: %s", ErrLocked, path)
		}
		return nil, fmt.Errorf("wal: lock %s: %w", path, err)
	}
	return f, nil
}
