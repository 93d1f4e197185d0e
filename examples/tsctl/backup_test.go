package main

import (
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// A backup made with tsctl against a running server, verified, restored
// into a new data directory once the server stopped, serves the same keys
// from a server started on it; and the same through the server's S3 API.
// The stopped server's data directory inspects and verifies clean without
// being changed, and verify finds damage done to copies of it.
func TestBackupRestoreInspectVerify(t *testing.T) {
	dir := t.TempDir()
	srv := startServer(t, filepath.Join(dir, "a"))
	rc := srv.client(t)
	fill(t, rc)
	want := snapshot(t, rc)

	// Into the server's backup directory.
	r := ok(t, srv.args("--output", "json", "backup", "--name", "b1", "--to", "dir")...)
	res := jsonDoc(t, r)
	require.Equal(t, true, res["ok"])
	require.Positive(t, res["bytes"])
	target := res["target"].(string)
	require.Equal(t, filepath.Join(srv.data, "backups", "b1"), target)
	ok(t, srv.args("verify", "--backup", target)...)

	// A second backup of the same name is refused by the server.
	r = tsctl(t, "", srv.args("backup", "--name", "b1", "--to", "dir")...)
	require.Equal(t, exitFailure, r.code)

	// Into the S3 bucket of the server's own S3 API.
	r = ok(t, srv.args("--output", "json", "backup", "--name", "b2", "--to", "s3")...)
	require.Equal(t, "s3://backups/b2", jsonDoc(t, r)["target"])
	s3 := []string{"--s3-endpoint", "http://" + srv.s3}
	ok(t, srv.args(append([]string{"verify", "--backup", "s3://backups/b2"}, s3...)...)...)
	fromS3 := filepath.Join(dir, "from-s3")
	ok(t, srv.args(append([]string{"--data", fromS3, "restore", "--from", "s3://backups/b2"}, s3...)...)...)

	// Restore refuses the running server's directory.
	r = tsctl(t, "", srv.args("restore", "--from", target)...)
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "not empty")
	require.NoError(t, srv.Stop())

	restored := filepath.Join(dir, "b")
	r = ok(t, "--output", "json", "--data", restored, "restore", "--from", target)
	require.Contains(t, jsonDoc(t, r)["components"], "engine")
	for _, data := range []string{restored, fromS3} {
		srv2 := startServer(t, data)
		requireSame(t, want, snapshot(t, srv2.client(t)))
		require.NoError(t, srv2.Stop())
	}

	t.Run("inspect", func(t *testing.T) {
		before := dirHashes(t, srv.data)
		r := ok(t, "--data", srv.data, "inspect")
		require.Contains(t, r.stdout, "table default/default")
		require.Contains(t, r.stdout, "backups: ")
		r = ok(t, "--output", "json", "--data", srv.data, "inspect")
		rep := jsonDoc(t, r)
		require.Equal(t, filepath.Join(srv.data, "engine"), rep["engine"])
		tables := rep["tables"].([]any)
		require.NotEmpty(t, tables)
		shard := tables[0].(map[string]any)["shards"].([]any)[0].(map[string]any)
		require.Equal(t, true, shard["has_checkpoint"], "the server checkpoints as it stops")
		require.Positive(t, shard["segments"])
		require.Equal(t, false, rep["in_use"])
		require.Equal(t, before, dirHashes(t, srv.data), "inspect changes nothing")
	})

	t.Run("verify", func(t *testing.T) {
		before := dirHashes(t, srv.data)
		r := ok(t, "--data", srv.data, "verify")
		require.Contains(t, r.stdout, "verify: ok")
		rep := jsonDoc(t, ok(t, "--output", "json", "--data", srv.data, "verify"))
		require.Equal(t, true, rep["ok"])
		require.Empty(t, rep["problems"])
		require.NotEmpty(t, rep["streams"])
		require.Contains(t, r.stdout, "1 large values", "the large value's file is read")
		require.Equal(t, before, dirHashes(t, srv.data), "verify changes nothing")
		// The restored copy and a backup directory verify too.
		ok(t, "--data", restored, "verify")
		ok(t, "--data", target, "verify")
	})

	t.Run("verify finds a damaged segment", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "data")
		copyDir(t, srv.data, bad)
		seg := firstFile(t, bad, "*.wal")
		b, err := os.ReadFile(seg)
		require.NoError(t, err)
		// A bit of the first record's payload: valid records follow it,
		// so it is no torn tail.
		require.Greater(t, frameEnd(b, 32), 200)
		b[32+9+2] ^= 0x20
		require.NoError(t, os.WriteFile(seg, b, 0o644))

		r := tsctl(t, "", "--output", "json", "--data", bad, "verify")
		require.Equal(t, exitFailure, r.code, r.stderr)
		rep := jsonDoc(t, r)
		require.Equal(t, false, rep["ok"])
		problems := strings.Join(stringsOf(rep["problems"]), "\n")
		require.Contains(t, problems, filepath.Base(seg))
		require.Contains(t, problems, "offset 32")

		r = tsctl(t, "", "--data", bad, "verify")
		require.Equal(t, exitFailure, r.code)
		require.Contains(t, r.stdout, "DAMAGE")
	})

	t.Run("verify finds a damaged large value", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "data")
		copyDir(t, srv.data, bad)
		m, err := filepath.Glob(filepath.Join(bad, "engine", "default", "default", "shard-*", "large-*.rec"))
		require.NoError(t, err)
		require.Len(t, m, 1)
		large := m[0]
		b, err := os.ReadFile(large)
		require.NoError(t, err)
		b[len(b)/2] ^= 1
		require.NoError(t, os.WriteFile(large, b, 0o644))
		r := tsctl(t, "", "--output", "json", "--data", bad, "verify")
		require.Equal(t, exitFailure, r.code)
		require.Contains(t, strings.Join(stringsOf(jsonDoc(t, r)["problems"]), "\n"), filepath.Base(large))
	})

	t.Run("verify finds a damaged image", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "data")
		copyDir(t, srv.data, bad)
		img := firstFile(t, bad, "checkpoint-*.img")
		b, err := os.ReadFile(img)
		require.NoError(t, err)
		b[len(b)/2] ^= 1
		require.NoError(t, os.WriteFile(img, b, 0o644))
		r := tsctl(t, "", "--output", "json", "--data", bad, "verify")
		require.Equal(t, exitFailure, r.code)
		require.Contains(t, strings.Join(stringsOf(jsonDoc(t, r)["problems"]), "\n"), filepath.Base(img))
	})

	t.Run("verify reports a torn tail and passes", func(t *testing.T) {
		torn := filepath.Join(t.TempDir(), "data")
		copyDir(t, srv.data, torn)
		seg := firstFile(t, torn, "*.wal")
		b, err := os.ReadFile(seg)
		require.NoError(t, err)
		// Half a frame after the last record: a write the crash tore.
		end := 32
		for n := frameEnd(b, end); n > end; n = frameEnd(b, end) {
			end = n
		}
		require.Greater(t, len(b), end+40)
		copy(b[end:], []byte{1, 2, 3, 4, 100, 0, 0, 0, 1, 'x', 'y'})
		require.NoError(t, os.WriteFile(seg, b, 0o644))
		rep := jsonDoc(t, ok(t, "--output", "json", "--data", torn, "verify"))
		require.Contains(t, strings.Join(stringsOf(rep["notes"]), "\n"), "torn")
	})

	t.Run("verify finds a damaged backup", func(t *testing.T) {
		bad := filepath.Join(t.TempDir(), "b1")
		copyDir(t, target, bad)
		img := firstFile(t, bad, "checkpoint-*.img")
		b, err := os.ReadFile(img)
		require.NoError(t, err)
		b[0] ^= 1
		require.NoError(t, os.WriteFile(img, b, 0o644))
		r := tsctl(t, "", "--output", "json", "verify", "--backup", bad)
		require.Equal(t, exitFailure, r.code)
		require.Contains(t, strings.Join(stringsOf(jsonDoc(t, r)["problems"]), "\n"), filepath.Base(img))
	})
}

// firstFile is the first file under dir's default table matching pattern.
func firstFile(t *testing.T, dir, pattern string) string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "engine", "default", "default", "shard-0000", pattern))
	require.NoError(t, err)
	require.NotEmpty(t, m, pattern)
	return m[0]
}

// frameEnd is the offset past the wal frame at off (a 9-byte header
// whose bytes 4..8 are the payload's length), off for a zero header.
func frameEnd(b []byte, off int) int {
	if off+9 > len(b) || b[off+8] == 0 {
		return off
	}
	return off + 9 + int(binary.LittleEndian.Uint32(b[off+4:]))
}

func stringsOf(v any) []string {
	var out []string
	for _, x := range v.([]any) {
		out = append(out, x.(string))
	}
	return out
}
