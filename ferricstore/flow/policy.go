package flow

import (
	"encoding/binary"
	"hash/fnv"
	"strings"
)

// Backoff is how a retry's delay grows with the attempts.
type Backoff uint8

// Backoff kinds.
const (
	BackoffNone Backoff = 1 + iota
	BackoffFixed
	BackoffLinear
	BackoffExponential
)

// ParseBackoff reads "none", "fixed", "linear" or "exponential", in any
// case.
func ParseBackoff(s string) (Backoff, bool) {
	switch strings.ToLower(s) {
	case "none":
		return BackoffNone, true
	case "fixed":
		return BackoffFixed, true
	case "linear":
		return BackoffLinear, true
	case "exponential":
		return BackoffExponential, true
	}
	return 0, false
}

func (b Backoff) String() string {
	switch b {
	case BackoffNone:
		return "none"
	case BackoffFixed:
		return "fixed"
	case BackoffLinear:
		return "linear"
	case BackoffExponential:
		return "exponential"
	}
	return ""
}

// Mode is how a (type, state, partition) lane is claimed.
type Mode uint8

// Modes.
const (
	// Parallel claims any due flow (the default).
	Parallel Mode = 1 + iota
	// FIFO claims only a lane's first flow in claim order, and only
	// while no other flow of the lane is running.
	FIFO
)

func (m Mode) String() string {
	if m == FIFO {
		return "fifo"
	}
	return "parallel"
}

// Policy defaults.
const (
	DefaultMaxRetries = 3
	DefaultBaseMs     = 1_000
	DefaultMaxMs      = 30_000
	DefaultJitterPct  = 20
	// MaxRetriesCap bounds MaxRetries.
	MaxRetriesCap = 1_000
)

// Policy fields a Policy sets (Policy.Set): fields not in Set are the
// next level's (default, type, state, call; the later wins).
const (
	SetMaxRetries uint16 = 1 << iota
	SetBackoff
	SetBaseMs
	SetMaxMs
	SetJitterPct
	SetExhaustedTo
	SetMode
	SetMaxActiveMs
)

// Policy is a type's (or a type's state's) retry, lane and lifetime
// rules.
type Policy struct {
	Set         uint16
	MaxRetries  int64
	Backoff     Backoff
	BaseMs      int64
	MaxMs       int64
	JitterPct   int64
	ExhaustedTo string
	Mode        Mode
	MaxActiveMs int64
	// Generation rises by one with every change of the policy.
	Generation uint64
}

// defaultPolicy is the first level.
var defaultPolicy = Policy{
	Set:        SetMaxRetries | SetBackoff | SetBaseMs | SetMaxMs | SetJitterPct | SetExhaustedTo | SetMode | SetMaxActiveMs,
	MaxRetries: DefaultMaxRetries, Backoff: BackoffExponential, BaseMs: DefaultBaseMs, MaxMs: DefaultMaxMs,
	JitterPct: DefaultJitterPct, ExhaustedTo: Failed, Mode: Parallel,
}

// over returns p with the fields o sets taken from o.
func (p Policy) over(o Policy) Policy {
	if o.Set&SetMaxRetries != 0 {
		p.MaxRetries = o.MaxRetries
	}
	if o.Set&SetBackoff != 0 {
		p.Backoff = o.Backoff
	}
	if o.Set&SetBaseMs != 0 {
		p.BaseMs = o.BaseMs
	}
	if o.Set&SetMaxMs != 0 {
		p.MaxMs = o.MaxMs
	}
	if o.Set&SetJitterPct != 0 {
		p.JitterPct = o.JitterPct
	}
	if o.Set&SetExhaustedTo != 0 {
		p.ExhaustedTo = o.ExhaustedTo
	}
	if o.Set&SetMode != 0 {
		p.Mode = o.Mode
	}
	if o.Set&SetMaxActiveMs != 0 {
		p.MaxActiveMs = o.MaxActiveMs
	}
	p.Set |= o.Set
	return p
}

// validate checks the fields p sets.
func (p Policy) validate() bool {
	switch {
	case p.Set&SetMaxRetries != 0 && (p.MaxRetries < 0 || p.MaxRetries > MaxRetriesCap):
	case p.Set&SetBackoff != 0 && (p.Backoff < BackoffNone || p.Backoff > BackoffExponential):
	case p.Set&SetBaseMs != 0 && p.BaseMs < 0:
	case p.Set&SetMaxMs != 0 && p.MaxMs < 0:
	case p.Set&SetJitterPct != 0 && (p.JitterPct < 0 || p.JitterPct > 100):
	case p.Set&SetExhaustedTo != 0 && (p.ExhaustedTo == "" || p.ExhaustedTo == Running):
	case p.Set&SetMode != 0 && p.Mode != Parallel && p.Mode != FIFO:
	case p.Set&SetMaxActiveMs != 0 && p.MaxActiveMs < 0:
	default:
		return true
	}
	return false
}

// Delay is the wait before retry attempt (1 for the first retry) of the
// flow id at now under p: none 0; fixed BaseMs; linear BaseMs·attempt;
// exponential BaseMs·2^(attempt−1); each at most MaxMs, then moved by up
// to ±JitterPct % by a hash of (id, attempt, now), and kept within
// [0, MaxMs].
func (p Policy) Delay(id string, attempt int64, now int64) int64 {
	var d int64
	switch p.Backoff {
	case BackoffFixed:
		d = p.BaseMs
	case BackoffLinear:
		d = mulCap(p.BaseMs, attempt, p.MaxMs)
	case BackoffExponential:
		d = p.BaseMs
		for i := int64(1); i < attempt && d < p.MaxMs; i++ {
			d = mulCap(d, 2, p.MaxMs)
		}
	}
	d = min(d, p.MaxMs)
	if p.JitterPct > 0 && d > 0 {
		h := fnv.New64a()
		h.Write([]byte(id))
		var b [16]byte
		binary.LittleEndian.PutUint64(b[:8], uint64(attempt))
		binary.LittleEndian.PutUint64(b[8:], uint64(now))
		h.Write(b[:])
		span := d * p.JitterPct / 100
		if span > 0 {
			d += int64(h.Sum64()%uint64(2*span+1)) - span
		}
	}
	return max(0, min(d, p.MaxMs))
}

// mulCap is a·b, at most limit, without overflow.
func mulCap(a, b, limit int64) int64 {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > limit/b {
		return limit
	}
	return min(a*b, limit)
}
