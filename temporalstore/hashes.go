package temporalstore

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

var hashKinds = map[Kind]runner{
	KindHRandField: runHRandField,
	KindHSet: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 2, 2); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			seen := map[string]bool{}
			for i := 0; i < len(c.Args); i += 2 {
				f := string(c.Args[i])
				if seen[f] {
					continue
				}
				seen[f] = true
				if o == nil {
					r.Int++
				} else if _, ok := o.Hash[f]; !ok {
					r.Int++
				}
			}
			return []command.Command{{Op: shard.OpHSet, Key: c.Key, Args: c.Args}}, nil
		})
		return r, err
	},
	KindHSetNX: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o != nil {
				if _, ok := o.Hash[string(c.Args[0])]; ok {
					return nil, nil
				}
			}
			r.Int = 1
			return []command.Command{{Op: shard.OpHSet, Key: c.Key, Args: [][]byte{c.Args[0], c.Value}}}, nil
		})
		return r, err
	},
	KindHGet: hashRead(1, func(o *object.Object, c *Command, r *Response) {
		if o == nil {
			return
		}
		if v, ok := o.Hash[string(c.Args[0])]; ok {
			r.Value, r.Found = cp(v), true
		}
	}),
	KindHMGet: hashRead(1, func(o *object.Object, c *Command, r *Response) {
		r.Values = make([][]byte, len(c.Args))
		if o == nil {
			return
		}
		// The values are copied into one buffer: a read of many fields
		// costs one allocation rather than one a field.
		n, found := 0, false
		for i, f := range c.Args {
			if v, ok := o.Hash[string(f)]; ok {
				if v == nil {
					v = []byte{} // present, and so not nil
				}
				r.Values[i], n, found = v, n+len(v), true
			}
		}
		if !found {
			return
		}
		buf := make([]byte, 0, n)
		for i, v := range r.Values {
			if v != nil {
				start := len(buf)
				buf = append(buf, v...)
				r.Values[i] = buf[start:len(buf):len(buf)]
			}
		}
	}),
	KindHGetAll: hashRead(0, func(o *object.Object, _ *Command, r *Response) {
		r.Values = [][]byte{}
		for _, f := range sortedFields(o) {
			r.Values = append(r.Values, []byte(f), cp(o.Hash[f]))
		}
	}),
	KindHDel: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			if o == nil {
				return nil, nil
			}
			var del [][]byte
			seen := map[string]bool{}
			for _, f := range c.Args {
				if _, ok := o.Hash[string(f)]; ok && !seen[string(f)] {
					seen[string(f)] = true
					del = append(del, f)
				}
			}
			r.Int = int64(len(del))
			if len(del) == 0 {
				return nil, nil
			}
			return []command.Command{{Op: shard.OpHDel, Key: c.Key, Args: del}}, nil
		})
		return r, err
	},
	KindHIncrBy: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			var n int64
			if o != nil {
				if v, ok := o.Hash[string(c.Args[0])]; ok {
					var err error
					if n, err = ParseInt(v); err != nil {
						return nil, fmt.Errorf("%w: hash value is not an integer", ErrNotInteger)
					}
				}
			}
			sum := n + c.Delta
			if (c.Delta > 0 && sum < n) || (c.Delta < 0 && sum > n) {
				return nil, ErrOverflow
			}
			r.Int = sum
			return []command.Command{{Op: shard.OpHSet, Key: c.Key, Args: [][]byte{c.Args[0], strconv.AppendInt(nil, sum, 10)}}}, nil
		})
		return r, err
	},
	KindHIncrByFloat: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, 1, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := writeObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, _ *shard.View) ([]command.Command, error) {
			var old []byte
			found := false
			if o != nil {
				old, found = o.Hash[string(c.Args[0])]
			}
			v, sum, err := addFloat(old, found, c.Value, c.Float, fmt.Errorf("%w: hash value is not a float", ErrNotFloat))
			if err != nil {
				return nil, err
			}
			r.Value, r.Found, r.Float = v, true, sum
			return []command.Command{{Op: shard.OpHSet, Key: c.Key, Args: [][]byte{c.Args[0], r.Value}}}, nil
		})
		return r, err
	},
	KindHLen: hashRead(0, func(o *object.Object, _ *Command, r *Response) {
		if o != nil {
			r.Int = int64(len(o.Hash))
		}
	}),
	KindHExists: hashRead(1, func(o *object.Object, c *Command, r *Response) {
		if o != nil {
			if _, ok := o.Hash[string(c.Args[0])]; ok {
				r.Int = 1
			}
		}
	}),
	KindHStrLen: hashRead(1, func(o *object.Object, c *Command, r *Response) {
		if o != nil {
			r.Int = int64(len(o.Hash[string(c.Args[0])]))
		}
	}),
	KindHKeys: hashRead(0, func(o *object.Object, _ *Command, r *Response) {
		r.Values = [][]byte{}
		for _, f := range sortedFields(o) {
			r.Values = append(r.Values, []byte(f))
		}
	}),
	KindHVals: hashRead(0, func(o *object.Object, _ *Command, r *Response) {
		r.Values = [][]byte{}
		for _, f := range sortedFields(o) {
			r.Values = append(r.Values, cp(o.Hash[f]))
		}
	}),
	KindHScan: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		count, err := scanCount(c)
		if err != nil {
			return Response{}, err
		}
		var r Response
		err = readObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, _ *shard.View) error {
			r.Values = [][]byte{}
			if o == nil {
				return nil
			}
			page, next := scanPage(sortedFields(o), c.Cursor, count)
			for _, f := range page {
				r.Values = append(r.Values, []byte(f), cp(o.Hash[f]))
			}
			r.Cursor = next
			return nil
		})
		return r, err
	},
}

// hashRead builds a read kind over a hash that needs n fields in Args; fn
// gets a nil object for an absent key, as the other collections' do.
func hashRead(n int, fn func(o *object.Object, c *Command, r *Response)) runner {
	return func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		if err := needArgs(c, n, 1); err != nil {
			return Response{}, err
		}
		var r Response
		err := readObj(ctx, s, c.Key, object.KindHash, func(o *object.Object, _ *shard.View) error {
			fn(o, c, &r)
			return nil
		})
		return r, err
	}
}

func sortedFields(o *object.Object) []string {
	if o == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(o.Hash))
}
