package resp

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"os"
	"path"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

func registerConnection() {
	register(
		&cmdSpec{name: "ping", arity: -1, flags: flagNoAuth, run: func(c *conn, args [][]byte) {
			if c.subscribedRESP2() && len(args) <= 2 {
				// Subscribed, RESP2: a pong frame like a message's.
				c.w.array(2)
				c.w.bulkString("pong")
				if len(args) == 2 {
					c.w.bulk(args[1])
				} else {
					c.w.bulkString("")
				}
				return
			}
			switch len(args) {
			case 1:
				c.w.simple("PONG")
			case 2:
				c.w.bulk(args[1])
			default:
				c.errorf("ERR wrong number of arguments for 'ping' command")
			}
		}},
		&cmdSpec{name: "reset", arity: 1, flags: flagNoAuth | flagTxControl, run: cmdReset},
		&cmdSpec{name: "echo", arity: 2, run: func(c *conn, args [][]byte) { c.w.bulk(args[1]) }},
		&cmdSpec{name: "auth", arity: -2, flags: flagNoAuth | flagNoTx, run: cmdAuth},
		&cmdSpec{name: "hello", arity: -1, flags: flagNoAuth | flagNoTx, run: cmdHello},
		&cmdSpec{name: "quit", arity: -1, flags: flagNoAuth, run: func(c *conn, _ [][]byte) {
			c.w.ok()
			c.quit = true
		}},
		&cmdSpec{name: "dbsize", arity: 1, flags: flagNoTx, run: func(c *conn, _ [][]byte) { c.w.int(c.keyCount()) }},
		&cmdSpec{name: "info", arity: -1, flags: flagNoTx, run: cmdInfo},
		&cmdSpec{name: "command", arity: -1, run: cmdCommand},
		&cmdSpec{name: "client", arity: -2, run: cmdClient},
		&cmdSpec{name: "config", arity: -2, run: cmdConfig},
		&cmdSpec{name: "slowlog", arity: -2, run: cmdSlowlog},
		&cmdSpec{name: "latency", arity: -2, run: cmdLatency},
		&cmdSpec{name: "time", arity: 1, run: func(c *conn, _ [][]byte) {
			now := time.Now()
			c.w.array(2)
			c.w.bulkString(strconv.FormatInt(now.Unix(), 10))
			c.w.bulkString(strconv.Itoa(now.Nanosecond() / 1000))
		}},
	)
}

func cmdAuth(c *conn, args [][]byte) {
	if !c.s.authRequired() {
		c.errorf("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
		return
	}
	if len(args) > 3 {
		c.syntaxErr()
		return
	}
	// AUTH password, or AUTH username password (the user name is not used).
	if a, tenant := c.s.authenticate(args[len(args)-1]); a != accessNone {
		c.access = a
		c.setTenant(tenant)
		c.w.ok()
		return
	}
	c.errorf("WRONGPASS invalid username-password pair or user is disabled.")
}

func cmdHello(c *conn, args [][]byte) {
	proto := 0
	i := 1
	if len(args) > 1 {
		n, err := strconv.Atoi(string(args[1]))
		if err != nil {
			c.errorf("ERR Protocol version is not an integer or out of range")
			return
		}
		if n != 2 && n != 3 {
			c.errorf("NOPROTO unsupported protocol version")
			return
		}
		proto, i = n, 2
	}
	for ; i < len(args); i++ {
		switch {
		case is(args[i], "auth") && i+2 < len(args):
			if !c.s.authRequired() {
				c.errorf("ERR AUTH <password> called without any password configured for the default user. Are you sure your configuration is correct?")
				return
			}
			a, tenant := c.s.authenticate(args[i+2])
			if a == accessNone {
				c.errorf("WRONGPASS invalid username-password pair or user is disabled.")
				return
			}
			c.access = a
			c.setTenant(tenant)
			i += 2
		case is(args[i], "setname") && i+1 < len(args):
			c.setIdentity(string(args[i+1]), c.w.resp3)
			i++
		default:
			c.errorf("ERR Syntax error in HELLO option '%s'", args[i])
			return
		}
	}
	if c.access == accessNone {
		c.errorf("NOAUTH HELLO must be called with the client already authenticated, otherwise the HELLO <proto> AUTH <user> <pass> option can be used to authenticate the client and select the RESP protocol version at the same time")
		return
	}
	if proto != 0 {
		c.setIdentity(c.name, proto == 3)
	}
	ver := 2
	if c.w.resp3 {
		ver = 3
	}
	c.w.mapHeader(7)
	c.w.bulkString("server")
	c.w.bulkString("redis")
	c.w.bulkString("version")
	c.w.bulkString(c.s.opts.Version)
	c.w.bulkString("proto")
	c.w.int(int64(ver))
	c.w.bulkString("id")
	c.w.int(c.id)
	c.w.bulkString("mode")
	c.w.bulkString("standalone")
	c.w.bulkString("role")
	c.w.bulkString("master")
	c.w.bulkString("modules")
	c.w.array(0)
}

// keyCount is the number of keys in the connection's database's table.
func (c *conn) keyCount() int64 {
	st, err := c.s.opts.Engine.Stats()
	if err != nil {
		return 0
	}
	ns, table := c.namespace, c.table
	if ns == "" {
		ns = temporalstore.DefaultNamespace
	}
	if table == "" {
		table = temporalstore.DefaultTable
	}
	var n int64
	for _, s := range st {
		if s.Namespace == ns && s.Table == table {
			n += int64(s.Keys)
		}
	}
	if ks := c.keyspace(); ks != nil {
		_ = ks.Keys(c.ctx, func([]byte, string) bool { n++; return true })
	}
	return n
}

func cmdInfo(c *conn, args [][]byte) {
	want := map[string]bool{}
	for _, a := range args[1:] {
		want[strings.ToLower(string(a))] = true
	}
	all := len(want) == 0 || want["all"] || want["everything"] || want["default"]
	// As Redis: the command and latency statistics are left out of the
	// default sections, and in all and everything.
	extra := want["all"] || want["everything"]
	var b strings.Builder
	section := func(name string, lines ...string) {
		if !all && !want[name] {
			return
		}
		if (name == "commandstats" || name == "latencystats") && !extra && !want[name] {
			return
		}
		if b.Len() > 0 {
			b.WriteString("\r\n")
		}
		title := strings.ToUpper(name[:1]) + name[1:]
		if name == "cpu" {
			title = "CPU" // as Redis spells it
		}
		fmt.Fprintf(&b, "# %s\r\n", title)
		for _, l := range lines {
			b.WriteString(l)
			b.WriteString("\r\n")
		}
	}
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	host, _ := os.Hostname()
	up := time.Since(c.s.started)
	section("server", append([]string{
		"redis_version:" + c.s.opts.Version,
		"server_name:temporalstore",
		"redis_mode:standalone",
		"os:" + runtime.GOOS + " " + runtime.GOARCH,
		"arch_bits:64",
		"go_version:" + runtime.Version(),
		"process_id:" + strconv.Itoa(os.Getpid()),
		"hostname:" + host,
		"uptime_in_seconds:" + strconv.FormatInt(int64(up.Seconds()), 10),
		"uptime_in_days:" + strconv.FormatInt(int64(up.Hours()/24), 10)},
		// Beyond Redis's fields: the table this server serves, and the
		// key groups a MULTI or two-key command must keep to.
		c.servedTableInfo()...)...)
	tot := c.s.Stats()
	section("clients", "connected_clients:"+strconv.Itoa(tot.ConnectedClients),
		"blocked_clients:"+strconv.FormatInt(c.s.blocked.count.Load(), 10))
	section("memory",
		"used_memory:"+strconv.FormatUint(ms.HeapAlloc, 10),
		"used_memory_human:"+human(ms.HeapAlloc),
		"used_memory_rss:"+strconv.FormatUint(ms.Sys, 10),
		"used_memory_peak:"+strconv.FormatUint(ms.HeapSys, 10),
		"maxmemory:0",
		"mem_allocator:go")
	e := c.s.opts.Engine
	var st []temporalstore.ShardStats
	var enginePanics int64
	if e != nil {
		st, _ = e.Stats()
		enginePanics = e.Panics()
	}
	var keys, index, logBytes int64
	var records, fsyncs uint64
	var fsyncTime temporalstore.LatencyHistogram
	for _, s := range st {
		keys += int64(s.Keys)
		index += int64(s.IndexBytes)
		logBytes += s.LogBytes
		records += s.LogRecords
		fsyncs += s.LogFsyncs
		fsyncTime.Merge(s.LogFsyncLatency)
	}
	// Redis's fields that hold here: the engine is open before the
	// listener is, and every write goes to a log, as to an AOF. Then the
	// logs' own counters, over every shard.
	persistence := []string{"loading:0"}
	stats := []string{
		"total_connections_received:" + strconv.FormatInt(tot.ConnectionsReceived, 10),
		"total_commands_processed:" + strconv.FormatInt(tot.CommandsProcessed, 10),
		"total_error_replies:" + strconv.FormatInt(tot.ErrorReplies, 10),
		"contained_panics:" + strconv.FormatInt(tot.Panics+enginePanics, 10),
		"client_output_buffer_limit_disconnections:" + strconv.FormatInt(tot.PushDisconnections, 10)}
	if e != nil {
		persistence = append(persistence, "aof_enabled:1",
			"engine_log_records:"+strconv.FormatUint(records, 10),
			"engine_log_fsyncs:"+strconv.FormatUint(fsyncs, 10),
			"engine_log_fsync_p50_usec:"+strconv.FormatInt(fsyncTime.Quantile(0.5).Microseconds(), 10),
			"engine_log_fsync_p99_usec:"+strconv.FormatInt(fsyncTime.Quantile(0.99).Microseconds(), 10))
		stats = append(stats,
			"engine_keys:"+strconv.FormatInt(keys, 10),
			"engine_index_bytes:"+strconv.FormatInt(index, 10),
			"engine_log_bytes:"+strconv.FormatInt(logBytes, 10))
	}
	section("persistence", persistence...)
	section("stats", stats...)
	if cl := c.s.opts.Cluster; cl != nil {
		section("replication", clusterReplication(cl)...)
	} else {
		section("replication", "role:master", "connected_slaves:0")
	}
	var cpu []string
	if user, sys, ok := processCPU(); ok {
		cpu = []string{
			"used_cpu_sys:" + strconv.FormatFloat(sys.Seconds(), 'f', 6, 64),
			"used_cpu_user:" + strconv.FormatFloat(user.Seconds(), 'f', 6, 64),
		}
	}
	section("cpu", cpu...)
	section("errorstats", c.s.stats.errorCodes.info()...)
	if extra || want["commandstats"] || want["latencystats"] {
		st := c.s.CommandStats()
		section("commandstats", commandStatsInfo(st)...)
		section("latencystats", latencyStatsInfo(st)...)
	}
	section("keyspace", c.keyspaceInfo()...)
	c.w.bulkString(b.String())
}

func human(n uint64) string {
	switch {
	case n >= 1<<30:
		return fmt.Sprintf("%.2fG", float64(n)/(1<<30))
	case n >= 1<<20:
		return fmt.Sprintf("%.2fM", float64(n)/(1<<20))
	case n >= 1<<10:
		return fmt.Sprintf("%.2fK", float64(n)/(1<<10))
	}
	return fmt.Sprintf("%dB", n)
}

// cmdCommand answers COMMAND, COMMAND COUNT, COMMAND INFO and COMMAND DOCS
// from the command table: enough for redis-cli's hints and go-redis's
// key-position lookups.
func cmdCommand(c *conn, args [][]byte) {
	names := c.s.cmds.names()
	if len(args) == 1 {
		c.w.array(len(names))
		for _, n := range names {
			writeCommandInfo(c, c.s.cmds.byName[n])
		}
		return
	}
	switch {
	case is(args[1], "count"):
		c.w.int(int64(len(names)))
	case is(args[1], "info"):
		want := args[2:]
		if len(want) == 0 {
			want = make([][]byte, len(names))
			for i, n := range names {
				want[i] = []byte(n)
			}
		}
		c.w.array(len(want))
		for _, n := range want {
			if s := c.s.cmds.byName[strings.ToLower(string(n))]; s != nil {
				writeCommandInfo(c, s)
			} else {
				c.w.nullArray()
			}
		}
	case is(args[1], "docs"):
		want := args[2:]
		if len(want) == 0 {
			want = make([][]byte, len(names))
			for i, n := range names {
				want[i] = []byte(n)
			}
		}
		var found []*cmdSpec
		for _, n := range want {
			if s := c.s.cmds.byName[strings.ToLower(string(n))]; s != nil {
				found = append(found, s)
			}
		}
		c.w.mapHeader(len(found))
		for _, s := range found {
			c.w.bulkString(s.name)
			c.w.mapHeader(2)
			c.w.bulkString("summary")
			c.w.bulkString(s.summary)
			c.w.bulkString("group")
			c.w.bulkString(s.group)
		}
	default:
		c.errorf("ERR unknown subcommand '%s'. Try COMMAND HELP.", args[1])
	}
}

func writeCommandInfo(c *conn, s *cmdSpec) {
	c.w.array(6)
	c.w.bulkString(s.name)
	c.w.int(int64(s.arity))
	var flags []string
	if s.flags&flagWrite != 0 {
		flags = append(flags, "write")
	} else {
		flags = append(flags, "readonly")
	}
	if s.flags&flagNoAuth != 0 {
		flags = append(flags, "no_auth")
	}
	c.w.setHeader(len(flags))
	for _, f := range flags {
		c.w.simple(f)
	}
	c.w.int(int64(s.first))
	c.w.int(int64(s.last))
	c.w.int(int64(s.step))
}

func cmdClient(c *conn, args [][]byte) {
	switch {
	case is(args[1], "setname") && len(args) == 3:
		c.setIdentity(string(args[2]), c.w.resp3)
		c.w.ok()
	case is(args[1], "getname") && len(args) == 2:
		if c.name == "" {
			c.w.null()
		} else {
			c.w.bulkString(c.name)
		}
	case is(args[1], "id") && len(args) == 2:
		c.w.int(c.id)
	case (is(args[1], "no-evict") || is(args[1], "no-touch")) && len(args) == 3:
		// Nothing is evicted, and access times are not kept: both modes
		// are what the server does anyway.
		if !is(args[2], "on") && !is(args[2], "off") {
			c.syntaxErr()
			return
		}
		c.w.ok()
	case is(args[1], "reply") && len(args) == 3:
		switch {
		case is(args[2], "on"):
			if c.reply == replyOn {
				c.w.ok()
			}
			c.reply = replyOn // dispatchQuiet answers when replies were off
		case is(args[2], "off"):
			c.reply = replyOff
		case is(args[2], "skip"):
			if c.reply != replyOff {
				c.reply = replySkipNext
			}
		default:
			c.syntaxErr()
		}
	case is(args[1], "setinfo") && len(args) == 4:
		c.w.ok() // lib-name and lib-ver: accepted, not kept
	case is(args[1], "info") && len(args) == 2:
		c.w.bulkString(c.describe() + "\n")
	case is(args[1], "unblock") && (len(args) == 3 || len(args) == 4):
		id, ok := c.intArg(args[2])
		if !ok {
			return
		}
		withError := false
		if len(args) == 4 {
			switch {
			case is(args[3], "error"):
				withError = true
			case !is(args[3], "timeout"):
				c.errorf("ERR CLIENT UNBLOCK reason should be TIMEOUT or ERROR")
				return
			}
		}
		c.w.int(b2i(c.s.blocked.unblock(id, withError)))
	case is(args[1], "kill") && len(args) >= 3:
		cmdClientKill(c, args)
	case is(args[1], "list"):
		c.s.mu.Lock()
		var lines []string
		for o := range c.s.conns {
			lines = append(lines, o.describe())
		}
		c.s.mu.Unlock()
		slices.Sort(lines)
		c.w.bulkString(strings.Join(lines, "\n") + "\n")
	default:
		c.errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try CLIENT HELP.", args[1])
	}
}

// describe is c's CLIENT LIST line; the caller holds c.s.mu, under which
// another connection's name and protocol change.
func (c *conn) describe() string {
	return fmt.Sprintf("id=%d addr=%s laddr=%s name=%s age=%d db=%d resp=%d cmd=%s",
		c.id, c.nc.RemoteAddr(), c.nc.LocalAddr(), c.name, int(time.Since(c.since).Seconds()), c.db.Load(), map[bool]int{false: 2, true: 3}[c.w.resp3], c.lastName())
}

// lastName is the last command's name ("" before the first).
func (c *conn) lastName() string {
	if p := c.last.Load(); p != nil {
		return *p
	}
	return ""
}

// setIdentity changes the name and protocol CLIENT LIST shows, under the
// server's lock.
func (c *conn) setIdentity(name string, resp3 bool) {
	c.s.mu.Lock()
	c.name, c.w.resp3 = name, resp3
	c.s.mu.Unlock()
}

// cmdConfig answers CONFIG GET for the few parameters clients read at
// start (redis-benchmark reads save and appendonly) and refuses the rest.
func cmdConfig(c *conn, args [][]byte) {
	if is(args[1], "resetstat") && len(args) == 2 {
		if c.access == accessRead {
			c.errorf("NOPERM this user has no permissions to run the 'config|resetstat' command")
			return
		}
		// As Redis: the command statistics and INFO stats' totals start
		// again from zero.
		c.s.cmdStats.reset()
		c.s.stats.commands.Store(0)
		c.s.stats.errors.Store(0)
		c.s.stats.errorCodes.reset()
		c.s.stats.connections.Store(0)
		c.w.ok()
		return
	}
	if is(args[1], "set") {
		configSet(c, args)
		return
	}
	if !is(args[1], "get") || len(args) < 3 {
		c.errorf("ERR CONFIG %s is not supported", strings.ToUpper(string(args[1])))
		return
	}
	known := c.s.settings.all()
	for name, v := range map[string]string{"save": "", "appendonly": "no", "databases": strconv.Itoa(c.s.opts.Databases), "maxmemory": "0"} {
		known[name] = v
	}
	for name, t := range c.s.tunables() {
		known[name] = strconv.FormatInt(t.get(), 10)
	}
	for name, t := range c.s.stringTunables() {
		known[name] = t.get()
	}
	// Each argument is a name or, as in Redis, a glob pattern of names;
	// a setting matched twice is listed once.
	var pairs []string
	listed := map[string]bool{}
	for _, name := range slices.Sorted(maps.Keys(known)) {
		for _, a := range args[2:] {
			if ok, _ := path.Match(strings.ToLower(string(a)), name); ok && !listed[name] {
				listed[name] = true
				pairs = append(pairs, name, known[name])
			}
		}
	}
	c.w.mapHeader(len(pairs) / 2)
	for _, p := range pairs {
		c.w.bulkString(p)
	}
}

// tunable is a setting CONFIG GET shows and CONFIG SET changes while
// running, in Redis's unit, with its least value.
type tunable struct {
	least int64
	get   func() int64
	set   func(v int64)
}

// tunables are the server's settings CONFIG SET changes, by Redis's names:
// the slow log's threshold (microseconds, -1 off) and bound, and the
// latency monitor's threshold (milliseconds, 0 off).
func (s *Server) tunables() map[string]tunable {
	return map[string]tunable{
		"slowlog-log-slower-than": {least: -1, get: s.slowlogThresholdMicros, set: func(v int64) {
			t := time.Duration(-1)
			if v >= 0 {
				t = time.Duration(min(v, math.MaxInt64/int64(time.Microsecond))) * time.Microsecond
			}
			s.slowlog.threshold.Store(int64(t))
		}},
		"busy-reply-threshold": {least: 0, get: s.scripts.thresholdMs.Load, set: s.scripts.thresholdMs.Store},
		"lua-time-limit":       {least: 0, get: s.scripts.thresholdMs.Load, set: s.scripts.thresholdMs.Store},
		"slowlog-max-len":      {least: 0, get: func() int64 { return max(s.slowlog.maxLen.Load(), 0) }, set: s.slowlog.setMaxLen},
		"latency-monitor-threshold": {least: 0, get: s.latency.thresholdMs.Load, set: func(v int64) {
			s.latency.thresholdMs.Store(min(v, math.MaxInt64/int64(time.Millisecond)))
		}},
	}
}

// stringTunable is a setting CONFIG GET shows and CONFIG SET changes
// while running whose value is text. check reads a value and returns
// what applies it, or the reason it is refused (Redis's words, which
// follow "CONFIG SET failed ... - "); it changes nothing itself, so that
// CONFIG SET applies a call's values only once every one checked out.
type stringTunable struct {
	get   func() string
	check func(v string) (apply func(), err error)
}

// stringTunables are the server's text settings CONFIG SET changes, by
// Redis's names: client-output-buffer-limit, whose pubsub class bounds
// the push queues (push.go), and notify-keyspace-events (notify.go).
func (s *Server) stringTunables() map[string]stringTunable {
	return map[string]stringTunable{
		"client-output-buffer-limit": {get: func() string { return s.buffers.Load().String() }, check: s.checkBufferLimits},
		"notify-keyspace-events": {get: func() string { return formatNotify(s.notify.Load()) }, check: func(v string) (func(), error) {
			f, err := parseNotify(v)
			return func() { s.notify.Store(f) }, err
		}},
	}
}

// configSet is CONFIG SET name value [name value ...]. As in Redis 7,
// every pair is checked before any is applied, so an error changes
// nothing.
func configSet(c *conn, args [][]byte) {
	if len(args) < 4 || len(args)%2 != 0 {
		c.errorf("ERR wrong number of arguments for 'config|set' command")
		return
	}
	if c.access == accessRead {
		c.errorf("NOPERM this user has no permissions to run the 'config|set' command")
		return
	}
	tunables, texts := c.s.tunables(), c.s.stringTunables()
	values := map[string]int64{}
	var applies []func()
	ignored := map[*setting]string{}
	seen := map[string]bool{}
	for i := 2; i < len(args); i += 2 {
		name := strings.ToLower(string(args[i]))
		if seen[name] {
			c.errorf("ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter", name)
			return
		}
		seen[name] = true
		if st := c.s.settings.lookup(name); st != nil {
			if _, dup := ignored[st]; dup {
				c.errorf("ERR CONFIG SET failed (possibly related to argument '%s') - duplicate parameter", name)
				return
			}
			v, err := st.parse(string(args[i+1]))
			if err != nil {
				c.errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, err)
				return
			}
			ignored[st] = v
			continue
		}
		if t, ok := texts[name]; ok {
			apply, err := t.check(string(args[i+1]))
			if err != nil {
				c.errorf("ERR CONFIG SET failed (possibly related to argument '%s') - %s", name, err)
				return
			}
			applies = append(applies, apply)
			continue
		}
		t, ok := tunables[name]
		if !ok {
			c.errorf("ERR Unknown option or number of arguments for CONFIG SET - '%s'", args[i])
			return
		}
		v, err := strconv.ParseInt(string(args[i+1]), 10, 64)
		if err != nil {
			c.errorf("ERR CONFIG SET failed (possibly related to argument '%s') - argument couldn't be parsed into an integer", name)
			return
		}
		if v < t.least {
			c.errorf("ERR CONFIG SET failed (possibly related to argument '%s') - argument must be between %d and %d inclusive", name, t.least, int64(math.MaxInt64))
			return
		}
		values[name] = v
	}
	for name, v := range values {
		tunables[name].set(v)
	}
	for _, apply := range applies {
		apply()
	}
	c.s.settings.set(ignored)
	c.w.ok()
}

// servedTableInfo is INFO server's lines on the table served, none
// without an engine.
func (c *conn) servedTableInfo() []string {
	if c.s.opts.Engine == nil {
		return nil
	}
	return tableInfo(c.s.opts.Engine, c.namespace, c.infoTable())
}

// infoTable is the table INFO server describes: the selected database's,
// or the server's while that one is not made yet (it will be, with the
// server's options).
func (c *conn) infoTable() string {
	if c.dbReady || c.s.opts.Engine.HasTable(c.namespace, c.table) {
		return c.table
	}
	return c.s.opts.Table
}

// tableInfo is INFO server's lines on the served table, or its error.
func tableInfo(e *temporalstore.Engine, namespace, table string) []string {
	o, err := e.TableOptions(namespace, table)
	if err != nil {
		return []string{"table_error:" + err.Error()}
	}
	commit := "durable"
	if o.Async {
		commit = "async"
	}
	return []string{
		"table:" + cmp.Or(namespace, temporalstore.DefaultNamespace) + "/" + cmp.Or(table, temporalstore.DefaultTable),
		"table_shards:" + strconv.Itoa(o.Shards),
		"table_key_groups:" + strconv.Itoa(o.KeyGroups),
		"table_commit:" + commit,
	}
}

// cmdClientKill is CLIENT KILL addr (the old form: OK, or an error when
// no client has that address) and CLIENT KILL [ID id] [ADDR addr] [LADDR
// addr] [SKIPME yes|no] (the number of clients closed; the caller itself
// only with SKIPME no, after this reply).
func cmdClientKill(c *conn, args [][]byte) {
	match := func(o *conn, id int64, addr, laddr string) bool {
		return (id == 0 || o.id == id) && (addr == "" || o.nc.RemoteAddr().String() == addr) &&
			(laddr == "" || o.nc.LocalAddr().String() == laddr)
	}
	kill := func(id int64, addr, laddr string, skipMe bool) int64 {
		c.s.mu.Lock()
		defer c.s.mu.Unlock()
		var n int64
		for o := range c.s.conns {
			if !match(o, id, addr, laddr) || o == c && skipMe {
				continue
			}
			n++
			if o == c {
				c.quit = true // closed once this reply is out
				continue
			}
			o.nc.Close()
		}
		return n
	}
	if len(args) == 3 {
		if kill(0, string(args[2]), "", false) == 0 {
			c.errorf("ERR No such client")
			return
		}
		c.w.ok()
		return
	}
	var id int64
	var addr, laddr string
	skipMe := true
	for i := 2; i < len(args); i += 2 {
		if i+1 >= len(args) {
			c.syntaxErr()
			return
		}
		v := args[i+1]
		switch {
		case is(args[i], "id"):
			n, err := parseInt(v)
			if err != nil || n <= 0 {
				c.errorf("ERR client-id should be greater than 0")
				return
			}
			id = n
		case is(args[i], "addr"):
			addr = string(v)
		case is(args[i], "laddr"):
			laddr = string(v)
		case is(args[i], "skipme"):
			switch {
			case is(v, "yes"):
				skipMe = true
			case is(v, "no"):
				skipMe = false
			default:
				c.syntaxErr()
				return
			}
		default:
			c.syntaxErr()
			return
		}
	}
	c.w.int(kill(id, addr, laddr, skipMe))
}

// cmdReset is RESET: the connection as a new one would be (no
// transaction, watches, subscriptions or name; database 0; RESP2; replies
// on; unauthenticated where a token is required).
func cmdReset(c *conn, _ [][]byte) {
	c.tx = nil
	c.unwatch()
	c.closePush()
	c.push.subscriptions = 0
	c.selectDB(0)
	c.reply = replyOn
	c.setIdentity("", false)
	if c.s.authRequired() {
		c.access = accessNone
		c.setTenant("")
	}
	c.w.simple("RESET")
}
