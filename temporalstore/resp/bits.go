package resp

import (
	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

func registerBits() {
	register(
		keyed("setbit", 4, flagWrite, func(c *conn, a [][]byte) {
			off, ok := c.bitOffset(a[2])
			if !ok {
				return
			}
			bit, err := parseInt(a[3])
			if err != nil || bit != 0 && bit != 1 {
				c.errorf("ERR bit is not an integer or out of range")
				return
			}
			c.intReply(ts.Command{Kind: ts.KindSetBit, Key: a[1], Start: off, Delta: bit})
		}),
		keyed("getbit", 3, 0, func(c *conn, a [][]byte) {
			if off, ok := c.bitOffset(a[2]); ok {
				c.intReply(ts.Command{Kind: ts.KindGetBit, Key: a[1], Start: off})
			}
		}),
		keyed("bitcount", -2, 0, cmdBitCount),
		keyed("bitpos", -3, 0, cmdBitPos),
		&cmdSpec{name: "bitop", arity: -4, flags: flagWrite, first: 2, last: -1, step: 1, run: cmdBitOp},
	)
}

func (c *conn) bitOffset(b []byte) (int64, bool) {
	n, err := parseInt(b)
	if err != nil || n < 0 || n > 1<<32-1 {
		c.errorf("ERR bit offset is not an integer or out of range")
		return 0, false
	}
	return n, true
}

// bitRange reads BITCOUNT's and BITPOS's start, end and unit; bad is the
// error to reply, once the key has been looked up as Redis looks it up
// first.
// given is an argument that was sent, as a non-nil slice even when empty:
// bitRange takes nil for an argument not sent, and an empty one must be
// read (and refused) as Redis reads it.
func given(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func bitRange(start, end, unit []byte, unitFirst bool) (rg *ts.BitRange, bad string) {
	if start == nil {
		return nil, ""
	}
	rg = &ts.BitRange{}
	var err error
	if rg.Start, err = parseInt(start); err != nil {
		return nil, err.Error()
	}
	// BITPOS reads its unit before its end, BITCOUNT after (Redis's
	// order, which decides which error a request with two gets).
	readUnit := func() bool {
		switch {
		case unit == nil, is(unit, "byte"):
		case is(unit, "bit"):
			rg.Bit = true
		default:
			return false
		}
		return true
	}
	if unitFirst && !readUnit() {
		return nil, "ERR syntax error"
	}
	if end != nil {
		if rg.End, err = parseInt(end); err != nil {
			return nil, err.Error()
		}
		rg.HasEnd = true
	}
	if !unitFirst && !readUnit() {
		return nil, "ERR syntax error"
	}
	return rg, ""
}

// cmdBitCount is BITCOUNT key [start end [BYTE|BIT]].
func cmdBitCount(c *conn, a [][]byte) {
	var rg *ts.BitRange
	bad := ""
	switch len(a) {
	case 2:
	case 4:
		rg, bad = bitRange(given(a[2]), given(a[3]), nil, false)
	case 5:
		unit := given(a[4])
		// Redis answers 0 for two negative bounds the wrong way round
		// before it reads the unit.
		if s, err1 := parseInt(a[2]); err1 == nil && s < 0 {
			if e, err2 := parseInt(a[3]); err2 == nil && e < 0 && s > e {
				unit = nil
			}
		}
		rg, bad = bitRange(given(a[2]), given(a[3]), unit, false)
	default:
		bad = "ERR syntax error"
	}
	if bad != "" {
		c.orLookup(a[1], bad, func() { c.w.int(0) })
		return
	}
	c.intReply(ts.Command{Kind: ts.KindBitCount, Key: a[1], Bits: rg})
}

// cmdBitPos is BITPOS key bit [start [end [BYTE|BIT]]].
func cmdBitPos(c *conn, a [][]byte) {
	bit, ok := c.intArg(a[2])
	if !ok {
		return
	}
	if bit != 0 && bit != 1 {
		c.errorf("ERR The bit argument must be 1 or 0.")
		return
	}
	var rg *ts.BitRange
	bad := ""
	switch len(a) {
	case 3:
	case 4:
		rg, bad = bitRange(given(a[3]), nil, nil, true)
	case 5:
		rg, bad = bitRange(given(a[3]), given(a[4]), nil, true)
	case 6:
		rg, bad = bitRange(given(a[3]), given(a[4]), given(a[5]), true)
	default:
		bad = "ERR syntax error"
	}
	if bad != "" {
		c.orLookup(a[1], bad, func() { c.w.int(-b2i(bit == 1)) }) // an absent key: all zero bits
		return
	}
	c.intReply(ts.Command{Kind: ts.KindBitPos, Key: a[1], Delta: bit, Bits: rg})
}

// cmdBitOp is BITOP AND|OR|XOR|NOT destkey key [key ...].
func cmdBitOp(c *conn, a [][]byte) {
	op := string(a[1])
	switch {
	case !is(a[1], "and") && !is(a[1], "or") && !is(a[1], "xor") && !is(a[1], "not"):
		c.syntaxErr()
	case is(a[1], "not") && len(a) != 4:
		c.errorf("ERR BITOP NOT must be called with a single source key.")
	default:
		c.intReply(ts.Command{Kind: ts.KindBitOp, Aggregator: op, Dest: a[2], Keys: a[3:]})
	}
}
