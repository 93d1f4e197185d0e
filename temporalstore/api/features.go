package api

import (
	"strings"
	"unsafe"
)

// Feature series kinds. A series is one key's points, each a timestamp
// (Unix ms) and a value, with unique timestamps, kept in ascending order;
// TYPE names it "series". Windows are Start..End inclusive (Start > End:
// empty) and read ascending, earliest first.
const (
	// KindFAppend upserts Points, in order (the last of a timestamp wins),
	// under Policy; Response.Int is 1 when anything changed, a retention
	// trim included. The table's FeatureMaxSize is then applied: the
	// oldest points go while more remain (FAPPEND, FAPPENDPOLICY).
	KindFAppend Kind = "fappend"
	// KindFQuery returns the window's points in Points: the first Count
	// of them with HasCount, at most the table's FeatureMaxSize (FQUERY).
	KindFQuery Kind = "fquery"
	// KindFQueryFiltered is KindFQuery keeping the points whose value,
	// decoded as protobuf varint fields 1 gid, 2 action_type, 3
	// duration, 4 author_id, passes every one of Filters. Count limits the
	// points scanned, before filtering, as in the original; a value
	// lacking a field or not decoding is dropped (FQUERYFILTER).
	KindFQueryFiltered Kind = "fqueryfiltered"
	// KindFReplace removes the points of Start..End, then upserts Points
	// (which may lie outside the window), then trims (FREPLACE).
	KindFReplace Kind = "freplace"
	// KindFDelete removes the series; Response.Int is 1 when there was
	// one (FDEL).
	KindFDelete Kind = "fdel"
	// KindFAgg aggregates the window's values with Aggregator (sum, avg,
	// min, max, first, last, count) into Response.Int, over the first
	// Count points with HasCount (FAGG).
	KindFAgg Kind = "fagg"
)

// Point is one point of a feature series.
type Point struct {
	// TS is the point's time, in Unix milliseconds (not negative).
	TS    int64
	Value []byte
}

// WritePolicy says which points of a KindFAppend are written.
type WritePolicy uint8

// Write policies.
const (
	// PolicyUpsert writes every point (the default).
	PolicyUpsert WritePolicy = iota
	// PolicyInsertIfAbsent writes a point only where its timestamp has
	// none; within a request the first of a timestamp wins.
	PolicyInsertIfAbsent
	// PolicyReplaceExisting writes a point only over an existing one.
	PolicyReplaceExisting
	// PolicyBlock refuses the write (ErrInvalid), as the original does.
	PolicyBlock
)

// ParseWritePolicy reads a policy by the original's names and aliases:
// upsert; insert_if_absent, first, nx; replace_existing, update, xx;
// block. Case does not matter.
func ParseWritePolicy(s string) (WritePolicy, bool) {
	switch strings.ToLower(s) {
	case "upsert":
		return PolicyUpsert, true
	case "insert_if_absent", "first", "nx":
		return PolicyInsertIfAbsent, true
	case "replace_existing", "update", "xx":
		return PolicyReplaceExisting, true
	case "block":
		return PolicyBlock, true
	}
	return 0, false
}

// FilterOp compares a row field with a filter's value.
type FilterOp uint8

// Filter operators.
const (
	FilterEqual FilterOp = iota
	FilterNotEqual
	FilterGreater
	FilterGreaterOrEqual
	FilterLess
	FilterLessOrEqual
)

// ParseFilterOp reads an operator: = == eq, != <> ne, > gt, >= ge gte,
// < lt, <= le lte, or the original's names (equal, not_equal,
// greater_than, greater_or_equal, less_than, less_or_equal).
func ParseFilterOp(s string) (FilterOp, bool) {
	switch strings.ToLower(s) {
	case "=", "==", "eq", "equal":
		return FilterEqual, true
	case "!=", "<>", "ne", "not_equal":
		return FilterNotEqual, true
	case ">", "gt", "greater_than":
		return FilterGreater, true
	case ">=", "ge", "gte", "greater_or_equal":
		return FilterGreaterOrEqual, true
	case "<", "lt", "less_than":
		return FilterLess, true
	case "<=", "le", "lte", "less_or_equal":
		return FilterLessOrEqual, true
	}
	return 0, false
}

// Filter keeps the rows whose Field compares with Value as Op says.
type Filter struct {
	Field string
	Op    FilterOp
	Value uint64
}

// PointBuffer is memory a caller lends window reads through Command.Into,
// reused from read to read: a read's points and their values live in it
// until the next read into it. Its zero value is ready; it is not safe for
// concurrent reads.
type PointBuffer struct {
	points []Point
	values []byte
}

// Shrink lets the buffer's memory go when it holds more than maxBytes, so
// that one large read does not keep its size for every read after.
func (b *PointBuffer) Shrink(maxBytes int) {
	if cap(b.values)+cap(b.points)*int(unsafe.Sizeof(Point{})) > maxBytes {
		*b = PointBuffer{}
	}
}

// Reuse returns the buffer's memory emptied, for a read to append its
// points and their values to.
func (b *PointBuffer) Reuse() ([]Point, []byte) { return b.points[:0], b.values[:0] }

// Keep holds what a read appended, so that the next read reuses it.
func (b *PointBuffer) Keep(points []Point, values []byte) { b.points, b.values = points, values }

// IsPlainAggregator reports whether name is one of the original's
// aggregators, whose result is Response.Int alone.
func IsPlainAggregator(name string) bool { return name == "" || aggregators[strings.ToLower(name)] }

// Aggregators of KindFAgg.
var aggregators = map[string]bool{
	"sum": true, "avg": true, "average": true, "min": true, "max": true,
	"first": true, "last": true, "count": true, "events": true,
}
