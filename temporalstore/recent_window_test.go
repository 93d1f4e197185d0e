package temporalstore

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/require"
)

// The recent-record window follows CacheBytes (a quarter of it a shard),
// up to RecentShardBytes, and is off with the cache.
func TestRecentWindowFollowsCacheBytes(t *testing.T) {
	for _, tc := range []struct {
		name  string
		cache int64
		want  int64
	}{
		{"default", 0, DefaultCacheBytes / 4},
		{"128 MiB", 128 << 20, 32 << 20},
		{"4 GiB: capped", 4 << 30, RecentShardBytes},
		{"cache off", Disabled, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := testOpen(t.Context(), Options{Dir: t.TempDir(), CacheBytes: tc.cache, Logger: slog.New(slog.DiscardHandler)})
			require.NoError(t, err)
			defer e.Close()
			require.Equal(t, tc.want, e.recentBytes())
		})
	}
}
