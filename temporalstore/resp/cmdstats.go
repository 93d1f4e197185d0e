package resp

import (
	"math/bits"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"
)

// latencyBuckets is the number of a command's latency buckets: bucket i
// counts calls that took at most LatencyBounds()[i] (1 µs doubled i
// times, up to about 8.4 s); the last one counts the calls above that.
const latencyBuckets = 25

// LatencyBounds returns the upper bounds of the latency buckets of
// CommandStat.Buckets, in increasing order; the last bucket has none.
func LatencyBounds() []time.Duration {
	b := make([]time.Duration, latencyBuckets-1)
	for i := range b {
		b[i] = time.Microsecond << i
	}
	return b
}

// bucketOf returns the latency bucket of a call that took d.
func bucketOf(d time.Duration) int {
	if d <= time.Microsecond {
		return 0
	}
	return min(bits.Len64(uint64(d-1)/uint64(time.Microsecond)), latencyBuckets-1)
}

// CommandStat is what a Server counted for one command since it started
// or since CONFIG RESETSTAT, as Redis's INFO commandstats: calls that
// ran, those of them that replied with an error, and those refused before
// running (wrong arity, NOAUTH, NOPERM, not allowed in MULTI), which are
// not in Calls. Latency is the server's time on the call, from its parse
// to its reply being buffered; a pipelined run of SETs or GETs is timed
// as a whole and shared evenly by its calls.
type CommandStat struct {
	// Name is the command's lower-case name.
	Name     string
	Calls    uint64
	Failed   uint64
	Rejected uint64
	// Total is the time spent on Calls.
	Total time.Duration
	// Buckets[i] counts the calls in latency bucket i (see LatencyBounds):
	// not cumulative.
	Buckets [latencyBuckets]uint64
}

// Percentile returns the upper bound of the latency bucket holding the
// p-th percentile (0 < p <= 100) of the calls, or 0 without calls; for
// the calls above the last bound it returns twice that bound.
func (s CommandStat) Percentile(p float64) time.Duration {
	var n uint64
	for _, c := range s.Buckets {
		n += c
	}
	if n == 0 {
		return 0
	}
	// The rank of the p-th percentile, 1-based, rounded up.
	rank := uint64(float64(n)*p/100 + 0.999999)
	var seen uint64
	for i, c := range s.Buckets {
		if seen += c; seen >= max(rank, 1) {
			return time.Microsecond << i
		}
	}
	return time.Microsecond << (latencyBuckets - 1)
}

// cmdCounters are one command's counters, shared by every connection.
type cmdCounters struct {
	calls, failed, rejected, nanos atomic.Uint64
	buckets                        [latencyBuckets]atomic.Uint64
}

// commandStats holds every command's counters, by cmdSpec.id.
type commandStats struct {
	byID []cmdCounters
	list []*cmdSpec // the specs, by id
}

func newCommandStats(list []*cmdSpec) *commandStats {
	return &commandStats{byID: make([]cmdCounters, len(list)), list: list}
}

// record counts n calls of spec that took d together, failed of them with
// an error reply.
func (cs *commandStats) record(spec *cmdSpec, n int, d time.Duration, failed int) {
	if n <= 0 {
		return
	}
	ct := &cs.byID[spec.id]
	ct.calls.Add(uint64(n))
	ct.nanos.Add(uint64(max(d, 0)))
	ct.buckets[bucketOf(d/time.Duration(n))].Add(uint64(n))
	if failed > 0 {
		ct.failed.Add(uint64(failed))
	}
}

// reject counts a call of spec refused before it ran.
func (cs *commandStats) reject(spec *cmdSpec) { cs.byID[spec.id].rejected.Add(1) }

func (cs *commandStats) reset() {
	for i := range cs.byID {
		ct := &cs.byID[i]
		ct.calls.Store(0)
		ct.failed.Store(0)
		ct.rejected.Store(0)
		ct.nanos.Store(0)
		for j := range ct.buckets {
			ct.buckets[j].Store(0)
		}
	}
}

// stat returns the counters of the command with id i.
func (cs *commandStats) stat(i int) CommandStat {
	ct := &cs.byID[i]
	st := CommandStat{
		Name:     cs.list[i].name,
		Calls:    ct.calls.Load(),
		Failed:   ct.failed.Load(),
		Rejected: ct.rejected.Load(),
		Total:    time.Duration(ct.nanos.Load()),
	}
	for j := range ct.buckets {
		st.Buckets[j] = ct.buckets[j].Load()
	}
	return st
}

// snapshot returns the commands called or rejected at least once, by name.
func (cs *commandStats) snapshot() []CommandStat {
	var out []CommandStat
	for i := range cs.byID {
		if st := cs.stat(i); st.Calls > 0 || st.Rejected > 0 {
			out = append(out, st)
		}
	}
	// The built-ins are in name order, added commands after them.
	slices.SortFunc(out, func(a, b CommandStat) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// clock is the time since the server started, by the monotonic clock:
// two readings time a command with two clock reads, where time.Now and
// time.Since take three (Now reads the wall clock too).
func (s *Server) clock() time.Duration { return time.Since(s.started) }

// CommandStats returns the counters of every command called (or refused)
// at least once since the server started or since CONFIG RESETSTAT, by
// name. Unknown commands are not counted here (INFO stats'
// total_error_replies has them).
func (s *Server) CommandStats() []CommandStat { return s.cmdStats.snapshot() }

// CommandStat returns the counters of the command named name (lower
// case): zero ones when it was not called or is not served.
func (s *Server) CommandStat(name string) CommandStat {
	if spec := s.cmds.byName[name]; spec != nil {
		return s.cmdStats.stat(spec.id)
	}
	return CommandStat{Name: name}
}

// Stats are a Server's connection and command totals.
type Stats struct {
	// ConnectedClients is the number of open connections.
	ConnectedClients int
	// ConnectionsReceived counts connections accepted since start.
	ConnectionsReceived int64
	// CommandsProcessed counts commands run since start.
	CommandsProcessed int64
	// ErrorReplies counts error replies sent since start.
	ErrorReplies int64
	// Panics counts the panics the server contained while serving
	// requests (the engine counts its own: Engine.Panics).
	Panics int64
	// PushDisconnections counts the connections closed because their
	// queue of pushed frames passed Options.PushLimits (a slow
	// subscriber).
	PushDisconnections int64
}

// Stats returns the server's totals, as INFO stats shows them.
func (s *Server) Stats() Stats {
	return Stats{
		ConnectedClients:    s.Clients(),
		ConnectionsReceived: s.stats.connections.Load(),
		CommandsProcessed:   s.stats.commands.Load(),
		ErrorReplies:        s.stats.errors.Load(),
		Panics:              s.stats.panics.Load(),
		PushDisconnections:  s.stats.pushDrops.Load(),
	}
}

// commandStatsInfo is INFO commandstats, as Redis writes it.
func commandStatsInfo(st []CommandStat) []string {
	lines := make([]string, 0, len(st))
	for _, s := range st {
		usec := s.Total.Microseconds()
		per := 0.0
		if s.Calls > 0 {
			per = float64(s.Total.Nanoseconds()) / 1e3 / float64(s.Calls)
		}
		lines = append(lines, "cmdstat_"+s.Name+":calls="+strconv.FormatUint(s.Calls, 10)+
			",usec="+strconv.FormatInt(usec, 10)+
			",usec_per_call="+strconv.FormatFloat(per, 'f', 2, 64)+
			",rejected_calls="+strconv.FormatUint(s.Rejected, 10)+
			",failed_calls="+strconv.FormatUint(s.Failed, 10))
	}
	return lines
}

// latencyStatsInfo is INFO latencystats: p50, p99 and p99.9 of each
// command called, in microseconds, as Redis writes them; ours are the
// upper bounds of power-of-two buckets, where Redis's histograms are
// finer.
func latencyStatsInfo(st []CommandStat) []string {
	var lines []string
	for _, s := range st {
		if s.Calls == 0 {
			continue
		}
		var b strings.Builder
		b.WriteString("latency_percentiles_usec_" + s.Name + ":")
		for i, p := range []struct {
			label string
			p     float64
		}{{"p50", 50}, {"p99", 99}, {"p99.9", 99.9}} {
			if i > 0 {
				b.WriteByte(',')
			}
			us := float64(s.Percentile(p.p).Nanoseconds()) / 1e3
			b.WriteString(p.label + "=" + strconv.FormatFloat(us, 'f', 3, 64))
		}
		lines = append(lines, b.String())
	}
	return lines
}

// cmdLatency is LATENCY HISTOGRAM [command ...], the latency monitor's
// LATEST, HISTORY and RESET (latency.go), and HELP. The histogram is Redis
// 7's: per command called, its calls and the cumulative count of calls at
// each power-of-two bound in microseconds where that count grows. DOCTOR
// and GRAPH, Redis's prose and ASCII-art readings of the monitor, get an
// error naming what is served instead.
func cmdLatency(c *conn, args [][]byte) {
	switch {
	case is(args[1], "histogram"):
		st := c.s.CommandStats()
		if len(args) > 2 {
			st = st[:0]
			for _, a := range args[2:] {
				name := strings.ToLower(string(a))
				if !slices.ContainsFunc(st, func(s CommandStat) bool { return s.Name == name }) {
					st = append(st, c.s.CommandStat(name))
				}
			}
		}
		st = slices.DeleteFunc(st, func(s CommandStat) bool { return s.Calls == 0 })
		c.w.mapHeader(len(st))
		for _, s := range st {
			filled := 0
			for _, b := range s.Buckets {
				if b > 0 {
					filled++
				}
			}
			c.w.bulkString(s.Name)
			c.w.mapHeader(2)
			c.w.bulkString("calls")
			c.w.int(int64(s.Calls))
			c.w.bulkString("histogram_usec")
			c.w.mapHeader(filled)
			var cum uint64
			for i, b := range s.Buckets {
				if b == 0 {
					continue // as Redis: only the bounds the count grows at
				}
				cum += b
				c.w.int(1 << i)
				c.w.int(int64(cum))
			}
		}
	case is(args[1], "latest") && len(args) == 2:
		entries := c.s.latency.latest()
		c.w.array(len(entries))
		for _, e := range entries {
			c.w.array(4)
			c.w.bulkString(e.event)
			c.w.int(e.at.Unix())
			c.w.int(e.ms)
			c.w.int(e.max)
		}
	case is(args[1], "history") && len(args) == 3:
		samples := c.s.latency.history(string(args[2]))
		c.w.array(len(samples))
		for _, s := range samples {
			c.w.array(2)
			c.w.int(s.at.Unix())
			c.w.int(s.ms)
		}
	case is(args[1], "reset"):
		if c.access == accessRead {
			c.errorf("NOPERM this user has no permissions to run the 'latency|reset' command")
			return
		}
		names := make([]string, 0, len(args)-2)
		for _, a := range args[2:] {
			names = append(names, string(a))
		}
		c.w.int(int64(c.s.latency.reset(names)))
	case is(args[1], "help") && len(args) == 2:
		help := []string{
			"LATENCY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"HISTORY <event>",
			"    Return time-latency samples for the <event> class.",
			"LATEST",
			"    Return the latest latency samples for all events.",
			"RESET [<event> ...]",
			"    Reset latency data of one or more <event> classes.",
			"    (default: reset all data for all event classes)",
			"HISTOGRAM [COMMAND ...]",
			"    Return a cumulative distribution of latencies in the format of a histogram for the specified command names.",
			"    If no commands are specified then all histograms are replied.",
			"HELP",
			"    Print this help.",
		}
		c.w.simpleLines(help)
	default:
		c.errorf("ERR LATENCY %s is not supported: LATENCY LATEST, HISTORY, RESET and HISTOGRAM are; DOCTOR and GRAPH are not implemented", strings.ToUpper(string(args[1])))
	}
}
