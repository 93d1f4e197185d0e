package resp

import (
	"bytes"
	"context"
	"errors"
	"maps"
	"path"
	"slices"
	"strings"
	"sync"
	"time"

	lua "github.com/yuin/gopher-lua"
)

// library is a FUNCTION LOAD library: its code, compiled, the functions it
// registers, and Lua states that ran it (each FCALL takes one).
type library struct {
	name, code string
	proto      *lua.FunctionProto
	funcs      map[string]*libFunction
	vms        sync.Pool
}

// libFunction is a function a library registered.
type libFunction struct {
	lib        *library
	name, desc string
	hasDesc    bool
	flags      []string
	noWrites   bool
}

// loadTimeout bounds how long a library's code may run when loaded, as
// Redis's FUNCTION LOAD timeout.
const loadTimeout = 500 * time.Millisecond

var functionFlags = []string{"no-writes", "allow-oom", "allow-stale", "no-cluster", "allow-cross-slot-keys"}

// validName: letters, digits and underscores, at least one.
func validName(s string) bool {
	if s == "" {
		return false
	}
	for _, r := range s {
		if !(r == '_' || ('a' <= r && r <= 'z') || ('A' <= r && r <= 'Z') || ('0' <= r && r <= '9')) {
			return false
		}
	}
	return true
}

var errLoadTimeout = errors.New("FUNCTION LOAD timeout")

// loadLibrary runs lib's code on vm, registering its functions in vm.fns
// and, when collect is set, lib.funcs.
func (vm *luaVM) loadLibrary(ctx context.Context, lib *library, collect bool) error {
	L := vm.L
	vm.loading, vm.collecting, vm.fns = lib, collect, map[string]*lua.LFunction{}
	if collect {
		lib.funcs = map[string]*libFunction{}
	}
	defer func() { vm.loading, vm.collecting = nil, false }()
	lctx, cancel := context.WithTimeout(ctx, loadTimeout)
	defer cancel()
	L.SetContext(lctx)
	L.Push(L.NewFunctionFromProto(lib.proto))
	err := L.PCall(0, 0, vm.handler)
	L.RemoveContext()
	if err != nil && lctx.Err() != nil && ctx.Err() == nil {
		return errLoadTimeout
	}
	return err
}

// registerFunction is redis.register_function(name, callback) or
// redis.register_function{function_name=, callback=, flags=,
// description=}, while FUNCTION LOAD runs the library's code.
func (vm *luaVM) registerFunction(L *lua.LState) int {
	raise := func(msg string) int {
		L.Error(errTable(L, "ERR "+msg), 0)
		return 0
	}
	lib := vm.loading
	if lib == nil {
		return raise("redis.register_function can only be called on FUNCTION LOAD command")
	}
	f := &libFunction{lib: lib}
	var cb *lua.LFunction
	switch L.GetTop() {
	case 1:
		t, ok := L.Get(1).(*lua.LTable)
		if !ok {
			return raise("calling redis.register_function with a single argument is only applicable to Lua table (representing named arguments).")
		}
		var bad string
		t.ForEach(func(k, v lua.LValue) {
			if bad != "" {
				return
			}
			switch k.String() {
			case "function_name":
				s, ok := v.(lua.LString)
				if !ok {
					bad = "function_name argument given to redis.register_function must be a string"
				}
				f.name = string(s)
			case "callback":
				fn, ok := v.(*lua.LFunction)
				if !ok {
					bad = "callback argument given to redis.register_function must be a function"
				}
				cb = fn
			case "description":
				s, ok := v.(lua.LString)
				if !ok {
					bad = "description argument given to redis.register_function must be a string"
				}
				f.desc, f.hasDesc = string(s), true
			case "flags":
				ft, ok := v.(*lua.LTable)
				if !ok {
					bad = "flags argument to redis.register_function must be a table representing function flags"
					return
				}
				for i := 1; i <= ft.Len(); i++ {
					s, ok := ft.RawGetInt(i).(lua.LString)
					if !ok || !slices.Contains(functionFlags, string(s)) {
						bad = "unknown flag given"
						return
					}
					f.flags = append(f.flags, string(s))
					f.noWrites = f.noWrites || s == "no-writes"
				}
			default:
				bad = "unknown argument given to redis.register_function"
			}
		})
		if bad != "" {
			return raise(bad)
		}
		if f.name == "" && cb == nil {
			return raise("redis.register_function must get a function name argument")
		}
		if cb == nil {
			return raise("redis.register_function must get a callback argument")
		}
	case 2:
		s, ok := L.Get(1).(lua.LString)
		if !ok {
			return raise("first argument to redis.register_function must be a string")
		}
		fn, ok := L.Get(2).(*lua.LFunction)
		if !ok {
			return raise("second argument to redis.register_function must be a function")
		}
		f.name, cb = string(s), fn
	default:
		return raise("wrong number of arguments to redis.register_function")
	}
	if !validName(f.name) {
		// Redis's text, which says library where it means function.
		return raise("Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
	}
	if vm.fns[f.name] != nil {
		return raise("Function already exists in the library")
	}
	vm.fns[f.name] = cb
	// A library installed is shared: only FUNCTION LOAD's own run
	// describes its functions.
	if vm.collecting {
		lib.funcs[f.name] = f
	}
	return 0
}

// libraryVM returns a Lua state holding lib's functions.
func (c *conn) libraryVM(lib *library) (*luaVM, error) {
	if vm, ok := lib.vms.Get().(*luaVM); ok {
		return vm, nil
	}
	vm := newLuaVM(c.s)
	if err := vm.loadLibrary(c.ctx, lib, false); err != nil {
		return nil, err
	}
	return vm, nil
}

// cmdFcall is FCALL and FCALL_RO.
func cmdFcall(readOnly bool) func(c *conn, args [][]byte) {
	return func(c *conn, args [][]byte) {
		ss := c.s.scripts
		ss.mu.Lock()
		f := ss.funcs[string(args[1])]
		ss.mu.Unlock()
		if f == nil {
			c.errorf("ERR Function not found")
			return
		}
		if _, err := parseInt(args[2]); err != nil {
			c.errorf("ERR Bad number of keys provided")
			return
		}
		keys, argv, ok := c.scriptArgs(args)
		if !ok {
			return
		}
		if readOnly && !f.noWrites {
			c.errorf("ERR Can not execute a script with write flag using *_ro command.")
			return
		}
		vm, err := c.libraryVM(f.lib)
		if err != nil {
			c.errorf("ERR Error registering functions: %s", err)
			return
		}
		defer f.lib.vms.Put(vm)
		run := &scriptRun{name: f.name, readOnly: readOnly || f.noWrites}
		c.runScript(vm, run, args, keys, func(L *lua.LState) int {
			L.Push(vm.fns[f.name])
			L.Push(stringsTable(L, keys))
			L.Push(stringsTable(L, argv))
			return 2
		})
	}
}

// functionLoad is FUNCTION LOAD [REPLACE] code.
func functionLoad(c *conn, args [][]byte) {
	replace := false
	if len(args) == 4 && is(args[2], "replace") {
		replace = true
	} else if len(args) != 3 {
		c.errorf("ERR Unknown option given: %s", args[2])
		return
	}
	code := string(args[len(args)-1])
	line, body, ok := shebang(code)
	if !ok {
		c.errorf("ERR Missing library metadata")
		return
	}
	fields := strings.Fields(line[2:])
	if len(fields) == 0 {
		c.errorf("ERR Engine '' not found")
		return
	}
	if !strings.EqualFold(fields[0], "lua") {
		c.errorf("ERR Engine '%s' not found", fields[0])
		return
	}
	lib := &library{code: code}
	for _, f := range fields[1:] {
		v, found := strings.CutPrefix(f, "name=")
		if !found {
			c.errorf("ERR Invalid metadata value given: %s", f)
			return
		}
		lib.name = v
	}
	if lib.name == "" {
		c.errorf("ERR Library name was not given")
		return
	}
	if !validName(lib.name) {
		c.errorf("ERR Library names can only contain letters, numbers, or underscores(_) and must be at least one character long")
		return
	}
	ss := c.s.scripts
	ss.mu.Lock()
	old := ss.libs[lib.name]
	ss.mu.Unlock()
	if old != nil && !replace {
		c.errorf("ERR Library '%s' already exists", lib.name)
		return
	}
	proto, err := compileLua(body, "user_function")
	if err != nil {
		c.errorf("%s", strings.Replace(compileError(err), "compiling script (new function)", "compiling function", 1))
		return
	}
	lib.proto = proto
	vm := newLuaVM(c.s)
	if err := vm.loadLibrary(c.ctx, lib, true); err != nil {
		c.errorf("ERR Error registering functions: %s", vm.loadErrorText(err))
		return
	}
	if len(lib.funcs) == 0 {
		c.errorf("ERR No functions registered")
		return
	}
	ss.mu.Lock()
	defer ss.mu.Unlock()
	if ss.libs[lib.name] != old {
		c.errorf("ERR Library '%s' already exists", lib.name)
		return
	}
	for name := range lib.funcs {
		if f := ss.funcs[name]; f != nil && f.lib != old {
			c.errorf("ERR Function %s already exists", name)
			return
		}
	}
	if old != nil {
		for name := range old.funcs {
			delete(ss.funcs, name)
		}
	}
	for name, f := range lib.funcs {
		ss.funcs[name] = f
	}
	ss.libs[lib.name] = lib
	lib.vms.Put(vm)
	c.w.bulkString(lib.name)
}

// loadErrorText is the error a library's code raised while loaded.
func (vm *luaVM) loadErrorText(err error) string {
	var ae *lua.ApiError
	if !errors.As(err, &ae) {
		return err.Error()
	}
	if tb, ok := ae.Object.(*lua.LTable); ok {
		if e, ok := tb.RawGetString("err").(lua.LString); ok {
			return string(e)
		}
		return "ERR unknown error"
	}
	return "ERR " + ae.Object.String()
}

func cmdFunction(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	ss := c.s.scripts
	arity := func(ok bool) bool {
		if !ok {
			c.errorf("ERR wrong number of arguments for 'function|%s' command", sub)
		}
		return ok
	}
	if c.access == accessRead && (sub == "load" || sub == "delete" || sub == "flush") {
		c.errorf("NOPERM this user has no permissions to run the 'function|%s' command", sub)
		return
	}
	switch sub {
	case "load":
		if arity(len(args) >= 3) {
			functionLoad(c, args)
		}
	case "delete":
		if !arity(len(args) == 3) {
			return
		}
		ss.mu.Lock()
		lib := ss.libs[string(args[2])]
		if lib != nil {
			delete(ss.libs, lib.name)
			for name := range lib.funcs {
				delete(ss.funcs, name)
			}
		}
		ss.mu.Unlock()
		if lib == nil {
			c.errorf("ERR Library not found")
			return
		}
		c.w.ok()
	case "flush":
		if !arity(len(args) <= 3) {
			return
		}
		if len(args) == 3 && !is(args[2], "async") && !is(args[2], "sync") {
			c.errorf("ERR FUNCTION FLUSH only supports SYNC|ASYNC option")
			return
		}
		ss.mu.Lock()
		ss.libs, ss.funcs = map[string]*library{}, map[string]*libFunction{}
		ss.mu.Unlock()
		c.w.ok()
	case "kill":
		if arity(len(args) == 2) {
			c.kill(false)
		}
	case "list":
		functionList(c, args)
	case "stats":
		if arity(len(args) == 2) {
			functionStats(c)
		}
	case "help":
		if arity(len(args) == 2) {
			c.w.simpleLines([]string{
				"FUNCTION <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
				"LOAD [REPLACE] <FUNCTION CODE>",
				"DELETE <LIBRARY NAME>",
				"LIST [LIBRARYNAME PATTERN] [WITHCODE]",
				"FLUSH [ASYNC|SYNC]",
				"KILL",
				"STATS",
				"HELP",
			})
		}
	default:
		c.errorf("ERR unknown subcommand '%s'. Try FUNCTION HELP.", args[1])
	}
}

// functionList is FUNCTION LIST [LIBRARYNAME pattern] [WITHCODE].
func functionList(c *conn, args [][]byte) {
	withCode, pattern, havePattern := false, "", false
	for i := 2; i < len(args); i++ {
		switch {
		case is(args[i], "withcode") && !withCode:
			withCode = true
		case is(args[i], "libraryname") && !havePattern && i+1 < len(args):
			pattern, havePattern = string(args[i+1]), true
			i++
		case is(args[i], "libraryname") && havePattern:
			c.errorf("ERR library pattern can be given only once")
			return
		case is(args[i], "withcode"):
			c.errorf("ERR Unknown argument %s", args[i])
			return
		default:
			c.errorf("ERR Unknown argument %s", args[i])
			return
		}
	}
	ss := c.s.scripts
	ss.mu.Lock()
	var libs []*library
	for _, name := range slices.Sorted(maps.Keys(ss.libs)) {
		if ok, _ := path.Match(pattern, name); !havePattern || ok {
			libs = append(libs, ss.libs[name])
		}
	}
	ss.mu.Unlock()
	c.w.array(len(libs))
	for _, lib := range libs {
		n := 3
		if withCode {
			n++
		}
		c.w.mapHeader(n)
		c.w.bulkString("library_name")
		c.w.bulkString(lib.name)
		c.w.bulkString("engine")
		c.w.bulkString("LUA")
		c.w.bulkString("functions")
		c.w.array(len(lib.funcs))
		for _, name := range slices.Sorted(maps.Keys(lib.funcs)) {
			f := lib.funcs[name]
			c.w.mapHeader(3)
			c.w.bulkString("name")
			c.w.bulkString(f.name)
			c.w.bulkString("description")
			if f.hasDesc {
				c.w.bulkString(f.desc)
			} else {
				c.w.null()
			}
			c.w.bulkString("flags")
			c.w.setHeader(len(f.flags))
			for _, fl := range f.flags {
				c.w.simple(fl)
			}
		}
		if withCode {
			c.w.bulkString("library_code")
			c.w.bulkString(lib.code)
		}
	}
}

// functionStats is FUNCTION STATS: the function running, if any, and
// the libraries' and functions' counts.
func functionStats(c *conn) {
	ss := c.s.scripts
	ss.mu.Lock()
	var running *scriptRun
	for r := range ss.running {
		if !r.isEval && (running == nil || r.started.Before(running.started)) {
			running = r
		}
	}
	// Copied while the script is known to run: its request lives in its
	// connection's read buffer, which it reuses once the script ends.
	var name string
	var command [][]byte
	var took time.Duration
	if running != nil {
		name, took = running.name, time.Since(running.started)
		for _, a := range running.command {
			command = append(command, bytes.Clone(a))
		}
	}
	libs, funcs := len(ss.libs), len(ss.funcs)
	ss.mu.Unlock()
	c.w.mapHeader(2)
	c.w.bulkString("running_script")
	if running == nil {
		c.w.null()
	} else {
		c.w.mapHeader(3)
		c.w.bulkString("name")
		c.w.bulkString(name)
		c.w.bulkString("command")
		c.w.values(command)
		c.w.bulkString("duration_ms")
		c.w.int(took.Milliseconds())
	}
	c.w.bulkString("engines")
	c.w.mapHeader(1)
	c.w.bulkString("LUA")
	c.w.mapHeader(2)
	c.w.bulkString("libraries_count")
	c.w.int(int64(libs))
	c.w.bulkString("functions_count")
	c.w.int(int64(funcs))
}
