package hll

// denseGet returns register i of dense registers regs. Register i's six
// bits start at bit 6i, least significant first, and may straddle a byte.
func denseGet(regs []byte, i int) uint8 {
	at, fb := i*regBits/8, uint(i*regBits&7)
	v := uint(regs[at]) >> fb
	if at+1 < len(regs) {
		v |= uint(regs[at+1]) << (8 - fb)
	}
	return uint8(v & regMax)
}

// denseSet raises register i to c if it is lower; it reports whether it
// did.
func denseSet(regs []byte, i int, c uint8) bool {
	if denseGet(regs, i) >= c {
		return false
	}
	denseStore(regs, i, c)
	return true
}

func denseStore(regs []byte, i int, c uint8) {
	at, fb := i*regBits/8, uint(i*regBits&7)
	v := uint(c)
	regs[at] &^= byte(regMax << fb)
	regs[at] |= byte(v << fb)
	if at+1 < len(regs) {
		regs[at+1] &^= byte(regMax >> (8 - fb))
		regs[at+1] |= byte(v >> (8 - fb))
	}
}

// ToDense converts a sparse sketch to the dense encoding, keeping the
// header's other bytes (the cache, the unused bytes); ErrCorrupt when the
// opcodes do not cover exactly every register. A dense sketch is left as
// it is.
func (s *Sketch) ToDense() error {
	if s.b[4] == Dense {
		return nil
	}
	d := make([]byte, DenseSize)
	copy(d, s.b[:HeaderSize])
	d[4] = Dense
	regs := d[HeaderSize:]
	err := walkSparse(s.b[HeaderSize:], func(i, n int, v uint8) {
		for j := i; j < i+n; j++ {
			denseStore(regs, j, v)
		}
	})
	if err != nil {
		return err
	}
	s.b = d
	return nil
}
