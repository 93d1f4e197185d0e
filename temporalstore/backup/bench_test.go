package backup_test

import (
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

// loaded is an engine holding 64 MiB of incompressible values.
func loaded(b *testing.B) *temporalstore.Engine {
	b.Helper()
	e, err := local.Open(b.Context(), temporalstore.Options{Dir: b.TempDir(), DefaultTableOptions: temporalstore.TableOptions{Shards: 2, Async: true}})
	require.NoError(b, err)
	b.Cleanup(func() { e.Close() })
	v := make([]byte, 4096)
	for i := range 16 << 10 {
		rand.Read(v)
		_, err := e.Execute(b.Context(), temporalstore.Command{Kind: temporalstore.KindSet, Key: fmt.Appendf(nil, "k%d", i), Value: v})
		require.NoError(b, err)
	}
	return e
}

func BenchmarkRun(b *testing.B) {
	e := loaded(b)
	var bytes int64
	for b.Loop() {
		dst := filepath.Join(b.TempDir(), "b")
		m, err := backup.Run(b.Context(), backup.NewDir(dst), backup.Options{}, backup.Engine(e))
		require.NoError(b, err)
		bytes += m.Bytes
		b.StopTimer()
		os.RemoveAll(dst)
		b.StartTimer()
	}
	b.ReportMetric(float64(bytes)/1e6/b.Elapsed().Seconds(), "MB/s")
}

func BenchmarkRestore(b *testing.B) {
	e := loaded(b)
	src := filepath.Join(b.TempDir(), "b")
	m, err := backup.Run(b.Context(), backup.NewDir(src), backup.Options{}, backup.Engine(e))
	require.NoError(b, err)
	var bytes int64
	for b.Loop() {
		dst := filepath.Join(b.TempDir(), "r")
		_, err := backup.Restore(b.Context(), backup.NewDir(src), dst, backup.Options{})
		require.NoError(b, err)
		bytes += m.Bytes
		b.StopTimer()
		os.RemoveAll(dst)
		b.StartTimer()
	}
	b.ReportMetric(float64(bytes)/1e6/b.Elapsed().Seconds(), "MB/s")
}
