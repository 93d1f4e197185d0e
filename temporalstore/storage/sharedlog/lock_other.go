//go:build !unix

package sharedlog

import (
	"fmt"
	"os"
)

func withLock(*os.File, func() error) error {
	return fmt.Errorf("%w: DirStore needs advisory file locks (unix)", ErrUnsupported)
}
