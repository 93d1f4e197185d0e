package hll

import "math"

// alphaInf is the estimator's constant, 0.5/ln 2.
const alphaInf = 0.721347520444481703680

// Count computes the cardinality from the registers, ignoring the cache
// (PFCOUNT stores it with SetCached). ErrCorrupt for a sparse sketch whose
// opcodes do not cover exactly every register.
func (s *Sketch) Count() (uint64, error) {
	var histo [64]int
	regs := s.b[HeaderSize:]
	if s.b[4] == Dense {
		denseHisto(regs, &histo)
		return estimate(&histo), nil
	}
	idx := 0
	for p := 0; p < len(regs); {
		op := regs[p]
		switch {
		case isZero(op):
			n := zeroLen(op)
			idx += n
			histo[0] += n
			p++
		case isXZero(op):
			n := xzeroLen(regs, p)
			idx += n
			histo[0] += n
			p += 2
		default:
			n := valLen(op)
			idx += n
			histo[valValue(op)] += n
			p++
		}
	}
	if idx != Registers {
		return 0, ErrCorrupt
	}
	return estimate(&histo), nil
}

// RegisterSet holds one value per register, the union of sketches.
type RegisterSet [Registers]uint8

// Merge raises each register of m to the sketch's, if lower (Redis's
// hllMerge); ErrCorrupt as ToDense.
func (s *Sketch) Merge(m *RegisterSet) error {
	if s.b[4] == Dense {
		regs := s.b[HeaderSize:]
		for i, j := 0, 0; i+2 < len(regs); i, j = i+3, j+4 {
			v := uint32(regs[i]) | uint32(regs[i+1])<<8 | uint32(regs[i+2])<<16
			m[j] = max(m[j], uint8(v&regMax))
			m[j+1] = max(m[j+1], uint8(v>>6&regMax))
			m[j+2] = max(m[j+2], uint8(v>>12&regMax))
			m[j+3] = max(m[j+3], uint8(v>>18&regMax))
		}
		return nil
	}
	return walkSparse(s.b[HeaderSize:], func(i, n int, v uint8) {
		for j := i; j < i+n; j++ {
			m[j] = max(m[j], v)
		}
	})
}

// Count is the cardinality of the registers, as PFCOUNT of several keys
// computes it.
func (m *RegisterSet) Count() uint64 {
	var histo [64]int
	for _, v := range m {
		histo[v&63]++
	}
	return estimate(&histo)
}

// estimate is Redis's estimator over a register histogram: Ertl's
// improved raw estimator ("New cardinality estimation algorithms for
// HyperLogLog sketches", arXiv:1702.01284), with his tau and sigma
// corrections for registers at the top and at zero.
func estimate(histo *[64]int) uint64 {
	const m = float64(Registers)
	z := m * tau((m-float64(histo[q+1]))/m)
	for j := q; j >= 1; j-- {
		z += float64(histo[j])
		z *= 0.5
	}
	z += m * sigma(float64(histo[0])/m)
	return uint64(math.Round(alphaInf * m * m / z))
}

func sigma(x float64) float64 {
	if x == 1 {
		return math.Inf(1)
	}
	y, z := 1.0, x
	for {
		x *= x
		prev := z
		z += x * y
		y += y
		if z == prev {
			return z
		}
	}
}

func tau(x float64) float64 {
	if x == 0 || x == 1 {
		return 0
	}
	y, z := 1.0, 1-x
	for {
		x = math.Sqrt(x)
		prev := z
		y *= 0.5
		d := 1 - x
		z -= d * d * y
		if z == prev {
			return z / 3
		}
	}
}

// denseHisto counts dense registers by value, four registers (three
// bytes) at a time.
func denseHisto(regs []byte, histo *[64]int) {
	for i := 0; i+2 < len(regs); i += 3 {
		v := uint32(regs[i]) | uint32(regs[i+1])<<8 | uint32(regs[i+2])<<16
		histo[v&regMax]++
		histo[v>>6&regMax]++
		histo[v>>12&regMax]++
		histo[v>>18&regMax]++
	}
}
