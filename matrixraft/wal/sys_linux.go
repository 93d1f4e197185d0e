//go:build linux

package wal

import (
	"errors"
	"io"
	"os"
	"unsafe"

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

// fdatasyncNoHandoff is fdatasync issued as a raw system call: the calling
// thread keeps its processor while the device flushes (see
// Log.deviceNoHandoff for when that is worth it).
func fdatasyncNoHandoff(f *os.File) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var serr error
	cerr := rc.Control(func(fd uintptr) {
		for {
			_, _, errno := unix.RawSyscall(unix.SYS_FDATASYNC, fd, 0, 0)
			if errno != unix.EINTR {
				if errno != 0 {
					serr = &os.PathError{Op: "fdatasync", Path: f.Name(), Err: errno}
				}
				return
			}
		}
	})
	if cerr != nil {
		return cerr
	}
	return serr
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

// writeAtNoHandoff writes b at off with pwrite(2) issued as a raw system
// call, which does not tell the scheduler the goroutine is in a system call.
// A buffered write of a few kilobytes only copies into the page cache, but
// issued as an ordinary system call it lets the runtime's monitor find the
// processor in a call and hand it to another thread, and each find keeps the
// monitor polling every 20 µs: on a machine with few cores those wakeups
// cost more than the writes. Only short buffered writes go this way.
func writeAtNoHandoff(f *os.File, b []byte, off int64) error {
	rc, err := f.SyscallConn()
	if err != nil {
		return err
	}
	var werr error
	cerr := rc.Control(func(fd uintptr) {
		for len(b) > 0 {
			n, _, errno := unix.RawSyscall6(unix.SYS_PWRITE64, fd, uintptr(unsafe.Pointer(&b[0])), uintptr(len(b)), uintptr(off), 0, 0)
			if errno == unix.EINTR {
				continue
			}
			if errno != 0 {
				werr = &os.PathError{Op: "write", Path: f.Name(), Err: errno}
				return
			}
			if n == 0 {
				werr = &os.PathError{Op: "write", Path: f.Name(), Err: io.ErrShortWrite}
				return
			}
			b, off = b[n:], off+int64(n)
		}
	})
	if cerr != nil {
		return cerr
	}
	return werr
}
