package resp

import (
	"math"
	"math/bits"
	"strconv"
	"strings"

	lua "github.com/yuin/gopher-lua"
)

// newBitLib is LuaBitOp's bit library, which Redis bundles: 32-bit
// operations on numbers, results as signed 32-bit integers.
func newBitLib(L *lua.LState) *lua.LTable {
	arg := func(L *lua.LState, i int) uint32 {
		f := float64(L.CheckNumber(i))
		// LuaBitOp rounds to the nearest integer (ties to even) and
		// keeps the low 32 bits.
		t := math.Mod(math.RoundToEven(f), 1<<32)
		return uint32(int64(t))
	}
	ret := func(L *lua.LState, v uint32) int {
		L.Push(lua.LNumber(int32(v)))
		return 1
	}
	fold := func(op func(a, b uint32) uint32) lua.LGFunction {
		return func(L *lua.LState) int {
			v := arg(L, 1)
			for i := 2; i <= L.GetTop(); i++ {
				v = op(v, arg(L, i))
			}
			return ret(L, v)
		}
	}
	shift := func(op func(v uint32, n uint) uint32) lua.LGFunction {
		return func(L *lua.LState) int { return ret(L, op(arg(L, 1), uint(arg(L, 2)&31))) }
	}
	fns := map[string]lua.LGFunction{
		"tobit":   func(L *lua.LState) int { return ret(L, arg(L, 1)) },
		"bnot":    func(L *lua.LState) int { return ret(L, ^arg(L, 1)) },
		"band":    fold(func(a, b uint32) uint32 { return a & b }),
		"bor":     fold(func(a, b uint32) uint32 { return a | b }),
		"bxor":    fold(func(a, b uint32) uint32 { return a ^ b }),
		"lshift":  shift(func(v uint32, n uint) uint32 { return v << n }),
		"rshift":  shift(func(v uint32, n uint) uint32 { return v >> n }),
		"arshift": shift(func(v uint32, n uint) uint32 { return uint32(int32(v) >> n) }),
		"rol":     shift(func(v uint32, n uint) uint32 { return bits.RotateLeft32(v, int(n)) }),
		"ror":     shift(func(v uint32, n uint) uint32 { return bits.RotateLeft32(v, -int(n)) }),
		"bswap":   func(L *lua.LState) int { return ret(L, bits.ReverseBytes32(arg(L, 1))) },
		"tohex": func(L *lua.LState) int {
			v := arg(L, 1)
			n := 8
			if L.GetTop() >= 2 {
				n = int(int32(arg(L, 2)))
			}
			upper := n < 0
			if upper {
				n = -n
			}
			n = min(max(n, 1), 8)
			s := strconv.FormatUint(uint64(v)&(1<<(4*n)-1), 16)
			s = strings.Repeat("0", n-len(s)) + s
			if upper {
				s = strings.ToUpper(s)
			}
			L.Push(lua.LString(s))
			return 1
		},
	}
	t := L.NewTable()
	for name, f := range fns {
		t.RawSetString(name, L.NewFunction(f))
	}
	return t
}
