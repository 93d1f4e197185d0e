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
