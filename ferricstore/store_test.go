package ferricstore

import (
	"bytes"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// A directory reopened with another shard count keeps the count it was
// made with, so every key still routes to the shard that logged it.
func TestOpenKeepsShardCount(t *testing.T) {
	cases := []struct {
		name   string
		shards int  // asked for on reopen
		warned bool // a warning names the count kept
	}{
		{name: "fewer", shards: 2, warned: true},
		{name: "more", shards: 8, warned: true},
		{name: "same", shards: 4},
		{name: "default", shards: 0},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			ctx := t.Context()
			// Snapshots every few records: the reopened shards load some
			// of their state from them and replay the rest. Async spares
			// the fsyncs; Close writes everything out all the same.
			st, err := Open(Options{Dir: dir, Shards: 4, SnapshotEvery: 7, Async: true})
			require.NoError(t, err)
			require.Equal(t, 4, st.Shards())
			want := map[string][]stream.ID{}
			used := map[int]bool{}
			for k := range 40 {
				key := fmt.Sprint("stream-", k)
				used[int(Slot(key))%4] = true
				for i := range 3 {
					id, _, err := st.Streams().Add(ctx, key, AddArgs{ID: fmt.Sprintf("%d-1", i+1), Fields: kv("k", key, "i", fmt.Sprint(i))})
					require.NoError(t, err)
					want[key] = append(want[key], id)
				}
			}
			require.Len(t, used, 4, "the keys cover every shard")
			require.NoError(t, st.Close())
			snaps, err := filepath.Glob(filepath.Join(dir, "snapshots", "shard-*", "snapshot-*"))
			require.NoError(t, err)
			require.NotEmpty(t, snaps)

			var logs bytes.Buffer
			st, err = Open(Options{Dir: dir, Shards: tc.shards, SnapshotEvery: 7, Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			require.NoError(t, err)
			defer st.Close()
			require.Equal(t, 4, st.Shards())
			if tc.warned {
				require.Contains(t, logs.String(), "the data directory keeps its shard count")
				require.Contains(t, logs.String(), fmt.Sprintf("shards=4 requested=%d", tc.shards))
			} else {
				require.NotContains(t, logs.String(), "shard count")
			}
			for key, ids := range want {
				es, err := st.Streams().Range(ctx, key, stream.ID{}, stream.MaxID, 0, false)
				require.NoError(t, err)
				require.Len(t, es, len(ids), key)
				for i, e := range es {
					require.Equal(t, ids[i], e.ID, key)
					require.Equal(t, kv("k", key, "i", fmt.Sprint(i)), e.Fields, key)
				}
			}
			dirs, err := filepath.Glob(filepath.Join(dir, "shard-*"))
			require.NoError(t, err)
			require.Len(t, dirs, 4, "no shard directory added")
		})
	}
}

// The shard count comes from the shard-NNN directories: a new directory
// takes Options.Shards, other entries are not counted, and a gap or a
// snapshot without its log is refused.
func TestOpenShardDirectories(t *testing.T) {
	cases := []struct {
		name   string
		dirs   []string // made before Open
		files  []string
		shards int // asked for
		want   int
		err    error
	}{
		{name: "new", shards: 3, want: 3},
		{name: "new default", want: DefaultShards},
		{name: "existing", dirs: []string{"shard-000", "shard-001", "shard-002", "snapshots/shard-001"}, shards: 5, want: 3},
		{name: "not shards", dirs: []string{"shard-000", "shard-x", "shard-1", "shard-0001", "shard--01", "other"}, files: []string{"shard-001"}, shards: 2, want: 1},
		{name: "only other entries", dirs: []string{"snapshots", "shard-x"}, shards: 2, want: 2},
		{name: "gap", dirs: []string{"shard-000", "shard-002"}, err: ErrMissingShard},
		{name: "first missing", dirs: []string{"shard-001"}, err: ErrMissingShard},
		{name: "snapshot without log", dirs: []string{"shard-000", "snapshots/shard-000", "snapshots/shard-001"}, err: ErrMissingShard},
		{name: "snapshot of a new directory", dirs: []string{"snapshots/shard-000"}, err: ErrMissingShard},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "data")
			for _, d := range tc.dirs {
				require.NoError(t, os.MkdirAll(filepath.Join(dir, d), 0o755))
			}
			for _, f := range tc.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, f), nil, 0o644))
			}
			st, err := Open(Options{Dir: dir, Shards: tc.shards})
			if tc.err != nil {
				require.ErrorIs(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			defer st.Close()
			require.Equal(t, tc.want, st.Shards())
		})
	}
}
