package resp

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	lua "github.com/yuin/gopher-lua"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/yuin/gopher-lua/parse"
)

// DefaultBusyReplyThreshold is how long a script runs before SCRIPT KILL
// and FUNCTION KILL may stop it, as Redis's busy-reply-threshold
// (lua-time-limit).
const DefaultBusyReplyThreshold = 5 * time.Second

// scripts is the server's scripting state: the scripts EVAL and SCRIPT
// LOAD compiled, by SHA1; the function libraries; the pooled Lua states;
// and the scripts running, for SCRIPT KILL.
type scripts struct {
	mu      sync.Mutex
	cache   map[string]*evalScript
	libs    map[string]*library
	funcs   map[string]*libFunction
	running map[*scriptRun]struct{}
	// queues are the scripts waiting for their key group (scriptqueue.go),
	// and jobs their spare entries, channels and all.
	queues map[groupKey]*scriptQueue
	jobs   sync.Pool
	// thresholdMs is busy-reply-threshold, in milliseconds.
	thresholdMs atomic.Int64
	vms         sync.Pool
}

func newScripts(s *Server) *scripts {
	sc := &scripts{cache: map[string]*evalScript{}, libs: map[string]*library{}, funcs: map[string]*libFunction{},
		running: map[*scriptRun]struct{}{}, queues: map[groupKey]*scriptQueue{}}
	sc.thresholdMs.Store(DefaultBusyReplyThreshold.Milliseconds())
	sc.vms.New = func() any { return newLuaVM(s) }
	return sc
}

// evalScript is a script EVAL ran or SCRIPT LOAD loaded.
type evalScript struct {
	proto    *lua.FunctionProto
	noWrites bool
}

// scriptRun is one script running: what SCRIPT KILL and the commands the
// script calls look at.
type scriptRun struct {
	c *conn // the script's private connection
	// name is the script's SHA1 or the function's name, for error
	// traces and FUNCTION STATS; command its caller's request.
	name     string
	command  [][]byte
	isEval   bool
	readOnly bool
	// group is the key group of the script's keys; -1 with none.
	group   int
	started time.Time
	cancel  context.CancelFunc
	// wrote: a write command ran (SCRIPT KILL then refuses); killed:
	// SCRIPT KILL or FUNCTION KILL stopped it.
	wrote, killed atomic.Bool
	resp3         bool
	// groupsOf and groups cache the options of the table the script's
	// commands last ran in, which say each key's group.
	groupsOf [2]string
	groups   *temporalstore.TableOptions
}

// scriptConn is the connection a script's commands run on: the server's
// own handlers, replying into out, which redis.call reads back.
type scriptConn struct {
	conn
	out bytes.Buffer
}

// scripted returns c's script connection, made on first use.
func (c *conn) scripted() *conn {
	if c.script == nil {
		sc := &scriptConn{}
		sc.s, sc.nc = c.s, c.nc
		sc.w.bw = bufio.NewWriterSize(&sc.out, 4<<10)
		sc.script = sc // its commands reply into its own out
		c.script = sc
	}
	sc := &c.script.conn
	sc.id, sc.name, sc.since = c.id, c.name, c.since
	sc.namespace, sc.table, sc.access, sc.tenant = c.namespace, c.table, c.access, c.tenant
	// Blocking commands do not block in a script, as in EXEC.
	sc.inExec = true
	return sc
}

// Errors of the commands a script calls, with Redis's texts.
const (
	errScriptUnknown  = "ERR Unknown Redis command called from script"
	errScriptArity    = "ERR Wrong number of args calling Redis command from script"
	errScriptDenied   = "ERR This Redis command is not allowed from script"
	errScriptReadOnly = "ERR Write commands are not allowed from read-only scripts."
	errScriptNonLocal = "ERR Script attempted to access a non local key in a cluster node"
	errCrossSlot      = "CROSSSLOT Keys in request don't hash to the same shard (give them a common {hash tag})"
)

// exec runs a command of the script through the server's handlers and
// returns its reply, or the error refusing it before it ran.
func (r *scriptRun) exec(args [][]byte) ([]byte, string) {
	var nb [32]byte
	c := r.c
	spec := c.s.cmds.byName[string(lowerName(args[0], nb[:0]))]
	switch {
	case spec == nil:
		return nil, errScriptUnknown
	case (spec.arity > 0 && len(args) != spec.arity) || (spec.arity < 0 && len(args) < -spec.arity):
		return nil, errScriptArity
	case spec.flags&flagNoScript != 0:
		return nil, errScriptDenied
	}
	if msg := c.tenantRefusal(spec, args); msg != "" {
		return nil, msg
	}
	if spec.flags&flagWrite != 0 {
		if r.readOnly {
			return nil, errScriptReadOnly
		}
		if c.access == accessRead {
			return nil, fmt.Sprintf("NOPERM this user has no permissions to run the '%s' command", spec.name)
		}
	}
	if r.group >= 0 {
		// The script holds its keys' shard: a key of another would be
		// neither isolated nor safe to wait for.
		if r.groupsOf != [2]string{c.namespace, c.table} || r.groups == nil {
			o, err := c.s.opts.Engine.TableOptions(c.namespace, c.table)
			if err != nil {
				return nil, errScriptNonLocal
			}
			r.groupsOf, r.groups = [2]string{c.namespace, c.table}, &o
		}
		for _, k := range spec.keysOf(args) {
			if r.groups.KeyGroup(k) != r.group {
				return nil, errScriptNonLocal
			}
		}
	}
	if spec.flags&flagWrite != 0 {
		r.wrote.Store(true)
	}
	c.script.out.Reset()
	c.w.resp3 = r.resp3
	c.last.Store(&spec.name)
	out := &c.script.out
	if out.Cap() > maxKeptScriptOut {
		// A big reply does not pin its buffer past the next command.
		*out = bytes.Buffer{}
	}
	c.runTimed(spec, args)
	c.w.bw.Flush()
	return out.Bytes(), ""
}

// maxKeptScriptOut bounds the reply buffer a connection's script keeps.
const maxKeptScriptOut = 1 << 20

// compileLua compiles a script's body under chunk (user_script,
// user_function): the name its errors carry.
func compileLua(body, chunk string) (*lua.FunctionProto, error) {
	stmts, err := parse.Parse(strings.NewReader(body), chunk)
	if err != nil {
		return nil, err
	}
	proto, err := lua.Compile(stmts, chunk)
	if err != nil {
		return nil, err
	}
	// The chunk is called with no arguments: no Lua 5.0 "arg" table for
	// its varargs (gopher-lua would make one, maps and all, per call).
	proto.IsVarArg &^= lua.VarArgNeedsArg
	return proto, nil
}

// compileError is Redis's reply for a script that does not compile.
func compileError(err error) string {
	msg := err.Error()
	// gopher-lua: "user_script line:1(column:9) near 'x':   parse error";
	// Redis: "user_script:1: ... near 'x'".
	if i := strings.Index(msg, " line:"); i >= 0 {
		rest := msg[i+len(" line:"):]
		if j := strings.IndexByte(rest, '('); j > 0 {
			line := rest[:j]
			if k := strings.Index(rest, ") "); k >= 0 {
				msg = msg[:i] + ":" + line + ": " + strings.TrimSpace(strings.ReplaceAll(rest[k+2:], "\n", " "))
			}
		}
	}
	return "ERR Error compiling script (new function): " + msg
}

// shebang splits a "#!lua flags=..." first line off a script, keeping
// its line break so the line numbers stay the user's.
func shebang(body string) (line, rest string, ok bool) {
	if !strings.HasPrefix(body, "#!") {
		return "", body, false
	}
	i := strings.IndexByte(body, '\n')
	if i < 0 {
		return body, "", true
	}
	return body[:i], body[i:], true
}

// loadEval compiles body, or returns it from the cache, and caches it.
func (c *conn) loadEval(body string) (*evalScript, string, bool) {
	sha := sha1hex(body)
	ss := c.s.scripts
	ss.mu.Lock()
	es := ss.cache[sha]
	ss.mu.Unlock()
	if es != nil {
		return es, sha, true
	}
	es = &evalScript{}
	if line, rest, ok := shebang(body); ok {
		fields := strings.Fields(line[2:])
		if len(fields) == 0 || fields[0] != "lua" {
			engine := ""
			if len(fields) > 0 {
				engine = fields[0]
			}
			c.errorf("ERR Unexpected engine in script shebang: %s", engine)
			return nil, "", false
		}
		for _, f := range fields[1:] {
			v, found := strings.CutPrefix(f, "flags=")
			if !found {
				c.errorf("ERR Unknown lua shebang option: %s", f)
				return nil, "", false
			}
			for _, flag := range strings.Split(v, ",") {
				switch flag {
				case "no-writes":
					es.noWrites = true
				case "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys", "":
				default:
					c.errorf("ERR Unexpected flag in script shebang: %s", flag)
					return nil, "", false
				}
			}
		}
		body = rest
	}
	proto, err := compileLua(body, "user_script")
	if err != nil {
		c.errorf("%s", compileError(err))
		return nil, "", false
	}
	es.proto = proto
	ss.mu.Lock()
	ss.cache[sha] = es
	ss.mu.Unlock()
	return es, sha, true
}

// scriptArgs splits "numkeys key... arg..." (args[2:] of EVAL, FCALL).
func (c *conn) scriptArgs(args [][]byte) (keys, argv [][]byte, ok bool) {
	n, ok := c.intArg(args[2])
	if !ok {
		return nil, nil, false
	}
	switch {
	case n > int64(len(args)-3):
		c.errorf("ERR Number of keys can't be greater than number of args")
		return nil, nil, false
	case n < 0:
		c.errorf("ERR Number of keys can't be negative")
		return nil, nil, false
	}
	return args[3 : 3+n], args[3+n:], true
}

// cmdEval is EVAL, EVALSHA and their read-only forms.
func cmdEval(bySHA, readOnly bool) func(c *conn, args [][]byte) {
	return func(c *conn, args [][]byte) {
		keys, argv, ok := c.scriptArgs(args)
		if !ok {
			return
		}
		var es *evalScript
		var sha string
		if bySHA {
			sha = strings.ToLower(string(args[1]))
			c.s.scripts.mu.Lock()
			es = c.s.scripts.cache[sha]
			c.s.scripts.mu.Unlock()
			if es == nil {
				c.errorf("NOSCRIPT No matching script. Please use EVAL.")
				return
			}
		} else if es, sha, ok = c.loadEval(string(args[1])); !ok {
			return
		}
		vm := c.s.scripts.vms.Get().(*luaVM)
		defer c.s.scripts.vms.Put(vm)
		run := &scriptRun{name: sha, isEval: true, readOnly: readOnly || es.noWrites}
		c.runScript(vm, run, args, keys, func(L *lua.LState) int {
			keysT, argvT := stringsTable(L, keys), stringsTable(L, argv)
			// Replaced by the next script's, not cleared: a delete costs
			// the globals' map more than the stale tables do.
			vm.globals.RawSetString("KEYS", keysT)
			vm.globals.RawSetString("ARGV", argvT)
			L.Push(L.NewFunctionFromProto(es.proto))
			return 0
		})
	}
}

func stringsTable(L *lua.LState, vs [][]byte) *lua.LTable {
	t := L.CreateTable(len(vs), 0)
	for i, v := range vs {
		t.RawSetInt(i+1, lua.LString(v))
	}
	return t
}

// runScript runs a script and writes its reply: prepare pushes the
// function and its nargs arguments, then the call runs. With keys, which
// must share one key group, the call runs inside Engine.Atomic on their
// shard, as EXEC does: no other command of the shard runs in between.
// Without, each command it calls is isolated on its own. What does not
// need the shard (the arguments' tables, the reply) is done outside it.
func (c *conn) runScript(vm *luaVM, run *scriptRun, request, keys [][]byte, prepare func(L *lua.LState) (nargs int)) {
	run.group = -1
	for _, k := range keys {
		g, err := c.s.opts.Engine.KeyGroup(c.namespace, c.table, k)
		if err != nil {
			c.engineError(err)
			return
		}
		if run.group >= 0 && g != run.group {
			c.errorf(errCrossSlot)
			return
		}
		run.group = g
	}
	sc := c.scripted()
	run.c, run.command = sc, request
	ss := c.s.scripts
	L := vm.L
	// The state's own context, not the connection's: a closed connection
	// does not stop a script (as in Redis), and a child of the
	// connection's would cost a registration per call. It lasts until a
	// kill cancels it.
	lctx, cancel := vm.context()
	run.cancel = cancel
	nargs := prepare(L)
	ran := false
	var err error
	do := func(tx *temporalstore.Tx) {
		ran = true
		// Not the connection's context either: a script runs to its end.
		sc.ctx, sc.atomic = context.Background(), tx
		run.started = time.Now()
		ss.mu.Lock()
		ss.running[run] = struct{}{}
		ss.mu.Unlock()
		vm.run, vm.errSource, vm.errLine = run, "", 0
		L.SetContext(lctx)
		err = L.PCall(nargs, 1, vm.handler)
		L.RemoveContext()
		vm.run, sc.atomic = nil, nil
		ss.mu.Lock()
		delete(ss.running, run)
		ss.mu.Unlock()
	}
	// Atomic takes the shard by a key, which may not be empty.
	var lockKey []byte
	for _, k := range keys {
		if len(k) > 0 {
			lockKey = k
			break
		}
	}
	var aerr error
	switch {
	case lockKey == nil:
		do(c.atomic)
	case c.inExec:
		// Inside EXEC, which may hold the shard already (its transaction
		// says so), not among the queued scripts.
		aerr = c.engine().Atomic(c.ctx, c.namespace, c.table, lockKey, func(tx *temporalstore.Tx) error {
			do(tx)
			return nil
		})
	default:
		aerr = c.runQueued(groupKey{c.namespace, c.table, run.group}, lockKey, do)
	}
	if aerr != nil {
		// Refused before the script ran, or its writes did not reach the
		// log (the shard failed): the client hears that, not the result.
		switch {
		case !ran:
			L.Pop(nargs + 1)
		case err == nil:
			L.Pop(1)
		}
		c.engineError(aerr)
		return
	}
	if err != nil {
		c.errorf("%s", vm.errorText(run, err))
		return
	}
	res := L.Get(-1)
	L.Pop(1)
	writeLua(c, res, run.resp3)
}

// errorText is Redis's error reply for a script that raised err: the
// error's text, then which script and where.
func (vm *luaVM) errorText(run *scriptRun, err error) string {
	msg := ""
	var ae *lua.ApiError
	switch {
	case run.killed.Load():
		msg = "ERR Script killed by user with SCRIPT KILL..."
	case errors.As(err, &ae):
		if tb, ok := ae.Object.(*lua.LTable); ok {
			if e, ok := tb.RawGetString("err").(lua.LString); ok {
				msg = strings.TrimPrefix(string(e), "-")
			} else {
				msg = "ERR unknown error"
			}
		} else {
			msg = "ERR " + ae.Object.String()
		}
	default:
		msg = "ERR " + err.Error()
	}
	source, line := vm.errSource, vm.errLine
	if source == "" {
		source, line = map[bool]string{true: "user_script", false: "user_function"}[run.isEval], 0
	}
	return fmt.Sprintf("%s script: %s, on @%s:%d.", msg, run.name, source, line)
}

// kill is SCRIPT KILL (eval) and FUNCTION KILL: it stops the oldest
// script running once it has run busy-reply-threshold (before, the
// script has the server, as in Redis, and the kill waits), unless it
// wrote.
func (c *conn) kill(eval bool) {
	ss := c.s.scripts
	for {
		var oldest *scriptRun
		ss.mu.Lock()
		for r := range ss.running {
			if oldest == nil || r.started.Before(oldest.started) {
				oldest = r
			}
		}
		ss.mu.Unlock()
		if oldest == nil {
			c.errorf("NOTBUSY No scripts in execution right now.")
			return
		}
		wait := time.Duration(ss.thresholdMs.Load())*time.Millisecond - time.Since(oldest.started)
		if wait > 0 {
			select {
			case <-time.After(min(wait, 10*time.Millisecond)):
				continue
			case <-c.ctx.Done():
				return
			}
		}
		switch {
		case oldest.wrote.Load():
			c.errorf("UNKILLABLE Sorry the script already executed write commands against the dataset. " +
				"You can either wait the script termination or kill the server in a hard way using the SHUTDOWN NOSAVE command.")
		case eval && !oldest.isEval:
			c.errorf("BUSY Redis is busy running a script. You can only call FUNCTION KILL or SHUTDOWN NOSAVE.")
		case !eval && oldest.isEval:
			c.errorf("BUSY Redis is busy running a script. You can only call SCRIPT KILL or SHUTDOWN NOSAVE.")
		default:
			// Only while it still runs: its state's context is the next
			// script's once it ends.
			ss.mu.Lock()
			if _, running := ss.running[oldest]; running {
				oldest.killed.Store(true)
				oldest.cancel()
			}
			ss.mu.Unlock()
			c.w.ok()
		}
		return
	}
}

// stopAll stops every script running, for Close.
func (ss *scripts) stopAll() {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	for r := range ss.running {
		r.killed.Store(true)
		r.cancel()
	}
}

func registerScripting() {
	register(
		&cmdSpec{name: "eval", arity: -3, flags: flagNoScript, keys: numKeys(2, false), run: cmdEval(false, false)},
		&cmdSpec{name: "evalsha", arity: -3, flags: flagNoScript, keys: numKeys(2, false), run: cmdEval(true, false)},
		&cmdSpec{name: "eval_ro", arity: -3, flags: flagNoScript, keys: numKeys(2, false), run: cmdEval(false, true)},
		&cmdSpec{name: "evalsha_ro", arity: -3, flags: flagNoScript, keys: numKeys(2, false), run: cmdEval(true, true)},
		&cmdSpec{name: "script", arity: -2, flags: flagNoScript, run: cmdScript},
		&cmdSpec{name: "fcall", arity: -3, flags: flagNoScript, keys: numKeys(2, false), run: cmdFcall(false)},
		&cmdSpec{name: "fcall_ro", arity: -3, flags: flagNoScript, keys: numKeys(2, false), run: cmdFcall(true)},
		&cmdSpec{name: "function", arity: -2, flags: flagNoScript, run: cmdFunction},
	)
}

// noScript are the commands a script may not call, as Redis's noscript
// flag marks them (blocking ones included: a script does not wait).
var noScript = []string{"auth", "bgsave", "blmove", "blpop", "brpop", "brpoplpush", "bzpopmax", "bzpopmin",
	"client", "config", "discard", "exec", "hello", "latency", "multi", "quit", "save", "unwatch", "wait", "watch"}

// markNoScript flags the commands scripts may not call; it runs once
// every command is registered.
func markNoScript() {
	for _, name := range noScript {
		if s := commands[name]; s != nil {
			s.flags |= flagNoScript
		}
	}
}

func cmdScript(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	ss := c.s.scripts
	switch {
	case sub == "load" && len(args) == 3:
		if _, sha, ok := c.loadEval(string(args[2])); ok {
			c.w.bulkString(sha)
		}
	case sub == "exists" && len(args) >= 3:
		c.w.array(len(args) - 2)
		ss.mu.Lock()
		defer ss.mu.Unlock()
		for _, a := range args[2:] {
			if ss.cache[strings.ToLower(string(a))] != nil {
				c.w.int(1)
			} else {
				c.w.int(0)
			}
		}
	case sub == "flush" && len(args) <= 3 && c.access == accessRead:
		c.errorf("NOPERM this user has no permissions to run the 'script|flush' command")
	case sub == "flush" && len(args) <= 3:
		if len(args) == 3 && !is(args[2], "async") && !is(args[2], "sync") {
			c.errorf("ERR SCRIPT FLUSH only support SYNC|ASYNC option")
			return
		}
		ss.mu.Lock()
		ss.cache = map[string]*evalScript{}
		ss.mu.Unlock()
		c.w.ok()
	case sub == "kill" && len(args) == 2:
		c.kill(true)
	case sub == "help" && len(args) == 2:
		c.w.simpleLines([]string{
			"SCRIPT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"EXISTS <sha1> [<sha1> ...]",
			"    Return information about the existence of the scripts in the script cache.",
			"FLUSH [ASYNC|SYNC]",
			"    Flush the Lua scripts cache. Very dangerous on replicas.",
			"    When called without the optional mode argument, the behavior is determined by the",
			"    lazyfree-lazy-user-flush configuration directive. Valid modes are:",
			"    * ASYNC: Asynchronously flush the scripts cache.",
			"    * SYNC: Synchronously flush the scripts cache.",
			"KILL",
			"    Kill the currently executing Lua script.",
			"LOAD <script>",
			"    Load a script into the scripts cache without executing it.",
			"HELP",
			"    Print this help.",
		})
	case sub == "load" || sub == "exists" || sub == "flush" || sub == "kill" || sub == "help":
		c.errorf("ERR wrong number of arguments for 'script|%s' command", sub)
	default:
		c.errorf("ERR unknown subcommand '%s'. Try SCRIPT HELP.", args[1])
	}
}
