package benchkit

import (
	"os"
	"os/exec"
	"runtime"
	"runtime/debug"
	"strings"
)

// Host describes the machine and toolchain a benchmark ran on.
type Host struct {
	GoVersion string `json:"go_version"`
	GOOS      string `json:"goos"`
	GOARCH    string `json:"goarch"`
	NumCPU    int    `json:"num_cpu"`
	// GOMAXPROCS is runtime.GOMAXPROCS(0) at the time of the call.
	GOMAXPROCS int `json:"gomaxprocs"`
	// Kernel is `uname -r` (empty when unknown).
	Kernel string `json:"kernel,omitempty"`
}

// HostConditions reports the toolchain, platform, CPU count and kernel
// release of this process.
func HostConditions() Host {
	return Host{
		GoVersion:  runtime.Version(),
		GOOS:       runtime.GOOS,
		GOARCH:     runtime.GOARCH,
		NumCPU:     runtime.NumCPU(),
		GOMAXPROCS: runtime.GOMAXPROCS(0),
		Kernel:     kernelRelease(),
	}
}

func kernelRelease() string {
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		return strings.TrimSpace(string(b))
	}
	if out, err := exec.Command("uname", "-r").Output(); err == nil {
		return strings.TrimSpace(string(out))
	}
	return ""
}

// ModuleVersion returns the version of module path as built into this
// binary (for `go run`, the version selected by go.mod), or "" when the
// binary does not depend on it. A replaced module reports its replacement
// ("=> ../dir" for a local one).
func ModuleVersion(path string) string {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return ""
	}
	for _, m := range bi.Deps {
		if m.Path != path {
			continue
		}
		if m.Replace != nil {
			if m.Replace.Version == "" {
				return "=> " + m.Replace.Path
			}
			return m.Replace.Version
		}
		return m.Version
	}
	return ""
}
