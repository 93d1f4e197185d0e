package temporalstore

import (
	"context"
	"fmt"
	"math/bits"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// maxBitOffset is Redis's bound on a bit offset: 512 MiB of bits.
const maxBitOffset = 1<<32 - 1

func checkBitOffset(c *Command) error {
	if c.Start < 0 || c.Start > maxBitOffset {
		return fmt.Errorf("%w: bit offset is not an integer or out of range", ErrInvalid)
	}
	return nil
}

func runSetBit(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if err := checkBitOffset(c); err != nil {
		return Response{}, err
	}
	if c.Delta != 0 && c.Delta != 1 {
		return Response{}, fmt.Errorf("%w: bit is not an integer or out of range", ErrInvalid)
	}
	byteAt, mask := c.Start>>3, byte(0x80)>>(c.Start&7)
	var r Response
	err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, found bool) ([]byte, time.Time, shard.Action, error) {
		if found && byteAt < int64(len(old)) && (old[byteAt]&mask != 0) == (c.Delta == 1) {
			// The bit is already so: nothing is written, as Redis
			// leaves the key untouched (a WATCH of it still holds).
			r.Int = c.Delta
			return nil, time.Time{}, shard.Keep, nil
		}
		v := make([]byte, max(int64(len(old)), byteAt+1))
		copy(v, old)
		if v[byteAt]&mask != 0 {
			r.Int = 1
		}
		if c.Delta == 1 {
			v[byteAt] |= mask
		} else {
			v[byteAt] &^= mask
		}
		return v, exp, shard.Write, nil
	})
	return r, err
}

func runGetBit(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if err := checkBitOffset(c); err != nil {
		return Response{}, err
	}
	v, _, err := getString(ctx, s, c.Key)
	if err != nil {
		return Response{}, err
	}
	var r Response
	if c.Start>>3 < int64(len(v)) && bitAt(v, c.Start) {
		r.Int = 1
	}
	return r, nil
}

// bitSpan resolves a range over a string of n bytes to inclusive bit
// offsets, as Redis resolves BITCOUNT's and BITPOS's: as GETRANGE's
// (stringRange), in bytes or bits; ok is false for an empty range. Only
// BITCOUNT (count) takes two negative bounds the wrong way round as empty:
// BITPOS counts them from the end first.
func bitSpan(rg *BitRange, n int64, count bool) (lo, hi int64, ok bool) {
	if rg == nil {
		return 0, n*8 - 1, n > 0
	}
	total := n
	if rg.Bit {
		total = n * 8
	}
	start, end := rg.Start, rg.End
	if !rg.HasEnd {
		end = total - 1
	}
	if !count {
		start, end = fromEnd(start, total), fromEnd(end, total)
	}
	if lo, hi, ok = stringRange(start, end, total); !ok || rg.Bit {
		return lo, hi, ok
	}
	return lo * 8, hi*8 + 7, true
}

// fromEnd is a negative index counted from the end of n, at least 0.
func fromEnd(i, n int64) int64 {
	if i < 0 {
		return max(n+i, 0)
	}
	return i
}

func bitAt(v []byte, i int64) bool { return v[i>>3]&(0x80>>(i&7)) != 0 }

func runBitCount(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	v, _, err := getString(ctx, s, c.Key)
	if err != nil {
		return Response{}, err
	}
	var r Response
	lo, hi, ok := bitSpan(c.Bits, int64(len(v)), true)
	for i := lo; ok && i <= hi; {
		if i&7 == 0 && i+7 <= hi {
			r.Int += int64(bits.OnesCount8(v[i>>3]))
			i += 8
			continue
		}
		if bitAt(v, i) {
			r.Int++
		}
		i++
	}
	return r, nil
}

func runBitPos(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
	if c.Delta != 0 && c.Delta != 1 {
		return Response{}, fmt.Errorf("%w: the bit argument must be 1 or 0", ErrInvalid)
	}
	v, found, err := getString(ctx, s, c.Key)
	if err != nil {
		return Response{}, err
	}
	if !found {
		// An infinite run of zero bits: the first 0 is at 0, no 1.
		return Response{Int: -c.Delta}, nil
	}
	lo, hi, ok := bitSpan(c.Bits, int64(len(v)), false)
	if !ok {
		return Response{Int: -1}, nil
	}
	want := c.Delta == 1
	for i := lo; i <= hi; {
		// Whole bytes that cannot hold the bit are skipped at once.
		if i&7 == 0 && i+7 <= hi && (want && v[i>>3] == 0 || !want && v[i>>3] == 0xff) {
			i += 8
			continue
		}
		if bitAt(v, i) == want {
			return Response{Int: i}, nil
		}
		i++
	}
	if !want && (c.Bits == nil || !c.Bits.HasEnd) {
		return Response{Int: hi + 1}, nil
	}
	return Response{Int: -1}, nil
}

func runBitOp(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	op := strings.ToLower(c.Aggregator)
	switch {
	case op != "and" && op != "or" && op != "xor" && op != "not":
		return Response{}, fmt.Errorf("%w: unknown BITOP operation %q (and, or, xor, not)", ErrInvalid, c.Aggregator)
	case len(c.Keys) == 0:
		return Response{}, fmt.Errorf("%w: BITOP needs a source key", ErrInvalid)
	case op == "not" && len(c.Keys) != 1:
		return Response{}, fmt.Errorf("%w: BITOP NOT must be called with a single source key", ErrInvalid)
	}
	_, s, err := e.oneGroup(x, c, append([][]byte{c.Dest}, c.Keys...)...)
	if err != nil {
		return Response{}, err
	}
	var r Response
	err = s.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
		srcs := make([][]byte, len(c.Keys))
		n := 0
		for i, k := range c.Keys {
			it, err := v.Get(k)
			switch {
			case err != nil:
				return nil, err
			case it.Exists && it.Obj != nil:
				return nil, ErrWrongType
			}
			srcs[i] = it.Value
			n = max(n, len(it.Value))
		}
		r.Int = int64(n)
		if n == 0 {
			return []command.Command{{Op: shard.OpDelete, Key: c.Dest}}, nil
		}
		out := make([]byte, n)
		at := func(b []byte, i int) byte {
			if i < len(b) {
				return b[i]
			}
			return 0
		}
		for i := range out {
			x := at(srcs[0], i)
			for _, b := range srcs[1:] {
				switch op {
				case "and":
					x &= at(b, i)
				case "or":
					x |= at(b, i)
				case "xor":
					x ^= at(b, i)
				}
			}
			if op == "not" {
				x = ^x
			}
			out[i] = x
		}
		return []command.Command{shard.StringSet(c.Dest, out, time.Time{})}, nil
	})
	return r, err
}
