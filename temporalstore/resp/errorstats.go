package resp

import (
	"slices"
	"strconv"
	"strings"
	"sync"
)

// maxErrorCodes bounds the error codes INFO errorstats tracks, as Redis's
// does at 128: replies with a code past it count in total_error_replies
// only.
const maxErrorCodes = 128

// errorCodes counts error replies by code, the first word of the reply
// (ERR, WRONGTYPE, NOAUTH ...). Error replies are rare, so a mutex is
// cheap enough.
type errorCodes struct {
	mu     sync.Mutex
	counts map[string]int64
}

func (e *errorCodes) count(msg string) {
	code, _, _ := strings.Cut(msg, " ")
	if !isErrorCode(code) {
		// An INFO line must not break on it (a colon, a line break).
		code = "ERR"
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.counts == nil {
		e.counts = map[string]int64{}
	}
	if _, ok := e.counts[code]; !ok && len(e.counts) >= maxErrorCodes {
		return
	}
	e.counts[code]++
}

// info returns INFO errorstats' lines, errorstat_<code>:count=<n>, by code.
func (e *errorCodes) info() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	lines := make([]string, 0, len(e.counts))
	for code, n := range e.counts {
		lines = append(lines, "errorstat_"+code+":count="+strconv.FormatInt(n, 10))
	}
	slices.Sort(lines)
	return lines
}

func (e *errorCodes) reset() {
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.counts)
}

// isErrorCode reports whether code is a word of upper-case letters, digits
// and underscores, at most 32 bytes, as Redis's codes are.
func isErrorCode(code string) bool {
	if code == "" || len(code) > 32 {
		return false
	}
	for i := 0; i < len(code); i++ {
		if c := code[i]; (c < 'A' || c > 'Z') && (c < '0' || c > '9') && c != '_' {
			return false
		}
	}
	return true
}
