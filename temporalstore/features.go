package temporalstore

import (
	"cmp"
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// Feature series limits.
const (
	// MaxFeatureAppend is the most points a series may hold after an
	// append or replace, whatever the retention: a write past it is
	// refused whole (ErrSeriesTooLarge).
	MaxFeatureAppend = 100_000
)

// Row fields a filter may name, in protobuf field order.
var rowFields = []string{"gid", "action_type", "duration", "author_id"}

func filterPasses(f Filter, row *[4]uint64) bool {
	v := row[slices.Index(rowFields, f.Field)]
	switch f.Op {
	case FilterEqual:
		return v == f.Value
	case FilterNotEqual:
		return v != f.Value
	case FilterGreater:
		return v > f.Value
	case FilterGreaterOrEqual:
		return v >= f.Value
	case FilterLess:
		return v < f.Value
	}
	return v <= f.Value
}

// passes reports whether row passes every filter.
func passes(fs []Filter, row *[4]uint64) bool {
	for _, f := range fs {
		if !filterPasses(f, row) {
			return false
		}
	}
	return true
}

// decodeRow reads the four row fields of a protobuf-encoded value (varint
// fields 1..4; other fields skipped). ok is false when one is missing or
// the bytes do not decode.
func decodeRow(b []byte) (row [4]uint64, ok bool) {
	var seen uint8
	for len(b) > 0 {
		tag, n := uvarint(b)
		if n <= 0 {
			return row, false
		}
		b = b[n:]
		field, wire := tag>>3, tag&7
		switch wire {
		case 0: // varint
			v, n := uvarint(b)
			if n <= 0 {
				return row, false
			}
			b = b[n:]
			if field >= 1 && field <= 4 {
				row[field-1] = v
				seen |= 1 << (field - 1)
			}
		case 1: // 64-bit
			if len(b) < 8 {
				return row, false
			}
			b = b[8:]
		case 2: // length-delimited
			l, n := uvarint(b)
			if n <= 0 || l > uint64(len(b)-n) {
				return row, false
			}
			b = b[n+int(l):]
		case 5: // 32-bit
			if len(b) < 4 {
				return row, false
			}
			b = b[4:]
		default:
			return row, false
		}
	}
	return row, seen == 0xf
}

func uvarint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < len(b) && i < 10; i++ {
		v |= uint64(b[i]&0x7f) << (7 * i)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	return 0, 0
}

// EncodeRow is a row's protobuf encoding as KindFQueryFiltered reads it:
// varint fields 1 gid, 2 action_type, 3 duration, 4 author_id.
func EncodeRow(gid, actionType, duration, authorID uint64) []byte {
	var b []byte
	for i, v := range []uint64{gid, actionType, duration, authorID} {
		b = append(b, byte(i+1)<<3)
		for v >= 0x80 {
			b = append(b, byte(v)|0x80)
			v >>= 7
		}
		b = append(b, byte(v))
	}
	return b
}

var featureKinds = map[Kind]runner{
	KindFAppend:        runFAppend,
	KindFReplace:       runFReplace,
	KindFQuery:         featureRead(queryWindow),
	KindFQueryFiltered: featureRead(queryFiltered),
	KindFAgg:           featureRead(aggregateWindow),
	KindFDelete:        runFDelete,
}

func checkPoints(ps []Point) error {
	for _, p := range ps {
		if p.TS < 0 {
			return fmt.Errorf("%w: timestamp_ms must be an unsigned integer", ErrInvalid)
		}
	}
	return nil
}

// seriesRoom returns the points o holds, and ErrSeriesTooLarge when c's
// points would take it past MaxFeatureAppend.
func seriesRoom(o *object.Object, c *Command) (int, error) {
	n := 0
	if o != nil {
		n = o.Series.Len()
	}
	if n+len(c.Points) > MaxFeatureAppend {
		return n, fmt.Errorf("%w: %q holds %d points and %d more were sent", ErrSeriesTooLarge, c.Key, n, len(c.Points))
	}
	return n, nil
}

// seriesArgs encodes points as OpFUpsert's and OpFReplace's pairs.
func seriesArgs(args [][]byte, ps []Point) [][]byte {
	for _, p := range ps {
		args = append(args, shard.Varint(p.TS), p.Value)
	}
	return args
}

func runFAppend(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	if c.Policy == PolicyBlock {
		return Response{}, fmt.Errorf("%w: Invalid write policy", ErrInvalid)
	}
	if c.Policy > PolicyBlock {
		return Response{}, fmt.Errorf("%w: write policy %d", ErrInvalid, c.Policy)
	}
	if err := checkPoints(c.Points); err != nil {
		return Response{}, err
	}
	keep, age, err := e.retention(c)
	if err != nil {
		return Response{}, err
	}
	var r Response
	err = writeObj(ctx, s, c.Key, object.KindSeries, func(o *object.Object, v *shard.View) ([]command.Command, error) {
		n, err := seriesRoom(o, c)
		if err != nil {
			return nil, err
		}
		var write []Point
		switch c.Policy {
		case PolicyUpsert:
			write = c.Points
		default:
			seen := map[int64]bool{}
			for _, p := range c.Points {
				var has bool
				if o != nil {
					_, has = o.Series.Get(p.TS)
				}
				if c.Policy == PolicyInsertIfAbsent {
					if has || seen[p.TS] {
						continue
					}
					seen[p.TS] = true
				} else if !has {
					continue
				}
				write = append(write, p)
			}
		}
		trim, aged := ageTrim(o, c.Key, age, v.Now())
		// A trim changes the series too: the original counts it.
		if len(write) == 0 && n <= keep && !aged {
			return nil, nil
		}
		r.Int = 1
		cmds := []command.Command{{Op: shard.OpFUpsert, Key: c.Key, Args: seriesArgs([][]byte{shard.Uvarint(uint64(keep))}, write)}}
		return append(cmds, trim...), nil
	})
	return r, err
}

// retention is what a write of c keeps: its table's FeatureMaxSize, and
// its age limit (c's own MaxAge, else its table's FeatureMaxAge).
func (e *Engine) retention(c *Command) (keep int, age time.Duration, err error) {
	if c.MaxAge < 0 {
		return 0, 0, fmt.Errorf("%w: negative max age", ErrInvalid)
	}
	t, err := e.table(c)
	if err != nil {
		return 0, 0, err
	}
	return t.opts.FeatureMaxSize, cmp.Or(c.MaxAge, t.opts.FeatureMaxAge), nil
}

// ageTrim is the command that drops key's points older than now − age,
// and whether o holds any (the write then changes the series).
func ageTrim(o *object.Object, key []byte, age time.Duration, now time.Time) ([]command.Command, bool) {
	if age <= 0 {
		return nil, false
	}
	cut := now.Add(-age).UnixMilli()
	aged := o != nil && o.Series.Len() > 0
	if aged {
		ts, _ := o.Series.At(0)
		aged = ts < cut
	}
	return []command.Command{{Op: shard.OpFTrimBefore, Key: key, Args: [][]byte{shard.Varint(cut)}}}, aged
}

func runFReplace(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	if err := checkPoints(c.Points); err != nil {
		return Response{}, err
	}
	keep, age, err := e.retention(c)
	if err != nil {
		return Response{}, err
	}
	err = writeObj(ctx, s, c.Key, object.KindSeries, func(o *object.Object, v *shard.View) ([]command.Command, error) {
		if _, err := seriesRoom(o, c); err != nil {
			return nil, err
		}
		if o == nil && len(c.Points) == 0 {
			return nil, nil
		}
		args := [][]byte{shard.Uvarint(uint64(keep)), shard.Varint(c.Start), shard.Varint(c.End)}
		trim, _ := ageTrim(o, c.Key, age, v.Now())
		return append([]command.Command{{Op: shard.OpFReplace, Key: c.Key, Args: seriesArgs(args, c.Points)}}, trim...), nil
	})
	return Response{}, err
}

func runFDelete(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	var r Response
	err := writeObj(ctx, s, c.Key, object.KindSeries, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
		if o == nil {
			return nil, nil
		}
		r.Int = 1
		return []command.Command{{Op: shard.OpDelete, Key: c.Key}}, nil
	})
	return r, err
}

// featureEnv is what a feature read needs besides its command: the
// table's options and the engine's clock.
type featureEnv struct {
	opts *TableOptions
	now  time.Time
}

func featureRead(fn func(o *object.Object, c *Command, env featureEnv, limit int, r *Response) error) runner {
	return func(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
		if c.HasCount && c.Count < 0 {
			return Response{}, fmt.Errorf("%w: count must be an unsigned integer", ErrInvalid)
		}
		t, err := e.table(c)
		if err != nil {
			return Response{}, err
		}
		limit := t.opts.FeatureMaxSize
		if c.HasCount {
			limit = min(c.Count, limit)
		}
		if age := t.opts.FeatureMaxAge; age > 0 {
			// Points past the table's age are gone for reads, swept or
			// not.
			cc := *c
			cc.Start = max(c.Start, e.opts.Now().Add(-age).UnixMilli())
			c = &cc
		}
		r := Response{Points: []Point{}}
		err = readObj(ctx, s, c.Key, object.KindSeries, func(o *object.Object, _ *shard.View) error {
			return fn(o, c, featureEnv{&t.opts, e.opts.Now()}, limit, &r)
		})
		if err != nil {
			return Response{}, err
		}
		return r, nil
	}
}

// window returns the index range of the first limit points of c's window.
func window(o *object.Object, c *Command, limit int) (lo, hi int) {
	if o == nil {
		return 0, 0
	}
	lo, hi = o.Series.Window(c.Start, c.End)
	return lo, min(hi, lo+limit)
}

func queryWindow(o *object.Object, c *Command, _ featureEnv, limit int, r *Response) error {
	lo, hi := window(o, c, limit)
	if lo == hi {
		return nil
	}
	// One allocation for the points and one for all their values, or
	// none into the caller's buffer when it has the room.
	n := 0
	for i := lo; i < hi; i++ {
		_, v := o.Series.At(i)
		n += len(v)
	}
	into := cmp.Or(c.Into, &PointBuffer{})
	points, buf := into.Reuse()
	buf = slices.Grow(buf, n)
	r.Points = slices.Grow(points, hi-lo)
	for i := lo; i < hi; i++ {
		ts, v := o.Series.At(i)
		at := len(buf)
		buf = append(buf, v...)
		r.Points = append(r.Points, Point{TS: ts, Value: buf[at:len(buf):len(buf)]})
	}
	into.Keep(r.Points, buf)
	return nil
}

// checkFilters refuses a filter of an unknown field or operator.
func checkFilters(fs []Filter) error {
	for _, f := range fs {
		if slices.Index(rowFields, f.Field) < 0 {
			return fmt.Errorf("%w: unknown filter field %q (gid, action_type, duration, author_id)", ErrInvalid, f.Field)
		}
		if f.Op > FilterLessOrEqual {
			return fmt.Errorf("%w: filter operator %d", ErrInvalid, f.Op)
		}
	}
	return nil
}

func queryFiltered(o *object.Object, c *Command, _ featureEnv, limit int, r *Response) error {
	if err := checkFilters(c.Filters); err != nil {
		return err
	}
	lo, hi := window(o, c, limit)
	for i := lo; i < hi; i++ {
		ts, v := o.Series.At(i)
		row, ok := decodeRow(v)
		if !ok {
			continue
		}
		if passes(c.Filters, &row) {
			r.Points = append(r.Points, Point{TS: ts, Value: cp(v)})
		}
	}
	return nil
}

// aggregateWindow follows the original: values are decimal i64 after
// leading ASCII whitespace; sum, avg (truncating, 0 when none), min and
// max (0 when none) skip the others; first and last take the window's
// first and last value (0 when not a number); count (also events, or an
// empty name) counts every point. An unknown name is an error, where the
// original silently counted.
func aggregateWindow(o *object.Object, c *Command, env featureEnv, limit int, r *Response) error {
	r.Points = nil
	agg := strings.ToLower(c.Aggregator)
	if agg == "" {
		agg = "count"
	}
	if len(c.Aggregators) > 0 || !IsPlainAggregator(agg) {
		// Several aggregators, or one beyond the original's: one pass.
		names := c.Aggregators
		if len(names) == 0 {
			names = []string{c.Aggregator}
		}
		specs := make([]aggSpec, len(names))
		for i, n := range names {
			var err error
			if specs[i], err = parseAgg(n); err != nil {
				return err
			}
		}
		var lo, hi int
		if o != nil {
			lo, hi = window(o, c, limit)
		}
		all, err := aggregateAll(o, lo, hi, specs, env.now)
		if err != nil {
			return err
		}
		r.Aggregates = all
		if len(c.Aggregators) == 0 {
			r.Int = all[0].Int
			if all[0].IsFloat {
				r.Float, r.Int = all[0].Float, int64(all[0].Float)
			}
		}
		return nil
	}
	lo, hi := window(o, c, limit)
	if lo == hi {
		return nil
	}
	num := func(i int) int64 {
		_, v := o.Series.At(i)
		n, _ := object.ParseValue(v)
		return n
	}
	switch agg {
	case "count", "events":
		r.Int = int64(hi - lo)
		return nil
	case "first":
		r.Int = num(lo)
		return nil
	case "last":
		r.Int = num(hi - 1)
		return nil
	}
	var a object.Agg
	if _, whole := o.Series.Window(c.Start, c.End); whole == hi && !env.opts.NoRollup && (hi-lo >= rollupMinPoints || o.Series.HasRollup()) {
		// The whole window: the rollup ladder answers it, exactly.
		a = o.Series.Aggregate(c.Start, c.End)
	} else {
		a = o.Series.ScanPoints(lo, hi)
	}
	switch agg {
	case "sum":
		r.Int = a.Sum
	case "avg", "average":
		if a.Numeric > 0 {
			r.Int = a.Sum / a.Numeric
		}
	case "min":
		r.Int = a.Min
	case "max":
		r.Int = a.Max
	}
	return nil
}

// rollupMinPoints is the window, in points, from which an aggregate
// builds a series' rollup ladder rather than scanning (a series that has
// one uses it for every whole-window aggregate).
const rollupMinPoints = 256
