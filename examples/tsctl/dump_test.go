package main

import (
	"bufio"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// Export, FLUSHALL and import give back every key with its exact bytes
// and its TTL; a second import skips the keys, and --replace overwrites
// them.
func TestExportImportRoundTrip(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "data"))
	defer srv.Stop()
	rc := srv.client(t)
	ctx := t.Context()
	fill(t, rc)
	before := snapshot(t, rc)
	require.Greater(t, len(before), 20)

	file := filepath.Join(dir, "keys.jsonl")
	r := ok(t, srv.args("--output", "json", "export", "--out", file)...)
	res := jsonDoc(t, r)
	require.Equal(t, true, res["ok"])
	require.EqualValues(t, len(before), res["keys"])

	// Every line is a JSON object; binary bytes made some base64.
	f, err := os.Open(file)
	require.NoError(t, err)
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 16<<20) // a line holds the large value
	lines, encoded := 0, 0
	for sc.Scan() {
		var m map[string]any
		require.NoError(t, json.Unmarshal(sc.Bytes(), &m), sc.Text())
		if m["encoding"] == "base64" {
			encoded++
		}
		lines++
	}
	require.NoError(t, sc.Err())
	f.Close()
	require.Equal(t, len(before), lines)
	require.Positive(t, encoded)
	require.Less(t, encoded, lines, "text stays text")

	require.NoError(t, rc.FlushAll(ctx).Err())
	require.Zero(t, rc.DBSize(ctx).Val())
	r = ok(t, srv.args("--output", "json", "import", "--in", file)...)
	res = jsonDoc(t, r)
	require.EqualValues(t, len(before), res["written"])
	requireSame(t, before, snapshot(t, rc))

	// Again: every key exists and is left alone.
	require.NoError(t, rc.Set(ctx, "plain", "changed", 0).Err())
	r = ok(t, srv.args("--output", "json", "import", "--in", file)...)
	res = jsonDoc(t, r)
	require.EqualValues(t, len(before), res["existing"])
	require.Nil(t, res["written"])
	require.Equal(t, "changed", rc.Get(ctx, "plain").Val())

	// --replace overwrites them, whatever their type now.
	require.NoError(t, rc.Del(ctx, "list").Err())
	require.NoError(t, rc.SAdd(ctx, "list", "not a list").Err())
	ok(t, srv.args("import", "--replace", "--in", file)...)
	requireSame(t, before, snapshot(t, rc))
}

// export --out - writes the keys to stdout and its result to stderr;
// import --in - reads stdin; a forced progress bar goes to stderr only.
func TestExportImportStdio(t *testing.T) {
	srv := startServer(t, filepath.Join(t.TempDir(), "data"))
	defer srv.Stop()
	rc := srv.client(t)
	fill(t, rc)
	before := snapshot(t, rc)

	r := ok(t, srv.args("--output", "json", "--progress", "export", "--out", "-")...)
	lines := strings.Split(strings.TrimSuffix(r.stdout, "\n"), "\n")
	require.Len(t, lines, len(before), "only the keys on stdout")
	for _, l := range lines {
		require.True(t, json.Valid([]byte(l)), l)
	}
	require.Contains(t, r.stderr, "export", "the bar")
	require.Contains(t, r.stderr, `"ok":true`, "the result")

	require.NoError(t, rc.FlushAll(t.Context()).Err())
	r = tsctl(t, r.stdout, srv.args("import", "--in", "-")...)
	require.Equal(t, 0, r.code, r.stderr)
	require.Contains(t, r.stdout, "written")
	requireSame(t, before, snapshot(t, rc))

	// A line that is not JSON stops the import, naming it.
	r = tsctl(t, "{\"key\":\"a\",\"type\":\"string\",\"value\":\"b\"}\nnot json\n", srv.args("--output", "json", "import", "--in", "-")...)
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, jsonDoc(t, r)["error"], "line 2")
}
