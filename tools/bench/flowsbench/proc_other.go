//go:build !linux

package flowsbench

import (
	"errors"
	"syscall"
)

// pgProcAttr: the PostgreSQL peers are started on Linux only, where the
// benchmark's machines run.
func pgProcAttr(string) (*syscall.SysProcAttr, error) {
	return nil, errors.New("flowsbench: the PostgreSQL peers run on Linux only")
}
