package matrixobject

import (
	"strconv"
	"strings"
)

// RangeKind is what an HTTP Range header asks for.
type RangeKind int

const (
	// RangeNone: no header, or one to ignore (bad syntax, several ranges,
	// another unit), as RFC 9110 allows and S3 does: the whole object.
	RangeNone RangeKind = iota
	// RangeOne: a single byte range.
	RangeOne
	// RangeUnsatisfiable: a well-formed range no object can satisfy
	// ("bytes=-0").
	RangeUnsatisfiable
)

// ParseRangeHeader parses an HTTP Range header value: one byte range,
// or RangeNone for what RFC 9110 lets a server ignore.
func ParseRangeHeader(h string) (Range, RangeKind) {
	h = strings.TrimSpace(h)
	if h == "" {
		return Range{}, RangeNone
	}
	unit, spec, ok := strings.Cut(h, "=")
	if !ok || !strings.EqualFold(strings.TrimSpace(unit), "bytes") || strings.Contains(spec, ",") {
		return Range{}, RangeNone
	}
	first, last, ok := strings.Cut(strings.TrimSpace(spec), "-")
	if !ok {
		return Range{}, RangeNone
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
			return Range{}, RangeNone
		}
		if n == 0 {
			return Range{}, RangeUnsatisfiable
		}
		return Range{Suffix: n}, RangeOne
	}
	start, ok := num(first)
	if !ok {
		return Range{}, RangeNone
	}
	if last == "" {
		return Range{Start: start, End: -1}, RangeOne
	}
	end, ok := num(last)
	if !ok || end < start {
		return Range{}, RangeNone
	}
	return Range{Start: start, End: end}, RangeOne
}
