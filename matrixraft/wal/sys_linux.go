//go:build linux

package wal

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

// preallocate reserves size bytes for f, reading as zeros, so appends do not
// grow the file. It falls back to a sparse extension where fallocate is not
// supported.
func preallocate(f *os.File, size int64) error {
	err := unix.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.ENOSYS) {
		return f.Truncate(size)
	}
	return err
}
