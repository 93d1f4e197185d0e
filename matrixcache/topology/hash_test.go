package topology

import (
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// The hash is part of data placement: these values must never change.
func TestHashIsStable(t *testing.T) {
	tests := []struct {
		key  string
		want uint64
	}{
		// Published XXH64 (seed 0) vectors.
		{"", 0xef46db3751d8e999},
		{"abc", 0x44bc2cf5ad770999},
		// Keys of our own, pinned.
		{"user:42", 0xdc1fea7da8d2d1c2},
		{"block/7/0001", 0x41fada4b4cd39746},
	}
	for _, tt := range tests {
		t.Run(strconv.Quote(tt.key), func(t *testing.T) {
			require.Equal(t, tt.want, Hash([]byte(tt.key)))
			require.Equal(t, tt.want, HashString(tt.key))
		})
	}
}

func TestPointHashIsStable(t *testing.T) {
	tests := []struct {
		id   NodeID
		i    int
		want uint64
	}{
		{"cache-a", 0, 0x1222d129411d4d23},
		{"cache-a", 1, 0x225cc3fae8fcf4da},
		{"cache-b", 159, 0xd57a9e0b6be164fb},
		{"z", 12345, 0xa724822303eb3566},
	}
	for _, tt := range tests {
		t.Run(string(tt.id)+"#"+strconv.Itoa(tt.i), func(t *testing.T) {
			require.Equal(t, tt.want, PointHash(tt.id, tt.i))
			// The point hash is the key hash of the label "id#i".
			require.Equal(t, HashString(string(tt.id)+"#"+strconv.Itoa(tt.i)), PointHash(tt.id, tt.i))
		})
	}
}

func TestPointHashLongID(t *testing.T) {
	// IDs longer than the scratch buffer hash the same way.
	id := NodeID(string(make([]byte, 300)))
	require.Equal(t, HashString(string(id)+"#7"), PointHash(id, 7))
}
