//go:build !linux

package benchkit

import (
	"context"
	"errors"
	"os/exec"
)

// Split is the CPU layout of a benchmark whose load generator shares the
// machine with its servers; it needs Linux.
type Split struct {
	ServerCPUs, ClientCPUs []int
}

// SplitCPUs reports false: CPU binding is only implemented on Linux.
func SplitCPUs() (Split, bool) { return Split{}, false }

func (s Split) String() string { return "shared" }

// OnCPUs runs name without binding it.
func OnCPUs(ctx context.Context, _ []int, name string, args ...string) *exec.Cmd {
	return exec.CommandContext(ctx, name, args...)
}

// PinSelf is not implemented outside Linux.
func PinSelf([]int) error { return errors.ErrUnsupported }
