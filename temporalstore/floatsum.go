package temporalstore

import (
	"bytes"
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Redis's INCRBYFLOAT and HINCRBYFLOAT add in C's long double, the x87
// 80-bit format on the machines Redis mostly runs on (a 64-bit mantissa),
// and print the sum with 17 decimals, trailing zeros trimmed
// (ld2string's LD_STR_HUMAN). A float64 sum printed as short as it
// round-trips gives 0.30000000000000004 for 0.1 + 0.2 where Redis gives
// 0.3; big.Float at the same precision gives Redis's digits.
const longDoublePrec = 64

// maxLongDouble is the largest finite long double; a sum past it is
// Redis's "increment would produce NaN or Infinity".
var maxLongDouble, _, _ = big.ParseFloat("1.18973149535723176502e+4932", 10, longDoublePrec, big.ToNearestEven)

// parseLongDouble parses s as Redis parses a float it adds to (strtold):
// decimal or hexadecimal (0x10), finite.
func parseLongDouble(s []byte) (*big.Float, bool) {
	text := string(s)
	base := 10
	if h := strings.TrimLeft(text, "+-"); strings.HasPrefix(h, "0x") || strings.HasPrefix(h, "0X") {
		// Base 0 reads the prefix; it would also take underscores, which
		// strtold does not.
		base = 0
		if strings.Contains(h, "_") {
			return nil, false
		}
	}
	f, _, err := big.ParseFloat(text, base, longDoublePrec, big.ToNearestEven)
	if err != nil || f.IsInf() {
		return nil, false
	}
	// Past a long double's range strtold reports ERANGE, and Redis refuses
	// the number: an overflow, or an underflow to zero.
	if a := new(big.Float).Abs(f); a.Cmp(maxLongDouble) > 0 || a.Sign() != 0 && a.Cmp(minLongDouble) < 0 {
		return nil, false
	}
	return f, true
}

// minLongDouble is half the smallest long double above zero: less rounds
// to zero.
var minLongDouble, _, _ = big.ParseFloat("1.8225997659412373012e-4951", 10, longDoublePrec, big.ToNearestEven)

// IsLongDouble reports whether b is a number INCRBYFLOAT adds to, as
// Redis reads one (strtold): finite within a long double's range, which
// reaches past a float64's (1e400 is one), or an infinity.
func IsLongDouble(b []byte) bool {
	_, ok := parseLongDouble(b)
	return ok || isInfText(b)
}

// isInfText reports whether b is an infinity as strtold reads one: a sign,
// then inf or infinity in any case.
func isInfText(b []byte) bool {
	t := strings.TrimLeft(string(b), "+-")
	if len(b)-len(t) > 1 {
		return false
	}
	return strings.EqualFold(t, "inf") || strings.EqualFold(t, "infinity")
}

// addFloat returns old (none when !found) plus the increment (incText
// when given, else inc's shortest decimal digits) as Redis's INCRBYFLOAT
// stores it, and the sum as a
// float64. notFloat is the error for an old value that is not a number.
func addFloat(old []byte, found bool, incText []byte, inc float64, notFloat error) ([]byte, float64, error) {
	sum := new(big.Float).SetPrec(longDoublePrec)
	infOld := false
	if found {
		f, ok := parseLongDouble(old)
		switch {
		case !ok && isInfText(old):
			// Redis reads a stored inf, and refuses the sum below.
			infOld = true
		case !ok:
			return nil, 0, notFloat
		default:
			sum.Set(f)
		}
	}
	if incText == nil {
		// The float64's shortest digits, as a user would have typed them:
		// 0.1, not the binary value's 0.1000000000000000055511.
		incText = strconv.AppendFloat(nil, inc, 'g', -1, 64)
	}
	d, ok := parseLongDouble(incText)
	if !ok {
		return nil, 0, fmt.Errorf("%w: value is not a valid float", ErrInvalid)
	}
	sum.Add(sum, d)
	if infOld || new(big.Float).Abs(sum).Cmp(maxLongDouble) > 0 {
		return nil, 0, fmt.Errorf("%w: increment would produce NaN or Infinity", ErrInvalid)
	}
	out := []byte(sum.Text('f', 17))
	if bytes.IndexByte(out, '.') >= 0 {
		out = bytes.TrimRight(out, "0")
		out = bytes.TrimSuffix(out, []byte("."))
	}
	if string(out) == "-0" {
		out = out[1:]
	}
	f, _ := sum.Float64()
	return out, f, nil
}
