package temporalstore

import (
	"context"
	"encoding/binary"
	"fmt"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// stamp is an event time as a row keeps it: (Unix ms, 0) in TSMillis,
// (Unix ns, 0) in TSNanos, (seconds, nanos) in TSProto. Stamps compare
// field by field, so a Timestamp far outside int64 nanoseconds still
// orders right.
type stamp struct{ hi, lo int64 }

func (a stamp) after(b stamp) bool { return a.hi > b.hi || a.hi == b.hi && a.lo > b.lo }

// stampOf is t in format f.
func stampOf(t time.Time, f TSFormat) stamp {
	switch f {
	case TSNanos:
		return stamp{hi: t.UnixNano()}
	case TSProto:
		return stamp{hi: t.Unix(), lo: int64(t.Nanosecond())}
	}
	return stamp{hi: t.UnixMilli()}
}

// encode is s as field bytes in format f: decimal, or a serialized
// google.protobuf.Timestamp whose zero fields are left out, as protobuf
// serializes them.
func (s stamp) encode(f TSFormat) []byte {
	if f != TSProto {
		return strconv.AppendInt(nil, s.hi, 10)
	}
	var b []byte
	if s.hi != 0 {
		b = binary.AppendUvarint(append(b, 0x08), uint64(s.hi))
	}
	if s.lo != 0 {
		b = binary.AppendUvarint(append(b, 0x10), uint64(s.lo))
	}
	if b == nil {
		b = []byte{}
	}
	return b
}

// decodeStamp parses a stored event time in format f.
func decodeStamp(v []byte, f TSFormat) (stamp, bool) {
	if f != TSProto {
		n, err := strconv.ParseInt(string(v), 10, 64)
		return stamp{hi: n}, err == nil
	}
	// A Timestamp: varint fields 1 (seconds, int64) and 2 (nanos, int32),
	// in any order, the last of a repeated field winning; any other field
	// or wire type is not a Timestamp.
	var s stamp
	for len(v) > 0 {
		tag, n := binary.Uvarint(v)
		if n <= 0 {
			return stamp{}, false
		}
		x, m := binary.Uvarint(v[n:])
		if m <= 0 {
			return stamp{}, false
		}
		switch tag {
		case 0x08:
			s.hi = int64(x)
		case 0x10:
			s.lo = int64(int32(x))
		default:
			return stamp{}, false
		}
		v = v[n+m:]
	}
	return s, true
}

// eventTime returns the event time stored in field of hash o (nil:
// absent), and whether there is one.
func eventTime(o *object.Object, key []byte, field string, f TSFormat) (stamp, bool, error) {
	if o == nil {
		return stamp{}, false, nil
	}
	v, ok := o.Hash[field]
	if !ok {
		return stamp{}, false, nil
	}
	s, ok := decodeStamp([]byte(v), f)
	if !ok {
		return stamp{}, false, fmt.Errorf("%w: row %q has a malformed event time %q for ts_format %q", ErrInvalid, key, v, formatName(f))
	}
	return s, true, nil
}

// formatName is f as the wire names it.
func formatName(f TSFormat) string {
	if f == TSMillis {
		return "ms"
	}
	return string(f)
}

// checkFormat refuses a format this engine does not know.
func checkFormat(f TSFormat) error {
	switch f {
	case TSMillis, TSNanos, TSProto:
		return nil
	}
	return fmt.Errorf("%w: unknown ts_format %q (ms, ns or proto)", ErrInvalid, f)
}

// rowCommands returns the commands that write a row's field/value pairs
// and its event time into field, renewing the TTL when c gives one.
func rowCommands(key []byte, args [][]byte, at stamp, field string, c *Command, now time.Time) []command.Command {
	hset := make([][]byte, 0, len(args)+2)
	hset = append(append(hset, args...), []byte(field), at.encode(c.TSFormat))
	cmds := []command.Command{{Op: shard.OpHSet, Key: key, Args: hset}}
	if c.TTL > 0 {
		cmds = append(cmds, command.Command{Op: shard.OpExpireAt, Key: key, Expiry: now.Add(c.TTL).UnixMilli()})
	}
	return cmds
}

// tsField is the hash field c's rows keep their event time in.
func tsField(c *Command) string {
	if c.TSField == "" {
		return DefaultTSField
	}
	return c.TSField
}

func checkRow(key []byte, args [][]byte, at time.Time) error {
	switch {
	case len(key) == 0:
		return fmt.Errorf("%w: empty row key", ErrInvalid)
	case len(args) == 0 || len(args)%2 != 0:
		return fmt.Errorf("%w: a row needs field/value pairs", ErrInvalid)
	case at.IsZero():
		return fmt.Errorf("%w: a row needs an event time", ErrInvalid)
	}
	return nil
}

func runRowWrite(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	if err := checkRow(c.Key, c.Args, c.EventTime); err != nil {
		return Response{}, err
	}
	if err := checkFormat(c.TSFormat); err != nil {
		return Response{}, err
	}
	var r Response
	err := writeObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, v *shard.View) ([]command.Command, error) {
		at := stampOf(c.EventTime, c.TSFormat)
		prev, has, err := eventTime(o, c.Key, tsField(c), c.TSFormat)
		if err != nil || has && !at.after(prev) {
			return nil, err
		}
		r.Applied = true
		return rowCommands(c.Key, c.Args, at, tsField(c), c, v.Now()), nil
	})
	if err == nil && !r.Applied {
		e.countStale(c, 1)
	}
	return r, err
}

func runRowWriteBatch(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if err := checkFormat(c.TSFormat); err != nil {
		return Response{}, err
	}
	keys := make([][]byte, len(c.Rows))
	for i, row := range c.Rows {
		if err := checkRow(row.Key, row.Args, row.EventTime); err != nil {
			return Response{}, fmt.Errorf("row %d: %w", i, err)
		}
		keys[i] = row.Key
	}
	t, groups, err := e.byShard(c, keys)
	if err != nil {
		return Response{}, err
	}
	if c.TTL == 0 && t.opts.DefaultTTL > 0 {
		cc := *c
		cc.TTL = t.opts.DefaultTTL
		c = &cc
	}
	r := Response{Ints: make([]int64, len(c.Rows))}
	for sh, idx := range groups {
		err := x.shard(t, sh).Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
			var cmds []command.Command
			// Rows of one entity in one batch apply in order, each
			// judged against the event time the ones before it left.
			latest := map[string]stamp{}
			for _, i := range idx {
				row := c.Rows[i]
				at := stampOf(row.EventTime, c.TSFormat)
				prev, has := latest[string(row.Key)]
				if !has {
					o, err := objOf(v, row.Key, object.KindHash)
					if err == nil {
						prev, has, err = eventTime(o, row.Key, tsField(c), c.TSFormat)
					}
					if err != nil {
						return nil, fmt.Errorf("row %d: %w", i, err)
					}
				}
				if has && !at.after(prev) {
					continue
				}
				r.Ints[i] = 1
				cmds = append(cmds, rowCommands(row.Key, row.Args, at, tsField(c), c, v.Now())...)
				latest[string(row.Key)] = at
			}
			return cmds, nil
		})
		if err != nil {
			return Response{}, err
		}
		stale := 0
		for _, i := range idx {
			if r.Ints[i] == 0 {
				stale++
			} else {
				r.Int++
			}
		}
		if stale > 0 {
			t.adm.shards[sh].staleRejects.Add(uint64(stale))
		}
	}
	return r, nil
}

func runRowReadBatch(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if len(c.Args) == 0 {
		return Response{}, fmt.Errorf("%w: row_read_batch needs fields (args)", ErrInvalid)
	}
	t, groups, err := e.byShard(c, c.Keys)
	if err != nil {
		return Response{}, err
	}
	nf := len(c.Args)
	r := Response{Values: make([][]byte, len(c.Keys)*nf)}
	// The values share one buffer (a grown one leaves the earlier values
	// where they were, still theirs), which the Response keeps.
	buf := make([]byte, 0, 16*len(r.Values))
	for sh, idx := range groups {
		err := x.shard(t, sh).Read(ctx, func(v *shard.View) error {
			for _, i := range idx {
				o, err := objOf(v, c.Keys[i], object.KindHash)
				if err != nil {
					return err
				}
				if o == nil {
					continue
				}
				for j, f := range c.Args {
					if val, ok := o.Hash[string(f)]; ok {
						start := len(buf)
						buf = append(buf, val...)
						r.Values[i*nf+j] = buf[start:len(buf):len(buf)]
					}
				}
			}
			return nil
		})
		if err != nil {
			return Response{}, err
		}
	}
	return r, nil
}

// countStale adds n stale row writes to the count of c's shard.
func (e *Engine) countStale(c *Command, n int) {
	if t, err := e.table(c); err == nil {
		t.adm.shards[t.opts.KeyShard(c.Key)].staleRejects.Add(uint64(n))
	}
}
