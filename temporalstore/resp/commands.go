package resp

import (
	"bytes"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// cmdFlags describe a command.
type cmdFlags uint8

const (
	// flagWrite: the command writes (refused to read-only access).
	flagWrite cmdFlags = 1 << iota
	// flagNoAuth: allowed before AUTH.
	flagNoAuth
	// flagTxControl: MULTI, EXEC, DISCARD, WATCH: never queued.
	flagTxControl
	// flagNoTx: refused inside MULTI.
	flagNoTx
	// flagOwnDB: a write that creates the databases it writes itself, or
	// none (MOVE, SWAPDB, FLUSHDB): runTimed does not create the
	// selected one for it.
	flagOwnDB
	// flagNoScript: refused to scripts (redis.call).
	flagNoScript
)

// cmdSpec is one command: Redis's arity (positive: exact; negative: at
// least), flags, where its keys are (first, last (negative: from the
// end), step; first 0 when it has none), and its handler.
type cmdSpec struct {
	name              string
	arity             int
	flags             cmdFlags
	first, last, step int
	run               func(c *conn, args [][]byte)
	// keys, when set, finds the keys of a command whose key count is an
	// argument (ZUNIONSTORE, SINTERCARD), which first, last and step
	// cannot describe.
	keys func(args [][]byte) [][]byte
	// runMany, when set, serves a pipelined run of the verb's calls
	// (Command.RunMany).
	runMany        func(c *conn, calls [][][]byte)
	summary, group string
	// id indexes the command's counters (commandList[id] is this spec).
	id int
}

// keysOf returns the keys of a request, by the spec's key positions.
func (s *cmdSpec) keysOf(args [][]byte) [][]byte {
	if s.keys != nil {
		return s.keys(args)
	}
	if s.first == 0 || s.first >= len(args) {
		return nil
	}
	last := s.last
	if last < 0 {
		last = len(args) + last
	}
	var keys [][]byte
	for i := s.first; i <= last && i < len(args); i += max(s.step, 1) {
		keys = append(keys, args[i])
	}
	return keys
}

// commands is the command table, by lower-case name; Commands lists it.
// commandList is the same table by cmdSpec.id (names in order).
var (
	commands    = map[string]*cmdSpec{}
	commandList []*cmdSpec
	// setSpec and getSpec are SET's and GET's, which pipelined runs count.
	setSpec, getSpec *cmdSpec
)

func register(specs ...*cmdSpec) {
	for _, s := range specs {
		commands[s.name] = s
	}
}

// Commands returns the names of the built-in commands, for documentation.
func Commands() []string {
	out := make([]string, 0, len(commands))
	for n := range commands {
		out = append(out, n)
	}
	return out
}

func init() {
	registerConnection()
	registerCluster()
	registerDatabases()
	registerStrings()
	registerKeys()
	registerHashes()
	registerSets()
	registerZSets()
	registerLists()
	registerFeatures()
	registerControl()
	registerTx()
	registerRandom()
	registerBits()
	registerBlocking()
	registerIntrospection()
	registerHLL()
	registerScripting()
	registerTables()
	markNoScript()
	setSpec, getSpec = commands["set"], commands["get"]
	for name, d := range commandDocs {
		if s := commands[name]; s != nil {
			s.group, s.summary = d[0], d[1]
		}
	}
	for _, name := range slices.Sorted(maps.Keys(commands)) {
		commands[name].id = len(commandList)
		commandList = append(commandList, commands[name])
	}
}

// cString is b up to its first NUL, as C's printf writes it.
func cString(b []byte) []byte {
	if i := bytes.IndexByte(b, 0); i >= 0 {
		return b[:i]
	}
	return b
}

func lowerName(b []byte, buf []byte) []byte {
	buf = buf[:0]
	for _, c := range b {
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		buf = append(buf, c)
	}
	return buf
}

func (c *conn) dispatch(args [][]byte) {
	var nb [32]byte
	name := lowerName(args[0], nb[:0])
	spec := c.s.cmds.byName[string(name)]
	c.noteCall(spec)
	if spec == nil {
		// Redis quotes the arguments while the list is under 128 bytes,
		// each cut to what is left of them, and C strings end at a NUL.
		var sb strings.Builder
		for _, a := range args[1:] {
			if sb.Len() >= 128 {
				break
			}
			a = cString(a)
			fmt.Fprintf(&sb, "'%s' ", a[:min(len(a), 128-sb.Len())])
		}
		name := cString(args[0])
		c.errorf("ERR unknown command '%s', with args beginning with: %s", name[:min(len(name), 128)], sb.String())
		c.txFail()
		return
	}
	c.last.Store(&spec.name)
	if (spec.arity > 0 && len(args) != spec.arity) || (spec.arity < 0 && len(args) < -spec.arity) {
		c.refuse(spec, fmt.Sprintf("ERR wrong number of arguments for '%s' command", spec.name))
		return
	}
	if c.access == accessNone && spec.flags&flagNoAuth == 0 {
		c.refuse(spec, "NOAUTH Authentication required.")
		return
	}
	if spec.flags&flagWrite != 0 && c.access == accessRead {
		c.refuse(spec, fmt.Sprintf("NOPERM this user has no permissions to run the '%s' command", spec.name))
		return
	}
	if msg := c.tenantRefusal(spec, args); msg != "" {
		c.refuse(spec, msg)
		return
	}
	if c.subscribedRESP2() && !subscribedVerbs[spec.name] {
		c.refuse(spec, fmt.Sprintf("ERR Can't execute '%s': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context", spec.name))
		return
	}
	if !c.routed(spec, args) {
		return
	}
	if c.tx != nil && spec.flags&flagTxControl == 0 {
		if spec.flags&flagNoTx != 0 {
			c.refuse(spec, "ERR Command not allowed inside a transaction")
			return
		}
		// Counted when EXEC runs it.
		c.tx.queue(spec, args)
		c.w.simple("QUEUED")
		return
	}
	if spec.flags&flagWrite != 0 && len(c.watch) > 0 {
		c.runWatched(spec, args)
		return
	}
	c.runTimed(spec, args)
}

// refuse answers a call of spec refused before it ran with msg, and
// rejects it. An EXEC refused so ends the transaction, as Redis's does:
// EXECABORT with the reason (outside MULTI too), and MULTI and the
// watches are gone.
func (c *conn) refuse(spec *cmdSpec, msg string) {
	if spec.name == "exec" {
		code, rest, _ := strings.Cut(msg, " ")
		if code != "ERR" {
			rest = msg
		}
		c.errorf("EXECABORT Transaction discarded because of: %s", rest)
		c.tx = nil
		c.unwatch()
		c.s.cmdStats.reject(spec)
		return
	}
	c.errorf("%s", msg)
	c.reject(spec)
}

// reject counts a call of spec refused before it ran, and fails the
// transaction being queued, if any.
func (c *conn) reject(spec *cmdSpec) {
	c.s.cmdStats.reject(spec)
	c.txFail()
}

// runTimed runs spec and counts the call, its time, and whether it
// replied with an error. The errors of commands it runs in turn (EXEC's)
// are theirs, not its own.
func (c *conn) runTimed(spec *cmdSpec, args [][]byte) {
	before := c.errReplies
	start := c.s.clock()
	if c.s.opts.faults.command != nil {
		c.s.opts.faults.command(args)
	}
	if spec.flags&(flagWrite|flagOwnDB) != flagWrite || c.ensureDB() {
		spec.run(c, args)
	}
	d := c.s.clock() - start - c.blockedFor
	c.blockedFor = 0
	if spec.flags&flagWrite != 0 {
		c.s.blocked.wake() // it may have given a blocked client something
	}
	failed := 0
	if c.errReplies > before {
		failed = 1
	}
	c.errReplies, c.lastFailed = before, failed == 1
	c.observe(spec, 1, d, failed, func(int) [][]byte { return args })
}

// observe hands n calls of spec that took took together, failed of them
// with an error reply, to everything that watches calls: the command
// statistics, and with each call's share of the time the slow log and the
// latency monitor. args(i) is call i's request, built only for the slow
// log.
func (c *conn) observe(spec *cmdSpec, n int, took time.Duration, failed int, args func(i int) [][]byte) {
	c.s.cmdStats.record(spec, n, took, failed)
	share := took / time.Duration(max(n, 1))
	if c.s.slowlog.slow(share) {
		for i := range n {
			c.s.slowlog.add(c, args(i), share)
		}
	}
	c.s.latency.record(latencyEventCommand, share)
}

// exec runs cmd on the engine in the server's table; on an error it writes
// the error reply and returns false.
func (c *conn) exec(cmd temporalstore.Command) (temporalstore.Response, bool) {
	return c.execIn(c.command(cmd))
}

// command puts v in the connection's command, which every command the
// connection runs goes through (exec, execIn): it is passed on by pointer
// rather than copied at each step (a Command is some 800 bytes), and,
// being the connection's, is not moved to the heap per call. A handler
// that took it must not run another command before it is done with it.
func (c *conn) command(v temporalstore.Command) *temporalstore.Command {
	c.cmd = v
	return &c.cmd
}

// onePoint is p as the points of the connection's command, without
// allocating a slice for it.
func (c *conn) onePoint(p temporalstore.Point) []temporalstore.Point {
	c.point1[0] = p
	return c.point1[:]
}

// execIn is exec for a command in place: the connection's own (command),
// which the engine may change while it runs.
func (c *conn) execIn(cmd *temporalstore.Command) (temporalstore.Response, bool) {
	cmd.Namespace, cmd.Table, cmd.Tenant = c.namespace, c.table, c.tenant
	r, err := c.engine().ExecuteInPlace(c.ctx, cmd)
	if err != nil {
		c.engineError(err)
		return r, false
	}
	return r, true
}

// engineError writes the Redis error for an engine error.
func (c *conn) engineError(err error) {
	msg := err.Error()
	detail := func(sentinel error) string {
		return strings.TrimPrefix(strings.TrimPrefix(msg, sentinel.Error()), ": ")
	}
	switch {
	case errors.Is(err, temporalstore.ErrWrongType):
		c.errorf("WRONGTYPE Operation against a key holding the wrong kind of value")
	case errors.Is(err, temporalstore.ErrNotInteger):
		if d := detail(temporalstore.ErrNotInteger); strings.HasPrefix(d, "hash value") {
			c.errorf("ERR %s", d)
		} else {
			c.errorf("ERR value is not an integer or out of range")
		}
	case errors.Is(err, temporalstore.ErrNotFloat):
		if d := detail(temporalstore.ErrNotFloat); strings.HasPrefix(d, "hash value") {
			c.errorf("ERR %s", d)
		} else {
			c.errorf("ERR value is not a valid float")
		}
	case errors.Is(err, temporalstore.ErrOverflow):
		c.errorf("ERR increment or decrement would overflow")
	case errors.Is(err, temporalstore.ErrNotHLL):
		c.errorf("WRONGTYPE Key is not a valid HyperLogLog string value.")
	case errors.Is(err, temporalstore.ErrCorruptHLL):
		c.errorf("INVALIDOBJ Corrupted HLL object detected")
	case errors.Is(err, temporalstore.ErrNoSuchKey):
		c.errorf("ERR no such key")
	case errors.Is(err, temporalstore.ErrOutOfRange):
		c.errorf("ERR index out of range")
	case errors.Is(err, temporalstore.ErrUnknownOutcome):
		// Not MOVED nor TRYAGAIN, which clients retry: the write may have
		// been applied, and a retried INCR would count twice.
		c.errorf("UNKNOWNOUTCOME the shard's leader changed before the write committed: it may or may not be applied")
	case errors.Is(err, temporalstore.ErrNotLeader):
		if cl := c.s.opts.Cluster; cl != nil {
			c.errorf("%s", notLeaderReply(cl, c.slot, err))
		} else {
			c.errorf("TRYAGAIN %s", strings.TrimPrefix(msg, "temporalstore: "))
		}
	case errors.Is(err, temporalstore.ErrCrossShard):
		c.errorf("CROSSSLOT Keys in request don't hash to the same shard (give them a common {hash tag})")
	case errors.Is(err, temporalstore.ErrTooLarge):
		limit := detail(temporalstore.ErrTooLarge)
		if limit == "" || limit == msg {
			// The 512 MiB string limit, which Redis names by its setting.
			limit = "proto-max-bulk-len"
		}
		c.errorf("ERR string exceeds maximum allowed size (%s)", limit)
	case errors.Is(err, temporalstore.ErrReadOnly):
		c.errorf("READONLY You can't write against a read only shard.")
	case errors.Is(err, temporalstore.ErrStorageFault):
		// Redis's answer when it cannot persist: writes refused, reads
		// served. Clients do not retry it.
		c.errorf("MISCONF %s", strings.TrimPrefix(msg, "temporalstore: "))
	case errors.Is(err, temporalstore.ErrInvalid):
		c.errorf("ERR %s", detail(temporalstore.ErrInvalid))
	case errors.Is(err, temporalstore.ErrReadQPS), errors.Is(err, temporalstore.ErrWriteQPS),
		errors.Is(err, temporalstore.ErrTenantQPS), errors.Is(err, temporalstore.ErrShardRate):
		c.errorf("BUSY %s", strings.TrimPrefix(msg, "temporalstore: "))
	default:
		c.errorf("ERR %s", strings.TrimPrefix(msg, "temporalstore: "))
	}
}

// Argument parsing, with Redis's errors.

var errNotInt = errors.New("ERR value is not an integer or out of range")

// parseInt reads an integer argument as Redis's string2ll does: no '+',
// no leading zero, no "-0", no spaces.
func parseInt(b []byte) (int64, error) {
	n, err := temporalstore.ParseInt(b)
	if err != nil {
		return 0, errNotInt
	}
	return n, nil
}

func parseFloat(b []byte) (float64, error) {
	s := string(b)
	switch strings.ToLower(s) {
	case "inf", "+inf", "infinity", "+infinity":
		return math.Inf(1), nil
	case "-inf", "-infinity":
		return math.Inf(-1), nil
	}
	// strtod, which Redis parses with, takes a hexadecimal number without
	// a binary exponent (0x10 is 16); ParseFloat wants one.
	if h := strings.TrimLeft(s, "+-"); (strings.HasPrefix(h, "0x") || strings.HasPrefix(h, "0X")) && !strings.ContainsAny(h, "pP") {
		s += "p0"
	}
	f, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(f) || strings.ContainsAny(s, " \t_") {
		return 0, errors.New("ERR value is not a valid float")
	}
	return f, nil
}

func is(arg []byte, word string) bool { return bytes.EqualFold(arg, []byte(word)) }

// syntaxErr writes Redis's syntax error.
func (c *conn) syntaxErr() { c.errorf("ERR syntax error") }

// intArg parses args[i] as an integer, writing the error if it is not.
func (c *conn) intArg(b []byte) (int64, bool) {
	n, err := parseInt(b)
	if err != nil {
		c.errorf("%s", err.Error())
		return 0, false
	}
	return n, true
}

func (c *conn) floatArg(b []byte) (float64, bool) {
	f, err := parseFloat(b)
	if err != nil {
		c.errorf("%s", err.Error())
		return 0, false
	}
	return f, true
}
