//go:build linux

package benchkit

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strconv"
	"strings"

	"golang.org/x/sys/unix"
)

// Split is the CPU layout of a benchmark whose load generator shares the
// machine with the servers it measures: on a machine of few cores, a
// server whose threads spread over every core takes the generator's core
// away from it at random, and every request that waits for the generator
// to be scheduled again counts as server latency. With Split, the servers
// run on ServerCPUs and the generator on ClientCPUs, so each side has its
// cores to itself, as when the clients are on other machines.
type Split struct {
	ServerCPUs, ClientCPUs []int
}

// SplitCPUs returns the layout that gives the servers the first half of
// the CPUs this process may run on and the generator the rest, and false
// when there are fewer than two or taskset(1) is missing.
func SplitCPUs() (Split, bool) {
	var set unix.CPUSet
	if err := unix.SchedGetaffinity(0, &set); err != nil {
		return Split{}, false
	}
	var cpus []int
	for i := range 1024 {
		if set.IsSet(i) {
			cpus = append(cpus, i)
		}
	}
	if len(cpus) < 2 {
		return Split{}, false
	}
	if _, err := exec.LookPath("taskset"); err != nil {
		return Split{}, false
	}
	half := len(cpus) / 2
	return Split{ServerCPUs: cpus[:half], ClientCPUs: cpus[half:]}, true
}

// String is the layout as a report states it.
func (s Split) String() string {
	return fmt.Sprintf("servers on CPUs %s, load generator on CPUs %s", cpuList(s.ServerCPUs), cpuList(s.ClientCPUs))
}

// OnCPUs returns an exec.Cmd that runs name on cpus (through taskset, so
// every thread the program starts inherits them); with no cpus, anywhere.
func OnCPUs(ctx context.Context, cpus []int, name string, args ...string) *exec.Cmd {
	if len(cpus) == 0 {
		return exec.CommandContext(ctx, name, args...)
	}
	return exec.CommandContext(ctx, "taskset", append([]string{"-c", cpuList(cpus), name}, args...)...)
}

// PinSelf binds every thread of this process to cpus (threads started
// later inherit the binding of the thread that starts them) and sets
// GOMAXPROCS to their number, since Go sizes it from the CPUs it saw at
// start.
func PinSelf(cpus []int) error {
	var set unix.CPUSet
	for _, c := range cpus {
		set.Set(c)
	}
	// Twice: a thread started during the first pass is caught by the second.
	for range 2 {
		tasks, err := os.ReadDir("/proc/self/task")
		if err != nil {
			return err
		}
		for _, t := range tasks {
			tid, err := strconv.Atoi(t.Name())
			if err != nil {
				continue
			}
			if err := unix.SchedSetaffinity(tid, &set); err != nil && err != unix.ESRCH {
				return fmt.Errorf("pin thread %d to CPUs %s: %w", tid, cpuList(cpus), err)
			}
		}
	}
	runtime.GOMAXPROCS(len(cpus))
	return nil
}

func cpuList(cpus []int) string {
	s := make([]string, len(cpus))
	for i, c := range cpus {
		s[i] = strconv.Itoa(c)
	}
	return strings.Join(s, ",")
}
