package temporalstore

import (
	"bufio"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSuggestedCacheBytes(t *testing.T) {
	for _, tc := range []struct {
		name string
		mem  int64
		want int64
	}{
		{"unknown", 0, DefaultCacheBytes},
		{"negative", -1, DefaultCacheBytes},
		{"small machine keeps the default", 512 << 20, DefaultCacheBytes},
		{"at the floor", 1 << 30, DefaultCacheBytes},
		{"a sixteenth", 24 << 30, 24 << 30 / 16},
		{"capped", 256 << 30, MaxSuggestedCacheBytes},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.Equal(t, tc.want, SuggestedCacheBytes(tc.mem))
		})
	}
}

func TestParseMemoryLimit(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want int64
		ok   bool
	}{
		{"max\n", 0, false},
		{"1073741824\n", 1 << 30, true},
		{"9223372036854771712\n", 9223372036854771712, true},
		{"0\n", 0, false},
		{"-5", 0, false},
		{"", 0, false},
		{"12 MiB", 0, false},
	} {
		n, ok := parseMemoryLimit([]byte(tc.in))
		require.Equal(t, tc.ok, ok, "%q", tc.in)
		require.Equal(t, tc.want, n, "%q", tc.in)
	}
}

// AvailableMemory on Linux is positive and at most the machine's memory as
// /proc/meminfo reports it.
func TestAvailableMemory(t *testing.T) {
	if runtime.GOOS != "linux" {
		require.Zero(t, AvailableMemory())
		return
	}
	f, err := os.Open("/proc/meminfo")
	require.NoError(t, err)
	defer f.Close()
	var totalKB int64
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if rest, ok := strings.CutPrefix(sc.Text(), "MemTotal:"); ok {
			totalKB, err = strconv.ParseInt(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			require.NoError(t, err)
		}
	}
	require.Positive(t, totalKB)
	got := AvailableMemory()
	require.Positive(t, got)
	require.LessOrEqual(t, got, totalKB<<10)
}
