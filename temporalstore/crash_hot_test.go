package temporalstore

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
)

// The hot-key crash test's child: an engine process whose writers all
// write the same three keys until killed.
// crashHotBudgetEnv, when set, is the child's CollectionBytes: small, so
// that the hot collections are spilled and loaded again all along.
const (
	crashHotDirEnv    = "TEMPORALSTORE_CRASH_HOT_DIR"
	crashHotBudgetEnv = "TEMPORALSTORE_CRASH_HOT_BUDGET"
)

// hotWriters is how many goroutines of the child write at once: enough
// that each batch holds several writes of one key, which the batch folds
// into its view of the key.
const hotWriters = 16

// hotCommand is write id of the hot-key test: an increment of one
// control-state counter, a field of one hash, or a point of one series,
// each under its own id, so a reopened engine shows which writes it kept.
func hotCommand(kind string, id int) Command {
	c := Command{Namespace: "crash", Table: "hot"}
	switch kind {
	case "cs":
		c.Kind, c.Key, c.At, c.Delta = KindCIncr, []byte("hot-cs"), 1000, 1
	case "h":
		c.Kind, c.Key, c.Args = KindHSet, []byte("hot-h"), [][]byte{[]byte(strconv.Itoa(id)), []byte("v")}
	default:
		c.Kind, c.Key, c.Points = KindFAppend, []byte("hot-f"), []Point{{TS: int64(id), Value: []byte("v")}}
	}
	return c
}

var hotKinds = []string{"cs", "h", "f"}

// crashHotChild runs hotWriters goroutines, each printing "intent <kind>
// <id>" before a write and "ack <kind> <id>" once it returned; ids start
// at the seed and never repeat.
func crashHotChild(dir string) {
	ctx := context.Background()
	budget, _ := strconv.ParseInt(os.Getenv(crashHotBudgetEnv), 10, 64)
	e, err := testOpen(ctx, Options{Dir: dir, MaintenanceInterval: 5 * time.Millisecond, CheckpointRecords: 500, CollectionBytes: budget})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	err = e.CreateTable(ctx, "crash", "hot", TableOptions{Shards: 2, FeatureMaxSize: 1 << 20, SegmentBytes: 256 << 10})
	if err != nil && !strings.Contains(err.Error(), "exists") {
		fmt.Println("create:", err)
		os.Exit(2)
	}
	seed, _ := strconv.Atoi(os.Getenv(crashSeedEnv))
	var mu sync.Mutex
	w := bufio.NewWriter(os.Stdout)
	say := func(format string, a ...any) {
		mu.Lock()
		fmt.Fprintf(w, format+"\n", a...)
		w.Flush()
		mu.Unlock()
	}
	if budget > 0 {
		// "spills <n>": the collections spilled so far, for the parent
		// to see that the writes ran over the budget (at its reopen the
		// hot collections are usually resident again, written since).
		go func() {
			for range time.Tick(10 * time.Millisecond) {
				stats, err := e.Stats()
				if err != nil {
					continue
				}
				var n uint64
				for _, st := range stats {
					n += st.Spills
				}
				say("spills %d", n)
			}
		}()
	}
	for g := range hotWriters {
		go func() {
			for i := 0; ; i++ {
				id := seed + i*hotWriters + g
				kind := hotKinds[(i+g)%len(hotKinds)]
				say("intent %s %d", kind, id)
				if _, err := e.Execute(ctx, hotCommand(kind, id)); err != nil {
					say("error %v", err)
					os.Exit(2)
				}
				say("ack %s %d", kind, id)
			}
		}()
	}
	select {}
}

// An engine process killed with SIGKILL while many writers update the
// same counter, hash and series (durable) keeps every acknowledged write
// and nothing that was never asked for: the counter's sum lies between the
// acknowledged and the attempted increments, and every acknowledged hash
// field and series point is there, every present one attempted.
func TestCrashHotKeysKeepAcknowledgedWrites(t *testing.T) {
	teststorage.SkipOnMem(t, "a killed process and its files")
	if testing.Short() {
		t.Skip("crash test")
	}
	for _, mode := range []struct {
		name   string
		budget int64
	}{{"resident", 0}, {"spilling", 2 << 10}} {
		t.Run(mode.name, func(t *testing.T) { crashHotRounds(t, mode.budget) })
	}
}

// crashHotRounds runs the hot-key crash test's eight kills, the child's
// collections under budget (0: the default).
func crashHotRounds(t *testing.T, budget int64) {
	rng := rand.New(rand.NewPCG(5, 8))
	dir := t.TempDir()
	spilled := 0
	var ackedIncrs, triedIncrs int64
	acked := map[string]map[int]bool{"h": {}, "f": {}}
	tried := map[string]map[int]bool{"h": {}, "f": {}}
	seed := 1
	for round := range 8 {
		cmd, lines := startChild(t, crashHotDirEnv+"="+dir, crashSeedEnv+"="+strconv.Itoa(seed), crashHotBudgetEnv+"="+strconv.FormatInt(budget, 10))
		maxID, acks, roundSpills := seed, 0, 0
		var killAt <-chan time.Time
		for line := range lines {
			f := strings.Fields(line)
			if len(f) == 2 && f[0] == "spills" {
				n, err := strconv.Atoi(f[1])
				require.NoError(t, err, line)
				roundSpills = max(roundSpills, n)
				continue
			}
			require.Len(t, f, 3, "round %d: child says %q", round, line)
			id, err := strconv.Atoi(f[2])
			require.NoError(t, err, line)
			maxID = max(maxID, id)
			switch {
			case f[0] == "intent" && f[1] == "cs":
				triedIncrs++
			case f[0] == "intent":
				tried[f[1]][id] = true
			case f[0] == "ack" && f[1] == "cs":
				ackedIncrs++
			case f[0] == "ack":
				acked[f[1]][id] = true
			default:
				t.Fatalf("round %d: child says %q", round, line)
			}
			if f[0] == "ack" {
				acks++
				if acks == 1 {
					killAt = time.After(time.Duration(50+rng.IntN(250)) * time.Millisecond)
				}
			}
			select {
			case <-killAt:
				require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
				killAt = nil
			default:
			}
		}
		_ = cmd.Wait()
		seed = maxID + 1
		spilled += roundSpills

		e, err := testOpen(t.Context(), Options{Dir: dir, MaintenanceInterval: Disabled, CollectionBytes: budget})
		require.NoError(t, err, "round %d: reopen after the kill", round)
		q := func(c Command) Response {
			c.Namespace, c.Table = "crash", "hot"
			r, err := e.Execute(t.Context(), c)
			require.NoError(t, err)
			return r
		}
		if budget > 0 {
			stats, err := e.Stats()
			require.NoError(t, err)
			for _, st := range stats {
				spilled += st.Spilled
			}
		}
		sum := q(Command{Kind: KindCCount, Key: []byte("hot-cs"), Start: 0, End: 1 << 40}).Int
		require.GreaterOrEqual(t, sum, ackedIncrs, "round %d: acknowledged increments lost", round)
		require.LessOrEqual(t, sum, triedIncrs, "round %d: increments nobody made", round)
		have := map[string]map[int]bool{"h": {}, "f": {}}
		vs := q(Command{Kind: KindHGetAll, Key: []byte("hot-h")}).Values
		for i := 0; i < len(vs); i += 2 {
			id, err := strconv.Atoi(string(vs[i]))
			require.NoError(t, err)
			have["h"][id] = true
		}
		for _, p := range q(Command{Kind: KindFQuery, Key: []byte("hot-f"), Start: 0, End: 1 << 40}).Points {
			have["f"][int(p.TS)] = true
		}
		require.NoError(t, e.Close())
		for _, k := range []string{"h", "f"} {
			for id := range acked[k] {
				require.True(t, have[k][id], "round %d: acknowledged %s write %d lost", round, k, id)
			}
			for id := range have[k] {
				require.True(t, tried[k][id], "round %d: %s write %d nobody made", round, k, id)
			}
		}
		t.Logf("round %d: %d increments acknowledged, %d kept; %d hash fields, %d series points; %d spills", round, ackedIncrs, sum, len(have["h"]), len(have["f"]), roundSpills)
	}
	if budget > 0 {
		require.Positive(t, spilled, "the hot collections were spilled")
	}
}
