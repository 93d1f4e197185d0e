package cachebench

import (
	"bytes"
	"compress/gzip"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

func TestReadTraceARCExpandsCounts(t *testing.T) {
	keys, err := ReadTrace(strings.NewReader("1 3 0 0\n\n10 1 0 0\r\n7 2 x y\n5 0 0 0\n"), FormatARC)
	require.NoError(t, err)
	// "start count" stands for start..start+count-1, in order; count 0 is
	// no request; blank lines and CRLF endings are fine.
	require.Equal(t, []uint64{1, 2, 3, 10, 7, 8}, keys)

	_, err = ReadTrace(strings.NewReader("1 1 0 0\n42\n"), FormatARC)
	require.ErrorContains(t, err, "line 2")
	_, err = ReadTrace(strings.NewReader("1 -1 0 0\n"), FormatARC)
	require.ErrorContains(t, err, "count")
	_, err = ReadTrace(strings.NewReader("1 268435457 0 0\n"), FormatARC)
	require.ErrorIs(t, err, errTraceTooLong)
}

func TestReadTraceLIRS(t *testing.T) {
	keys, err := ReadTrace(strings.NewReader("5\r\n7\n\n  9 \n-1\n"), FormatLIRS)
	require.NoError(t, err)
	require.Equal(t, []uint64{5, 7, 9, ^uint64(0)}, keys)

	_, err = ReadTrace(strings.NewReader("5\n1 1 0 0\n"), FormatLIRS)
	require.ErrorContains(t, err, "line 2")
	_, err = ReadTrace(strings.NewReader("5\nabc\n"), FormatLIRS)
	require.ErrorContains(t, err, `bad key "abc"`)
	_, err = ReadTrace(strings.NewReader("\n\n"), FormatLIRS)
	require.ErrorContains(t, err, "no requests")
	_, err = ReadTrace(strings.NewReader("1\n"), Format("csv"))
	require.Error(t, err)
}

func writeTrace(t *testing.T, path, text string, gz bool) {
	t.Helper()
	var b bytes.Buffer
	if gz {
		w := gzip.NewWriter(&b)
		_, err := w.Write([]byte(text))
		require.NoError(t, err)
		require.NoError(t, w.Close())
	} else {
		b.WriteString(text)
	}
	require.NoError(t, os.WriteFile(path, b.Bytes(), 0o644))
}

func TestReadTraceFileGzipAndPlain(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name, text string
		format     Format
		want       []uint64
	}{
		{"arc", "100 2 0 0\n3 1 0 0\n", FormatARC, []uint64{100, 101, 3}},
		{"lirs", "\n4\n4\n2\n", FormatLIRS, []uint64{4, 4, 2}},
	} {
		for _, gz := range []bool{false, true} {
			// The name says nothing: gzip is told by its magic bytes.
			path := filepath.Join(dir, tc.name+".trace")
			if gz {
				path += ".x"
			}
			writeTrace(t, path, tc.text, gz)
			for _, f := range []Format{tc.format, ""} { // "" sniffs the format
				tr, err := ReadTraceFile(path, f)
				require.NoError(t, err, "%s gz=%v format=%q", tc.name, gz, f)
				require.Equal(t, tc.want, tr.Keys)
				require.Equal(t, tc.format, tr.Format)
				require.Equal(t, tc.name, tr.Name)
			}
		}
	}
	_, err := ReadTraceFile(filepath.Join(dir, "missing.gz"), FormatARC)
	require.ErrorIs(t, err, os.ErrNotExist)
}

func TestGenerateZipfIsDeterministic(t *testing.T) {
	p := ZipfParams{S: 1.0001, V: 10, IMax: 1000, Requests: 5000, Seed: 7}
	a, err := GenerateZipf(p)
	require.NoError(t, err)
	b, err := GenerateZipf(p)
	require.NoError(t, err)
	require.Equal(t, a.Keys, b.Keys)
	require.Len(t, a.Keys, 5000)
	counts := map[uint64]int{}
	for _, k := range a.Keys {
		require.LessOrEqual(t, k, p.IMax)
		counts[k]++
	}
	// Skewed: the first rank is drawn more often than a key far down.
	require.Greater(t, counts[0], counts[500])

	p.Seed = 8
	c, err := GenerateZipf(p)
	require.NoError(t, err)
	require.NotEqual(t, a.Keys, c.Keys)

	_, err = GenerateZipf(ZipfParams{S: 1, V: 10, IMax: 10, Requests: 1})
	require.Error(t, err)
}

func TestLRU(t *testing.T) {
	c := newLRU(2)
	require.False(t, c.access(1))
	require.False(t, c.access(2))
	require.True(t, c.access(1))  // 1 is now the most recent; 2 the least
	require.False(t, c.access(3)) // evicts 2
	require.Equal(t, 2, c.len())
	require.False(t, c.get(2))
	require.True(t, c.get(1))
	require.True(t, c.get(3))
	c.set(3) // re-setting a present key does not grow the cache
	require.Equal(t, 2, c.len())
	c.set(4) // evicts 1, least recently used after get(3), set(3)
	require.False(t, c.get(1))
	require.True(t, c.get(4))

	// A cyclic scan one larger than the cache never hits under LRU.
	c = newLRU(3)
	hits := 0
	for i := range 400 {
		if c.access(uint64(i % 4)) {
			hits++
		}
	}
	require.Zero(t, hits)
}

// The bundled traces, when present, have the request counts their README
// gives (Glimpse ends in a blank line: 6,016 lines, 6,015 requests).
func TestBundledTraces(t *testing.T) {
	if testing.Short() {
		t.Skip("reads the bundled traces")
	}
	wd, err := os.Getwd()
	require.NoError(t, err)
	root, err := benchkit.RepoRoot(wd)
	if err != nil {
		t.Skip(err)
	}
	dir := filepath.Join(filepath.Dir(root), "shared", "data", "cache-traces")
	for name, want := range map[string]int{"oltp.gz": 914_145, "gli.gz": 6015, "loop.gz": 505_500} {
		path := filepath.Join(dir, name)
		if _, err := os.Stat(path); err != nil {
			t.Skipf("no %s: %v", path, err)
		}
		tr, err := ReadTraceFile(path, "")
		require.NoError(t, err)
		require.Len(t, tr.Keys, want, name)
	}
}
