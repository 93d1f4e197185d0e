package matrixcache

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// An entry is one cache line: a field more costs every hit a second cache
// miss and every entry 16 bytes or more.
func TestEntrySize(t *testing.T) {
	require.Equal(t, uintptr(64), unsafe.Sizeof(entry{}))
}

// The fields every hit reads sit on their own lines: the Cache's first
// line, and the shard's line after its read rings.
func TestHitPathFieldsHaveTheirLines(t *testing.T) {
	var c Cache
	require.LessOrEqual(t, unsafe.Offsetof(c.onEvict)+unsafe.Sizeof(c.onEvict), uintptr(64))
	require.GreaterOrEqual(t, unsafe.Offsetof(c.opts), uintptr(64))
	var s shard
	require.Zero(t, unsafe.Offsetof(s.m))
	require.Equal(t, uintptr(64), unsafe.Offsetof(s.reads), "the read-mostly line, then the rings")
	require.Zero(t, unsafe.Sizeof(readStripe{})%64, "each ring on lines of its own")
	require.GreaterOrEqual(t, unsafe.Offsetof(s.hits)-unsafe.Offsetof(s.m), uintptr(64))
}
