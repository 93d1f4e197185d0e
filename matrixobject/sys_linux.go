//go:build linux

package matrixobject

import (
	"errors"
	"os"

	"golang.org/x/sys/unix"
)

// fdatasync flushes f's data and the metadata needed to read it back.
func fdatasync(f *os.File) error {
	for {
		err := unix.Fdatasync(int(f.Fd()))
		if !errors.Is(err, unix.EINTR) {
			return err
		}
	}
}

// startWriteback asks the kernel to start writing [off, off+n) of f to the
// device without waiting, so that the fsync at the end of a large write has
// less left to do. It is a hint; errors are ignored (fsync reports them).
func startWriteback(f *os.File, off, n int64) {
	_ = unix.SyncFileRange(int(f.Fd()), off, n, unix.SYNC_FILE_RANGE_WRITE)
}
