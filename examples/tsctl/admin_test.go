package main

import (
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// The table and tenant commands against the server's admin routes.
func TestTableAndTenant(t *testing.T) {
	srv := startServer(t, filepath.Join(t.TempDir(), "data"))
	defer srv.Stop()
	cmd := func(args ...string) map[string]any {
		t.Helper()
		return jsonDoc(t, ok(t, srv.args(append([]string{"--output", "json"}, args...)...)...))
	}
	if r := tsctl(t, "", srv.args("table", "list")...); r.code != 0 {
		t.Skipf("the server has no table routes: %s", r.stderr)
	}

	created := cmd("table", "create", "acme/events", "--shards", "2", "--async", "--sync-interval", "50ms", "--default-ttl", "1h")
	opts := created["table"].(map[string]any)["options"].(map[string]any)
	require.EqualValues(t, 2, opts["shards"])
	require.Equal(t, true, opts["async"])
	require.EqualValues(t, 50e6, opts["sync_interval"])
	require.EqualValues(t, 3600e9, opts["default_ttl"])

	r := tsctl(t, "", srv.args("table", "create", "acme/events")...)
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, r.stderr, "409")

	list := cmd("table", "list")
	names := map[string]bool{}
	for _, x := range list["tables"].([]any) {
		m := x.(map[string]any)
		names[m["namespace"].(string)+"/"+m["name"].(string)] = true
	}
	require.True(t, names["acme/events"], "%v", names)
	require.True(t, names["default/default"], "%v", names)
	require.Contains(t, ok(t, srv.args("table", "list")...).stdout, "acme/events")

	info := cmd("table", "info", "acme", "events")
	require.Len(t, info["shards"], 2)
	require.Contains(t, ok(t, srv.args("table", "info", "acme/events")...).stdout, "shard")

	set := cmd("table", "set", "acme/events", "--read-qps", "100", "--shard-burst", "7")
	opts = set["table"].(map[string]any)["options"].(map[string]any)
	require.EqualValues(t, 100, opts["read_qps"])
	require.EqualValues(t, 7, opts["shard_burst"])

	ro := cmd("table", "readonly", "acme/events", "on", "--shards", "1")
	require.Equal(t, []any{1.0}, ro["table"].(map[string]any)["read_only_shards"])
	ro = cmd("table", "readonly", "acme/events", "off")
	require.Empty(t, ro["table"].(map[string]any)["read_only_shards"])

	r = tsctl(t, "", srv.args("table", "drop", "acme/events")...)
	require.Equal(t, exitUsage, r.code, "drop wants --yes")
	cmd("table", "drop", "acme/events", "--yes")
	r = tsctl(t, "", srv.args("--output", "json", "table", "info", "acme/events")...)
	require.Equal(t, exitFailure, r.code)
	require.Contains(t, jsonDoc(t, r)["error"], "404")

	tn := cmd("tenant", "set", "acme", "--qps", "50")
	require.EqualValues(t, 50, tn["qps"])
	require.Equal(t, true, tn["own"])
	require.EqualValues(t, 50, cmd("tenant", "get", "acme")["qps"])
	require.Len(t, cmd("tenant", "list")["tenants"], 1)
	require.Contains(t, ok(t, srv.args("tenant", "get", "acme")...).stdout, "50 commands a second")
	tn = cmd("tenant", "set", "acme", "--default")
	require.Equal(t, false, tn["own"])
}

// Command line errors exit 2, other failures 1, and --output json writes
// a failure as a JSON document too.
func TestUsageAndFailures(t *testing.T) {
	cases := []struct {
		name string
		args []string
		code int
	}{
		{"bad output", []string{"--output", "yaml", "inspect"}, exitUsage},
		{"unknown flag", []string{"inspect", "--nope"}, exitUsage},
		{"stray argument", []string{"inspect", "extra"}, exitUsage},
		{"export without --out", []string{"export"}, exitUsage},
		{"restore without --from", []string{"restore"}, exitUsage},
		{"bad s3 location", []string{"verify", "--backup", "s3://bucket"}, exitUsage},
		{"tenant set without a limit", []string{"tenant", "set", "acme"}, exitUsage},
		{"no data directory", []string{"--data", filepath.Join(t.TempDir(), "absent"), "inspect"}, exitFailure},
		{"no server", []string{"--http", "127.0.0.1:1", "table", "list"}, exitFailure},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			r := tsctl(t, "", c.args...)
			require.Equal(t, c.code, r.code, "stderr: %s", r.stderr)
			require.Contains(t, r.stderr, "tsctl:")
			if c.code == exitFailure {
				r = tsctl(t, "", append([]string{"--output", "json"}, c.args...)...)
				doc := jsonDoc(t, r)
				require.Equal(t, false, doc["ok"])
				require.NotEmpty(t, doc["error"])
			}
		})
	}
}
