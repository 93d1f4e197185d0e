package resp

import (
	"context"
	"crypto/sha1"
	"encoding/hex"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// luaVM is one Lua state, sandboxed as Redis sandboxes its own: the base,
// table, string, math and bit libraries, os.clock, the redis library, and
// a read-only global table. States are pooled: making one costs more than
// most scripts take to run.
type luaVM struct {
	L *lua.LState
	// globals holds the globals; env is the read-only view every script
	// sees (KEYS and ARGV are set in globals directly, from Go).
	globals, env *lua.LTable
	// handler is the error handler scripts run under: it notes where an
	// error was raised.
	handler *lua.LFunction
	// run is the script running on the state, nil between runs.
	run *scriptRun
	// loading is the library a FUNCTION LOAD is registering functions of;
	// fns are the functions of the library this state holds.
	loading *library
	// collecting: the load is FUNCTION LOAD's, which describes the
	// library's functions (lib.funcs).
	collecting bool
	fns        map[string]*lua.LFunction
	// errSource, errLine are where the last error was raised.
	errSource string
	errLine   int
	// ctx is the context scripts run under on this state, and cancel
	// SCRIPT KILL's way to stop one; a new pair follows a kill.
	ctx    context.Context
	cancel context.CancelFunc
	// args, argBuf and argEnds are the arguments of the command a script
	// calls (call), reused from one call to the next.
	args    [][]byte
	argBuf  []byte
	argEnds []int
}

// context returns the state's context for the next script, and its
// cancel.
func (vm *luaVM) context() (context.Context, context.CancelFunc) {
	if vm.ctx == nil || vm.ctx.Err() != nil {
		vm.ctx, vm.cancel = context.WithCancel(context.Background())
	}
	return vm.ctx, vm.cancel
}

// Errors raised into Lua, with Redis's texts.
const (
	errReadonlyTable = "Attempt to modify a readonly table"
	errNoGlobal      = "Script attempted to access nonexistent global variable '%s'"
)

func newLuaVM(s *Server) *luaVM {
	L := lua.NewState(lua.Options{SkipOpenLibs: true, CallStackSize: 1024, RegistrySize: 1024 * 20, RegistryMaxSize: 1024 * 1024})
	for _, lib := range []struct {
		name string
		open lua.LGFunction
	}{{lua.BaseLibName, lua.OpenBase}, {lua.TabLibName, lua.OpenTable}, {lua.StringLibName, lua.OpenString}, {lua.MathLibName, lua.OpenMath}} {
		L.Push(L.NewFunction(lib.open))
		L.Push(lua.LString(lib.name))
		L.Call(1, 0)
	}
	vm := &luaVM{L: L, globals: L.G.Global}
	g := vm.globals
	// Redis removes these: no file access, no printing to the server's
	// output, no module loading.
	for _, name := range []string{"dofile", "loadfile", "print", "module", "require", "_printregs", "_GOPHER_LUA_VERSION"} {
		g.RawSetString(name, lua.LNil)
	}
	// Lua 5.1 prints numbers with "%.14g" (1/3 is 0.33333333333333).
	tostring := g.RawGetString("tostring").(*lua.LFunction)
	g.RawSetString("tostring", L.NewFunction(func(L *lua.LState) int {
		if n, ok := L.Get(1).(lua.LNumber); ok {
			L.Push(lua.LString(formatG(float64(n), 14)))
			return 1
		}
		L.Push(tostring)
		L.Push(L.CheckAny(1))
		L.Call(1, 1)
		return 1
	}))
	// error(msg, level) adds no position when the function at level is
	// not Lua's (pcall(error, 'x')), as Lua 5.1 does.
	g.RawSetString("error", L.NewFunction(func(L *lua.LState) int {
		obj, level := L.Get(1), L.OptInt(2, 1)
		if level > 0 {
			if dbg, ok := L.GetStack(level); ok {
				if _, err := L.GetInfo("S", dbg, lua.LNil); err == nil && dbg.What == "G" {
					level = 0
				}
			}
		}
		L.Error(obj, level)
		return 0
	}))
	// string.rep past the largest string a reply may carry fails rather
	// than exhausting the memory.
	strlib := g.RawGetString(lua.StringLibName).(*lua.LTable)
	rep := strlib.RawGetString("rep").(*lua.LFunction)
	strlib.RawSetString("rep", L.NewFunction(func(L *lua.LState) int {
		if n := L.OptInt(2, 0); n > 0 && int64(len(L.CheckString(1)))*int64(n) > DefaultMaxBulk {
			L.RaiseError("resulting string too large")
		}
		L.Push(rep)
		L.Push(L.Get(1))
		L.Push(L.Get(2))
		L.Call(2, 1)
		return 1
	}))
	// Redis's pcall hands a command's error to the script as its text,
	// not as the {err=} table redis.call raises.
	g.RawSetString("pcall", L.NewFunction(func(L *lua.LState) int {
		fn := L.CheckAny(1)
		nargs := L.GetTop() - 1
		L.Insert(fn, 1)
		L.Remove(2)
		top := L.GetTop() - nargs - 1
		if err := L.PCall(nargs, lua.MultRet, nil); err != nil {
			obj := err.(*lua.ApiError).Object
			if tb, ok := obj.(*lua.LTable); ok {
				if e, ok := tb.RawGetString("err").(lua.LString); ok {
					obj = e
				}
			}
			L.SetTop(top)
			L.Push(lua.LFalse)
			L.Push(obj)
			return 2
		}
		L.Insert(lua.LTrue, top+1)
		return L.GetTop() - top
	}))
	os := L.NewTable()
	start := time.Now()
	os.RawSetString("clock", L.NewFunction(func(L *lua.LState) int {
		L.Push(lua.LNumber(time.Since(start).Seconds()))
		return 1
	}))
	g.RawSetString("os", vm.readonly(os))
	g.RawSetString("bit", vm.readonly(newBitLib(L)))
	g.RawSetString("cjson", vm.readonly(newCJSONLib(L)))
	g.RawSetString("redis", vm.readonly(vm.redisLib(s)))
	for _, name := range []string{lua.TabLibName, lua.StringLibName, lua.MathLibName} {
		g.RawSetString(name, vm.readonly(g.RawGetString(name).(*lua.LTable)))
	}
	// Reading a global that does not exist is an error, as writing any.
	meta := L.NewTable()
	meta.RawSetString("__index", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errNoGlobal, L.CheckAny(2).String())
		return 0
	}))
	L.SetMetatable(g, meta)
	vm.env = vm.readonly(g)
	g.RawSetString("_G", vm.env)
	L.Env = vm.env
	vm.handler = L.NewFunction(vm.onError)
	return vm
}

// readonly is a view of t that refuses writes, and whose metatable
// cannot be reached.
func (vm *luaVM) readonly(t *lua.LTable) *lua.LTable {
	L := vm.L
	view, meta := L.NewTable(), L.NewTable()
	meta.RawSetString("__index", t)
	meta.RawSetString("__newindex", L.NewFunction(func(L *lua.LState) int {
		L.RaiseError(errReadonlyTable)
		return 0
	}))
	meta.RawSetString("__metatable", lua.LFalse)
	L.SetMetatable(view, meta)
	return view
}

// onError is the error handler: it notes the innermost Lua frame, where
// the error was raised, and passes the error on.
func (vm *luaVM) onError(L *lua.LState) int {
	vm.errSource, vm.errLine = "", 0
	for level := 1; ; level++ {
		dbg, ok := L.GetStack(level)
		if !ok {
			break
		}
		if _, err := L.GetInfo("Sl", dbg, lua.LNil); err != nil || dbg.What == "G" || dbg.CurrentLine <= 0 {
			continue
		}
		vm.errSource, vm.errLine = dbg.Source, dbg.CurrentLine
		break
	}
	L.Push(L.Get(1))
	return 1
}

// redisLib is the redis table.
func (vm *luaVM) redisLib(s *Server) *lua.LTable {
	L := vm.L
	t := L.NewTable()
	fn := func(name string, f lua.LGFunction) { t.RawSetString(name, L.NewFunction(f)) }
	fn("call", func(L *lua.LState) int { return vm.call(L, true) })
	fn("pcall", func(L *lua.LState) int { return vm.call(L, false) })
	fn("error_reply", func(L *lua.LState) int {
		msg := L.CheckString(1)
		if !strings.HasPrefix(msg, "-") {
			msg = "-" + msg
		}
		L.Push(errTable(L, msg))
		return 1
	})
	fn("status_reply", func(L *lua.LState) int {
		tb := L.NewTable()
		tb.RawSetString("ok", lua.LString(L.CheckString(1)))
		L.Push(tb)
		return 1
	})
	fn("sha1hex", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			raiseErr(L, "wrong number of arguments")
		}
		L.Push(lua.LString(sha1hex(L.ToString(1))))
		return 1
	})
	fn("log", func(L *lua.LState) int {
		if L.GetTop() < 2 {
			raiseErr(L, "redis.log() requires two arguments or more.")
		}
		level, ok := L.Get(1).(lua.LNumber)
		if !ok || level < 0 || level > 3 {
			raiseErr(L, "Invalid debug level.")
		}
		parts := make([]string, 0, L.GetTop()-1)
		for i := 2; i <= L.GetTop(); i++ {
			parts = append(parts, L.ToString(i))
		}
		lv := []slog.Level{slog.LevelDebug, slog.LevelDebug, slog.LevelInfo, slog.LevelWarn}[int(level)]
		s.opts.Logger.Log(context.Background(), lv, "resp: script log", "msg", strings.Join(parts, " "))
		return 0
	})
	fn("setresp", func(L *lua.LState) int {
		if L.GetTop() != 1 {
			raiseErr(L, "redis.setresp() requires one argument.")
		}
		v := L.CheckInt(1)
		if v != 2 && v != 3 {
			raiseErr(L, "RESP version must be 2 or 3.")
		}
		if vm.run != nil {
			vm.run.resp3 = v == 3
		}
		return 0
	})
	fn("set_repl", func(L *lua.LState) int { return 0 })
	fn("replicate_commands", func(L *lua.LState) int { L.Push(lua.LTrue); return 1 })
	fn("breakpoint", func(L *lua.LState) int { L.Push(lua.LFalse); return 1 })
	fn("debug", func(L *lua.LState) int { return 0 })
	fn("register_function", vm.registerFunction)
	fn("acl_check_cmd", func(L *lua.LState) int {
		if L.GetTop() < 1 {
			raiseErr(L, "Please specify at least one argument for this redis lib call")
		}
		var nb [32]byte
		spec := s.cmds.byName[string(lowerName([]byte(L.CheckString(1)), nb[:0]))]
		if spec == nil {
			raiseErr(L, "Invalid command passed to redis.acl_check_cmd()")
		}
		allowed := spec.flags&flagWrite == 0 || vm.run == nil || vm.run.c.access != accessRead
		L.Push(lua.LBool(allowed))
		return 1
	})
	for name, v := range map[string]int{"LOG_DEBUG": 0, "LOG_VERBOSE": 1, "LOG_NOTICE": 2, "LOG_WARNING": 3,
		"REPL_NONE": 0, "REPL_AOF": 1, "REPL_SLAVE": 2, "REPL_REPLICA": 2, "REPL_ALL": 3} {
		t.RawSetString(name, lua.LNumber(v))
	}
	t.RawSetString("REDIS_VERSION", lua.LString(s.opts.Version))
	t.RawSetString("REDIS_VERSION_NUM", lua.LNumber(versionNum(s.opts.Version)))
	return t
}

// versionNum is a version as Redis's number: 0x00MMmmpp.
func versionNum(v string) int {
	n := 0
	for i, p := range strings.SplitN(v, ".", 3) {
		d, _ := strconv.Atoi(p)
		n |= (d & 0xff) << (16 - 8*i)
	}
	return n
}

func sha1hex(s string) string {
	h := sha1.Sum([]byte(s))
	return hex.EncodeToString(h[:])
}

// raiseErr raises msg as Redis's library functions do: as an error
// reply ({err=}), with no position.
func raiseErr(L *lua.LState, msg string) {
	L.Error(errTable(L, "ERR "+msg), 0)
}

func errTable(L *lua.LState, msg string) *lua.LTable {
	tb := L.NewTable()
	tb.RawSetString("err", lua.LString(msg))
	return tb
}

// call is redis.call (raise) and redis.pcall: it runs a command through
// the server's handlers and converts the reply.
func (vm *luaVM) call(L *lua.LState, raise bool) int {
	run := vm.run
	if run == nil {
		if vm.loading != nil {
			L.RaiseError(errNoGlobal, map[bool]string{true: "call", false: "pcall"}[raise])
		}
		L.RaiseError("redis.call is only available while a script runs")
	}
	n := L.GetTop()
	if n == 0 {
		return vm.fail(L, raise, "ERR Please specify at least one argument for this redis lib call")
	}
	// The arguments are copied into one buffer the run reuses, as a
	// connection's requests share its read buffer: handlers copy what
	// they keep.
	buf, ends := vm.argBuf[:0], vm.argEnds[:0]
	for i := 1; i <= n; i++ {
		switch v := L.Get(i).(type) {
		case lua.LString:
			buf = append(buf, v...)
		case lua.LNumber:
			buf = appendLuaNumber(buf, float64(v))
		default:
			return vm.fail(L, raise, "ERR Lua redis lib command arguments must be strings or integers")
		}
		ends = append(ends, len(buf))
	}
	args, from := vm.args[:0], 0
	for _, to := range ends {
		args = append(args, buf[from:to:to])
		from = to
	}
	vm.args, vm.argBuf, vm.argEnds = args, buf, ends
	if cap(buf) > maxKeptScriptOut {
		vm.argBuf = nil // a huge argument does not stay with the pooled state
	}
	out, msg := run.exec(args)
	if msg != "" {
		return vm.fail(L, raise, msg)
	}
	r, _, err := parseReply(out)
	if err != nil {
		return vm.fail(L, raise, "ERR "+err.Error())
	}
	if r.kind == '-' && raise {
		L.Error(errTable(L, string(r.str)), 0)
	}
	L.Push(replyToLua(L, r))
	return 1
}

// fail answers a call refused before it ran: raised, or as {err=msg}.
func (vm *luaVM) fail(L *lua.LState, raise bool, msg string) int {
	if raise {
		L.Error(errTable(L, msg), 0)
	}
	L.Push(errTable(L, msg))
	return 1
}

// appendLuaNumber appends a Lua number as a command argument, as Redis
// 7.0 prints it ("%.17g"); an integer below 10^15 prints as its digits.
func appendLuaNumber(dst []byte, f float64) []byte {
	if f == math.Trunc(f) && math.Abs(f) < 1e15 && (f != 0 || !math.Signbit(f)) {
		return strconv.AppendInt(dst, int64(f), 10)
	}
	return append(dst, formatG(f, 17)...)
}

// formatG is C's printf("%.<prec>g", f).
func formatG(f float64, prec int) string {
	switch {
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case math.IsNaN(f):
		return "nan"
	}
	s := strconv.FormatFloat(f, 'g', prec, 64)
	// C's %g writes the exponent with at least two digits, as Go does;
	// and drops trailing zeros, as Go's 'g' with a precision does not.
	if i := strings.IndexAny(s, "e"); i >= 0 {
		m := s[:i]
		if strings.Contains(m, ".") {
			m = strings.TrimRight(strings.TrimRight(m, "0"), ".")
		}
		s = m + s[i:]
	} else if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s
}

// replyToLua converts a command's reply as Redis does: integer -> number,
// bulk -> string, null -> false, array -> table, status -> {ok=},
// error -> {err=}; RESP3's map, set, double, boolean, null and big
// number as Redis's RESP3 conversion.
func replyToLua(L *lua.LState, r reply) lua.LValue {
	switch r.kind {
	case ':':
		return lua.LNumber(r.n)
	case '$', '!':
		if r.null {
			return lua.LFalse
		}
		return lua.LString(r.str)
	case '+':
		tb := L.NewTable()
		tb.RawSetString("ok", lua.LString(r.str))
		return tb
	case '-':
		return errTable(L, string(r.str))
	case '*', '>':
		if r.null {
			return lua.LFalse
		}
		tb := L.CreateTable(len(r.elems), 0)
		for i, e := range r.elems {
			tb.RawSetInt(i+1, replyToLua(L, e))
		}
		return tb
	case '_':
		return lua.LNil
	case '#':
		return lua.LBool(r.n == 1)
	case ',':
		tb := L.NewTable()
		tb.RawSetString("double", lua.LNumber(r.f))
		return tb
	case '(':
		tb := L.NewTable()
		tb.RawSetString("big_number", lua.LString(r.str))
		return tb
	case '=':
		tb, v := L.NewTable(), L.NewTable()
		format, text := "txt", string(r.str)
		if len(text) >= 4 && text[3] == ':' {
			format, text = text[:3], text[4:]
		}
		v.RawSetString("string", lua.LString(text))
		v.RawSetString("format", lua.LString(format))
		tb.RawSetString("verbatim_string", v)
		return tb
	case '%':
		tb, m := L.NewTable(), L.NewTable()
		for i := 0; i+1 < len(r.elems); i += 2 {
			m.RawSet(replyToLua(L, r.elems[i]), replyToLua(L, r.elems[i+1]))
		}
		tb.RawSetString("map", m)
		return tb
	case '~':
		tb, m := L.NewTable(), L.NewTable()
		for _, e := range r.elems {
			m.RawSet(replyToLua(L, e), lua.LTrue)
		}
		tb.RawSetString("set", m)
		return tb
	}
	return lua.LNil
}

// writeLua writes a script's result as Redis converts it: number ->
// integer (truncated), string -> bulk, true -> 1, false and nil -> null,
// {err=} -> error, {ok=} -> status, a table -> array up to its first nil
// (RESP3's {map=}, {set=}, {double=} too). A table nested deeper than
// maxReplyDepth is refused before anything is written.
// With redis.setresp(3), booleans are RESP3's (RESP2's 1 and 0 for a
// RESP2 client).
func writeLua(c *conn, v lua.LValue, resp3 bool) {
	if !luaDepthOK(v, 0) {
		c.errorf("ERR reached lua stack limit")
		return
	}
	writeLuaValue(c, v, resp3)
}

func luaDepthOK(v lua.LValue, depth int) bool {
	tb, ok := v.(*lua.LTable)
	if !ok {
		return true
	}
	if depth > maxReplyDepth {
		return false
	}
	for i := 1; ; i++ {
		e := tb.RawGetInt(i)
		if e == lua.LNil {
			break
		}
		if !luaDepthOK(e, depth+1) {
			return false
		}
	}
	for _, k := range []string{"map", "set"} {
		if m, ok := tb.RawGetString(k).(*lua.LTable); ok {
			okAll := true
			m.ForEach(func(k, v lua.LValue) { okAll = okAll && luaDepthOK(k, depth+2) && luaDepthOK(v, depth+2) })
			if !okAll {
				return false
			}
		}
	}
	return true
}

func writeLuaValue(c *conn, v lua.LValue, resp3 bool) {
	switch v := v.(type) {
	case lua.LNumber:
		c.w.int(luaInt(float64(v)))
	case lua.LString:
		c.w.bulkString(string(v))
	case lua.LBool:
		switch {
		case resp3 && c.w.resp3:
			c.w.bw.WriteString(map[bool]string{true: "#t\r\n", false: "#f\r\n"}[bool(v)])
		case resp3 && !bool(v):
			c.w.int(0)
		case bool(v):
			c.w.int(1)
		default:
			c.w.null()
		}
	case *lua.LTable:
		if e, ok := v.RawGetString("err").(lua.LString); ok {
			c.errorf("%s", strings.TrimPrefix(string(e), "-"))
			return
		}
		if s, ok := v.RawGetString("ok").(lua.LString); ok {
			c.w.simple(strings.NewReplacer("\r", " ", "\n", " ").Replace(string(s)))
			return
		}
		if d, ok := v.RawGetString("double").(lua.LNumber); ok {
			c.w.double(float64(d))
			return
		}
		if m, ok := v.RawGetString("map").(*lua.LTable); ok {
			var kv []lua.LValue
			m.ForEach(func(k, v lua.LValue) { kv = append(kv, k, v) })
			c.w.mapHeader(len(kv) / 2)
			for _, e := range kv {
				writeLuaValue(c, e, resp3)
			}
			return
		}
		if m, ok := v.RawGetString("set").(*lua.LTable); ok {
			var ks []lua.LValue
			m.ForEach(func(k, _ lua.LValue) { ks = append(ks, k) })
			c.w.setHeader(len(ks))
			for _, e := range ks {
				writeLuaValue(c, e, resp3)
			}
			return
		}
		n := 0
		for v.RawGetInt(n+1) != lua.LNil {
			n++
		}
		c.w.array(n)
		for i := 1; i <= n; i++ {
			writeLuaValue(c, v.RawGetInt(i), resp3)
		}
	default:
		c.w.null()
	}
}

// luaInt truncates a Lua number to an integer reply, as C's cast does
// (saturating where C's is undefined).
func luaInt(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return math.MinInt64
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}
