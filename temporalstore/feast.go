package temporalstore

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// eventTime returns the event time stored in field of hash o (nil:
// absent), and whether there is one.
func eventTime(o *object.Object, key []byte, field string) (int64, bool, error) {
	if o == nil {
		return 0, false, nil
	}
	v, ok := o.Hash[field]
	if !ok {
		return 0, false, nil
	}
	ms, err := strconv.ParseInt(string(v), 10, 64)
	if err != nil {
		return 0, false, fmt.Errorf("%w: row %q has a malformed event time %q", ErrInvalid, key, v)
	}
	return ms, true, nil
}

// rowCommands returns the commands that write a row's field/value pairs
// and its event time ms into field, renewing the TTL when c gives one.
func rowCommands(key []byte, args [][]byte, ms int64, field string, c *Command, now time.Time) []command.Command {
	hset := make([][]byte, 0, len(args)+2)
	hset = append(append(hset, args...), []byte(field), strconv.AppendInt(nil, ms, 10))
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
	var r Response
	err := writeObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, v *shard.View) ([]command.Command, error) {
		ms := c.EventTime.UnixMilli()
		prev, has, err := eventTime(o, c.Key, tsField(c))
		if err != nil || has && ms <= prev {
			return nil, err
		}
		r.Applied = true
		return rowCommands(c.Key, c.Args, ms, tsField(c), c, v.Now()), nil
	})
	if err == nil && !r.Applied {
		e.countStale(c, 1)
	}
	return r, err
}

func runRowWriteBatch(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
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
			latest := map[string]int64{}
			for _, i := range idx {
				row := c.Rows[i]
				ms := row.EventTime.UnixMilli()
				prev, has := latest[string(row.Key)]
				if !has {
					o, err := objOf(v, row.Key, object.KindHash)
					if err == nil {
						prev, has, err = eventTime(o, row.Key, tsField(c))
					}
					if err != nil {
						return nil, fmt.Errorf("row %d: %w", i, err)
					}
				}
				if has && ms <= prev {
					continue
				}
				r.Ints[i] = 1
				cmds = append(cmds, rowCommands(row.Key, row.Args, ms, tsField(c), c, v.Now())...)
				latest[string(row.Key)] = ms
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

// countStale adds n stale row writes to the count of c's shard.
func (e *Engine) countStale(c *Command, n int) {
	if t, err := e.table(c); err == nil {
		t.adm.shards[ShardOf(c.Key, len(t.shards))].staleRejects.Add(uint64(n))
	}
}
