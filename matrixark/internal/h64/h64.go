// Package h64 is the one hash of matrixark's keys and ids: FNV-1a 64 with
// 0 mapped to 1, so that 0 can mean "none" wherever a hash is stored. Add
// continues a state, so a prefix shared by many inputs is hashed once.
package h64

// FNV-1a 64 parameters.
const (
	Offset uint64 = 0xcbf29ce484222325
	prime  uint64 = 0x100000001b3
)

// Sum is FNV-1a 64 of s, 1 where that is 0.
func Sum(s string) uint64 { return NonZero(Add(Offset, s)) }

// Add continues FNV-1a 64 state h over s.
func Add(h uint64, s string) uint64 {
	for i := 0; i < len(s); i++ {
		h ^= uint64(s[i])
		h *= prime
	}
	return h
}

// AddBytes continues FNV-1a 64 state h over b.
func AddBytes(h uint64, b []byte) uint64 {
	for _, c := range b {
		h ^= uint64(c)
		h *= prime
	}
	return h
}

// NonZero is h, or 1 for 0.
func NonZero(h uint64) uint64 {
	if h == 0 {
		return 1
	}
	return h
}
