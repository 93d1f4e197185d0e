//go:build unix

package sharedlog

import (
	"os"
	"syscall"
)

// withLock runs fn holding an exclusive advisory lock on f.
func withLock(f *os.File, fn func() error) error {
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		return err
	}
	defer syscall.Flock(int(f.Fd()), syscall.LOCK_UN) //nolint:errcheck // closing drops it too
	return fn()
}
