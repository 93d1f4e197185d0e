package hll

import (
	"fmt"
	"strings"
)

// Decode renders sparse opcodes as PFDEBUG DECODE does: "Z:n" for an
// XZERO, "z:n" for a ZERO, "v:value,n" for a VAL, space-separated, read
// as they are, without checking that they add up.
func Decode(sparse []byte) string {
	var sb strings.Builder
	for p := 0; p < len(sparse); {
		op := sparse[p]
		switch {
		case isXZero(op):
			fmt.Fprintf(&sb, "Z:%d ", xzeroLen(sparse, p))
			p += 2
		case isZero(op):
			fmt.Fprintf(&sb, "z:%d ", zeroLen(op))
			p++
		default:
			fmt.Fprintf(&sb, "v:%d,%d ", valValue(op), valLen(op))
			p++
		}
	}
	return strings.TrimSuffix(sb.String(), " ")
}

// Decode is Decode of the sketch's opcodes; false for a dense sketch.
func (s *Sketch) Decode() (string, bool) {
	if s.b[4] != Sparse {
		return "", false
	}
	return Decode(s.b[HeaderSize:]), true
}

// SelfTest checks the register arithmetic and the two encodings against
// each other, as PFSELFTEST asks: every dense register can take every
// value without touching its neighbours, and sketches that stay sparse,
// or are made dense early, of the same elements count the same.
func SelfTest() error {
	regs := make([]byte, DenseSize-HeaderSize)
	for v := uint8(1); v <= regMax; v += 7 {
		for i := range Registers {
			denseStore(regs, i, v-uint8(i%2))
		}
		for i := range Registers {
			if got := denseGet(regs, i); got != v-uint8(i%2) {
				return fmt.Errorf("TESTFAILED Register error at %d", i)
			}
		}
	}
	sparse, dense := New(), New()
	if err := dense.ToDense(); err != nil {
		return err
	}
	var buf []byte
	for i := range 3000 {
		buf = fmt.Appendf(buf[:0], "selftest:%d", i)
		_, err1 := sparse.Add(buf)
		_, err2 := dense.Add(buf)
		if err1 != nil || err2 != nil {
			return fmt.Errorf("TESTFAILED add of element %d", i)
		}
		if i%100 != 0 {
			continue
		}
		a, err1 := sparse.Count()
		b, err2 := dense.Count()
		if err1 != nil || err2 != nil || a != b {
			return fmt.Errorf("TESTFAILED Sparse and dense counts differ after %d elements: %d, %d", i+1, a, b)
		}
	}
	return nil
}
