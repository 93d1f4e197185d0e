package stream

import (
	"errors"
	"math"
	"strconv"
	"strings"
)

// ID is a stream entry's ID: a millisecond time and a sequence number
// within it, compared in that order.
type ID struct {
	Ms, Seq uint64
}

// MaxID is the largest ID ("+").
var MaxID = ID{math.MaxUint64, math.MaxUint64}

// Compare returns -1, 0 or 1 as id is before, equal to or after o.
func (id ID) Compare(o ID) int {
	switch {
	case id.Ms < o.Ms:
		return -1
	case id.Ms > o.Ms:
		return 1
	case id.Seq < o.Seq:
		return -1
	case id.Seq > o.Seq:
		return 1
	}
	return 0
}

// Less reports whether id is before o.
func (id ID) Less(o ID) bool { return id.Compare(o) < 0 }

// IsZero reports whether id is 0-0.
func (id ID) IsZero() bool { return id == ID{} }

// String is the ID as Redis writes it: "ms-seq".
func (id ID) String() string { return string(id.Append(nil)) }

// Append appends the ID's text to dst.
func (id ID) Append(dst []byte) []byte {
	dst = strconv.AppendUint(dst, id.Ms, 10)
	dst = append(dst, '-')
	return strconv.AppendUint(dst, id.Seq, 10)
}

// Next is the ID right after id; false for MaxID.
func (id ID) Next() (ID, bool) {
	switch {
	case id.Seq < math.MaxUint64:
		return ID{id.Ms, id.Seq + 1}, true
	case id.Ms < math.MaxUint64:
		return ID{id.Ms + 1, 0}, true
	}
	return id, false
}

// Prev is the ID right before id; false for 0-0.
func (id ID) Prev() (ID, bool) {
	switch {
	case id.Seq > 0:
		return ID{id.Ms, id.Seq - 1}, true
	case id.Ms > 0:
		return ID{id.Ms - 1, math.MaxUint64}, true
	}
	return id, false
}

// ErrInvalidID is Redis's error for an ID that does not parse.
var ErrInvalidID = errors.New("ERR Invalid stream ID specified as stream command argument")

// maxIDText is the longest ID text Redis looks at.
const maxIDText = 127

// ParseID reads an ID as Redis's range arguments take it: "-" (0-0), "+"
// (MaxID), "ms-seq", or "ms" alone, whose sequence is then missingSeq (0
// for a start, math.MaxUint64 for an end).
func ParseID(s string, missingSeq uint64) (ID, error) {
	switch s {
	case "-":
		return ID{}, nil
	case "+":
		return MaxID, nil
	}
	id, auto, err := parseID(s, missingSeq, false)
	if err != nil || auto {
		return ID{}, ErrInvalidID
	}
	return id, nil
}

// ParseStrictID reads an explicit ID, as XACK, XDEL, XCLAIM and MINID take
// it: "ms-seq" or "ms" (sequence 0); not "-" or "+".
func ParseStrictID(s string) (ID, error) { return ParseStrictBound(s, 0) }

// ParseStrictBound is ParseStrictID for an exclusive range bound ("(id"),
// whose bare "ms" has the sequence missingSeq.
func ParseStrictBound(s string, missingSeq uint64) (ID, error) {
	if s == "-" || s == "+" {
		return ID{}, ErrInvalidID
	}
	id, _, err := parseID(s, missingSeq, false)
	return id, err
}

// ParseAddID reads XADD's ID argument other than "*": an explicit
// "ms-seq", "ms" (sequence 0), or "ms-*", for which seqAuto is true and
// the sequence is to be chosen.
func ParseAddID(s string) (id ID, seqAuto bool, err error) {
	if s == "-" || s == "+" {
		return ID{}, false, ErrInvalidID
	}
	return parseID(s, 0, true)
}

func parseID(s string, missingSeq uint64, allowAutoSeq bool) (ID, bool, error) {
	if len(s) > maxIDText {
		return ID{}, false, ErrInvalidID
	}
	msText, seqText, hasSeq := strings.Cut(s, "-")
	ms, ok := parseU64(msText)
	if !ok {
		return ID{}, false, ErrInvalidID
	}
	if !hasSeq {
		return ID{ms, missingSeq}, false, nil
	}
	if allowAutoSeq && seqText == "*" {
		return ID{ms, 0}, true, nil
	}
	seq, ok := parseU64(seqText)
	if !ok {
		return ID{}, false, ErrInvalidID
	}
	return ID{ms, seq}, false, nil
}

// parseU64 reads an unsigned 64-bit decimal as Redis's string2ull does:
// a strict integer (which must not be negative), else whatever C's
// strtoull takes whole (leading white space, a sign, leading zeros).
func parseU64(s string) (uint64, bool) {
	if v, err := strconv.ParseInt(s, 10, 64); err == nil && strictInt(s) {
		return uint64(v), v >= 0
	}
	return strtoull(s)
}

// strictInt reports whether s is in the form Redis's string2ll accepts:
// an optional '-', then "0" or digits without a leading zero.
func strictInt(s string) bool {
	t := s
	if len(t) > 0 && t[0] == '-' {
		t = t[1:]
		if t == "0" {
			return false
		}
	}
	if t == "" || (t[0] == '0' && len(t) > 1) {
		return false
	}
	for i := 0; i < len(t); i++ {
		if t[i] < '0' || t[i] > '9' {
			return false
		}
	}
	return true
}

// strtoull is C's strtoull in base 10, required to consume all of s: it
// skips leading white space, takes a sign ('-' negates modulo 2⁶⁴) and
// refuses an empty number or one past 2⁶⁴−1.
func strtoull(s string) (uint64, bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || (s[i] >= '\t' && s[i] <= '\r')) {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return 0, false
	}
	var v uint64
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return 0, false
		}
		d := uint64(c - '0')
		if v > (math.MaxUint64-d)/10 {
			return 0, false
		}
		v = v*10 + d
	}
	if neg {
		v = -v
	}
	return v, true
}
