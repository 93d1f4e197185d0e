//go:build linux

package benchkit

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func allowedCPUs(t *testing.T, status string) string {
	t.Helper()
	for _, l := range strings.Split(status, "\n") {
		if v, ok := strings.CutPrefix(l, "Cpus_allowed_list:"); ok {
			return strings.TrimSpace(v)
		}
	}
	t.Fatalf("no Cpus_allowed_list in %q", status)
	return ""
}

func TestOnCPUsBindsTheProgram(t *testing.T) {
	sp, ok := SplitCPUs()
	if !ok {
		t.Skip("needs two CPUs and taskset")
	}
	require.NotEmpty(t, sp.ServerCPUs)
	require.NotEmpty(t, sp.ClientCPUs)
	require.NotEqual(t, sp.ServerCPUs[0], sp.ClientCPUs[0])
	out, err := OnCPUs(t.Context(), sp.ClientCPUs, "cat", "/proc/self/status").Output()
	require.NoError(t, err)
	require.Equal(t, cpuList(sp.ClientCPUs), allowedCPUs(t, string(out)))

	out, err = OnCPUs(t.Context(), nil, "true").CombinedOutput()
	require.NoError(t, err, string(out))
}

// TestPinSelfBindsEveryThread runs in a child process, since pinning is
// for the rest of a process's life.
func TestPinSelfBindsEveryThread(t *testing.T) {
	if os.Getenv("BENCHKIT_PIN_CHILD") != "" {
		require.NoError(t, PinSelf([]int{0}))
		require.Equal(t, 1, runtime.GOMAXPROCS(0))
		tasks, err := os.ReadDir("/proc/self/task")
		require.NoError(t, err)
		for _, task := range tasks {
			b, err := os.ReadFile("/proc/self/task/" + task.Name() + "/status")
			require.NoError(t, err)
			require.Equal(t, "0", allowedCPUs(t, string(b)), "thread %s", task.Name())
		}
		return
	}
	if _, ok := SplitCPUs(); !ok {
		t.Skip("needs two CPUs and taskset")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestPinSelfBindsEveryThread$", "-test.count=1")
	cmd.Env = append(os.Environ(), "BENCHKIT_PIN_CHILD=1")
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, string(out))
	require.Contains(t, string(out), "PASS")
}
