//go:build !unix

package matrixobject

import "os"

// lockDir opens the lock file; other systems get no cross-process lock.
func lockDir(path string) (*os.File, error) {
	return os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
}
