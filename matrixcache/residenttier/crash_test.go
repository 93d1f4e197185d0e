package residenttier

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

var crashRounds = flag.Int("crash-rounds", 20, "SIGKILL rounds in TestCrashRecovery")

const (
	crashChildDirEnv  = "RESIDENTTIER_CRASH_CHILD_DIR"
	crashChildBaseEnv = "RESIDENTTIER_CRASH_CHILD_BASE"
	crashSyncEnv      = "RESIDENTTIER_CRASH_CHILD_SYNC"
	crashWorkers      = 4
	crashKeysPerWork  = 64
)

var crashOptions = Options{Block: blockfmt.Options{Compression: blockfmt.CompressionZstd}}

// crashValue is the value of (key, version): self-describing, so the
// parent can check any block it finds, acknowledged or not.
func crashValue(k blockfmt.Key, version uint64) []byte {
	r := rand.New(rand.NewPCG(k.Shard<<32^uint64(len(k.Record)), version))
	n := 8 + r.IntN(6000)
	b := make([]byte, n)
	binary.LittleEndian.PutUint64(b, version)
	compressible := r.IntN(2) == 0
	for i := 8; i < n; i++ {
		if compressible {
			b[i] = byte(i/64) ^ k.Record[len(k.Record)-1]
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

func crashKey(worker, i int) blockfmt.Key {
	return blockfmt.StringKey(uint64(worker), fmt.Sprintf("crash-%d-%03d", worker, i))
}

// TestCrashChild is the child process of TestCrashRecovery. Its workers
// write blocks (by Put or PutBatch) to keys each worker owns, with
// versions increasing, and print "ack shard record version" for every
// write acknowledged, until killed.
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildDirEnv)
	if dir == "" {
		t.Skip("child process of TestCrashRecovery")
	}
	base, err := strconv.ParseUint(os.Getenv(crashChildBaseEnv), 10, 64)
	if err != nil {
		fmt.Printf("base-error %v\n", err)
		os.Exit(3)
	}
	opts := crashOptions
	opts.Dir = dir
	opts.Sync = os.Getenv(crashSyncEnv) == "1"
	s, err := Open(context.Background(), opts)
	if err != nil {
		fmt.Printf("open-error %v\n", err)
		os.Exit(3)
	}
	var out sync.Mutex
	say := func(format string, args ...any) {
		out.Lock()
		fmt.Fprintf(os.Stdout, format, args...)
		out.Unlock()
	}
	say("ready\n")
	deadline := time.Now().Add(30 * time.Second)
	var wg sync.WaitGroup
	for w := range crashWorkers {
		wg.Go(func() {
			ctx := context.Background()
			off := int(base>>32) * 13 // each round starts on other keys
			for seq := uint64(0); time.Now().Before(deadline); seq++ {
				version := base + seq
				if w%2 == 0 {
					k := crashKey(w, (off+int(seq))%crashKeysPerWork)
					if err := s.Put(ctx, blockfmt.NewBlock(k, crashValue(k, version))); err != nil {
						say("put-error %v\n", err)
						os.Exit(4)
					}
					say("ack %d %s %d\n", k.Shard, k.Record, version)
					continue
				}
				var batch []blockfmt.Block
				for j := range 8 {
					k := crashKey(w, (off+int(seq)*8+j)%crashKeysPerWork)
					batch = append(batch, blockfmt.NewBlock(k, crashValue(k, version)))
				}
				if err := s.PutBatch(ctx, batch); err != nil {
					say("put-error %v\n", err)
					os.Exit(4)
				}
				for _, b := range batch {
					say("ack %d %s %d\n", b.Key.Shard, b.Key.Record, version)
				}
			}
		})
	}
	wg.Wait()
	os.Exit(0)
}

// TestCrashRecovery SIGKILLs a writing child at random moments, reopens the
// store after each kill and checks that no block is torn or damaged, that
// every block carries the exact bytes of its version, and that every
// acknowledged write is there — or a later version of the same key. Most
// rounds write without Sync (the default): the rename has completed when
// a write is acknowledged, and the page cache survives a killed process,
// so nothing acknowledged may be lost then either.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	require.GreaterOrEqual(t, *crashRounds, 1)
	dir := t.TempDir()
	acked := map[blockfmt.Key]uint64{}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	var totalAcks, totalLeftovers int64
	for round := range *crashRounds {
		base := uint64(round+1) << 32
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		durable := round%4 == 3
		cmd.Env = append(os.Environ(), crashChildDirEnv+"="+dir, crashChildBaseEnv+"="+strconv.FormatUint(base, 10),
			fmt.Sprintf("%s=%d", crashSyncEnv, map[bool]int{false: 0, true: 1}[durable]))
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		lines := make(chan string, 1024)
		go func() {
			sc := bufio.NewScanner(stdout)
			for sc.Scan() {
				lines <- sc.Text()
			}
			close(lines)
		}()
		var got []string
		killed := false
		for line := range lines {
			got = append(got, line)
			if line == "ready" && !killed {
				killed = true
				time.AfterFunc(time.Duration(5+r.IntN(300))*time.Millisecond, func() {
					cmd.Process.Signal(syscall.SIGKILL)
				})
			}
		}
		err = cmd.Wait()
		require.Error(t, err, "round %d: the child must die by SIGKILL", round)
		var acks int64
		for _, line := range got {
			f := strings.Fields(line)
			switch {
			case len(f) == 4 && f[0] == "ack":
				shard, err1 := strconv.ParseUint(f[1], 10, 64)
				v, err2 := strconv.ParseUint(f[3], 10, 64)
				if err1 != nil || err2 != nil || v>>32 != uint64(round+1) {
					continue // a line cut by the kill is not an ack
				}
				k := blockfmt.StringKey(shard, f[2])
				acked[k] = max(acked[k], v)
				acks++
			case strings.Contains(line, "-error"):
				t.Fatalf("round %d: child failed: %s", round, line)
			}
		}
		totalAcks += acks

		opts := crashOptions
		opts.Dir = dir
		opts.Mmap = round%2 == 1
		s, err := Open(t.Context(), opts)
		require.NoError(t, err, "round %d", round)
		require.Zero(t, s.Stats().Corrupt, "round %d: torn or damaged blocks at open", round)
		totalLeftovers += s.Stats().TempFilesRemoved
		found := map[blockfmt.Key]uint64{}
		require.NoError(t, s.Iterate(t.Context(), func(b blockfmt.Block) bool {
			require.GreaterOrEqual(t, len(b.Value), 8, "round %d: %v", round, b.Key)
			v := binary.LittleEndian.Uint64(b.Value)
			require.True(t, bytes.Equal(crashValue(b.Key, v), b.Value), "round %d: block %v version %x is damaged", round, b.Key, v)
			found[b.Key] = v
			return true
		}))
		require.Zero(t, s.Stats().Corrupt, "round %d: damaged blocks while iterating", round)
		for k, v := range acked {
			require.GreaterOrEqual(t, found[k], v, "round %d: acknowledged %v version %x lost", round, k, v)
			b, ok, err := s.Get(k)
			require.NoError(t, err, "round %d", round)
			require.True(t, ok, "round %d: %v", round, k)
			require.True(t, bytes.Equal(crashValue(k, found[k]), b.Value), "round %d: %v", round, k)
		}
		st := s.Stats()
		require.NoError(t, s.Close())
		t.Logf("round %d (Sync=%v): %d acks, %d keys acknowledged so far, %d blocks, %d leftover temp files removed",
			round, durable, acks, len(acked), st.Entries, st.TempFilesRemoved)
	}
	require.Positive(t, totalAcks, "the children must have acknowledged writes")
	t.Logf("%d acks, %d leftover temp files removed in all", totalAcks, totalLeftovers)
}
