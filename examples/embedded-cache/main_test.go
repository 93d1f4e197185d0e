package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// answered returns the gets the report says each tier answered, by the
// first word of its row (dram, ssd, miss).
func answered(t *testing.T, out string) map[string]int64 {
	t.Helper()
	got := map[string]int64{}
	inTable := false
	for line := range strings.Lines(out) {
		f := strings.Fields(line)
		switch {
		case len(f) == 3 && f[0] == "answered":
			inTable = true
		case inTable && len(f) == 3:
			n, err := strconv.ParseInt(f[1], 10, 64)
			require.NoError(t, err, line)
			got[f[0]] = n
		default:
			inTable = false
		}
	}
	return got
}

func TestRunServesHotKeysFromDRAMAndColdKeysFromSSD(t *testing.T) {
	const reads = 3000
	for _, tc := range []struct {
		name string
		args []string
	}{
		{"skewed", []string{"--keys", "400", "--value-bytes", "256", "--dram-bytes", "16384", "--zipf-s", "1.2"}},
		{"nearly uniform", []string{"--keys", "400", "--value-bytes", "64", "--dram-bytes", "8192", "--zipf-s", "1.01", "--seed", "7"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "ssd")
			var stdout, stderr bytes.Buffer
			args := append([]string{"--dir", dir, "--reads", strconv.Itoa(reads)}, tc.args...)
			require.NoError(t, run(t.Context(), args, &stdout, &stderr), stderr.String())

			got := answered(t, stdout.String())
			require.Positive(t, got["dram"], stdout.String())
			require.Positive(t, got["ssd"], stdout.String())
			require.Zero(t, got["miss"], "every key read was written")
			require.EqualValues(t, reads, got["dram"]+got["ssd"])
			require.Contains(t, stdout.String(), "p99")
			require.Contains(t, stderr.String(), "msg=load", "load progress is logged")
			require.DirExists(t, dir, "a --dir the user gave is kept")
		})
	}
}

func TestRunWithoutDirRemovesItsTemporaryDirectory(t *testing.T) {
	var stdout bytes.Buffer
	require.NoError(t, run(t.Context(), []string{"--keys", "20", "--reads", "20", "--value-bytes", "8", "--dram-bytes", "4096"}, &stdout, &bytes.Buffer{}))
	first, _, _ := strings.Cut(stdout.String(), "\n")
	dir, ok := strings.CutPrefix(first, "cache: DRAM 4.0 KiB over an SSD tier in ")
	require.True(t, ok, first)
	dir, ok = strings.CutSuffix(dir, " (temporary, removed at exit)")
	require.True(t, ok, first)
	_, err := os.Stat(dir)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestFlags(t *testing.T) {
	for _, tc := range []struct {
		name    string
		args    []string
		wantErr string
	}{
		{"zipf s must exceed 1", []string{"--zipf-s", "1"}, "--zipf-s 1: need s > 1"},
		{"zipf s is not NaN", []string{"--zipf-s", "NaN"}, "need s > 1"},
		{"no keys", []string{"--keys", "0"}, "--keys 0"},
		{"negative reads", []string{"--reads", "-1"}, "--reads -1"},
		{"no DRAM", []string{"--dram-bytes", "0"}, "--dram-bytes 0"},
		{"value too small for its key number", []string{"--value-bytes", "7"}, "--value-bytes 7"},
		{"unknown flag", []string{"--nope"}, "flag provided but not defined"},
		{"stray argument", []string{"extra"}, "unexpected arguments"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := run(t.Context(), tc.args, &bytes.Buffer{}, &bytes.Buffer{})
			require.ErrorContains(t, err, tc.wantErr)
		})
	}
}

func TestHelpExplainsEveryFlag(t *testing.T) {
	var stderr bytes.Buffer
	require.ErrorIs(t, run(t.Context(), []string{"--help"}, &bytes.Buffer{}, &stderr), flag.ErrHelp)
	help := stderr.String()
	cfg, err := parseFlags(nil, &bytes.Buffer{})
	require.NoError(t, err)
	require.Equal(t, 20000, cfg.keys, "defaults parse")
	for _, name := range []string{"dir", "keys", "reads", "dram-bytes", "value-bytes", "zipf-s", "seed"} {
		require.Contains(t, help, "-"+name+" ", "help lists --%s", name)
	}
	require.Contains(t, help, "Usage: embedded-cache")
}
