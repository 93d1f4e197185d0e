package matrixraft

import (
	"bufio"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

var storageCrashRounds = flag.Int("storage-crash-rounds", 8, "SIGKILL rounds in TestStorageCrashRecovery")

const storageCrashEnv = "MATRIXRAFT_STORAGE_CRASH_DIR"

var crashStorageOptions = StorageOptions{WAL: wal.Options{SegmentSize: 64 << 10, Sync: wal.SyncAlways}}

// TestStorageCrashChild is the child of TestStorageCrashRecovery: it saves
// Readys the way a node does — appends, conflicting overwrites under a new
// term, local snapshots that compact the log — and prints "ack <index>
// <term>" after each durable Save, until it is killed.
func TestStorageCrashChild(t *testing.T) {
	dir := os.Getenv(storageCrashEnv)
	if dir == "" {
		t.Skip("child process of TestStorageCrashRecovery")
	}
	s, err := OpenStorage(dir, crashStorageOptions)
	if err != nil {
		fmt.Printf("open-error %v\n", err)
		os.Exit(3)
	}
	hsNow, _, _ := s.InitialState()
	term := hsNow.GetTerm() + 1
	last, _ := s.LastIndex()
	committed := max(hsNow.GetCommit(), s.SnapshotIndex())
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 1))
	w := bufio.NewWriter(os.Stdout)
	deadline := time.Now().Add(20 * time.Second)
	for time.Now().Before(deadline) {
		from := last + 1
		if r.IntN(10) == 0 && last > 3 {
			// A new leader overwrites an uncommitted suffix.
			if last-2 > committed {
				term++
				from = last - 2
			}
		}
		n := uint64(1 + r.IntN(8))
		batch := make([]*pb.Entry, 0, n)
		for i := from; i < from+n; i++ {
			batch = append(batch, &pb.Entry{Index: new(i), Term: new(term), Data: fmt.Appendf(nil, "%d/%d/%s", i, term, strings.Repeat("v", r.IntN(300)))})
		}
		last = from + n - 1
		commit := max(committed, from-1)
		committed = commit
		if err := s.Save(t.Context(), hs(term, 1, commit), batch, nil, true); err != nil {
			fmt.Printf("save-error %v\n", err)
			os.Exit(4)
		}
		fmt.Fprintf(w, "ack %d %d %d %d\n", from, last, term, commit)
		w.Flush()
		if r.IntN(20) == 0 && commit > s.SnapshotIndex() {
			if err := s.CreateSnapshot(t.Context(), commit, &pb.ConfState{Voters: []uint64{1}}, fmt.Appendf(nil, "snap@%d", commit), 5); err != nil {
				fmt.Printf("snapshot-error %v\n", err)
				os.Exit(5)
			}
		}
	}
	os.Exit(0)
}

// TestStorageCrashRecovery SIGKILLs a saving child at random moments and
// checks after each kill that the storage reopens, that every acknowledged
// entry after the snapshot is there with the term last acknowledged for
// its index, and that the snapshot is readable.
func TestStorageCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	acked := map[uint64]uint64{} // index -> term
	var commitMax uint64
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	for round := range *storageCrashRounds {
		cmd := exec.Command(os.Args[0], "-test.run=^TestStorageCrashChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), storageCrashEnv+"="+dir)
		stdout, err := cmd.StdoutPipe()
		require.NoError(t, err)
		cmd.Stderr = os.Stderr
		require.NoError(t, cmd.Start())
		time.AfterFunc(time.Duration(50+r.IntN(200))*time.Millisecond, func() { cmd.Process.Signal(syscall.SIGKILL) })
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			f := strings.Fields(sc.Text())
			if len(f) >= 1 && strings.HasSuffix(f[0], "-error") {
				t.Fatalf("round %d: child failed: %s", round, sc.Text())
			}
			if len(f) != 5 || f[0] != "ack" {
				continue
			}
			from, _ := strconv.ParseUint(f[1], 10, 64)
			to, _ := strconv.ParseUint(f[2], 10, 64)
			term, _ := strconv.ParseUint(f[3], 10, 64)
			commit, err := strconv.ParseUint(f[4], 10, 64)
			if err != nil {
				continue // a line cut by the kill
			}
			for i := range acked {
				if i > to {
					delete(acked, i) // truncated by the overwrite
				}
			}
			for i := from; i <= to; i++ {
				acked[i] = term
			}
			commitMax = max(commitMax, commit)
		}
		require.Error(t, cmd.Wait(), "round %d: the child must die by SIGKILL", round)

		s, err := OpenStorage(dir, crashStorageOptions)
		require.NoError(t, err, "round %d", round)
		last, _ := s.LastIndex()
		first, _ := s.FirstIndex()
		require.GreaterOrEqual(t, last, commitMax, "round %d: acknowledged entries lost (log [%d, %d], snapshot %d, wal [%d, %d])", round, first, last, s.SnapshotIndex(), s.log.FirstIndex(), s.log.LastIndex())
		snapIdx := s.SnapshotIndex()
		for i, term := range acked {
			if i <= snapIdx || i > commitMax {
				continue
			}
			require.GreaterOrEqual(t, i, first, "round %d: entry %d compacted without a snapshot", round, i)
			got, err := s.Term(i)
			require.NoError(t, err, "round %d index %d", round, i)
			require.Equal(t, term, got, "round %d index %d", round, i)
			es, err := s.Entries(i, i+1, 1<<20)
			require.NoError(t, err)
			require.True(t, strings.HasPrefix(string(es[0].GetData()), fmt.Sprintf("%d/%d/", i, term)))
		}
		if snapIdx > 0 {
			snap, err := s.Snapshot()
			require.NoError(t, err)
			require.Equal(t, fmt.Sprintf("snap@%d", snapIdx), string(snap.GetData()))
		}
		// What survived is the truth for the next round.
		clear(acked)
		for i := max(first, snapIdx+1); i <= last; i++ {
			tm, _ := s.Term(i)
			acked[i] = tm
		}
		hsNow, _, _ := s.InitialState()
		commitMax = max(commitMax, hsNow.GetCommit())
		require.NoError(t, s.Close())
		t.Logf("round %d: log [%d, %d], snapshot %d", round, first, last, snapIdx)
	}
}
