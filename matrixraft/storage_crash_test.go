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
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	pb "go.etcd.io/raft/v3/raftpb"

	"github.com/temporalstore/temporalstore-go/matrixraft/wal"
)

var storageCrashRounds = flag.Int("storage-crash-rounds", 8, "SIGKILL rounds in TestStorageCrashRecovery and TestHostCrashRecovery")

const (
	storageCrashEnv = "MATRIXRAFT_STORAGE_CRASH_DIR"
	hostCrashEnv    = "MATRIXRAFT_HOST_CRASH_DIR"
	hostCrashGroups = 4
)

var crashStorageOptions = StorageOptions{WAL: wal.Options{SegmentSize: 64 << 10, Sync: wal.SyncAlways}}

// crashHostOptions seals a segment every few dozen Saves and re-homes a
// group as soon as it holds a sealed segment back, so that re-homing and
// the truncation behind it are killed too.
var crashHostOptions = HostOptions{WAL: wal.Options{SegmentSize: 16 << 10, Sync: wal.SyncAlways}, MaxPinnedBytes: 1}

// crashSave saves Readys to s the way a node does — appends, conflicting
// overwrites under a new term, local snapshots that compact the log — and
// emits "ack <group> <from> <last> <term> <commit>" after each durable
// Save, for 20 s or until the process is killed. With quietAfter > 0 it
// stops after that many Saves, commits everything, snapshots it and stays
// quiet, emitting "rehomes <group> <n>" as its host re-homes it. A
// failure prints "<what>-error ..." and exits.
func crashSave(t *testing.T, s *Storage, group uint64, quietAfter int, emit func(string)) {
	hsNow, _, _ := s.InitialState()
	term := hsNow.GetTerm() + 1
	last, _ := s.LastIndex()
	committed := max(hsNow.GetCommit(), s.SnapshotIndex())
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), group))
	deadline := time.Now().Add(20 * time.Second)
	for saves := 0; time.Now().Before(deadline); saves++ {
		if quietAfter > 0 && saves == quietAfter {
			crashQuiet(t, s, group, term, last, deadline, emit)
			return
		}
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
			batch = append(batch, &pb.Entry{Index: new(i), Term: new(term), Data: fmt.Appendf(nil, "%d/%d/%d/%s", group, i, term, strings.Repeat("v", r.IntN(300)))})
		}
		last = from + n - 1
		commit := max(committed, from-1)
		committed = commit
		if err := s.Save(t.Context(), hs(term, 1, commit), batch, nil, true); err != nil {
			fmt.Printf("save-error %v\n", err)
			os.Exit(4)
		}
		emit(fmt.Sprintf("ack %d %d %d %d %d\n", group, from, last, term, commit))
		if r.IntN(20) == 0 && commit > s.SnapshotIndex() {
			if err := s.CreateSnapshot(t.Context(), commit, &pb.ConfState{Voters: []uint64{1}}, fmt.Appendf(nil, "snap%d@%d", group, commit), 5); err != nil {
				fmt.Printf("snapshot-error %v\n", err)
				os.Exit(5)
			}
		}
	}
}

// crashQuiet commits every entry up to last, snapshots them all and waits
// for deadline, reporting the re-homes of the group.
func crashQuiet(t *testing.T, s *Storage, group, term, last uint64, deadline time.Time, emit func(string)) {
	if err := s.Save(t.Context(), hs(term, 1, last), nil, nil, true); err != nil {
		fmt.Printf("save-error %v\n", err)
		os.Exit(4)
	}
	emit(fmt.Sprintf("ack %d %d %d %d %d\n", group, last+1, last, term, last))
	if last > s.SnapshotIndex() {
		if err := s.CreateSnapshot(t.Context(), last, &pb.ConfState{Voters: []uint64{1}}, fmt.Appendf(nil, "snap%d@%d", group, last), 5); err != nil {
			fmt.Printf("snapshot-error %v\n", err)
			os.Exit(5)
		}
	}
	var seen uint64
	for time.Now().Before(deadline) {
		if n := s.Rehomes(); n != seen {
			seen = n
			emit(fmt.Sprintf("rehomes %d %d\n", group, n))
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// crashTruth is what the parent knows of one group across rounds.
type crashTruth struct {
	acked     map[uint64]uint64 // index -> term
	commitMax uint64
}

// runCrashChild starts the test binary as child, SIGKILLs it after a
// random delay, and feeds its acknowledgements into truth. It returns the
// re-homes the child reported.
func runCrashChild(t *testing.T, r *rand.Rand, round int, child, env, dir string, truth map[uint64]*crashTruth) (rehomes uint64) {
	cmd := exec.Command(os.Args[0], "-test.run=^"+child+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), env+"="+dir)
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
		if len(f) == 3 && f[0] == "rehomes" {
			if n, err := strconv.ParseUint(f[2], 10, 64); err == nil {
				rehomes = max(rehomes, n)
			}
			continue
		}
		if len(f) != 6 || f[0] != "ack" {
			continue
		}
		var v [5]uint64
		for i := range v {
			if v[i], err = strconv.ParseUint(f[i+1], 10, 64); err != nil {
				break
			}
		}
		if err != nil {
			continue // a line cut by the kill
		}
		group, from, to, term, commit := v[0], v[1], v[2], v[3], v[4]
		tr := truth[group]
		if tr == nil {
			tr = &crashTruth{acked: map[uint64]uint64{}}
			truth[group] = tr
		}
		for i := range tr.acked {
			if i > to {
				delete(tr.acked, i) // truncated by the overwrite
			}
		}
		for i := from; i <= to; i++ {
			tr.acked[i] = term
		}
		tr.commitMax = max(tr.commitMax, commit)
	}
	require.Error(t, cmd.Wait(), "round %d: the child must die by SIGKILL", round)
	return rehomes
}

// checkCrashRecovery checks a reopened storage against what was
// acknowledged — every acknowledged committed entry after the snapshot is
// there with the term last acknowledged for its index, and the snapshot is
// readable — then makes what survived the truth for the next round.
func checkCrashRecovery(t *testing.T, round int, group uint64, s *Storage, tr *crashTruth) {
	last, _ := s.LastIndex()
	first, _ := s.FirstIndex()
	require.GreaterOrEqual(t, last, tr.commitMax, "round %d group %d: acknowledged entries lost (log [%d, %d], snapshot %d, wal [%d, %d])", round, group, first, last, s.SnapshotIndex(), s.log.FirstIndex(), s.log.LastIndex())
	snapIdx := s.SnapshotIndex()
	for i, term := range tr.acked {
		if i <= snapIdx || i > tr.commitMax {
			continue
		}
		require.GreaterOrEqual(t, i, first, "round %d group %d: entry %d compacted without a snapshot", round, group, i)
		got, err := s.Term(i)
		require.NoError(t, err, "round %d group %d index %d", round, group, i)
		require.Equal(t, term, got, "round %d group %d index %d", round, group, i)
		es, err := s.Entries(i, i+1, 1<<20)
		require.NoError(t, err)
		require.True(t, strings.HasPrefix(string(es[0].GetData()), fmt.Sprintf("%d/%d/%d/", group, i, term)))
	}
	if snapIdx > 0 {
		snap, err := s.Snapshot()
		require.NoError(t, err)
		require.Equal(t, fmt.Sprintf("snap%d@%d", group, snapIdx), string(snap.GetData()))
	}
	clear(tr.acked)
	for i := max(first, snapIdx+1); i <= last; i++ {
		tm, _ := s.Term(i)
		tr.acked[i] = tm
	}
	hsNow, _, _ := s.InitialState()
	tr.commitMax = max(tr.commitMax, hsNow.GetCommit())
	t.Logf("round %d group %d: log [%d, %d], snapshot %d", round, group, first, last, snapIdx)
}

// TestStorageCrashChild is the child of TestStorageCrashRecovery.
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
	w := bufio.NewWriter(os.Stdout)
	crashSave(t, s, 1, 0, func(line string) {
		w.WriteString(line)
		w.Flush()
	})
	os.Exit(0)
}

// TestStorageCrashRecovery SIGKILLs a saving child at random moments and
// checks after each kill that the storage reopens with everything it
// acknowledged.
func TestStorageCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	truth := map[uint64]*crashTruth{1: {acked: map[uint64]uint64{}}}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	for round := range *storageCrashRounds {
		runCrashChild(t, r, round, "TestStorageCrashChild", storageCrashEnv, dir, truth)
		s, err := OpenStorage(dir, crashStorageOptions)
		require.NoError(t, err, "round %d", round)
		checkCrashRecovery(t, round, 1, s, truth[1])
		require.NoError(t, s.Close())
	}
}

// TestHostCrashChild is the child of TestHostCrashRecovery: one goroutine
// per group saves to the host's shared log at once; the last group goes
// quiet after a few Saves, so that the others' compactions re-home it.
func TestHostCrashChild(t *testing.T) {
	dir := os.Getenv(hostCrashEnv)
	if dir == "" {
		t.Skip("child process of TestHostCrashRecovery")
	}
	h, err := OpenHost(dir, crashHostOptions)
	if err != nil {
		fmt.Printf("open-error %v\n", err)
		os.Exit(3)
	}
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	var wg sync.WaitGroup
	for g := uint64(1); g <= hostCrashGroups; g++ {
		s, err := h.Storage(g)
		if err != nil {
			fmt.Printf("open-error %v\n", err)
			os.Exit(3)
		}
		quietAfter := 0
		if g == hostCrashGroups {
			quietAfter = 10
		}
		wg.Go(func() {
			crashSave(t, s, g, quietAfter, func(line string) {
				mu.Lock()
				w.WriteString(line)
				w.Flush()
				mu.Unlock()
			})
		})
	}
	wg.Wait()
	os.Exit(0)
}

// TestHostCrashRecovery SIGKILLs a child whose groups all save to one
// shared log, and checks after each kill that every group reopens with
// everything it acknowledged, whatever the other groups' snapshots
// compacted and re-homed.
func TestHostCrashRecovery(t *testing.T) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	dir := t.TempDir()
	truth := map[uint64]*crashTruth{}
	for g := uint64(1); g <= hostCrashGroups; g++ {
		truth[g] = &crashTruth{acked: map[uint64]uint64{}}
	}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 11))
	var rehomes uint64
	for round := range *storageCrashRounds {
		rehomes += runCrashChild(t, r, round, "TestHostCrashChild", hostCrashEnv, dir, truth)
		h, err := OpenHost(dir, crashHostOptions)
		require.NoError(t, err, "round %d", round)
		for g := uint64(1); g <= hostCrashGroups; g++ {
			s, err := h.Storage(g)
			require.NoError(t, err)
			checkCrashRecovery(t, round, g, s, truth[g])
			require.NoError(t, s.Close())
		}
		require.NoError(t, h.Close())
	}
	t.Logf("the quiet group was re-homed %d times", rehomes)
}
