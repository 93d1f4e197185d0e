package wal

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"errors"
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
)

var crashRounds = flag.Int("crash-rounds", 50, "SIGKILL rounds in TestCrashRecovery")

const crashChildEnv = "WAL_CRASH_CHILD_DIR"

// crashOptions are shared by the child and the parent: small segments so
// kills land during rolls and truncations too.
var crashOptions = Options{SegmentSize: 64 << 10, Sync: SyncAlways}

// crashRecord is the body a child writes for (worker, seq): self-describing,
// so the parent can check any record it finds, acknowledged or not.
func crashRecord(worker, seq uint64) []byte {
	r := rand.New(rand.NewPCG(worker, seq))
	n := 16 + r.IntN(3000)
	b := make([]byte, n)
	binary.LittleEndian.PutUint64(b[0:8], worker)
	binary.LittleEndian.PutUint64(b[8:16], seq)
	compressible := r.IntN(2) == 0
	for i := 16; i < n; i++ {
		if compressible {
			b[i] = byte(i / 64)
		} else {
			b[i] = byte(r.Uint32())
		}
	}
	return b
}

// TestCrashChild is the child process of TestCrashRecovery. It appends from
// several goroutines and prints "ack <index> <worker> <seq>" after each
// acknowledged append, and "front <index>" before each TruncateFront, until
// it is killed (or gives up after a while, should the parent be gone).
func TestCrashChild(t *testing.T) {
	dir := os.Getenv(crashChildEnv)
	if dir == "" {
		t.Skip("child process of TestCrashRecovery")
	}
	l, err := Open(dir, crashOptions)
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
	base := uint64(time.Now().UnixNano())
	deadline := time.Now().Add(30 * time.Second)
	var wg sync.WaitGroup
	for w := range uint64(4) {
		wg.Go(func() {
			worker := base + w
			for seq := uint64(0); time.Now().Before(deadline); seq++ {
				idx, err := l.Append(t.Context(), crashRecord(worker, seq))
				if err != nil {
					say("append-error %v\n", err)
					os.Exit(4)
				}
				say("ack %d %d %d\n", idx, worker, seq)
				if w == 0 && seq%200 == 199 {
					to := l.LastIndex() - 100
					say("front %d\n", to) // before, so the parent knows the bound even if killed during the call
					if err := l.TruncateFront(t.Context(), to); err != nil {
						say("truncate-error %v\n", err)
						os.Exit(5)
					}
				}
			}
		})
	}
	wg.Wait()
	os.Exit(0)
}

type ack struct{ worker, seq uint64 }

// TestCrashRecovery SIGKILLs an appending child at random moments, reopens
// the log after each kill and checks that Open succeeds, indices are
// contiguous, every record is intact, and every acknowledged record is there
// byte for byte.
func TestCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	acked := map[uint64]ack{}
	var front uint64
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	for round := range *crashRounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), crashChildEnv+"="+dir)
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
		time.AfterFunc(time.Duration(30+r.IntN(250))*time.Millisecond, func() {
			cmd.Process.Signal(syscall.SIGKILL)
		})
		var got []string
		for line := range lines {
			got = append(got, line)
		}
		err = cmd.Wait()
		require.Error(t, err, "round %d: the child must die by SIGKILL", round)
		for _, line := range got {
			f := strings.Fields(line)
			switch {
			case len(f) == 4 && f[0] == "ack":
				idx, _ := strconv.ParseUint(f[1], 10, 64)
				w, _ := strconv.ParseUint(f[2], 10, 64)
				s, err := strconv.ParseUint(f[3], 10, 64)
				if err == nil { // a line cut by the kill is not an ack
					acked[idx] = ack{w, s}
				}
			case len(f) == 2 && f[0] == "front":
				if to, err := strconv.ParseUint(f[1], 10, 64); err == nil {
					front = max(front, to)
				}
			case strings.HasSuffix(line, "-error") || strings.Contains(line, "-error "):
				t.Fatalf("round %d: child failed: %s", round, line)
			}
		}

		l, err := Open(dir, crashOptions)
		require.NoError(t, err, "round %d", round)
		first, last := l.FirstIndex(), l.LastIndex()
		require.LessOrEqual(t, first, max(front, 1), "round %d: truncation went past what was asked", round)
		it := l.Iterator(first)
		want := first
		for it.Next() {
			require.Equal(t, want, it.Index(), "round %d: indices must be contiguous", round)
			v := it.Value()
			require.GreaterOrEqual(t, len(v), 16, "round %d index %d", round, want)
			w, s := binary.LittleEndian.Uint64(v[0:8]), binary.LittleEndian.Uint64(v[8:16])
			require.True(t, bytes.Equal(crashRecord(w, s), v), "round %d: record %d is damaged", round, want)
			if a, ok := acked[want]; ok {
				require.Equal(t, a, ack{w, s}, "round %d: acknowledged record %d was replaced", round, want)
			}
			want++
		}
		require.NoError(t, it.Err(), "round %d", round)
		require.Equal(t, last+1, want)
		for idx := range acked {
			if idx < first {
				delete(acked, idx) // truncated on purpose
				continue
			}
			require.LessOrEqual(t, idx, last, "round %d: acknowledged record %d lost", round, idx)
		}
		require.NoError(t, l.Close())
		t.Logf("round %d: %d lines, log [%d, %d], %d acknowledged tracked", round, len(got), first, last, len(acked))
	}
}

const lockChildEnv = "WAL_LOCK_CHILD_DIR"

// TestLockChild is the child process of TestLockAcrossProcesses: it tries to
// open a directory the parent holds and reports what Open said.
func TestLockChild(t *testing.T) {
	dir := os.Getenv(lockChildEnv)
	if dir == "" {
		t.Skip("child process of TestLockAcrossProcesses")
	}
	l, err := Open(dir, Options{})
	switch {
	case errors.Is(err, ErrLocked):
		fmt.Println("locked")
	case err == nil:
		l.Close()
		fmt.Println("opened")
	default:
		fmt.Println("error", err)
	}
}

// TestLockAcrossProcesses checks that a second process cannot open a log
// another process holds, and can once it is closed.
func TestLockAcrossProcesses(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	child := func() string {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLockChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), lockChildEnv+"="+dir)
		out, err := cmd.Output()
		require.NoError(t, err)
		return strings.Fields(string(out))[0]
	}
	l, err := Open(dir, Options{})
	require.NoError(t, err)
	require.Equal(t, "locked", child())
	require.NoError(t, l.Close())
	require.Equal(t, "opened", child())
}
