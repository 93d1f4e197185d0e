// Package tiercrash is the SIGKILL crash test shared by the persistent cache
// tiers (ssdtier, residenttier). A child process — the test binary re-run
// with an environment variable — writes self-describing blocks from several
// goroutines, by Put and PutBatch, and prints every acknowledged write; the
// parent kills it at a random moment, reopens the store, and checks that
// every block carries the exact bytes of its version and that every
// acknowledged write is there, or a later version of the same key.
package tiercrash

import (
	"bufio"
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
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

const (
	workers     = 4
	keysPerWork = 64
)

// Store is what the test needs of a tier.
type Store interface {
	Put(ctx context.Context, b blockfmt.Block) error
	PutBatch(ctx context.Context, bs []blockfmt.Block) error
	Get(k blockfmt.Key) (blockfmt.Block, bool, error)
	Iterate(ctx context.Context, fn func(blockfmt.Block) bool) error
	Close() error
}

// Config describes one tier's crash test.
type Config struct {
	// EnvPrefix names the environment variables that pass the child its
	// directory, version base and durability, e.g. "SSDTIER".
	EnvPrefix string
	// ChildTest is the name of the test function that calls Child.
	ChildTest string
	// Rounds is how many times a child is started and killed.
	Rounds int
	// Durable says whether the child of a round writes with fsync.
	Durable func(round int) bool
	// OpenChild opens the store the child writes to.
	OpenChild func(dir string, durable bool) (Store, error)
	// Reopen opens the store after a kill; round lets the caller vary
	// read options between rounds.
	Reopen func(t *testing.T, dir string, round int) Store
	// Corrupt reports how many damaged blocks the store has met so far.
	Corrupt func(Store) int64
	// Describe returns a line about the reopened store for the test log.
	Describe func(Store) string
}

func (c Config) env(name string) string { return c.EnvPrefix + "_CRASH_CHILD_" + name }

// Value is the value of (key, version): self-describing, so the parent can
// check any block it finds, acknowledged or not.
func Value(k blockfmt.Key, version uint64) []byte {
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

func key(worker, i int) blockfmt.Key {
	return cachekey.String(uint64(worker), fmt.Sprintf("crash-%d-%03d", worker, i))
}

// Child is the body of the child test: it skips unless started by Run, and
// otherwise writes until killed (or gives up after 30 s, should the parent
// be gone).
func Child(t *testing.T, c Config) {
	dir := os.Getenv(c.env("DIR"))
	if dir == "" {
		t.Skip("child process of the crash test")
	}
	base, err := strconv.ParseUint(os.Getenv(c.env("BASE")), 10, 64)
	if err != nil {
		fmt.Printf("base-error %v\n", err)
		os.Exit(3)
	}
	s, err := c.OpenChild(dir, os.Getenv(c.env("DURABLE")) == "1")
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
	for w := range workers {
		wg.Go(func() {
			ctx := context.Background()
			off := int(base>>32) * 13 // each round starts on other keys
			for seq := uint64(0); time.Now().Before(deadline); seq++ {
				version := base + seq
				var batch []blockfmt.Block
				if w%2 == 0 {
					k := key(w, (off+int(seq))%keysPerWork)
					batch = append(batch, blockfmt.NewBlock(k, Value(k, version)))
					err = s.Put(ctx, batch[0])
				} else {
					for j := range 8 {
						k := key(w, (off+int(seq)*8+j)%keysPerWork)
						batch = append(batch, blockfmt.NewBlock(k, Value(k, version)))
					}
					err = s.PutBatch(ctx, batch)
				}
				if err != nil {
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

// Run is the parent test.
func Run(t *testing.T, c Config) {
	if testing.Short() {
		t.Skip("spawns processes")
	}
	require.GreaterOrEqual(t, c.Rounds, 1)
	dir := t.TempDir()
	acked := map[blockfmt.Key]uint64{}
	r := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 9))
	totalAcks := 0
	for round := range c.Rounds {
		base := uint64(round+1) << 32
		durable := c.Durable(round)
		got := runChild(t, c, dir, base, durable, r)
		acks := 0
		for _, line := range got {
			f := strings.Fields(line)
			switch {
			case len(f) == 4 && f[0] == "ack":
				shard, err1 := strconv.ParseUint(f[1], 10, 64)
				v, err2 := strconv.ParseUint(f[3], 10, 64)
				if err1 != nil || err2 != nil || v>>32 != uint64(round+1) {
					continue // a line cut by the kill is not an ack
				}
				k := cachekey.String(shard, f[2])
				acked[k] = max(acked[k], v)
				acks++
			case strings.Contains(line, "-error"):
				t.Fatalf("round %d: child failed: %s", round, line)
			}
		}
		totalAcks += acks

		s := c.Reopen(t, dir, round)
		require.Zero(t, c.Corrupt(s), "round %d: torn or damaged blocks at open", round)
		found := map[blockfmt.Key]uint64{}
		require.NoError(t, s.Iterate(t.Context(), func(b blockfmt.Block) bool {
			require.GreaterOrEqual(t, len(b.Value), 8, "round %d: %v", round, b.Key)
			v := binary.LittleEndian.Uint64(b.Value)
			require.True(t, bytes.Equal(Value(b.Key, v), b.Value), "round %d: block %v version %x is damaged", round, b.Key, v)
			found[b.Key] = v
			return true
		}))
		require.Zero(t, c.Corrupt(s), "round %d: damaged blocks while iterating", round)
		for k, v := range acked {
			require.GreaterOrEqual(t, found[k], v, "round %d: acknowledged %v version %x lost", round, k, v)
			b, ok, err := s.Get(k)
			require.NoError(t, err, "round %d", round)
			require.True(t, ok, "round %d: %v", round, k)
			require.True(t, bytes.Equal(Value(k, found[k]), b.Value), "round %d: %v", round, k)
		}
		desc := c.Describe(s)
		require.NoError(t, s.Close())
		t.Logf("round %d (durable=%v): %d acks, %d keys acknowledged so far, %s", round, durable, acks, len(acked), desc)
	}
	require.Positive(t, totalAcks, "the children must have acknowledged writes")
}

// runChild starts a child, kills it at a random moment after it is ready,
// and returns every line it printed.
func runChild(t *testing.T, c Config, dir string, base uint64, durable bool, r *rand.Rand) []string {
	cmd := exec.Command(os.Args[0], "-test.run=^"+c.ChildTest+"$", "-test.count=1")
	cmd.Env = append(os.Environ(), c.env("DIR")+"="+dir, c.env("BASE")+"="+strconv.FormatUint(base, 10),
		fmt.Sprintf("%s=%d", c.env("DURABLE"), map[bool]int{false: 0, true: 1}[durable]))
	stdout, err := cmd.StdoutPipe()
	require.NoError(t, err)
	cmd.Stderr = os.Stderr
	require.NoError(t, cmd.Start())
	var got []string
	killed := false
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		line := sc.Text()
		got = append(got, line)
		if line == "ready" && !killed {
			killed = true
			time.AfterFunc(time.Duration(5+r.IntN(300))*time.Millisecond, func() {
				cmd.Process.Signal(syscall.SIGKILL)
			})
		}
	}
	require.Error(t, cmd.Wait(), "the child must die by SIGKILL")
	return got
}
