//go:build unix

package resp

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time the process has used in user and in
// system mode, for INFO cpu.
func processCPU() (user, sys time.Duration, ok bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, false
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), true
}
