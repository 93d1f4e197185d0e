package disk_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/storagetest"
)

func TestLog(t *testing.T) { storagetest.Log(t, disk.OpenLog) }

func TestRecordCache(t *testing.T) {
	storagetest.RecordCache(t, func(n int64) storage.RecordCache {
		c, err := matrixcache.New(t.Context(), matrixcache.Options{DRAMCapacityBytes: n})
		require.NoError(t, err)
		t.Cleanup(func() { c.Close() })
		return disk.NewRecordCache(c)
	})
}

// The log's files are what DiskBytes counts.
func TestDiskBytes(t *testing.T) {
	l, err := disk.OpenLog(t.Context(), storage.LogOptions{Dir: t.TempDir(), SegmentBytes: 1 << 20})
	require.NoError(t, err)
	defer l.Close()
	require.GreaterOrEqual(t, l.Stats().DiskBytes, int64(1<<20), "a preallocated segment")
}
