package s3api

import (
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixobject"
)

// rangeKind is what a Range header asks for.
type rangeKind int

const (
	// rangeNone: no header, or one to ignore (bad syntax, several ranges,
	// another unit), as RFC 9110 allows and S3 does: the whole object.
	rangeNone rangeKind = iota
	// rangeOne: a single byte range.
	rangeOne
	// rangeUnsatisfiable: a well-formed range no object can satisfy
	// ("bytes=-0").
	rangeUnsatisfiable
)

// parseRange parses an HTTP Range header value.
func parseRange(h string) (matrixobject.Range, rangeKind) {
	h = strings.TrimSpace(h)
	if h == "" {
		return matrixobject.Range{}, rangeNone
	}
	unit, spec, ok := strings.Cut(h, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") || strings.Contains(spec, ",") {
		return matrixobject.Range{}, rangeNone
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return matrixobject.Range{}, rangeNone
	}
	first, last = strings.TrimSpace(first), strings.TrimSpace(last)
	num := func(s string) (int64, bool) {
		if s == "" || len(s) > 18 {
			return 0, false
		}
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
		}
		n, err := strconv.ParseInt(s, 10, 64)
		return n, err == nil
	}
	if first == "" {
		n, ok := num(last)
		if !ok {
			return matrixobject.Range{}, rangeNone
		}
		if n == 0 {
			return matrixobject.Range{}, rangeUnsatisfiable
		}
		return matrixobject.Range{Suffix: n}, rangeOne
	}
	start, ok := num(first)
	if !ok {
		return matrixobject.Range{}, rangeNone
	}
	if last == "" {
		return matrixobject.Range{Start: start, End: -1}, rangeOne
	}
	end, ok := num(last)
	if !ok || end < start {
		return matrixobject.Range{}, rangeNone
	}
	return matrixobject.Range{Start: start, End: end}, rangeOne
}

// resolveRange returns the offset and length a parsed Range header selects
// in size bytes, with the rules matrixobject applies to objects: an end
// past the end is cut to it, a suffix longer than size selects all of it,
// and a start at or past the end (or any range of nothing) is not
// satisfiable (ok false).
func resolveRange(r matrixobject.Range, kind rangeKind, size int64) (off, n int64, ok bool) {
	switch {
	case kind == rangeNone:
		return 0, size, true
	case kind == rangeUnsatisfiable || size == 0:
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
