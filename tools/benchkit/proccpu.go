package benchkit

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// ErrNoProcCPU is returned by ProcessCPU where /proc has no per-process
// CPU times (anything but Linux).
var ErrNoProcCPU = errors.New("benchkit: no per-process CPU times here")

// userHZ is the unit of /proc/<pid>/stat's times: USER_HZ, 100 on every
// Linux build the kernel exports it for.
const userHZ = 100

// ProcessCPU is the CPU time (user and system, all threads) process pid
// has used so far, from /proc/<pid>/stat, at a resolution of 10 ms: sample
// it around a run of seconds, not around one request.
func ProcessCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if errors.Is(err, os.ErrNotExist) {
		if _, serr := os.Stat("/proc/self/stat"); serr != nil {
			return 0, ErrNoProcCPU
		}
	}
	if err != nil {
		return 0, err
	}
	return parseProcStat(string(b))
}

// parseProcStat reads utime and stime (fields 14 and 15) of a
// /proc/<pid>/stat line. The command name (field 2) is in parentheses and
// may hold spaces, so fields are counted from its closing one.
func parseProcStat(s string) (time.Duration, error) {
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0, fmt.Errorf("benchkit: malformed /proc stat %q", s)
	}
	f := strings.Fields(s[i+1:])
	// f[0] is field 3 (state): utime is field 14, f[11].
	if len(f) < 13 {
		return 0, fmt.Errorf("benchkit: /proc stat has %d fields after the name", len(f))
	}
	var ticks int64
	for _, x := range f[11:13] {
		n, err := strconv.ParseInt(x, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("benchkit: /proc stat time %q: %w", x, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / userHZ, nil
}
