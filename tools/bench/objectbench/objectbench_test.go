package objectbench

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

func TestRunSmoke(t *testing.T) {
	for _, body := range []string{BodyBytes, BodyStream} {
		t.Run(body, func(t *testing.T) { runSmoke(t, body) })
	}
}

func runSmoke(t *testing.T, body string) {
	out := filepath.Join(t.TempDir(), "object.json")
	cfg := DefaultConfig(true)
	cfg.Sizes = []int{4 << 10, 1 << 20}
	cfg.Ops = map[int]int{4 << 10: 5, 1 << 20: 2}
	cfg.Repeats = 1
	cfg.Dir = t.TempDir()
	cfg.Out = out
	cfg.Body = body
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard)))
	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.Regexp(t, regexp.MustCompile(`^object: put64m_vs_disk_ratio=n/a get64m_vs_disk_ratio=n/a put4k_per_s=[0-9]+$`), lines[len(lines)-1])
	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Conditions map[string]any `json:"conditions"`
		Sizes      []sizeReport   `json:"sizes"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Sizes, 2)
	for _, s := range rep.Sizes {
		require.Len(t, s.Systems[SystemOurs].Runs, 1)
		require.Len(t, s.Systems[SystemDisk].Runs, 1)
		require.Greater(t, s.Ratios["put_vs_disk_ratio"].Median, 0.0)
	}
	require.Equal(t, true, rep.Conditions["quick"])
	require.Contains(t, rep.Conditions["ours_body"], body+":")
	ents, err := os.ReadDir(cfg.Dir)
	require.NoError(t, err)
	require.Empty(t, ents, "every run removes its directory")
}

func TestValidate(t *testing.T) {
	for _, tc := range []struct {
		name  string
		edit  func(*Config)
		valid bool
	}{
		{"defaults", func(*Config) {}, true},
		{"stream body", func(c *Config) { c.Body = BodyStream }, true},
		{"unknown body", func(c *Config) { c.Body = "file" }, false},
		{"no sizes", func(c *Config) { c.Sizes = nil }, false},
		{"no repeats", func(c *Config) { c.Repeats = 0 }, false},
		{"size too large", func(c *Config) { c.Sizes = []int{2 << 30} }, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := DefaultConfig(false)
			cfg.Dir = t.TempDir()
			tc.edit(&cfg)
			if tc.valid {
				require.NoError(t, cfg.Validate())
			} else {
				require.Error(t, cfg.Validate())
			}
		})
	}
}
