//go:build unix

package matrixobject

import (
	"errors"
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// lockDir takes an exclusive flock on path. The lock belongs to the open file
// description, so a second Open in the same process is refused too.
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
		return nil, fmt.Errorf("matrixobject: lock %s: %w", path, err)
	}
	return f, nil
}
