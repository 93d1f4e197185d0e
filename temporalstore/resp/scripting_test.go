package resp

import (
	"bufio"
	"fmt"
	"math"
	"math/rand/v2"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

// rawConn sends requests and returns each reply's bytes as they came.
type rawConn struct {
	nc net.Conn
	br *bufio.Reader
}

func dialRaw(t testing.TB, addr string) *rawConn {
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { nc.Close() })
	return &rawConn{nc: nc, br: bufio.NewReader(nc)}
}

func (r *rawConn) do(t testing.TB, args ...string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&sb, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := r.nc.Write([]byte(sb.String()))
	require.NoError(t, err)
	require.NoError(t, r.nc.SetReadDeadline(time.Now().Add(20*time.Second)))
	var got []byte
	for {
		line, err := r.br.ReadBytes('\n')
		require.NoError(t, err)
		got = append(got, line...)
		if _, _, err := parseReply(got); err == nil {
			return string(got)
		}
	}
}

// scriptCases are requests whose replies must equal redis-server's byte
// for byte, run in order on one connection.
var scriptCases = [][]string{
	// Lua to Redis conversions.
	{"EVAL", "return 3.99", "0"},
	{"EVAL", "return -3.99", "0"},
	{"EVAL", "return 'hello'", "0"},
	{"EVAL", "return true", "0"},
	{"EVAL", "return false", "0"},
	{"EVAL", "return nil", "0"},
	{"EVAL", "return {1,2,{3,'x'},nil,5}", "0"},
	{"EVAL", "return {1,2,3,'ciao',{1,2}}", "0"},
	{"EVAL", "return {}", "0"},
	{"EVAL", "return {ok='fine'}", "0"},
	{"EVAL", "return {err='My err'}", "0"},
	{"EVAL", "return {err='ERR bad thing'}", "0"},
	{"EVAL", "return redis.error_reply('E2 x')", "0"},
	{"EVAL", "return redis.error_reply('-E3 y')", "0"},
	{"EVAL", "return redis.status_reply('S')", "0"},
	{"EVAL", "return {true,false,1.5,'s'}", "0"},
	{"EVAL", "return redis.sha1hex('')", "0"},
	{"EVAL", "return redis.sha1hex('abc')", "0"},
	{"EVAL", "return {KEYS[1],KEYS[2],ARGV[1],ARGV[2],#KEYS,#ARGV}", "2", "{t}a", "{t}b", "x", "y"},
	{"EVAL", "return tostring(1/3)", "0"},
	{"EVAL", "return string.format('%d-%s', 7, 'x')", "0"},
	{"EVAL", "return math.floor(7.9)", "0"},
	{"EVAL", "return table.concat({'a','b'}, ',')", "0"},
	{"EVAL", "return bit.band(0xff, 0x0f) + bit.bor(1, 2) + bit.lshift(1, 4)", "0"},
	{"EVAL", "return bit.tohex(65535)", "0"},
	{"EVAL", "return bit.bnot(0)", "0"},
	{"EVAL", "return redis.acl_check_cmd('set', 'k', 'v')", "0"},
	{"EVAL", "return redis.acl_check_cmd('nosuch')", "0"},
	// cjson.
	{"EVAL", "return cjson.encode({1, 2, 'x', true, false})", "0"},
	{"EVAL", "return cjson.encode({a = 1.5})", "0"},
	{"EVAL", "return cjson.encode({})", "0"},
	{"EVAL", `return cjson.encode('a/b"c\\d\n\1')`, "0"},
	{"EVAL", "return cjson.encode({1, nil, 3})", "0"},
	{"EVAL", "return cjson.encode({[1] = 1, [20] = 2})", "0"},
	{"EVAL", "return cjson.encode(1/3)", "0"},
	{"EVAL", "return cjson.encode(1e20)", "0"},
	{"EVAL", "return cjson.encode({a = {b = {1, 2}}})", "0"},
	{"EVAL", "return cjson.encode(cjson.null)", "0"},
	{"EVAL", "return cjson.encode(tostring)", "0"},
	{"EVAL", "local t = cjson.decode('[1, 2.5, \"x\", true, {\"k\": \"v\"}]') return {t[1], t[2], t[3], t[4], t[5].k}", "0"},
	{"EVAL", "return cjson.decode('{\"a\": null}').a == cjson.null", "0"},
	{"EVAL", "return cjson.decode('12345678901')", "0"},
	{"EVAL", "return type(cjson.decode('\"s\"'))", "0"},
	// Redis to Lua conversions.
	{"EVAL", "return redis.call('set', KEYS[1], ARGV[1])", "1", "{t}s", "v"},
	{"EVAL", "return redis.call('get', KEYS[1])", "1", "{t}s"},
	{"EVAL", "return type(redis.call('get', KEYS[1]))", "1", "{t}nokey"},
	{"EVAL", "return redis.call('get', KEYS[1]) == false", "1", "{t}nokey"},
	{"EVAL", "return redis.call('incr', KEYS[1])", "1", "{t}n"},
	{"EVAL", "return type(redis.call('incr', KEYS[1]))", "1", "{t}n"},
	{"EVAL", "local r = redis.call('set', KEYS[1], 'x') return r.ok", "1", "{t}s"},
	{"EVAL", "return redis.call('rpush', KEYS[1], 'a', 'b', 'c')", "1", "{t}l"},
	{"EVAL", "return redis.call('lrange', KEYS[1], 0, -1)", "1", "{t}l"},
	{"EVAL", "local t = redis.call('lrange', KEYS[1], 0, -1) return #t", "1", "{t}l"},
	{"EVAL", "return redis.call('hset', KEYS[1], 'f', 1, 'g', 2.5)", "1", "{t}h"},
	{"EVAL", "return redis.call('hgetall', KEYS[1])", "1", "{t}h"},
	{"EVAL", "return redis.call('set', KEYS[1], 0.1)", "1", "{t}f"},
	{"EVAL", "return redis.call('get', KEYS[1])", "1", "{t}f"},
	{"EVAL", "return redis.call('set', KEYS[1], 1e20)", "1", "{t}f"},
	{"EVAL", "return redis.call('get', KEYS[1])", "1", "{t}f"},
	{"EVAL", "return redis.call('set', KEYS[1], 100)", "1", "{t}f"},
	{"EVAL", "return redis.call('get', KEYS[1])", "1", "{t}f"},
	{"EVAL", "return redis.call('zadd', KEYS[1], 1, 'a', 2, 'b')", "1", "{t}z"},
	{"EVAL", "return redis.call('zrange', KEYS[1], 0, -1, 'withscores')", "1", "{t}z"},
	{"EVAL", "return redis.call('mget', KEYS[1], KEYS[2])", "2", "{t}s", "{t}nokey"},
	{"EVAL", "return redis.call('ping')", "0"},
	{"EVAL", "return redis.call('exists', KEYS[1])", "1", "{t}s"},
	// Errors: raised, caught, and the script's own.
	{"EVAL", "error('boom')", "0"},
	{"EVAL", "error(nil)", "0"},
	{"EVAL", "error({err='x'}, 0)", "0"},
	{"EVAL", "\n\nerror('third line')", "0"},
	{"EVAL", "x = 1", "0"},
	{"EVAL", "return y", "0"},
	{"EVAL", "return loadfile", "0"},
	{"EVAL", "return dofile('x')", "0"},
	{"EVAL", "return print", "0"},
	{"EVAL", "return redis.call('nosuch')", "0"},
	{"EVAL", "return redis.pcall('nosuch')", "0"},
	{"EVAL", "return redis.call('get')", "0"},
	{"EVAL", "return redis.call('incr','a','b')", "0"},
	{"EVAL", "return redis.call('set','k','v','x')", "1", "k"},
	{"EVAL", "return redis.call('incr', KEYS[1])", "1", "{t}s"},
	{"EVAL", "return redis.pcall('incr', KEYS[1])", "1", "{t}s"},
	{"EVAL", "local r = redis.pcall('incr', KEYS[1]) return r.err", "1", "{t}s"},
	{"EVAL", "return redis.call('hget', KEYS[1], 'f')", "1", "{t}s"},
	{"EVAL", "return redis.call('multi')", "0"},
	{"EVAL", "return redis.call('exec')", "0"},
	{"EVAL", "return redis.call('eval','return 1', 0)", "0"},
	{"EVAL", "return redis.call('blpop', 'l', 0)", "0"},
	{"EVAL", "return redis.call('client', 'getname')", "0"},
	{"EVAL", "return redis.call()", "0"},
	{"EVAL", "return redis.call({})", "0"},
	{"EVAL", "return redis.pcall('get', {})", "0"},
	{"EVAL", "local ok, e = pcall(redis.call, 'nosuch') return e.err", "0"},
	{"EVAL", "local ok, e = pcall(error, 'x') return e", "0"},
	{"EVAL", "string.x = 1", "0"},
	{"EVAL", "redis.call = nil", "0"},
	{"EVAL_RO", "return redis.call('set','{t}a','b')", "1", "{t}a"},
	{"EVAL_RO", "return redis.call('get', KEYS[1])", "1", "{t}s"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('set','{t}a','b')", "1", "{t}a"},
	{"EVAL", "#!lua flags=no-writes\nreturn redis.call('get', KEYS[1])", "1", "{t}s"},
	{"EVAL", "return redis.call('hset', KEYS[1], 'only', 'one')", "1", "{t}h1"},
	{"EVAL", "redis.setresp(3) return redis.call('hgetall', KEYS[1])", "1", "{t}h1"},
	{"EVAL", "redis.setresp(3) return redis.call('smembers', KEYS[1])", "1", "{t}nokey"},
	{"EVAL", "redis.setresp(3) local m = redis.call('hgetall', KEYS[1]) return m.map.f", "1", "{t}h"},
	{"EVAL", "redis.setresp(4)", "0"},
	{"EVAL", "redis.log(redis.LOG_WARNING, 'from a script') return 1", "0"},
	{"EVAL", "return redis.REDIS_VERSION ~= nil", "0"},
	{"EVAL", "return {double=1.5}", "0"},
	{"EVAL", "return {1, {ok='in'}, {err='ERR inner'}}", "0"},
	{"EVAL", "local t = {} for i=1,100 do t[i] = i end return t", "0"},
	{"EVAL", "return #KEYS + #ARGV", "0"},
	{"EVAL", "return 1", "-1"},
	{"EVAL", "return 1", "2", "a"},
	{"EVAL", "return 1", "x"},
	// Inside MULTI.
	{"MULTI"},
	{"EVAL", "return redis.call('incr', KEYS[1])", "1", "{t}m"},
	{"EVAL", "return redis.call('incr', KEYS[1])", "1", "{t}m"},
	{"EXEC"},
	{"EVAL", "return KEYS[1]", "1", ""},
	// EVALSHA and SCRIPT.
	{"SCRIPT", "FLUSH"},
	{"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"},
	{"SCRIPT", "LOAD", "return 1"},
	{"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "abc"},
	{"EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"},
	{"EVALSHA", "E0E1F9FABFC9D4800C877A703B823AC0578FF8DB", "0"},
	{"EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "0"},
	{"EVAL", "return 2", "0"},
	{"SCRIPT", "EXISTS", "7f923f79fe76194c868d7e1d0820de36700eb649"},
	{"SCRIPT", "FLUSH", "ASYNC"},
	{"SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db"},
	{"SCRIPT", "FLUSH", "x"},
	{"SCRIPT", "KILL"},
	{"SCRIPT", "NOSUCH"},
	{"SCRIPT", "LOAD"},
	{"EVALSHA", "abc", "0"},
	// Functions.
	{"FUNCTION", "FLUSH"},
	{"FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return args[1] end)\n" +
		"redis.register_function{function_name='ro', callback=function(keys, args) return redis.call('get', keys[1]) end, flags={'no-writes'}}\n" +
		"redis.register_function{function_name='rw', callback=function(keys, args) return redis.call('set', keys[1], 'x') end, flags={'no-writes'}}"},
	{"FUNCTION", "LOAD", "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return args[1] end)"},
	{"FCALL", "myfunc", "0", "hello"},
	{"FCALL", "ro", "1", "{t}s"},
	{"FCALL", "rw", "1", "{t}s"},
	{"FCALL_RO", "myfunc", "0", "a"},
	{"FCALL_RO", "ro", "1", "{t}s"},
	{"FCALL", "nosuch", "0"},
	{"FCALL", "myfunc", "x"},
	{"FCALL", "myfunc", "3", "a"},
	{"FCALL", "myfunc", "-1"},
	{"FCALL", "nosuch", "x"},
	{"FUNCTION", "LOAD", "return 1"},
	{"FUNCTION", "LOAD", "#!lua\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=x\nreturn 1"},
	{"FUNCTION", "LOAD", "#!lua name=y\nredis.call('get','x')"},
	{"FUNCTION", "LOAD", "#!lua name=z\nredis.register_function('f', 1)"},
	{"FUNCTION", "LOAD", "#!lua name=z\nx=1"},
	{"FUNCTION", "LOAD", "#!lua name=z\nredis.register_function('myfunc', function() return 1 end)"},
	{"FUNCTION", "LOAD", "#!lua name=z\nredis.register_function('bad name', function() return 1 end)"},
	{"FUNCTION", "LOAD", "#!lua name=z\nredis.register_function{function_name='f', callback=function() return 1 end, flags={'nosuch'}}"},
	{"FUNCTION", "LOAD", "REPLACE", "#!lua name=mylib\nredis.register_function('myfunc', function(keys, args) return #keys + #args end)"},
	{"FCALL", "myfunc", "1", "{t}a", "b", "c"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "mylib"},
	{"FUNCTION", "LIST", "WITHCODE", "LIBRARYNAME", "my*"},
	{"FUNCTION", "LIST", "LIBRARYNAME", "nomatch*"},
	{"FUNCTION", "STATS"},
	{"FCALL", "ro", "1", "{t}s"},
	{"FUNCTION", "LOAD", "#!lua name=w\nredis.register_function('f', function() error('oops') end)"},
	{"FCALL", "f", "0"},
	{"FUNCTION", "LOAD", "#!lua name=v\nredis.register_function('g', function(keys) return redis.call('incr', keys[1]) end)"},
	{"FCALL", "g", "1", "{t}s"},
	{"FCALL", "g", "1", "{t}cnt"},
	{"FUNCTION", "DELETE", "w"},
	{"FUNCTION", "DELETE", "w"},
	{"FCALL", "f", "0"},
	{"FUNCTION", "KILL"},
	{"FUNCTION", "NOSUCH"},
	{"FUNCTION", "FLUSH", "x"},
	{"FUNCTION", "FLUSH", "SYNC"},
	{"FUNCTION", "LIST"},
}

// Scripts' and functions' replies equal redis-server's, byte for byte.
func TestScriptRepliesMatchRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	ours, theirs := dialRaw(t, addr), dialRaw(t, ref.Options().Addr)
	for i, args := range scriptCases {
		want := theirs.do(t, args...)
		got := ours.do(t, args...)
		require.Equal(t, want, got, "case %d: %q", i, args)
	}
}

// A script that does not compile gets Redis's error, with the line; the
// parser's own words differ from Lua's.
func TestScriptCompileErrors(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	ours, theirs := dialRaw(t, addr), dialRaw(t, ref.Options().Addr)
	for _, tc := range []struct{ body, prefix string }{
		{"return 'x", "-ERR Error compiling script (new function): user_script"},
		{"return 1 +", "-ERR Error compiling script (new function): user_script"},
		{"\n\nreturn 1 +", "-ERR Error compiling script (new function): user_script"},
	} {
		for _, c := range []*rawConn{theirs, ours} {
			require.True(t, strings.HasPrefix(c.do(t, "EVAL", tc.body, "0"), tc.prefix), tc.body)
		}
	}
	require.Contains(t, ours.do(t, "EVAL", "\n\nreturn +", "0"), "user_script:3:")
	require.True(t, strings.HasPrefix(ours.do(t, "FUNCTION", "LOAD", "#!lua name=c\nreturn +"), "-ERR Error compiling function: user_function:2:"))
}

// Over RESP3, scripts' replies keep Redis's shapes: false is null, and
// RESP3 types a script returns (map, set, double) arrive as such.
func TestScriptRESP3MatchesRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	ours, theirs := dialRaw(t, addr), dialRaw(t, ref.Options().Addr)
	for _, c := range []*rawConn{theirs, ours} {
		c.do(t, "HELLO", "3")
		c.do(t, "DEL", "{r3}h")
		c.do(t, "HSET", "{r3}h", "f", "v")
	}
	for i, args := range [][]string{
		{"EVAL", "return false", "0"},
		{"EVAL", "return nil", "0"},
		{"EVAL", "return true", "0"},
		{"EVAL", "return {1, false, 'x'}", "0"},
		{"EVAL", "return {double=2.5}", "0"},
		{"EVAL", "return {map={a=1}}", "0"},
		{"EVAL", "return {set={a=true}}", "0"},
		{"EVAL", "return redis.call('hgetall', KEYS[1])", "1", "{r3}h"},
		{"EVAL", "redis.setresp(3) return redis.call('hgetall', KEYS[1])", "1", "{r3}h"},
		{"EVAL", "redis.setresp(3) return redis.call('get', 'nokey')", "0"},
		{"EVAL", "redis.setresp(3) return false", "0"},
		{"EVAL", "redis.setresp(3) return {true, false}", "0"},
		{"HELLO", "2"},
		{"EVAL", "redis.setresp(3) return {true, false}", "0"},
		{"EVAL", "redis.setresp(3) return {double=1.5}", "0"},
		{"HELLO", "3"},
		{"EVAL", "redis.setresp(3) return redis.call('exists', KEYS[1]) == 1", "1", "{r3}h"},
		{"EVAL", "return redis.status_reply('FINE')", "0"},
		{"EVAL", "return {err='ERR x'}", "0"},
	} {
		want, got := theirs.do(t, args...), ours.do(t, args...)
		if args[0] != "HELLO" { // the servers' details differ
			require.Equal(t, want, got, "case %d: %q", i, args)
		}
	}
}

// TestAppendLuaNumberIsPercent17g: the integer shortcut prints what
// "%.17g" prints.
func TestAppendLuaNumberIsPercent17g(t *testing.T) {
	values := []float64{0, math.Copysign(0, -1), 1, -1, 7, 100, 1 << 40, -(1 << 49), 999_999_999_999_999,
		-999_999_999_999_999, 1e15, 1e15 + 1, 1e17, 0.5, -2.25, 1.0 / 3, 1e300, math.Inf(1), math.Inf(-1), math.NaN()}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 2000 {
		values = append(values, math.Trunc(rng.NormFloat64()*1e12), rng.NormFloat64()*1e6)
	}
	for _, f := range values {
		require.Equal(t, formatG(f, 17), string(appendLuaNumber(nil, f)), "%v", f)
	}
}
