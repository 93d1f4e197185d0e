package resp

import (
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Slow log defaults, Redis's (slowlog-log-slower-than, slowlog-max-len).
const (
	DefaultSlowlogThreshold = 10 * time.Millisecond
	DefaultSlowlogMaxLen    = 128
)

// Redis's bounds on what a slow log entry keeps of a request.
const (
	slowlogMaxArgs    = 32
	slowlogMaxArgSize = 128
)

// slowEntry is one slow call, as SLOWLOG GET returns it.
type slowEntry struct {
	id   int64
	at   time.Time
	took time.Duration
	args []string
	addr string
	name string // the connection's name (CLIENT SETNAME)
}

// slowlog keeps the newest slow calls, up to a bound. Both settings
// change at run time (CONFIG SET), so they are atomics read per call.
type slowlog struct {
	threshold atomic.Int64 // a time.Duration; negative: off
	maxLen    atomic.Int64 // negative: none kept

	mu      sync.Mutex
	entries []slowEntry // oldest first
	nextID  int64
}

func newSlowlog(threshold time.Duration, maxLen int) *slowlog {
	l := &slowlog{}
	l.threshold.Store(int64(threshold))
	l.maxLen.Store(int64(maxLen))
	return l
}

// slow reports whether a call that took d goes in the log.
func (l *slowlog) slow(d time.Duration) bool {
	t := l.threshold.Load()
	return t >= 0 && int64(d) >= t
}

// setMaxLen bounds the log to n entries, dropping the oldest beyond it.
func (l *slowlog) setMaxLen(n int64) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.maxLen.Store(n)
	l.trimLocked()
}

func (l *slowlog) trimLocked() {
	if over := len(l.entries) - int(max(l.maxLen.Load(), 0)); over > 0 {
		l.entries = append(l.entries[:0], l.entries[over:]...)
	}
}

// add logs a call of c with args that took d. The arguments are copied,
// cut as Redis cuts them: at most 32, the last saying how many more there
// were, each at most 128 bytes, saying how many more bytes it had.
func (l *slowlog) add(c *conn, args [][]byte, d time.Duration) {
	if l.maxLen.Load() <= 0 {
		return
	}
	n := min(len(args), slowlogMaxArgs)
	kept := make([]string, 0, n)
	// AUTH's and HELLO's arguments may hold a token: not kept.
	secret := len(args) > 1 && (is(args[0], "auth") || is(args[0], "hello"))
	for i, a := range args[:n] {
		if secret && i > 0 {
			kept = append(kept, "(redacted)")
			continue
		}
		if i == slowlogMaxArgs-1 && len(args) > slowlogMaxArgs {
			kept = append(kept, "... ("+strconv.Itoa(len(args)-slowlogMaxArgs+1)+" more arguments)")
			break
		}
		if len(a) > slowlogMaxArgSize {
			kept = append(kept, string(a[:slowlogMaxArgSize])+"... ("+strconv.Itoa(len(a)-slowlogMaxArgSize)+" more bytes)")
			continue
		}
		kept = append(kept, string(a))
	}
	e := slowEntry{at: time.Now(), took: d, args: kept, addr: c.nc.RemoteAddr().String(), name: c.name}
	l.mu.Lock()
	defer l.mu.Unlock()
	e.id = l.nextID
	l.nextID++
	l.entries = append(l.entries, e)
	l.trimLocked()
}

// newest returns up to n entries, newest first; n < 0: all.
func (l *slowlog) newest(n int) []slowEntry {
	l.mu.Lock()
	defer l.mu.Unlock()
	if n < 0 || n > len(l.entries) {
		n = len(l.entries)
	}
	out := make([]slowEntry, 0, n)
	for i := len(l.entries) - 1; i >= len(l.entries)-n; i-- {
		out = append(out, l.entries[i])
	}
	return out
}

func (l *slowlog) len() int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return len(l.entries)
}

func (l *slowlog) reset() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.entries = nil
}

// slowlogThresholdMicros is CONFIG GET slowlog-log-slower-than: the
// threshold in microseconds, or -1 when the log is off.
func (s *Server) slowlogThresholdMicros() int64 {
	t := time.Duration(s.slowlog.threshold.Load())
	if t < 0 {
		return -1
	}
	return t.Microseconds()
}

// cmdSlowlog is SLOWLOG GET [count] | LEN | RESET | HELP.
func cmdSlowlog(c *conn, args [][]byte) {
	l := c.s.slowlog
	switch {
	case is(args[1], "get") && len(args) <= 3:
		n := 10
		if len(args) == 3 {
			v, err := strconv.Atoi(string(args[2]))
			if err != nil || v < -1 {
				c.errorf("ERR count should be greater than or equal to -1")
				return
			}
			n = v
		}
		entries := l.newest(n)
		c.w.array(len(entries))
		for _, e := range entries {
			c.w.array(6)
			c.w.int(e.id)
			c.w.int(e.at.Unix())
			c.w.int(e.took.Microseconds())
			c.w.array(len(e.args))
			for _, a := range e.args {
				c.w.bulkString(a)
			}
			c.w.bulkString(e.addr)
			c.w.bulkString(e.name)
		}
	case is(args[1], "len") && len(args) == 2:
		c.w.int(int64(l.len()))
	case is(args[1], "reset") && len(args) == 2:
		if c.access == accessRead {
			c.errorf("NOPERM this user has no permissions to run the 'slowlog|reset' command")
			return
		}
		l.reset()
		c.w.ok()
	case is(args[1], "help") && len(args) == 2:
		help := []string{
			"SLOWLOG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"GET [<count>]",
			"    Return top <count> entries from the slowlog (default: 10, -1 mean all).",
			"    Entries are made of:",
			"    id, timestamp, time in microseconds, arguments array, client IP and port,",
			"    client name",
			"LEN",
			"    Return the length of the slowlog.",
			"RESET",
			"    Reset the slowlog.",
			"HELP",
			"    Print this help.",
		}
		c.w.simpleLines(help)
	default:
		c.errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try SLOWLOG HELP.", strings.ToUpper(string(args[1])))
	}
}
