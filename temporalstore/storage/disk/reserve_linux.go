package disk

import (
	"errors"
	"os"
	"syscall"
)

// reserve allocates size bytes to f, as the wal preallocates a segment; a
// filesystem without fallocate is taken at its word.
func reserve(f *os.File, size int64) error {
	err := syscall.Fallocate(int(f.Fd()), 0, 0, size)
	if errors.Is(err, syscall.EOPNOTSUPP) || errors.Is(err, syscall.ENOSYS) {
		return nil
	}
	return err
}
