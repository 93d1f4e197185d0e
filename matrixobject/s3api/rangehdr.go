package s3api

import (
	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// resolveRange returns the offset and length a parsed Range header selects
// in size bytes, with the rules matrixobject applies to objects: an end
// past the end is cut to it, a suffix longer than size selects all of it,
// and a start at or past the end (or any range of nothing) is not
// satisfiable (ok false).
func resolveRange(r matrixobject.Range, kind matrixobject.RangeKind, size int64) (off, n int64, ok bool) {
	switch {
	case kind == matrixobject.RangeNone:
		return 0, size, true
	case kind == matrixobject.RangeUnsatisfiable || size == 0:
		return 0, 0, false
	case r.Suffix > 0:
		n = min(r.Suffix, size)
		return size - n, n, true
	case r.Start >= size:
		return 0, 0, false
	}
	end := size - 1
	if r.End >= 0 {
		end = min(r.End, size-1)
	}
	return r.Start, end - r.Start + 1, true
}
