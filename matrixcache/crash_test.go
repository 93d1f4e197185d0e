package matrixcache

import (
	"bufio"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

const crashDirEnv = "MATRIXCACHE_CRASH_DIR"

func crashOptions(dir string) Options {
	return Options{
		DRAMCapacityBytes: 4 << 10, // a few entries: most writes evict
		Shards:            1,
		SSDPath:           dir,
	}
}

func crashKey(i int) blockfmt.Key { return cachekey.String(7, fmt.Sprintf("key-%03d", i%40)) }

// TestCrashChildProcess is the process TestCrashAcknowledgedWritesSurviveAProcessKill
// kills: it rewrites 40 keys with increasing versions and prints each
// version after its Put returned.
func TestCrashChildProcess(t *testing.T) {
	dir := os.Getenv(crashDirEnv)
	if dir == "" {
		t.Skip("run by TestCrashAcknowledgedWritesSurviveAProcessKill")
	}
	ctx := t.Context()
	c, err := New(ctx, crashOptions(dir))
	if err != nil {
		fmt.Println("error", err)
		return
	}
	for v := 1; ; v++ {
		value := []byte(fmt.Sprintf("%08d", v))
		if err := c.Put(ctx, crashKey(v), append(value, make([]byte, 200)...), PutOptions{}); err != nil {
			fmt.Println("error", err)
			return
		}
		fmt.Println("ack", v)
	}
}

// A process killed mid-stream loses no write whose Put returned, and no key
// goes back to an older value: the SSD tier holds, for every key, the last
// acknowledged version or the one in flight.
func TestCrashAcknowledgedWritesSurviveAProcessKill(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns a process")
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChildProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), crashDirEnv+"="+dir)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	acked, killed := 0, false
	sc := bufio.NewScanner(out)
	for sc.Scan() { // after the kill, read what the child printed before it
		line := sc.Text()
		require.False(t, strings.HasPrefix(line, "error"), line)
		if v, ok := strings.CutPrefix(line, "ack "); ok {
			acked, err = strconv.Atoi(v)
			require.NoError(t, err)
			if acked >= 300 && !killed {
				require.NoError(t, cmd.Process.Kill())
				killed = true
			}
		}
	}
	_ = cmd.Wait()
	require.True(t, killed)

	opts := crashOptions(dir)
	opts.AutoRecoverOnStart = true
	c := newTestCache(t, opts)
	require.Positive(t, c.Stats().Recovered)
	ctx := t.Context()
	for i := range 40 {
		last := acked - (acked-i)%40 // the last acknowledged version of key i
		v, _, ok, err := c.Get(ctx, crashKey(i))
		require.NoError(t, err)
		require.True(t, ok, "key %d lost", i)
		got, err := strconv.Atoi(string(v[:8]))
		require.NoError(t, err)
		require.Equal(t, 0, (got-i)%40, "key %d holds another key's version %d", i, got)
		require.GreaterOrEqual(t, got, last, "key %d went back from %d to %d", i, last, got)
		require.LessOrEqual(t, got, acked+1, "key %d holds a version never written", i)
	}
}
