//go:build !linux

package main

import (
	"errors"
	"time"
)

// errNotLinux: CPU affinity and CPU times are only read on Linux.
var errNotLinux = errors.New("ads-demo: CPU affinity and times are only read on Linux")

func allowedCPUs() ([]int, error) { return nil, errNotLinux }

func pinSelf([]int) error { return errNotLinux }

func processCPU(int) (time.Duration, error) { return 0, errNotLinux }

func selfCPU() time.Duration { return 0 }
