package matrixcache

import (
	"testing"
	"unsafe"

	"github.com/stretchr/testify/require"
)

// An entry fits the 112-byte size class; a field added in the wrong place
// costs every entry 16 bytes.
func TestEntrySize(t *testing.T) {
	require.LessOrEqual(t, unsafe.Sizeof(entry{}), uintptr(112))
}
