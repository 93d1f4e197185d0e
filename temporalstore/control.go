package temporalstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// ControlDedupWindow is how long a KindCSetAndGet request id is
// remembered, as the original's 300,000 ms.
const ControlDedupWindow = 5 * time.Minute

// FamilyKey is the key a family's control state of key is kept under, as
// the original names it: control_state:<family>:<key>.
func FamilyKey(family string, key []byte) []byte {
	const prefix = "control_state:"
	b := make([]byte, 0, len(prefix)+len(family)+1+len(key))
	b = append(append(append(b, prefix...), family...), ':')
	return append(b, key...)
}

var controlKinds = map[Kind]runner{
	KindCIncr:   runCIncr,
	KindCChange: runCChange,
	KindCCount: controlRead(func(o *object.Object, c *Command, r *Response) error {
		var err error
		r.Int, err = controlAgg(o, c.Start, c.End, "sum", 0, 0)
		return err
	}),
	KindCQuery:       controlRead(controlQuery),
	KindCDetail:      controlRead(controlDetail),
	KindCSelection:   controlRead(controlSelection),
	KindCSetAndGet:   runCSetAndGet,
	KindCFamilyQuery: controlRead(controlQuery),
	KindCSelect:      runCSelect,
	KindCTake:        runCTake,
	KindCPace:        runCPace,
	KindCDebug:       controlRead(controlDebug),
}

// controlQuery aggregates c's window with c's aggregator.
func controlQuery(o *object.Object, c *Command, r *Response) error {
	var err error
	r.Int, err = controlAgg(o, c.Start, c.End, c.Aggregator, 0, 0)
	return err
}

// familyKinds address a family's key: Execute routes them by it.
var familyKinds = map[Kind]bool{KindCSetAndGet: true, KindCFamilyQuery: true}

// bucket is at rounded down to precisionMs (none when 0).
func bucket(at, precisionMs int64) int64 {
	if precisionMs > 0 {
		return at - at%precisionMs
	}
	return at
}

func checkControl(c *Command) error {
	switch {
	case c.At < 0:
		return fmt.Errorf("%w: timestamp_ms must be an unsigned integer", ErrInvalid)
	case c.PrecisionMs < 0:
		return fmt.Errorf("%w: precision_ms must be an unsigned integer", ErrInvalid)
	}
	return nil
}

// slide is the OpExpireAt that sets key's expiry to now + ttl.
func slide(key []byte, now time.Time, ttl time.Duration) command.Command {
	return command.Command{Op: shard.OpExpireAt, Key: key, Expiry: now.Add(ttl).UnixMilli()}
}

func controlWrite(ctx context.Context, s *shard.Shard, c *Command, fn func(o *object.Object, v *shard.View) ([]command.Command, error)) error {
	if err := checkControl(c); err != nil {
		return err
	}
	return writeObj(ctx, s, c.Key, object.KindControl, func(o *object.Object, v *shard.View) ([]command.Command, error) {
		cmds, err := fn(o, v)
		if err != nil {
			return nil, err
		}
		return withSlide(cmds, c, v.Now()), nil
	})
}

// withSlide appends to cmds, a write of c at now, the sliding TTL c asks
// for (none when cmds write nothing).
func withSlide(cmds []command.Command, c *Command, now time.Time) []command.Command {
	if len(cmds) > 0 && c.TTL > 0 {
		cmds = append(cmds, slide(c.Key, now, c.TTL))
	}
	return cmds
}

func runCIncr(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	return Response{}, controlWrite(ctx, s, c, func(*object.Object, *shard.View) ([]command.Command, error) {
		return []command.Command{{Op: shard.OpCAdd, Key: c.Key, Args: [][]byte{shard.Varint(bucket(c.At, c.PrecisionMs)), shard.Varint(c.Delta)}}}, nil
	})
}

func runCChange(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	return Response{}, controlWrite(ctx, s, c, func(*object.Object, *shard.View) ([]command.Command, error) {
		return []command.Command{{Op: shard.OpCChange, Key: c.Key, Args: [][]byte{shard.Varint(bucket(c.At, c.PrecisionMs)), c.Value}}}, nil
	})
}

func runCSetAndGet(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if err := checkControl(c); err != nil {
		return Response{}, err
	}
	// The function outlives this frame (the shard's combiner queues it),
	// so what it works with is on the heap: one pooled csetCall holds all
	// of it. MutateKey returns once the function has run and its commands
	// are applied (which copies their arguments), so nothing refers to the
	// call afterwards.
	call := csetCalls.Get().(*csetCall)
	call.c = c
	err := s.MutateKey(ctx, c.Key, call.fn)
	agg := call.agg
	*call = csetCall{fn: call.fn}
	csetCalls.Put(call)
	return Response{Int: agg}, err
}

// csetCall is one KindCSetAndGet being run: its command, the aggregate it
// reads, and the commands it logs with their arguments.
type csetCall struct {
	c *Command
	// fn is mutate bound to this call, made once per pooled call.
	fn   shard.MutateFunc
	agg  int64
	cmds [2]command.Command
	args [4][]byte
	nums [3 * binary.MaxVarintLen64]byte
}

var csetCalls = sync.Pool{New: func() any {
	call := new(csetCall)
	call.fn = call.mutate
	return call
}}

// mutate adds the event to its bucket, unless its request id was seen
// within ControlDedupWindow, and reads the aggregate of the window with it.
func (call *csetCall) mutate(v *shard.View) ([]command.Command, error) {
	c := call.c
	o, err := objOf(v, c.Key, object.KindControl)
	if err != nil {
		return nil, err
	}
	b := bucket(c.At, c.PrecisionMs)
	now := v.Now()
	dup := c.RequestID != "" && o != nil && o.Control.Seen(c.RequestID, now.UnixMilli())
	delta := c.Delta
	if dup {
		delta = 0
	}
	if c.Start != 0 || c.End != 0 {
		if call.agg, err = controlAgg(o, c.Start, c.End, c.Aggregator, b, delta); err != nil {
			return nil, err
		}
	}
	if dup {
		return nil, nil
	}
	nums := call.nums[:0]
	varint := func(n int64) []byte {
		start := len(nums)
		nums = binary.AppendVarint(nums, n)
		return nums[start:len(nums):len(nums)]
	}
	args := append(call.args[:0], varint(b), varint(c.Delta))
	if c.RequestID != "" {
		args = append(args, []byte(c.RequestID), varint(now.UnixMilli()+ControlDedupWindow.Milliseconds()))
	}
	return withSlide(append(call.cmds[:0], command.Command{Op: shard.OpCAdd, Key: c.Key, Args: args}), c, now), nil
}

func runCSelect(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	at := c.At
	if at == 0 {
		at = e.opts.Now().UnixMilli()
	}
	last := "f"
	if c.SelectLast {
		last = "l"
	}
	return Response{}, controlWrite(ctx, s, c, func(*object.Object, *shard.View) ([]command.Command, error) {
		return []command.Command{{Op: shard.OpCSelect, Key: c.Key, Args: [][]byte{c.Value, shard.Varint(at), []byte(last)}}}, nil
	})
}

func runCTake(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	if c.Window <= 0 || c.Limit < 0 || c.Delta < 0 {
		return Response{}, fmt.Errorf("%w: a quota needs a positive window, and a limit and amount not negative", ErrInvalid)
	}
	var r Response
	err := controlWrite(ctx, s, c, func(o *object.Object, v *shard.View) ([]command.Command, error) {
		at := c.At
		if at == 0 {
			at = v.Now().UnixMilli()
		}
		b := bucket(at, c.PrecisionMs)
		start := at - c.Window.Milliseconds() + 1
		var sum int64
		var lo, hi int
		if o != nil {
			lo, hi = o.Control.Window(start, at)
			for i := lo; i < hi; i++ {
				_, n := o.Control.Bucket(i)
				sum += n
			}
		}
		now := v.Now().UnixMilli()
		if c.RequestID != "" && o != nil && o.Control.Seen(c.RequestID, now) {
			r.Applied, r.Int = true, sum
			return nil, nil
		}
		if sum+c.Delta > c.Limit {
			r.Int = sum
			// The earliest moment enough of the window has aged out.
			need := sum + c.Delta - c.Limit
			if o != nil {
				for i := lo; i < hi && need > 0; i++ {
					ts, n := o.Control.Bucket(i)
					need -= n
					r.RetryAfter = time.Duration(ts+c.Window.Milliseconds()-at) * time.Millisecond
				}
			}
			if need > 0 { // more than the limit itself
				r.RetryAfter = 0
			}
			return nil, nil
		}
		r.Applied, r.Int = true, sum+c.Delta
		args := [][]byte{shard.Varint(b), shard.Varint(c.Delta)}
		if c.RequestID != "" {
			args = append(args, []byte(c.RequestID), shard.Varint(now+ControlDedupWindow.Milliseconds()))
		}
		cmds := []command.Command{{Op: shard.OpCAdd, Key: c.Key, Args: args}}
		if lo > 0 {
			// The buckets before the window count for no take of this
			// quota again: without the trim a busy key would keep a
			// bucket for every millisecond it was ever taken in.
			cmds = append(cmds, command.Command{Op: shard.OpCTrimBefore, Key: c.Key, Args: [][]byte{shard.Varint(start)}})
		}
		return cmds, nil
	})
	return r, err
}

func controlRead(fn func(o *object.Object, c *Command, r *Response) error) runner {
	return func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		var r Response
		err := readObj(ctx, s, c.Key, object.KindControl, func(o *object.Object, _ *shard.View) error {
			return fn(o, c, &r)
		})
		if err != nil {
			return Response{}, err
		}
		return r, nil
	}
}

// controlAggregators are the names a control state window is aggregated by
// (Command.Aggregator, in any case; empty is sum).
var controlAggregators = [...]string{"sum", "count", "events", "len", "min", "max", "first", "last", "change"}

// AggregatorName is b as a Command.Aggregator: the aggregator's own name
// when b names one in any case, so that a protocol handler naming one
// allocates nothing; else b as it is (which Execute refuses).
func AggregatorName(b []byte) string {
	for _, name := range controlAggregators {
		if len(b) == len(name) && strings.EqualFold(string(b), name) {
			return name
		}
	}
	return string(b)
}

// controlAgg aggregates o's start..end, as if delta had been added at
// bucket b (a set-and-get's own increment).
func controlAgg(o *object.Object, start, end int64, agg string, b, delta int64) (int64, error) {
	agg = strings.ToLower(agg)
	if agg != "" && !slices.Contains(controlAggregators[:], agg) {
		return 0, fmt.Errorf("%w: unknown aggregator %q (sum, count, events, min, max, first, last, change)", ErrInvalid, agg)
	}
	if agg == "change" {
		if o == nil {
			return 0, nil
		}
		return o.Control.DistinctIn(start, end), nil
	}
	// The window's bucket sums, with delta folded in: on the stack for an
	// hour of minute buckets.
	var buf [64]int64
	sums := buf[:0]
	added := delta == 0 || b < start || b > end
	if o != nil {
		lo, hi := o.Control.Window(start, end)
		for i := lo; i < hi; i++ {
			ts, n := o.Control.Bucket(i)
			if !added && b < ts {
				sums, added = append(sums, delta), true
			}
			if !added && b == ts {
				n, added = n+delta, true
			}
			sums = append(sums, n)
		}
	}
	if !added {
		sums = append(sums, delta)
	}
	if len(sums) == 0 {
		return 0, nil
	}
	switch agg {
	case "events", "len":
		return int64(len(sums)), nil
	case "min":
		return slices.Min(sums), nil
	case "max":
		return slices.Max(sums), nil
	case "first":
		return sums[0], nil
	case "last":
		return sums[len(sums)-1], nil
	}
	var sum int64 // "", "sum", "count"
	for _, n := range sums {
		sum += n
	}
	return sum, nil
}

func controlDetail(o *object.Object, c *Command, r *Response) error {
	r.Points = []Point{}
	if o == nil {
		return nil
	}
	lo, hi := o.Control.Window(c.Start, c.End)
	if c.HasCount {
		hi = min(hi, lo+max(c.Count, 0))
	}
	for i := lo; i < hi; i++ {
		ts, n := o.Control.Bucket(i)
		r.Points = append(r.Points, Point{TS: ts, Value: strconv.AppendInt(nil, n, 10)})
	}
	return nil
}

func controlSelection(o *object.Object, _ *Command, r *Response) error {
	if o != nil && o.Control.Sel != nil {
		r.Value, r.Found = cp(o.Control.Sel.Value), true
	}
	return nil
}

func runCPace(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	burst := int64(1)
	if c.HasCount {
		burst = int64(c.Count)
	}
	if c.Window <= 0 || c.Limit <= 0 || c.Delta < 0 || burst < 1 {
		return Response{}, fmt.Errorf("%w: pacing needs a positive limit, window and burst, and a cost not negative", ErrInvalid)
	}
	cost := max(c.Delta, 1)
	if cost > burst {
		// More than a burst holds is never allowed: no wait would help,
		// so none is suggested (a quota's amount over its limit likewise).
		return Response{}, nil
	}
	interval := float64(c.Window.Milliseconds()) / float64(c.Limit)
	var r Response
	err := controlWrite(ctx, s, c, func(o *object.Object, v *shard.View) ([]command.Command, error) {
		now := v.Now().UnixMilli()
		tat := now
		if o != nil && o.Control.Pace > now {
			tat = o.Control.Pace
		}
		next := tat + int64(math.Ceil(float64(cost)*interval))
		allowAt := next - int64(math.Ceil(float64(burst)*interval))
		if now < allowAt {
			r.RetryAfter = time.Duration(allowAt-now) * time.Millisecond
			return nil, nil
		}
		r.Applied = true
		return []command.Command{{Op: shard.OpCPace, Key: c.Key, Args: [][]byte{shard.Varint(next)}}}, nil
	})
	return r, err
}

// Manager operations, numbered as the original's.
const (
	ManagerQuery      = 2
	ManagerFieldList  = 5
	ManagerFieldCount = 6
	ManagerAllData    = 7
)

// window bounds of a view: both 0 means all.
func viewRange(c *Command) (int64, int64) {
	if c.Start == 0 && c.End == 0 {
		return math.MinInt64, math.MaxInt64
	}
	return c.Start, c.End
}

// runCManager reads the selection of c.Key and its family's state, which
// may be on another shard: it runs as a multi-key kind.
func runCManager(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if len(c.Key) == 0 {
		return Response{}, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	t, i, err := e.route(c)
	if err != nil {
		return Response{}, err
	}
	if err := e.admit(t, i, c); err != nil {
		return Response{}, err
	}
	family := "h"
	if f, ok := ParseFamily(c.Family); ok && f == "cpc" {
		family = "cpc"
	}
	read := func(f string, fn func(o *object.Object) error) error {
		fk := c.Key // the selection is the raw key's
		if f != "" {
			fk = FamilyKey(f, c.Key)
		}
		return readObj(ctx, x.shard(t, t.opts.KeyShard(fk)), fk, object.KindControl, func(o *object.Object, _ *shard.View) error {
			return fn(o)
		})
	}
	start, end := viewRange(c)
	r := Response{Values: [][]byte{}}
	pair := func(k string, v []byte) { r.Values = append(r.Values, []byte(k), v) }
	num := func(n int64) []byte { return strconv.AppendInt(nil, n, 10) }
	switch c.Count {
	case ManagerQuery:
		err = read(family, func(o *object.Object) error {
			for _, a := range c.Args {
				ts, perr := strconv.ParseInt(string(a), 10, 64)
				if perr != nil {
					return fmt.Errorf("%w: field %q is not a timestamp", ErrInvalid, a)
				}
				var sum int64
				if o != nil {
					if lo, hi := o.Control.Window(ts, ts); lo < hi {
						_, sum = o.Control.Bucket(lo)
					}
				}
				pair(string(a), num(sum))
			}
			return nil
		})
	case ManagerFieldList, ManagerFieldCount, ManagerAllData:
		err = read(family, func(o *object.Object) error {
			var tss []string
			var lo, hi int
			if o != nil {
				lo, hi = o.Control.Window(start, end)
			}
			for i := lo; i < hi; i++ {
				ts, sum := o.Control.Bucket(i)
				if c.Count == ManagerAllData {
					pair(strconv.FormatInt(ts, 10), num(sum))
				}
				tss = append(tss, strconv.FormatInt(ts, 10))
			}
			switch c.Count {
			case ManagerFieldList:
				pair("key_list", []byte(strings.Join(tss, ",")))
			case ManagerFieldCount:
				pair("size", num(int64(len(tss))))
			}
			return nil
		})
	default:
		for _, f := range []string{"h", "cpc"} {
			if err = read(f, func(o *object.Object) error {
				for _, agg := range []string{"events", "sum"} {
					n, err := controlAgg(o, start, end, agg, 0, 0)
					if err != nil {
						return err
					}
					pair(f+"_"+agg, num(n))
				}
				return nil
			}); err != nil {
				break
			}
		}
		if err == nil {
			err = read("", func(o *object.Object) error {
				if o == nil || o.Control.Sel == nil {
					return nil
				}
				s := o.Control.Sel
				pair("fol_value", cp(s.Value))
				pair("fol_occur_time_ms", num(s.Occur))
				pair("fol_type", []byte(map[bool]string{false: "first", true: "last"}[s.Last]))
				return nil
			})
		}
	}
	if err != nil {
		return Response{}, err
	}
	return r, nil
}

func controlDebug(o *object.Object, c *Command, r *Response) error {
	r.Values = [][]byte{}
	if o == nil {
		return nil
	}
	start, end := viewRange(c)
	pair := func(k string, v []byte) { r.Values = append(r.Values, []byte(k), v) }
	lo, hi := o.Control.Window(start, end)
	for i := lo; i < hi; i++ {
		ts, sum := o.Control.Bucket(i)
		pair(strconv.FormatInt(ts, 10), strconv.AppendInt(nil, sum, 10))
	}
	for _, ts := range o.Control.ChangeBuckets(start, end) {
		pair("change:"+strconv.FormatInt(ts, 10), strconv.AppendInt(nil, o.Control.DistinctIn(ts, ts), 10))
	}
	if s := o.Control.Sel; s != nil {
		pair("selection", cp(s.Value))
		pair("selection_occur_time_ms", strconv.AppendInt(nil, s.Occur, 10))
		pair("selection_type", []byte(map[bool]string{false: "first", true: "last"}[s.Last]))
	}
	return nil
}
