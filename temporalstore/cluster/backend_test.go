package cluster

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixobject"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

func TestResolve(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(t.TempDir(), "file")
	require.NoError(t, os.WriteFile(file, nil, 0o644))
	ob, err := matrixobject.Open(t.TempDir(), matrixobject.Options{})
	require.NoError(t, err)
	defer ob.Close()
	obj, err := sharedlog.NewObjectStore(t.Context(), ob, "logs")
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		o        BackendOptions
		want     string
		reason   string
		failWith string
	}{
		{name: "nothing", o: BackendOptions{}, want: BackendLocal, reason: "no cluster peers"},
		{name: "cluster", o: BackendOptions{Cluster: true}, want: BackendRaft, reason: "no shared filesystem directory configured"},
		{name: "shared dir", o: BackendOptions{SharedDir: dir, Cluster: true, Member: "1"}, want: BackendSharedFS, reason: "no object store configured"},
		{name: "unusable shared dir", o: BackendOptions{SharedDir: filepath.Join(file, "x"), Cluster: true}, want: BackendRaft, reason: "cannot be used"},
		{name: "raft asked, shared dir there", o: BackendOptions{Want: BackendRaft, SharedDir: dir, Cluster: true}, want: BackendRaft},
		{name: "shared-fs asked, none", o: BackendOptions{Want: BackendSharedFS, Cluster: true}, failWith: "no shared filesystem directory"},
		{name: "object asked, none", o: BackendOptions{Want: BackendObject}, failWith: "no object store"},
		{name: "raft asked, single node", o: BackendOptions{Want: BackendRaft}, failWith: "no cluster peers"},
		{name: "unknown", o: BackendOptions{Want: "tape"}, failWith: "unknown backend"},
		{name: "object store", o: BackendOptions{Object: obj, SharedDir: dir, Cluster: true, Member: "1"}, want: BackendObject, reason: "answered its probe"},
		{name: "object store unreachable", o: BackendOptions{ObjectErr: errors.New("connection refused"), SharedDir: dir, Cluster: true, Member: "1"}, want: BackendSharedFS, reason: "cannot be reached: connection refused"},
		{name: "object asked, unreachable", o: BackendOptions{Want: BackendObject, ObjectErr: errors.New("connection refused")}, failWith: "connection refused"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			b, err := Resolve(t.Context(), tc.o)
			if tc.failWith != "" {
				require.ErrorIs(t, err, ErrBackend)
				require.ErrorContains(t, err, tc.failWith)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, b.Name)
			require.Contains(t, b.Reason, tc.reason)
			require.Equal(t, tc.want == BackendSharedFS || tc.want == BackendObject, b.Store != nil)
		})
	}
	entries, err := os.ReadDir(filepath.Join(dir, "probe"))
	require.NoError(t, err)
	require.Empty(t, entries, "the probe cleans up")
}
