package temporalstore

import (
	"os"
	"syscall"
)

func availableMemory() int64 {
	var si syscall.Sysinfo_t
	if err := syscall.Sysinfo(&si); err != nil {
		return 0
	}
	total := int64(si.Totalram) * int64(si.Unit)
	// A control group's limit: cgroup v2's unified hierarchy, then v1's
	// memory controller.
	for _, f := range [...]string{"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"} {
		b, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		// v1 reports "no limit" as a huge page-aligned number, above total.
		if n, ok := parseMemoryLimit(b); ok && n < total {
			total = n
		}
	}
	return max(total, 0)
}
