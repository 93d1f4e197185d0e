//go:build linux

package matrixraft

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// writeBack writes f's bytes [off, off+n) to the device and waits until
// they are written. It does not make them durable (no metadata, no device
// cache flush): that is the final fsync's job.
func writeBack(f *os.File, off, n int64) error {
	for {
		err := unix.SyncFileRange(int(f.Fd()), off, n,
			unix.SYNC_FILE_RANGE_WAIT_BEFORE|unix.SYNC_FILE_RANGE_WRITE|unix.SYNC_FILE_RANGE_WAIT_AFTER)
		switch {
		case errors.Is(err, unix.EINTR):
			continue
		case errors.Is(err, unix.ENOSYS) || errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL):
			return nil // not supported here: the final fsync writes it all
		}
		return err
	}
}
