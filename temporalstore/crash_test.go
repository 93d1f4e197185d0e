package temporalstore

import (
	"bufio"
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	osexec "os/exec"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
)

// The crash test's child: an engine process that writes until killed.
const (
	crashDirEnv   = "TEMPORALSTORE_CRASH_DIR"
	crashAsyncEnv = "TEMPORALSTORE_CRASH_ASYNC"
	crashSeedEnv  = "TEMPORALSTORE_CRASH_SEED"
)

func TestMain(m *testing.M) {
	if dir := os.Getenv(crashDirEnv); dir != "" {
		crashChild(dir, os.Getenv(crashAsyncEnv) == "1")
		return
	}
	if dir := os.Getenv(crashHotDirEnv); dir != "" {
		crashHotChild(dir)
		return
	}
	if dir := os.Getenv(ingestDirEnv); dir != "" {
		ingestChild(dir)
		return
	}
	os.Exit(m.Run())
}

// crashOp is one write of the crash test: kind, key, and an argument
// (field or member), with the op's sequence number as its value.
type crashOp struct {
	seq       int
	kind, key string
	arg       string
}

func (o crashOp) String() string { return fmt.Sprintf("%d %s %s %s", o.seq, o.kind, o.key, o.arg) }

func parseCrashOp(s string) (crashOp, bool) {
	f := strings.Fields(s)
	if len(f) < 3 {
		return crashOp{}, false
	}
	seq, err := strconv.Atoi(f[0])
	if err != nil {
		return crashOp{}, false
	}
	o := crashOp{seq: seq, kind: f[1], key: f[2]}
	if len(f) > 3 {
		o.arg = f[3]
	}
	return o, true
}

func randomCrashOp(rng *rand.Rand, seq int) crashOp {
	o := crashOp{seq: seq}
	switch rng.IntN(10) {
	case 9:
		// A transaction (Atomic) of three writes to three keys of one
		// group: after a kill all of it is there or none.
		o.kind, o.key = "tx", fmt.Sprint("{t", rng.IntN(2), "}")
	case 8:
		o.kind, o.key, o.arg = "csincr", fmt.Sprint("cs", rng.IntN(2)), fmt.Sprint(rng.IntN(10)*1000)
	case 7:
		// A point at a timestamp drawn from a small range, so appends
		// both insert and overwrite.
		o.kind, o.key, o.arg = "fappend", fmt.Sprint("f", rng.IntN(2)), fmt.Sprint(rng.IntN(50))
	case 0, 1:
		o.kind, o.key = "set", fmt.Sprint("s", rng.IntN(10))
	case 2:
		o.kind, o.key = "del", fmt.Sprint("s", rng.IntN(10))
	case 3:
		o.kind, o.key = "incr", fmt.Sprint("c", rng.IntN(3))
	case 4:
		o.kind, o.key = "rpush", fmt.Sprint("l", rng.IntN(3))
	case 5:
		o.kind, o.key, o.arg = "hset", fmt.Sprint("h", rng.IntN(3)), fmt.Sprint("f", rng.IntN(5))
	default:
		o.kind, o.key, o.arg = "zadd", fmt.Sprint("z", rng.IntN(2)), fmt.Sprint("m", rng.IntN(5))
	}
	return o
}

// execute runs o on e: one command, or a transaction's three.
func (o crashOp) execute(ctx context.Context, e *Engine) (Response, error) {
	if o.kind != "tx" {
		return e.Execute(ctx, o.command())
	}
	v := []byte(strconv.Itoa(o.seq))
	cmds := []Command{
		{Kind: KindSet, Key: []byte(o.key + "s"), Value: v},
		{Kind: KindRPush, Key: []byte(o.key + "l"), Args: [][]byte{v}},
		{Kind: KindIncrBy, Key: []byte(o.key + "c"), Delta: 1},
	}
	err := e.Atomic(ctx, "crash", "t", cmds[0].Key, func(tx *Tx) error {
		for _, c := range cmds {
			c.Namespace, c.Table = "crash", "t"
			if _, err := tx.Execute(ctx, c); err != nil {
				return err
			}
		}
		return nil
	})
	return Response{}, err
}

func (o crashOp) command() Command {
	v := []byte(strconv.Itoa(o.seq))
	c := Command{Namespace: "crash", Table: "t", Key: []byte(o.key)}
	switch o.kind {
	case "set":
		c.Kind, c.Value = KindSet, v
	case "del":
		c.Kind = KindDelete
	case "incr":
		c.Kind, c.Delta = KindIncrBy, 1
	case "rpush":
		c.Kind, c.Args = KindRPush, [][]byte{v}
	case "hset":
		c.Kind, c.Args = KindHSet, [][]byte{[]byte(o.arg), v}
	case "zadd":
		c.Kind, c.Args, c.Scores = KindZAdd, [][]byte{[]byte(o.arg)}, []float64{float64(o.seq)}
	case "fappend":
		at, _ := strconv.Atoi(o.arg)
		c.Kind, c.Points = KindFAppend, []Point{{TS: int64(at), Value: v}}
	case "csincr":
		at, _ := strconv.Atoi(o.arg)
		c.Kind, c.At, c.Delta, c.RequestID = KindCIncr, int64(at), int64(o.seq%7), ""
	}
	return c
}

// crashChild writes random ops, printing "intent <op>" before each and
// "ack <seq>" once it returned, with maintenance (checkpoints, log
// reclaim, compaction, collection spills) running all along so that kills
// land in it too.
func crashChild(dir string, async bool) {
	ctx := context.Background()
	e, err := testOpen(ctx, Options{
		Dir: dir, MaintenanceInterval: 2 * time.Millisecond, CheckpointRecords: 300,
		CompactSpaceAmp: 1.2, CompactMinGarbage: 1, CacheBytes: 1 << 20,
		// Small enough that collections are spilled and loaded again all
		// along, so that kills land in spills too.
		CollectionBytes: 2 << 10,
	})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	if err := e.CreateTable(ctx, "crash", "t", TableOptions{Shards: 2, Async: async, SegmentBytes: 64 << 10}); err != nil && !strings.Contains(err.Error(), "exists") {
		fmt.Println("create:", err)
		os.Exit(2)
	}
	seed, _ := strconv.Atoi(os.Getenv(crashSeedEnv))
	rng := rand.New(rand.NewPCG(uint64(seed), 1))
	w := bufio.NewWriter(os.Stdout)
	for seq := seed; ; seq++ {
		o := randomCrashOp(rng, seq)
		fmt.Fprintln(w, "intent", o)
		w.Flush()
		if _, err := o.execute(ctx, e); err != nil {
			fmt.Fprintln(w, "error", err)
			w.Flush()
			os.Exit(2)
		}
		fmt.Fprintln(w, "ack", seq)
		w.Flush()
	}
}

// startChild runs this test binary as a crash test's child with env added
// to the environment, and returns it with its stdout's lines; the channel
// closes when the child's stdout does.
func startChild(t *testing.T, env ...string) (*osexec.Cmd, <-chan string) {
	t.Helper()
	cmd := osexec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	return cmd, lines
}

// crashState is every key's contents rendered as a string.
type crashState map[string]string

func (s crashState) apply(o crashOp) {
	switch o.kind {
	case "tx":
		s.apply(crashOp{seq: o.seq, kind: "set", key: o.key + "s"})
		s.apply(crashOp{seq: o.seq, kind: "rpush", key: o.key + "l"})
		s.apply(crashOp{seq: o.seq, kind: "incr", key: o.key + "c"})
	case "set":
		s[o.key] = "string:" + strconv.Itoa(o.seq)
	case "del":
		delete(s, o.key)
	case "incr":
		n, _ := strconv.Atoi(strings.TrimPrefix(s[o.key], "string:"))
		s[o.key] = "string:" + strconv.Itoa(n+1)
	case "rpush":
		s[o.key] = strings.TrimPrefix(s[o.key]+","+strconv.Itoa(o.seq), ",")
	case "csincr":
		n, _ := strconv.Atoi(strings.TrimPrefix(s[o.key], "sum:"))
		s[o.key] = "sum:" + strconv.Itoa(n+o.seq%7)
	case "fappend":
		m := map[int]string{}
		for p := range strings.SplitSeq(s[o.key], ",") {
			if k, v, ok := strings.Cut(p, "="); ok {
				at, _ := strconv.Atoi(k)
				m[at] = v
			}
		}
		at, _ := strconv.Atoi(o.arg)
		m[at] = strconv.Itoa(o.seq)
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, fmt.Sprintf("%d=%s", k, m[k]))
		}
		s[o.key] = strings.Join(parts, ",")
	case "hset", "zadd":
		m := map[string]string{}
		for p := range strings.SplitSeq(s[o.key], ",") {
			if k, v, ok := strings.Cut(p, "="); ok {
				m[k] = v
			}
		}
		m[o.arg] = strconv.Itoa(o.seq)
		var parts []string
		for _, k := range slices.Sorted(maps.Keys(m)) {
			parts = append(parts, k+"="+m[k])
		}
		s[o.key] = strings.Join(parts, ",")
	}
}

// readCrashState reads every key the ops touch from the engine.
func readCrashState(t *testing.T, e *Engine) crashState {
	st := crashState{}
	keys := []string{}
	for i := range 10 {
		keys = append(keys, fmt.Sprint("s", i))
	}
	for i := range 3 {
		keys = append(keys, fmt.Sprint("c", i), fmt.Sprint("l", i), fmt.Sprint("h", i))
	}
	keys = append(keys, "z0", "z1", "f0", "f1", "cs0", "cs1")
	for i := range 2 {
		for _, k := range []string{"s", "l", "c"} {
			keys = append(keys, fmt.Sprint("{t", i, "}", k))
		}
	}
	q := func(c Command) Response {
		c.Namespace, c.Table = "crash", "t"
		r, err := e.Execute(t.Context(), c)
		require.NoError(t, err)
		return r
	}
	for _, k := range keys {
		switch string(q(Command{Kind: KindType, Key: []byte(k)}).Value) {
		case "string":
			st[k] = "string:" + string(q(Command{Kind: KindGet, Key: []byte(k)}).Value)
		case "list":
			var parts []string
			for _, v := range q(Command{Kind: KindLRange, Key: []byte(k), Start: 0, End: -1}).Values {
				parts = append(parts, string(v))
			}
			st[k] = strings.Join(parts, ",")
		case "hash":
			vs := q(Command{Kind: KindHGetAll, Key: []byte(k)}).Values
			var parts []string
			for i := 0; i < len(vs); i += 2 {
				parts = append(parts, string(vs[i])+"="+string(vs[i+1]))
			}
			st[k] = strings.Join(parts, ",")
		case "controlstate":
			st[k] = "sum:" + strconv.FormatInt(q(Command{Kind: KindCCount, Key: []byte(k), Start: 0, End: 1 << 40}).Int, 10)
		case "series":
			var parts []string
			for _, p := range q(Command{Kind: KindFQuery, Key: []byte(k), Start: 0, End: 1 << 40}).Points {
				parts = append(parts, fmt.Sprintf("%d=%s", p.TS, p.Value))
			}
			st[k] = strings.Join(parts, ",")
		case "zset":
			r := q(Command{Kind: KindZRange, Key: []byte(k), Range: ZRange{Start: 0, Stop: -1, WithScores: true}})
			m := map[string]string{}
			for i, v := range r.Values {
				m[string(v)] = strconv.Itoa(int(r.Scores[i]))
			}
			var parts []string
			for _, mk := range slices.Sorted(maps.Keys(m)) {
				parts = append(parts, mk+"="+m[mk])
			}
			st[k] = strings.Join(parts, ",")
		}
	}
	return st
}

// An engine process killed with SIGKILL at random moments, under mixed
// writes of every model and with maintenance running, reopens to exactly
// the state of a prefix of the writes it was asked for: in durable mode a
// prefix that includes every acknowledged write, in async mode possibly
// without the unsynced tail. Nothing is ever torn or corrupt.
func TestCrashRecoversAPrefixOfTheWrites(t *testing.T) {
	teststorage.SkipOnMem(t, "a killed process and its files")
	if testing.Short() {
		t.Skip("crash test")
	}
	rng := rand.New(rand.NewPCG(9, 9))
	kills, spilled := 0, 0
	for _, mode := range []struct {
		name   string
		async  bool
		rounds int
	}{{"durable", false, 70}, {"async", true, 30}} {
		t.Run(mode.name, func(t *testing.T) {
			dir := t.TempDir()
			model := crashState{}
			seq := 1
			lostTail := 0
			for round := range mode.rounds {
				async := "0"
				if mode.async {
					async = "1"
				}
				cmd, lines := startChild(t, crashDirEnv+"="+dir, crashAsyncEnv+"="+async, crashSeedEnv+"="+strconv.Itoa(seq))
				var intents []crashOp
				acked := 0
				// The kill comes at a random moment after the child's
				// first acknowledged write, not during its start.
				var deadline <-chan time.Time
				killed := false
				for done := false; !done; {
					select {
					case <-deadline:
						require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
						killed, deadline = true, nil
					case line, ok := <-lines:
						if !ok {
							done = true
							break
						}
						kind, rest, _ := strings.Cut(line, " ")
						switch kind {
						case "intent":
							o, ok := parseCrashOp(rest)
							require.True(t, ok, line)
							intents = append(intents, o)
						case "ack":
							acked++
							if acked == 1 && !killed {
								deadline = time.After(time.Duration(rng.IntN(40_000)) * time.Microsecond)
							}
						default:
							t.Fatalf("round %d: child says %q", round, line)
						}
					}
				}
				if !killed {
					_ = cmd.Process.Signal(syscall.SIGKILL)
				}
				_ = cmd.Wait()
				kills++

				e, err := testOpen(t.Context(), Options{Dir: dir, MaintenanceInterval: Disabled})
				require.NoError(t, err, "round %d: reopen after the kill", round)
				stats, err := e.Stats()
				require.NoError(t, err)
				for _, st := range stats {
					spilled += st.Spilled
				}
				got := readCrashState(t, e)
				require.NoError(t, e.Close())
				// Find the prefix of this round's intents the state is.
				state := maps.Clone(model)
				match := -1
				if maps.Equal(state, got) {
					match = 0
				}
				for i, o := range intents {
					state.apply(o)
					if maps.Equal(state, got) {
						match = i + 1
					}
				}
				require.GreaterOrEqual(t, match, 0, "round %d: the state is no prefix of the writes\n got  %v\n model %v\n intents %v", round, got, model, intents)
				if !mode.async {
					require.GreaterOrEqual(t, match, acked, "round %d: acknowledged writes lost", round)
				} else if match < acked {
					lostTail += acked - match
				}
				model = got
				if len(intents) > 0 {
					seq = intents[len(intents)-1].seq + 1
				}
			}
			t.Logf("%s: %d rounds; %d writes up to seq %d; acknowledged writes lost in the unsynced tail: %d",
				mode.name, mode.rounds, seq-1, seq-1, lostTail)
		})
	}
	require.GreaterOrEqual(t, kills, 100)
	require.Positive(t, spilled, "kills found collections spilled")
}
