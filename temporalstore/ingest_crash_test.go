package temporalstore

import (
	"bufio"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
)

const ingestDirEnv = "TEMPORALSTORE_INGEST_CRASH_DIR"

// ingestKeys is how many counters the ingest crash test spreads its
// records over.
const ingestKeys = 5

// ingestChild is a consumer that resumes where the engine says, then
// ingests batches of 20 records forever: record o adds 1 to counter o %
// ingestKeys. It prints each batch's committed offset.
func ingestChild(dir string) {
	ctx := context.Background()
	e, err := testOpen(ctx, Options{Dir: dir, MaintenanceInterval: 2 * time.Millisecond, CheckpointRecords: 200})
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(2)
	}
	next, err := e.IngestOffset(ctx, "", "", "stream", 0)
	if err != nil {
		fmt.Println("offset:", err)
		os.Exit(2)
	}
	w := bufio.NewWriter(os.Stdout)
	for {
		b := IngestBatch{Source: "stream", Partition: 0}
		for o := next; o < next+20; o++ {
			b.Records = append(b.Records, IngestRecord{Offset: o, Command: Command{
				Kind: KindCIncr, Key: fmt.Appendf(nil, "c%d", o%ingestKeys), At: 1000, Delta: 1}})
		}
		res, err := e.Ingest(ctx, b)
		if err != nil {
			fmt.Fprintln(w, "error", err)
			w.Flush()
			os.Exit(2)
		}
		fmt.Fprintln(w, "committed", res.Committed)
		w.Flush()
		next = res.Committed + 1
	}
}

// A consumer killed with SIGKILL at random moments, mid-batch included,
// and resumed from the engine's committed offset, applies every record
// exactly once: the counters add up to the records committed, no more
// (a replayed half batch is skipped) and no less.
func TestIngestCrashIsExactlyOnce(t *testing.T) {
	teststorage.SkipOnMem(t, "a killed process and its files")
	if testing.Short() {
		t.Skip("crash test")
	}
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 3))
	for round := range 25 {
		cmd, lines := startChild(t, ingestDirEnv+"="+dir)
		// The kill comes at a random moment after the first batch, so
		// that it lands inside batches.
		var deadline <-chan time.Time
	wait:
		for {
			select {
			case <-deadline:
				break wait
			case line, ok := <-lines:
				if !ok {
					break wait
				}
				require.True(t, strings.HasPrefix(line, "committed "), "round %d: %s", round, line)
				if deadline == nil {
					deadline = time.After(time.Duration(rng.IntN(30_000)) * time.Microsecond)
				}
			}
		}
		_ = cmd.Process.Signal(syscall.SIGKILL)
		_ = cmd.Wait()
		for range lines {
		}
	}
	// A last clean batch, then the books must balance.
	e, err := testOpen(t.Context(), Options{Dir: dir, MaintenanceInterval: Disabled})
	require.NoError(t, err)
	defer e.Close()
	next, err := e.IngestOffset(t.Context(), "", "", "stream", 0)
	require.NoError(t, err)
	b := IngestBatch{Source: "stream", Partition: 0}
	for o := next; o < next+20; o++ {
		b.Records = append(b.Records, IngestRecord{Offset: o, Command: Command{Kind: KindCIncr, Key: fmt.Appendf(nil, "c%d", o%ingestKeys), At: 1000, Delta: 1}})
	}
	res, err := e.Ingest(t.Context(), b)
	require.NoError(t, err)
	var total int64
	for k := range ingestKeys {
		r, err := e.Execute(t.Context(), Command{Kind: KindCCount, Key: []byte("c" + strconv.Itoa(k)), End: 10_000})
		require.NoError(t, err)
		total += r.Int
	}
	t.Logf("%d records committed over 25 kills", res.Committed+1)
	require.Positive(t, next)
	require.Equal(t, res.Committed+1, total, "every record applied exactly once")
}
