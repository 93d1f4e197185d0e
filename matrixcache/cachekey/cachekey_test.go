package cachekey_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
)

func TestKeyConstructorsKeepTheirExactBytes(t *testing.T) {
	tests := []struct {
		name string
		got  blockfmt.Key
		want blockfmt.Key
	}{
		{"string", cachekey.String(7, "user:1"), blockfmt.Key{Shard: 7, Record: "user:1", Namespace: "string", Selector: "value"}},
		{"hash", cachekey.Hash(1, "h", "field-a"), blockfmt.Key{Shard: 1, Record: "h", Namespace: "hash", Selector: "field-a"}},
		{"set members", cachekey.SetMembers(2, "s"), blockfmt.Key{Shard: 2, Record: "s", Namespace: "set", Selector: "members"}},
		{"feature query", cachekey.FeatureQuery(3, "f", 1000, 2000, 10), blockfmt.Key{Shard: 3, Record: "f", Namespace: "feature", Selector: "1000:2000:10"}},
		{"feature query default count", cachekey.FeatureQuery(3, "f", -5, 20, 0), blockfmt.Key{Shard: 3, Record: "f", Namespace: "feature", Selector: "-5:20:5000"}},
		{"page", cachekey.Page(4, 12, 4096, 512), blockfmt.Key{Shard: 4, Record: "segment-00000000000000000012", Namespace: "page", Selector: "4096:512"}},
		{"page max segment", cachekey.Page(0, 1<<64-1, 0, 0), blockfmt.Key{Shard: 0, Record: "segment-18446744073709551615", Namespace: "page", Selector: "0:0"}},
		{"page with slot", cachekey.PageWithSlot(4, 12, 0, 64, 9), blockfmt.Key{Shard: 4, Record: "segment-00000000000000000012", Namespace: "page", Selector: "slot-9:0:64"}},
		{"page with generation", cachekey.PageWithGeneration(4, 1, 8, 16, 3), blockfmt.Key{Shard: 4, Record: "segment-00000000000000000001", Namespace: "page", Selector: "gen-3:8:16"}},
		{"page with slot and generation", cachekey.PageWithSlotGeneration(4, 1, 8, 16, 2, 3), blockfmt.Key{Shard: 4, Record: "segment-00000000000000000001", Namespace: "page", Selector: "slot-2:gen-3:8:16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.got)
			require.Equal(t, 8+len(tt.want.Record)+len(tt.want.Namespace)+len(tt.want.Selector), tt.got.Size())
		})
	}
}
