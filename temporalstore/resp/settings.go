package resp

import (
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"sync"
)

// settingKind is how CONFIG SET reads a setting's value, as Redis reads it.
type settingKind uint8

const (
	settingInt    settingKind = iota // an integer between min and max
	settingMemory                    // a byte count, with Redis's units (64, 1kb, 2mb)
	settingBool                      // yes or no
	settingEnum                      // one of values
)

// setting is one of Redis's encoding and tuning parameters that mean
// nothing to this engine (its collections have their own encodings, its
// memory is budgeted by its own options). Programs and client test suites
// set them, so they are accepted, checked as Redis checks them, remembered
// and reported back; OBJECT ENCODING reads the encoding thresholds.
type setting struct {
	name    string
	aliases []string // older names of the same setting (ziplist for listpack)
	kind    settingKind
	def     string
	min     int64
	max     int64
	values  []string
}

const intMax = math.MaxInt32

// ignoredSettings are the accepted and ignored parameters, with Redis 7's
// defaults and bounds.
var ignoredSettings = []setting{
	{name: "hash-max-listpack-entries", aliases: []string{"hash-max-ziplist-entries"}, kind: settingInt, def: "128", max: math.MaxInt64},
	{name: "hash-max-listpack-value", aliases: []string{"hash-max-ziplist-value"}, kind: settingMemory, def: "64"},
	{name: "zset-max-listpack-entries", aliases: []string{"zset-max-ziplist-entries"}, kind: settingInt, def: "128", max: math.MaxInt64},
	{name: "zset-max-listpack-value", aliases: []string{"zset-max-ziplist-value"}, kind: settingMemory, def: "64"},
	{name: "list-max-listpack-size", aliases: []string{"list-max-ziplist-size"}, kind: settingInt, def: "-2", min: math.MinInt32, max: intMax},
	{name: "list-compress-depth", kind: settingInt, def: "0", max: intMax},
	{name: "set-max-intset-entries", kind: settingInt, def: "512", max: math.MaxInt64},
	{name: "set-max-listpack-entries", kind: settingInt, def: "128", max: math.MaxInt64},
	{name: "set-max-listpack-value", kind: settingMemory, def: "64"},
	{name: "hll-sparse-max-bytes", kind: settingMemory, def: "3000"},
	{name: "stream-node-max-bytes", kind: settingMemory, def: "4096"},
	{name: "stream-node-max-entries", kind: settingInt, def: "100", max: math.MaxInt64},
	{name: "hz", kind: settingInt, def: "10", max: intMax},
	{name: "dynamic-hz", kind: settingBool, def: "yes"},
	{name: "activerehashing", kind: settingBool, def: "yes"},
	{name: "activedefrag", kind: settingBool, def: "no"},
	{name: "active-expire-effort", kind: settingInt, def: "1", min: 1, max: 10},
	{name: "lazyfree-lazy-eviction", kind: settingBool, def: "no"},
	{name: "lazyfree-lazy-expire", kind: settingBool, def: "no"},
	{name: "lazyfree-lazy-server-del", kind: settingBool, def: "no"},
	{name: "lazyfree-lazy-user-del", kind: settingBool, def: "no"},
	{name: "lazyfree-lazy-user-flush", kind: settingBool, def: "no"},
	{name: "maxmemory-policy", kind: settingEnum, def: "noeviction", values: []string{"volatile-lru", "volatile-lfu", "volatile-random", "volatile-ttl", "allkeys-lru", "allkeys-lfu", "allkeys-random", "noeviction"}},
	{name: "maxmemory-samples", kind: settingInt, def: "5", min: 1, max: 64},
	{name: "lfu-log-factor", kind: settingInt, def: "10", max: intMax},
	{name: "lfu-decay-time", kind: settingInt, def: "1", max: intMax},
	{name: "timeout", kind: settingInt, def: "0", max: intMax},
	{name: "tcp-keepalive", kind: settingInt, def: "300", max: intMax},
	{name: "latency-tracking", kind: settingBool, def: "yes"},
}

// settings holds the ignored parameters' values, by name.
type settings struct {
	mu     sync.Mutex
	byName map[string]*setting
	values map[string]string // by the setting's name
}

func newSettings() *settings {
	s := &settings{byName: map[string]*setting{}, values: map[string]string{}}
	for i := range ignoredSettings {
		st := &ignoredSettings[i]
		s.byName[st.name] = st
		for _, a := range st.aliases {
			s.byName[a] = st
		}
		s.values[st.name] = st.def
	}
	return s
}

// lookup returns the setting named name (an alias included), if any.
func (s *settings) lookup(name string) *setting { return s.byName[name] }

// all returns every name (aliases included) with its value.
func (s *settings) all() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make(map[string]string, len(s.byName))
	for name, st := range s.byName {
		out[name] = s.values[st.name]
	}
	return out
}

// int returns an integer setting's value.
func (s *settings) int(name string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	n, _ := strconv.ParseInt(s.values[s.byName[name].name], 10, 64)
	return n
}

func (s *settings) get(name string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.values[s.byName[name].name]
}

func (s *settings) set(values map[*setting]string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for st, v := range values {
		s.values[st.name] = v
	}
}

// parse checks v as CONFIG SET does and returns the value as CONFIG GET
// shows it, or Redis's reason for refusing it.
func (st *setting) parse(v string) (string, error) {
	switch st.kind {
	case settingBool:
		switch strings.ToLower(v) {
		case "yes", "no":
			return strings.ToLower(v), nil
		}
		return "", fmt.Errorf("argument must be 'yes' or 'no'")
	case settingEnum:
		if slices.Contains(st.values, strings.ToLower(v)) {
			return strings.ToLower(v), nil
		}
		return "", fmt.Errorf("argument(s) must be one of the following: %s", strings.Join(st.values, ", "))
	case settingMemory:
		n, ok := parseMemory(v)
		if !ok {
			return "", fmt.Errorf("argument must be a memory value")
		}
		return strconv.FormatUint(n, 10), nil
	}
	n, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return "", fmt.Errorf("argument couldn't be parsed into an integer")
	}
	if n < st.min || n > st.max {
		return "", fmt.Errorf("argument must be between %d and %d inclusive", st.min, st.max)
	}
	if st.name == "hz" {
		n = min(max(n, 1), 500) // Redis's bounds on what it keeps
	}
	return strconv.FormatInt(n, 10), nil
}

// parseMemory reads a byte count as Redis's memtoull: digits and an
// optional unit, k/m/g powers of 1000 and kb/mb/gb powers of 1024.
func parseMemory(v string) (uint64, bool) {
	lower := strings.ToLower(v)
	digits, mul := lower, uint64(1)
	for _, u := range []struct {
		suffix string
		mul    uint64
	}{{"gb", 1 << 30}, {"mb", 1 << 20}, {"kb", 1 << 10}, {"g", 1e9}, {"m", 1e6}, {"k", 1e3}, {"b", 1}} {
		if strings.HasSuffix(lower, u.suffix) {
			digits, mul = strings.TrimSuffix(lower, u.suffix), u.mul
			break
		}
	}
	if digits == "" || strings.ContainsAny(digits, "+-") {
		return 0, false
	}
	n, err := strconv.ParseUint(digits, 10, 64)
	if err != nil || n > math.MaxUint64/mul {
		return 0, false
	}
	return n * mul, true
}
