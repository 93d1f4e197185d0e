package hll

// The sparse opcodes' limits.
const (
	valMaxValue = 32
	valMaxLen   = 4
	zeroMaxLen  = 64
	xzeroMaxLen = 16384
)

func isZero(op byte) bool  { return op&0xc0 == 0 }
func isXZero(op byte) bool { return op&0xc0 == 0x40 }
func isVal(op byte) bool   { return op&0x80 != 0 }

func zeroLen(op byte) int  { return int(op&0x3f) + 1 }
func valLen(op byte) int   { return int(op&0x3) + 1 }
func valValue(op byte) int { return int(op>>2&0x1f) + 1 }

// xzeroLen is the run of the XZERO at sp[p]; a second byte missing at the
// end of the string reads as 0, as Redis reads its string's terminator.
func xzeroLen(sp []byte, p int) int {
	lo := 0
	if p+1 < len(sp) {
		lo = int(sp[p+1])
	}
	return (int(sp[p]&0x3f)<<8 | lo) + 1
}

func valOp(v, n int) byte  { return byte((v-1)<<2|(n-1)) | 0x80 }
func zeroOp(n int) byte    { return byte(n - 1) }
func xzeroOp(n int) []byte { return []byte{byte((n-1)>>8) | 0x40, byte((n - 1) & 0xff)} }
func opLen(op byte) int {
	if isXZero(op) {
		return 2
	}
	return 1
}

// walkSparse calls fn for each VAL run of sparse opcodes sp: its first
// register, length and value. ErrCorrupt unless the runs cover exactly
// Registers registers (a VAL past them stops the walk).
func walkSparse(sp []byte, fn func(i, n int, v uint8)) error {
	idx := 0
	for p := 0; p < len(sp); {
		op := sp[p]
		switch {
		case isZero(op):
			idx += zeroLen(op)
			p++
		case isXZero(op):
			idx += xzeroLen(sp, p)
			p += 2
		default:
			n := valLen(op)
			if idx+n > Registers {
				return ErrCorrupt
			}
			fn(idx, n, uint8(valValue(op)))
			idx += n
			p++
		}
	}
	if idx != Registers {
		return ErrCorrupt
	}
	return nil
}

// zeroRun appends the opcode of a run of n zero registers.
func zeroRun(seq []byte, n int) []byte {
	if n > zeroMaxLen {
		return append(seq, xzeroOp(n)...)
	}
	return append(seq, zeroOp(n))
}

// sparseSet is Redis's hllSparseSet: it finds the opcode covering
// register i and, if the register must grow, rewrites that opcode in
// place (splitting a run in up to three), then merges equal VAL
// neighbours around it. It promotes to dense when c exceeds a VAL or the
// split would take the value past SparseMaxBytes.
func (s *Sketch) sparseSet(i int, c uint8) (bool, error) {
	if c > valMaxValue {
		return s.promote(i, c)
	}
	b := s.b
	sp := b[HeaderSize:]
	// Step 1: the opcode at p covers registers first .. first+span-1.
	p, first, span, prev := 0, 0, 0, -1
	for p < len(sp) {
		op := sp[p]
		switch {
		case isZero(op):
			span = zeroLen(op)
		case isVal(op):
			span = valLen(op)
		default:
			span = xzeroLen(sp, p)
		}
		if i <= first+span-1 {
			break
		}
		prev = p
		p += opLen(op)
		first += span
	}
	if span == 0 || p >= len(sp) {
		return false, ErrCorrupt
	}
	op := sp[p]
	count := int(c)
	// Step 2: the trivial cases edit one byte.
	switch {
	case isVal(op) && valValue(op) >= count:
		return false, nil
	case isVal(op) && valLen(op) == 1, isZero(op) && zeroLen(op) == 1:
		sp[p] = valOp(count, 1)
		s.mergeVals(prev)
		return true, nil
	}
	// Otherwise the run splits around register i.
	var seqBuf [5]byte
	seq := seqBuf[:0]
	last := first + span - 1
	if isVal(op) {
		v := valValue(op)
		if i != first {
			seq = append(seq, valOp(v, i-first))
		}
		seq = append(seq, valOp(count, 1))
		if i != last {
			seq = append(seq, valOp(v, last-i))
		}
	} else {
		if i != first {
			seq = zeroRun(seq, i-first)
		}
		seq = append(seq, valOp(count, 1))
		if i != last {
			seq = zeroRun(seq, last-i)
		}
	}
	// Step 3: the split replaces the opcode, moving what follows.
	oldLen := opLen(op)
	delta := len(seq) - oldLen
	if delta > 0 && len(b)+delta > SparseMaxBytes {
		return s.promote(i, c)
	}
	at := HeaderSize + p
	newLen := len(b) + delta
	out := make([]byte, 0, max(newLen, at+len(seq))+8)
	out = append(out, b[:at]...)
	out = append(out, seq...)
	if at+oldLen < len(b) {
		out = append(out, b[at+oldLen:]...)
	}
	// An XZERO cut short by the string's end shortens the result as
	// Redis's length arithmetic does.
	s.b = out[:newLen]
	s.mergeVals(prev)
	return true, nil
}

// mergeVals is hllSparseSet's step 4: from the opcode at prev (or the
// first), over up to five opcodes, two adjacent VALs of one value whose
// runs fit one VAL become one.
func (s *Sketch) mergeVals(prev int) {
	p := HeaderSize
	if prev >= 0 {
		p += prev
	}
	end := len(s.b)
	for scan := 5; p < end && scan > 0; scan-- {
		op := s.b[p]
		switch {
		case isXZero(op):
			p += 2
			continue
		case isZero(op):
			p++
			continue
		}
		if p+1 < end && isVal(s.b[p+1]) {
			v1, v2 := valValue(op), valValue(s.b[p+1])
			if n := valLen(op) + valLen(s.b[p+1]); v1 == v2 && n <= valMaxLen {
				s.b[p+1] = valOp(v1, n)
				copy(s.b[p:], s.b[p+1:end])
				end--
				s.b = s.b[:end]
				continue // the merged run may merge with the next
			}
		}
		p++
	}
}

// promote turns the sketch dense and sets register i, which must grow.
func (s *Sketch) promote(i int, c uint8) (bool, error) {
	if err := s.ToDense(); err != nil {
		return false, err
	}
	denseSet(s.b[HeaderSize:], i, c)
	return true, nil
}
