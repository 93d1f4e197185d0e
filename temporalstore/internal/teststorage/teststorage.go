package teststorage

import (
	"context"
	"os"
	"sync"
	"testing"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
)

// EnvVar selects the storage: "mem" for the in-memory one.
const EnvVar = "TEMPORALSTORE_TEST_STORAGE"

// Mem reports whether the tests run on the in-memory storage.
func Mem() bool { return os.Getenv(EnvVar) == "mem" }

// memLogs holds the in-memory logs of every test of a process, by
// directory, so that a test reopening a shard finds its records.
var memLogs = sync.OnceValue(storage.NewMemLogs)

// OpenLog is the logs' OpenLogFunc.
func OpenLog() storage.OpenLogFunc {
	if Mem() {
		return memLogs().OpenLog
	}
	return disk.OpenLog
}

// Cache is a record cache of capacity bytes.
func Cache(tb testing.TB, capacity int64) storage.RecordCache {
	tb.Helper()
	c, err := NewCache(capacity)
	if err != nil {
		tb.Fatal(err)
	}
	return c
}

// NewCache is a record cache of capacity bytes: a MemCache, or a
// matrixcache of one DRAM tier (which holds nothing to close).
func NewCache(capacity int64) (storage.RecordCache, error) {
	if Mem() {
		return storage.NewMemCache(capacity), nil
	}
	c, err := matrixcache.New(context.Background(), matrixcache.Options{DRAMCapacityBytes: capacity})
	if err != nil {
		return nil, err
	}
	return disk.NewRecordCache(c), nil
}

// SkipOnMem skips a test that needs files: a crash of a real process, or
// sizes on disk.
func SkipOnMem(tb testing.TB, why string) {
	tb.Helper()
	if Mem() {
		tb.Skip("needs the disk storage: " + why)
	}
}
