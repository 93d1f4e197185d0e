package benchkit

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strings"
)

// Pair is one key=value of a benchmark's summary line, printed with Digits
// decimals; NaN or Inf prints as n/a (null in the JSON).
type Pair struct {
	Key    string
	Value  float64
	Digits int
}

// Pairs marshals as a JSON object that keeps its order.
type Pairs []Pair

// MarshalJSON implements json.Marshaler.
func (ps Pairs) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, p := range ps {
		if i > 0 {
			b.WriteByte(',')
		}
		k, _ := json.Marshal(p.Key)
		v, _ := Float(p.Value).MarshalJSON()
		b.Write(k)
		b.WriteByte(':')
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// SummaryLine formats the last line a benchmark prints:
// "<name>: key=value key=value ...".
func SummaryLine(name string, ps Pairs) string {
	var b strings.Builder
	b.WriteString(name + ":")
	for _, p := range ps {
		fmt.Fprintf(&b, " %s=%s", p.Key, FormatNumber(p.Value, p.Digits))
	}
	return b.String()
}

// FormatNumber prints x with digits decimals, or n/a for NaN and Inf.
func FormatNumber(x float64, digits int) string {
	if math.IsNaN(x) || math.IsInf(x, 0) {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", digits, x)
}

// NewPair returns the Pair key=value printed with digits decimals.
func NewPair(key string, value float64, digits int) Pair {
	return Pair{Key: key, Value: value, Digits: digits}
}
