package residenttier

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/internal/tiercrash"
)

var crashRounds = flag.Int("crash-rounds", 20, "SIGKILL rounds in TestCrashRecovery")

// crashConfig writes zstd blocks. Most rounds write without Sync (the
// default): the rename has completed when a write is acknowledged and the
// page cache survives a killed process, so nothing acknowledged may be lost
// then either. Every other reopen reads through mmap.
func crashConfig() tiercrash.Config {
	open := func(dir string, durable, mmap bool) (*Store, error) {
		return Open(context.Background(), Options{Dir: dir, Sync: durable, Mmap: mmap, Block: blockfmt.Options{Compression: blockfmt.CompressionZstd}})
	}
	return tiercrash.Config{
		EnvPrefix: "RESIDENTTIER",
		ChildTest: "TestCrashChild",
		Rounds:    *crashRounds,
		Durable:   func(round int) bool { return round%4 == 3 },
		OpenChild: func(dir string, durable bool) (tiercrash.Store, error) { return open(dir, durable, false) },
		Reopen: func(t *testing.T, dir string, round int) tiercrash.Store {
			s, err := open(dir, false, round%2 == 1)
			require.NoError(t, err)
			return s
		},
		Corrupt: func(s tiercrash.Store) int64 { return s.(*Store).Stats().Corrupt },
		Describe: func(s tiercrash.Store) string {
			st := s.(*Store).Stats()
			return fmt.Sprintf("%d blocks, %d leftover temp files removed", st.Entries, st.TempFilesRemoved)
		},
	}
}

// TestCrashChild is the child process of TestCrashRecovery.
func TestCrashChild(t *testing.T) { tiercrash.Child(t, crashConfig()) }

// TestCrashRecovery SIGKILLs a writing child at random moments, reopens the
// store after each kill and checks that no block is torn or damaged, every
// block carries the exact bytes of its version and every acknowledged write
// is there (or a later version).
func TestCrashRecovery(t *testing.T) { tiercrash.Run(t, crashConfig()) }
