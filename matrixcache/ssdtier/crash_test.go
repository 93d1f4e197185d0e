package ssdtier

import (
	"context"
	"flag"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/internal/tiercrash"
)

var crashRounds = flag.Int("crash-rounds", 24, "SIGKILL rounds in TestCrashRecovery")

// crashConfig writes zstd blocks; every third round runs with NoSync, where
// a killed process must lose nothing either, as the page cache survives it.
func crashConfig() tiercrash.Config {
	open := func(dir string, durable bool) (*Store, error) {
		return Open(context.Background(), Options{Path: dir, NoSync: !durable, Block: blockfmt.Options{Compression: blockfmt.CompressionZstd}})
	}
	return tiercrash.Config{
		EnvPrefix: "SSDTIER",
		ChildTest: "TestCrashChild",
		Rounds:    *crashRounds,
		Durable:   func(round int) bool { return round%3 != 2 },
		OpenChild: func(dir string, durable bool) (tiercrash.Store, error) { return open(dir, durable) },
		Reopen: func(t *testing.T, dir string, _ int) tiercrash.Store {
			s, err := open(dir, true)
			require.NoError(t, err)
			return s
		},
		Corrupt: func(s tiercrash.Store) int64 { return s.(*Store).Stats().Corrupt },
		Describe: func(s tiercrash.Store) string {
			return fmt.Sprintf("%d blocks in the store", s.(*Store).Stats().Entries)
		},
	}
}

// TestCrashChild is the child process of TestCrashRecovery.
func TestCrashChild(t *testing.T) { tiercrash.Child(t, crashConfig()) }

// TestCrashRecovery SIGKILLs a writing child at random moments, reopens the
// store after each kill and checks that every block carries the exact bytes
// of its version and every acknowledged write is there (or a later version).
func TestCrashRecovery(t *testing.T) { tiercrash.Run(t, crashConfig()) }
