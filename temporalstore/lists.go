package temporalstore

import (
	"bytes"
	"context"
	"fmt"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

var listKinds = map[Kind]runner{
	KindLPush: listPush(shard.OpLPush),
	KindRPush: listPush(shard.OpRPush),
	KindLPop:  listPop(true),
	KindRPop:  listPop(false),
	KindLRange: listRead(func(o *object.Object, c *Command, r *Response) error {
		r.Values = [][]byte{}
		if o == nil {
			return nil
		}
		lo, hi, ok := redisRange(c.Start, c.End, int64(o.List.Len()))
		for i := lo; ok && i <= hi; i++ {
			r.Values = append(r.Values, cp(o.List.Index(int(i))))
		}
		return nil
	}),
	KindLLen: listRead(func(o *object.Object, _ *Command, r *Response) error {
		if o != nil {
			r.Int = int64(o.List.Len())
		}
		return nil
	}),
	KindLIndex: listRead(func(o *object.Object, c *Command, r *Response) error {
		if o == nil {
			return nil
		}
		if i, ok := listIndex(o, c.Start); ok {
			r.Value, r.Found = cp(o.List.Index(i)), true
		}
		return nil
	}),
	KindLSet: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		err := writeObj(ctx, s, c.Key, object.KindList, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, ErrNoSuchKey
			}
			i, ok := listIndex(o, c.Start)
			if !ok {
				return nil, ErrOutOfRange
			}
			return []command.Command{{Op: shard.OpLSet, Key: c.Key, Args: [][]byte{shard.Varint(int64(i)), c.Value}}}, nil
		})
		return Response{Applied: err == nil}, err
	},
	KindLTrim: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		err := writeObj(ctx, s, c.Key, object.KindList, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, nil
			}
			n := int64(o.List.Len())
			lo, hi, ok := redisRange(c.Start, c.End, n)
			switch {
			case !ok:
				return []command.Command{{Op: shard.OpDelete, Key: c.Key}}, nil
			case lo == 0 && hi == n-1:
				return nil, nil
			}
			return []command.Command{{Op: shard.OpLTrim, Key: c.Key, Args: [][]byte{shard.Varint(lo), shard.Varint(hi)}}}, nil
		})
		return Response{Applied: err == nil}, err
	},
	KindLRem: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindList, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, nil
			}
			// Unsigned, so that the count −2⁶³ has a magnitude too.
			limit := uint64(c.Count)
			if c.Count < 0 {
				limit = -limit
			}
			for i := range o.List.Len() {
				if bytes.Equal(o.List.Index(i), c.Value) && (limit == 0 || uint64(r.Int) < limit) {
					r.Int++
				}
			}
			if r.Int == 0 {
				return nil, nil
			}
			return []command.Command{{Op: shard.OpLRem, Key: c.Key, Args: [][]byte{shard.Varint(int64(c.Count)), c.Value}}}, nil
		})
		return r, err
	},
	KindLInsert: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindList, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, nil
			}
			r.Int = -1
			for i := range o.List.Len() {
				if bytes.Equal(o.List.Index(i), c.Args[0]) {
					r.Int = int64(o.List.Len() + 1)
					side := []byte("a")
					if c.Before {
						side = []byte("b")
					}
					return []command.Command{{Op: shard.OpLInsert, Key: c.Key, Args: [][]byte{side, c.Args[0], c.Value}}}, nil
				}
			}
			return nil, nil
		})
		return r, err
	},
	KindLPos: listRead(func(o *object.Object, c *Command, r *Response) error {
		if c.HasCount && c.Count < 0 || c.MaxLen < 0 {
			return fmt.Errorf("%w: COUNT and MAXLEN can't be negative", ErrInvalid)
		}
		rank := c.Rank
		if rank == 0 {
			rank = 1
		}
		if c.HasCount {
			r.Ints = []int64{}
		}
		if o == nil {
			return nil
		}
		n := o.List.Len()
		want := 1
		if c.HasCount {
			want = c.Count // 0: all
		}
		skip := rank - 1
		step, i := 1, 0
		if rank < 0 {
			skip, step, i = -rank-1, -1, n-1
		}
		for seen := int64(0); i >= 0 && i < n && (c.MaxLen == 0 || seen < c.MaxLen); i, seen = i+step, seen+1 {
			if !bytes.Equal(o.List.Index(i), c.Value) {
				continue
			}
			if skip > 0 {
				skip--
				continue
			}
			if !c.HasCount {
				r.Int, r.Found = int64(i), true
				return nil
			}
			r.Ints = append(r.Ints, int64(i))
			if want != 0 && len(r.Ints) == want {
				return nil
			}
		}
		return nil
	}),
	KindLMove: runLMove,
}

func listRead(fn func(o *object.Object, c *Command, r *Response) error) runner {
	return func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		var r Response
		err := readObj(ctx, s, c.Key, object.KindList, func(o *object.Object, _ *shard.View) error {
			return fn(o, c, &r)
		})
		return r, err
	}
}

// listIndex resolves a Redis list index (negative from the tail).
func listIndex(o *object.Object, i int64) (int, bool) {
	n := int64(o.List.Len())
	if i < 0 {
		i += n
	}
	return int(i), i >= 0 && i < n
}

func listPush(op command.Op) runner {
	return func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindList, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil && c.Cond == IfPresent {
				return nil, nil // LPUSHX, RPUSHX: only onto an existing list
			}
			r.Int = int64(len(c.Args))
			if o != nil {
				r.Int += int64(o.List.Len())
			}
			return []command.Command{{Op: op, Key: c.Key, Args: c.Args}}, nil
		})
		return r, err
	}
}

func listPop(left bool) runner {
	return func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if c.HasCount && c.Count < 0 {
			return Response{}, fmt.Errorf("%w: value is out of range, must be positive", ErrInvalid)
		}
		n := 1
		if c.HasCount {
			n = c.Count
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindList, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, nil // a nil reply, with or without a count
			}
			n = min(n, o.List.Len())
			r.Found = true
			if c.HasCount {
				r.Values = [][]byte{}
			}
			for i := range n {
				at := i
				if !left {
					at = o.List.Len() - 1 - i
				}
				v := cp(o.List.Index(at))
				if c.HasCount {
					r.Values = append(r.Values, v)
				} else {
					r.Value = v
				}
			}
			if n == 0 {
				return nil, nil
			}
			op := shard.OpLPop
			if !left {
				op = shard.OpRPop
			}
			return []command.Command{{Op: op, Key: c.Key, Args: [][]byte{shard.Uvarint(uint64(n))}}}, nil
		})
		return r, err
	}
}

func runLMove(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if c.Dest == nil {
		return Response{}, fmt.Errorf("%w: LMOVE needs a destination", ErrInvalid)
	}
	var r Response
	err := s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		src, err := objOf(v, c.Key, object.KindList)
		if err != nil || src == nil {
			return nil, err
		}
		if _, err := objOf(v, c.Dest, object.KindList); err != nil {
			return nil, err
		}
		pop, at := shard.OpLPop, 0
		if !c.FromLeft {
			pop, at = shard.OpRPop, src.List.Len()-1
		}
		r.Value, r.Found = cp(src.List.Index(at)), true
		push := shard.OpLPush
		if !c.ToLeft {
			push = shard.OpRPush
		}
		return []command.Command{
			{Op: pop, Key: c.Key, Args: [][]byte{shard.Uvarint(1)}},
			{Op: push, Key: c.Dest, Args: [][]byte{r.Value}},
		}, nil
	})
	return r, err
}
