package walbench

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

func TestEnvelopeWalksEtcdFrames(t *testing.T) {
	src := newPayloadSource(7)
	payloads := func(size int) [][]byte {
		c := src.cursor(0, size)
		ps := make([][]byte, 200)
		for i := range ps {
			ps[i] = c.next()
		}
		return ps
	}
	small, err := etcdEnvelope(t.TempDir(), payloads(0))
	require.NoError(t, err)
	big, err := etcdEnvelope(t.TempDir(), payloads(1000))
	require.NoError(t, err)
	// An etcd record is an 8-byte length, a protobuf walpb.Record around a
	// protobuf raftpb.Entry, padded to 8 bytes.
	require.Greater(t, small, 8.0)
	require.Less(t, small, 64.0)
	require.InDelta(t, 1000, big-small, 16)

	ours, err := oursEnvelope(t.TempDir(), payloads(1000))
	require.NoError(t, err)
	require.GreaterOrEqual(t, ours, 1000.0)
}

func TestRunSmoke(t *testing.T) {
	out := filepath.Join(t.TempDir(), "wal.json")
	cfg := DefaultConfig(true)
	cfg.Duration = 200 * time.Millisecond // long enough that a loaded machine still completes records in every run
	cfg.Warmup = 10 * time.Millisecond
	cfg.Repeats = 1
	cfg.Payloads = []int{256}
	cfg.Concurrency = []int{1, 64}
	cfg.BboltDelay = time.Millisecond
	cfg.EnvelopeRecords = 50
	cfg.Dir = t.TempDir()
	cfg.Out = out
	var stdout bytes.Buffer
	err := Run(context.Background(), cfg, &stdout, benchkit.NewProgress(io.Discard))
	require.NoError(t, err)

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	last := lines[len(lines)-1]
	require.Regexp(t, regexp.MustCompile(`^wal: envelope_fixed_bytes=[0-9.]+ durable_c64_ratio=[0-9.]+ p99_ratio=[0-9.]+( [a-z0-9_]+=\S+)*$`), last)

	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Conditions map[string]any `json:"conditions"`
		Cells      []struct {
			Systems map[string]json.RawMessage            `json:"systems"`
			Ratios  map[string]map[string]json.RawMessage `json:"ratios"`
		} `json:"cells"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Cells, 4)
	for _, c := range rep.Cells {
		require.Len(t, c.Systems, 3)
		require.Contains(t, c.Ratios[SystemEtcd], "records_per_sec_ratio")
		require.Contains(t, c.Ratios[SystemBbolt], "p99_ratio")
	}
	require.Equal(t, true, rep.Conditions["quick"])
	entries, err := os.ReadDir(cfg.Dir)
	require.NoError(t, err)
	require.Empty(t, entries, "every run removes its directory")
}
