package enginebench

import (
	"bytes"
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

// A tiny run of every section, against the real etcd and redis-server.
func TestRunSmoke(t *testing.T) {
	out := filepath.Join(t.TempDir(), "engine.json")
	cfg := DefaultConfig(true)
	cfg.IndexKeys = []int{2000, 20000}
	cfg.ValueSizes = []int{64, 4096}
	cfg.WAWrites = 300
	cfg.Writers = 8
	cfg.PutDuration = 200 * time.Millisecond
	cfg.Repeats = 1
	cfg.MemKeys = 3000
	cfg.Dir = t.TempDir()
	cfg.Out = out
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard)))
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Regexp(t, regexp.MustCompile(`^engine: index_bytes_per_key_20k=[0-9.]+ wa_64b=[0-9.]+ put_vs_etcd_ratio=[0-9.]+ mem_vs_redis_ratio=[0-9.]+$`), lines[len(lines)-1])
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Index []indexResult `json:"index_bytes_per_key"`
		WA    []waResult    `json:"write_amplification"`
		Put   struct {
			Runs map[string][]putRun `json:"runs"`
		} `json:"durable_set_throughput"`
		Memory memResult `json:"memory_per_key"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Index, 2)
	for _, x := range rep.Index {
		require.Greater(t, x.BytesPerKey, 16.0, "a slot is 16 bytes")
	}
	require.Len(t, rep.WA, 2)
	for _, w := range rep.WA {
		require.Greater(t, w.WALog, 1.0, "a record carries its key and value and more")
		require.GreaterOrEqual(t, w.WADurable, w.WALog)
	}
	require.Len(t, rep.Put.Runs[SystemOurs], 1)
	require.Len(t, rep.Put.Runs[SystemEtcd], 1)
	require.Positive(t, rep.Memory.RedisBytes)
	ents, err := os.ReadDir(cfg.Dir)
	require.NoError(t, err)
	require.Empty(t, ents, "the run removes its directory")
}
