package clusterbench

import (
	"context"
	"errors"
	"math"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// failoverTimeout bounds the wait for a write to succeed after the kill.
const failoverTimeout = 30 * time.Second

// failoverResult is one leader kill.
type failoverResult struct {
	// Victim is the member killed.
	Victim string `json:"victim"`
	Slot   int    `json:"slot,omitempty"`
	// Ms is from the SIGKILL until the first write sent after the victim
	// was gone succeeded (NaN, null, when none did in failoverTimeout).
	Ms benchkit.Float `json:"failover_ms"`
	// NewLeaderMs is from the SIGKILL until a surviving member named a
	// new leader (ours: for the key's slot, in CLUSTER SHARDS; etcd: in
	// its Status).
	NewLeaderMs benchkit.Float `json:"new_leader_ms"`
	// WritableMs is from the SIGKILL until the first of the probes, fresh
	// writes of another key of the same slot sent every 25 ms after the
	// victim exited, each waiting up to 5 s, is acknowledged: when the
	// system took writes again, whatever the looping writer's client was
	// still waiting on.
	WritableMs benchkit.Float `json:"writable_ms"`
	// WritesBefore succeeded before the kill; Errors failed between the
	// kill and the recovery, ErrorKinds by kind.
	WritesBefore int            `json:"writes_before"`
	Errors       int            `json:"errors"`
	ErrorKinds   map[string]int `json:"error_kinds,omitempty"`
	// LastAcked is the last value acknowledged before the writer stopped
	// and ReadBack what the key then held: never below it.
	LastAcked int64  `json:"last_acked"`
	ReadBack  string `json:"read_back"`
	// Error says what went wrong, when something did.
	Error string `json:"error,omitempty"`
}

// okWrite is one acknowledged write of the failover writer.
type okWrite struct{ start, end time.Time }

// errWrite is one failed write.
type errWrite struct {
	at   time.Time
	kind string
}

// writer writes 1, 2, 3, ... to one key in a loop, one write at a time.
type writer struct {
	mu        sync.Mutex
	oks       []okWrite
	errs      []errWrite
	lastAcked atomic.Int64
	stop      atomic.Bool
	done      chan struct{}
}

// startWriter runs put(v) for v = 1, 2, ... until Stop.
func startWriter(ctx context.Context, put func(ctx context.Context, v int64) error) *writer {
	w := &writer{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for v := int64(1); !w.stop.Load() && ctx.Err() == nil; v++ {
			start := time.Now()
			octx, cancel := context.WithTimeout(ctx, 2*time.Second)
			err := put(octx, v)
			cancel()
			end := time.Now()
			w.mu.Lock()
			if err == nil {
				w.oks = append(w.oks, okWrite{start, end})
				w.lastAcked.Store(v)
			} else {
				w.errs = append(w.errs, errWrite{end, errKind(err)})
			}
			w.mu.Unlock()
			if err != nil {
				time.Sleep(time.Millisecond)
			}
		}
	}()
	return w
}

// Stop stops the writer and waits for its last write.
func (w *writer) Stop() {
	w.stop.Store(true)
	<-w.done
}

func (w *writer) acked() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return len(w.oks)
}

// firstOKAfter returns the first acknowledged write sent at t or later.
func (w *writer) firstOKAfter(t time.Time) (okWrite, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	for _, ok := range w.oks {
		if !ok.start.Before(t) {
			return ok, true
		}
	}
	return okWrite{}, false
}

// errorsBetween counts the failed writes in [a, b] by kind.
func (w *writer) errorsBetween(a, b time.Time) (int, map[string]int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	n, kinds := 0, map[string]int{}
	for _, e := range w.errs {
		if !e.at.Before(a) && !e.at.After(b) {
			n++
			kinds[e.kind]++
		}
	}
	return n, kinds
}

// Probes of the failover: one every probeEvery after the kill, each
// waiting up to probeTimeout.
const (
	probeEvery   = 25 * time.Millisecond
	probeTimeout = 5 * time.Second
)

// measureFailover kills the leader with kill while w writes, and times
// the recovery: until a write sent after kill returned succeeds, until a
// probe (probe(v), v = 1, 2, ..., one every probeEvery) succeeds, and
// until newLeader (polled every 5 ms) reports a new leader.
func measureFailover(ctx context.Context, w *writer, kill func() error, probe func(ctx context.Context, v int64) error, newLeader func(context.Context) bool) failoverResult {
	res := failoverResult{WritesBefore: w.acked(), Ms: nan, NewLeaderMs: nan, WritableMs: nan}
	tKill := time.Now()
	if err := kill(); err != nil {
		res.Error = "kill: " + err.Error()
		return res
	}
	// The victim is gone: whatever succeeds from here on, another member
	// acknowledged.
	tDead := time.Now()
	pctx, cancel := context.WithTimeout(ctx, failoverTimeout)
	defer cancel()
	elected := make(chan time.Duration, 1)
	go func() {
		for pctx.Err() == nil {
			if newLeader(pctx) {
				elected <- time.Since(tKill)
				return
			}
			sleep(pctx, 5*time.Millisecond)
		}
		elected <- -1
	}()
	writable := make(chan time.Duration, 1)
	go func() {
		var (
			wg    sync.WaitGroup
			first atomic.Int64 // ns after tKill of the first success, 0: none
		)
		// The first success ends the probes still waiting.
		probing, stopProbes := context.WithCancel(pctx)
		defer stopProbes()
		defer func() {
			wg.Wait()
			if d := first.Load(); d > 0 {
				writable <- time.Duration(d)
				return
			}
			writable <- -1
		}()
		for v := int64(1); probing.Err() == nil; v++ {
			wg.Go(func() {
				octx, cancel := context.WithTimeout(probing, probeTimeout)
				defer cancel()
				if probe(octx, v) == nil {
					d := int64(time.Since(tKill))
					for {
						cur := first.Load()
						if (cur != 0 && cur <= d) || first.CompareAndSwap(cur, d) {
							break
						}
					}
					stopProbes()
				}
			})
			sleep(probing, probeEvery)
		}
	}()
	recovered := time.Time{}
	for {
		if ok, found := w.firstOKAfter(tDead); found {
			recovered = ok.end
			res.Ms = benchkit.Float(ms(ok.end.Sub(tKill)))
			break
		}
		if pctx.Err() != nil {
			res.Error = "no write succeeded within " + failoverTimeout.String() + " of the kill"
			recovered = time.Now()
			break
		}
		sleep(pctx, 2*time.Millisecond)
	}
	if d := <-elected; d >= 0 {
		res.NewLeaderMs = benchkit.Float(ms(d))
	} else if res.Error == "" {
		res.Error = "no surviving member named a new leader within " + failoverTimeout.String()
	}
	if d := <-writable; d >= 0 {
		res.WritableMs = benchkit.Float(ms(d))
	}
	res.Errors, res.ErrorKinds = w.errorsBetween(tKill, recovered)
	return res
}

// nan is a figure not measured.
var nan = benchkit.Float(math.NaN())

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// errKind names an error for tallies: a server's error reply by its first
// word (MOVED, CLUSTERDOWN, ERR, ...), a network error by its cause.
func errKind(err error) string {
	var errno syscall.Errno
	var nerr net.Error
	switch {
	case err == nil:
		return ""
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.As(err, &errno) && errno == syscall.ECONNREFUSED:
		return "connection refused"
	case errors.As(err, &errno) && errno == syscall.ECONNRESET:
		return "connection reset"
	case errors.As(err, &errno) && errno == syscall.EPIPE:
		return "broken pipe"
	case errors.As(err, &nerr) && nerr.Timeout():
		return "timeout"
	}
	s := err.Error()
	switch {
	case strings.Contains(s, "EOF"):
		return "EOF"
	case strings.Contains(s, "connection refused"):
		return "connection refused"
	case strings.Contains(s, "connection reset"):
		return "connection reset"
	case strings.Contains(s, "i/o timeout"), strings.Contains(s, "deadline exceeded"):
		return "timeout"
	}
	if rest, ok := strings.CutPrefix(s, "rpc error: code = "); ok {
		code, _, _ := strings.Cut(rest, " ")
		return "grpc " + code
	}
	word, _, _ := strings.Cut(s, " ")
	if word != "" && word == strings.ToUpper(word) && len(word) <= 16 {
		return word
	}
	if len(s) > 60 {
		s = s[:60]
	}
	return s
}
