package resp

import (
	"bufio"
	"fmt"
	"maps"
	"math/rand/v2"
	"net"
	"slices"
	"strings"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

// anyReply in a step accepts whatever non-error reply comes back.
var anyReply = struct{}{}

// step is one call of TestEveryCommand: args and the reply wanted, or
// the start of the error wanted.
type step struct {
	args []any
	want any
	err  string
}

func ok(want any, args ...any) step       { return step{args: args, want: want} }
func bad(prefix string, args ...any) step { return step{args: args, err: prefix} }

// genArgsNames is the set of commands TestRepliesMatchRedis draws, which
// it checks against redis-server's replies, happy paths and errors.
func genArgsNames() map[string]bool {
	rng := rand.New(rand.NewPCG(1, 2))
	seen := map[string]bool{}
	for range 20000 {
		seen[strings.ToLower(fmt.Sprint(genArgs(rng)[0]))] = true
	}
	return seen
}

// everyCommandSteps are the happy paths and errors, through go-redis, of
// the commands TestRepliesMatchRedis does not draw: the connection and
// server verbs, transactions, and the time-aware verbs Redis does not
// have. Each command's keys start with its name, so cases run in any order.
// clusterVerbs serve a cluster only (cluster_test.go).
var clusterVerbs = map[string]bool{"cluster": true, "readonly": true, "readwrite": true, "asking": true}

var everyCommandSteps = map[string][]step{
	"client":  {ok("OK", "CLIENT", "SETNAME", "ev"), ok("ev", "CLIENT", "GETNAME"), bad("ERR", "CLIENT", "NOSUCH")},
	"command": {ok(anyReply, "COMMAND", "COUNT"), bad("ERR", "COMMAND", "NOSUCH")},
	"table":   {ok(anyReply, "TABLE", "LIST"), bad("ERR", "TABLE", "NOSUCH")},
	"tenant":  {ok(anyReply, "TENANT", "GET", "acme"), bad("ERR", "TENANT", "NOSUCH")},
	"config":  {ok("OK", "CONFIG", "RESETSTAT"), bad("ERR", "CONFIG", "NOSUCH")},
	"hello":   {ok(anyReply, "HELLO", "2"), bad("NOPROTO", "HELLO", "4")},
	"info":    {ok(anyReply, "INFO", "server"), ok(anyReply, "INFO")},
	"latency": {ok(anyReply, "LATENCY", "HISTOGRAM", "get"), bad("ERR", "LATENCY", "NOSUCH")},
	"reset": {ok("OK", "SELECT", "1"), ok("RESET", "RESET"), ok("OK", "SET", "reset:k", "v"), ok("OK", "SELECT", "0"), ok("v", "GET", "reset:k"),
		bad("ERR wrong number of arguments for 'reset' command", "RESET", "x")},
	"select": {ok("OK", "SELECT", "1"), ok("OK", "SET", "select:k", "v"), ok("v", "GET", "select:k"), ok("OK", "SELECT", "0"),
		ok(int64(0), "EXISTS", "select:k"), bad("ERR DB index is out of range", "SELECT", "16"), bad("ERR DB index is out of range", "SELECT", "-1"),
		bad("ERR value is not an integer", "SELECT", "x")},
	"move": {ok("OK", "SET", "move:k", "v"), ok(int64(1), "MOVE", "move:k", "2"), ok(int64(0), "EXISTS", "move:k"), ok(int64(0), "MOVE", "move:k", "2"),
		bad("ERR source and destination objects are the same", "MOVE", "move:k", "0"), bad("ERR DB index is out of range", "MOVE", "move:k", "16"),
		bad("ERR value is not an integer", "MOVE", "move:k", "x"), ok("OK", "SELECT", "2"), ok("v", "GET", "move:k"), ok("OK", "SELECT", "0")},
	"swapdb": {ok("OK", "SET", "swapdb:k", "v"), ok("OK", "SWAPDB", "0", "3"), ok(int64(0), "EXISTS", "swapdb:k"), ok("OK", "SWAPDB", "3", "0"),
		ok("v", "GET", "swapdb:k"), ok("OK", "SWAPDB", "5", "5"), bad("ERR invalid first DB index", "SWAPDB", "x", "1"),
		bad("ERR invalid second DB index", "SWAPDB", "1", "x"), bad("ERR DB index is out of range", "SWAPDB", "0", "16")},
	"flushdb": {ok("OK", "SET", "flushdb:k", "v"), ok("OK", "SELECT", "4"), ok("OK", "SET", "flushdb:k", "4"), ok("OK", "FLUSHDB"),
		ok(int64(0), "EXISTS", "flushdb:k"), ok("OK", "SELECT", "0"), ok("v", "GET", "flushdb:k"), ok("OK", "FLUSHDB", "SYNC"),
		ok(int64(0), "EXISTS", "flushdb:k"), bad("ERR syntax error", "FLUSHDB", "LATER")},
	"slowlog": {ok(anyReply, "SLOWLOG", "LEN"), ok("OK", "SLOWLOG", "RESET"), bad("ERR", "SLOWLOG", "NOSUCH")},
	"time":    {ok(anyReply, "TIME")},
	"dbsize": {ok("OK", "FLUSHALL"), ok("OK", "MSET", "dbsize:{a}1", "v", "dbsize:{a}2", "v"), ok(int64(2), "DBSIZE"),
		ok("OK", "SET", "dbsize:{a}1", "v", "PXAT", 1), ok(int64(1), "DBSIZE"), bad("ERR wrong number of arguments", "DBSIZE", "x")},
	"scan": {ok(anyReply, "SCAN", "0", "COUNT", "5"), bad("ERR invalid cursor", "SCAN", "x"), bad("ERR syntax error", "SCAN", "0", "COUNT")},
	"flushall": {ok("OK", "SET", "flushall:k", "v"), ok("OK", "FLUSHALL"), ok(int64(0), "EXISTS", "flushall:k"),
		ok("OK", "FLUSHALL", "ASYNC"), bad("ERR syntax error", "FLUSHALL", "LATER")},
	"multi": {ok("OK", "MULTI"), ok("QUEUED", "SET", "multi:k", "v"), ok([]any{"OK"}, "EXEC"),
		ok("OK", "MULTI"), bad("ERR MULTI calls can not be nested", "MULTI"), ok("OK", "DISCARD")},
	"object": {ok("OK", "SET", "object:k", "12"), ok("int", "OBJECT", "ENCODING", "object:k"), ok(nil, "OBJECT", "ENCODING", "object:none"),
		bad("ERR unknown subcommand 'NOSUCH'", "OBJECT", "NOSUCH", "object:k")},
	"memory": {ok(int64(1), "RPUSH", "memory:l", "a"), ok(anyReply, "MEMORY", "USAGE", "memory:l"), ok(nil, "MEMORY", "USAGE", "memory:none"),
		bad("ERR syntax error", "MEMORY", "USAGE", "memory:l", "SAMPLES")},
	"debug": {ok("OK", "DEBUG", "SLEEP", "0"), ok(anyReply, "DEBUG", "HELP"), bad("ERR unknown subcommand", "DEBUG", "SEGFAULT")},
	"exec": {bad("ERR EXEC without MULTI", "EXEC"),
		// A refused EXEC ends the transaction, as in Redis.
		ok("OK", "MULTI"), ok("QUEUED", "SET", "exec:k", "v"),
		bad("EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command", "EXEC", "now"),
		ok("OK", "MULTI"), ok("OK", "DISCARD"), ok(nil, "GET", "exec:k")},
	"discard": {bad("ERR DISCARD without MULTI", "DISCARD")},
	"watch": {ok("OK", "WATCH", "watch:k"), ok("OK", "SET", "watch:k", "changed"), ok("OK", "MULTI"),
		ok("QUEUED", "GET", "watch:k"), ok(nil, "EXEC"), ok("OK", "MULTI"), bad("ERR WATCH inside MULTI is not allowed", "WATCH", "watch:k"), ok("OK", "DISCARD")},

	"eval": {ok(int64(3), "EVAL", "return 3.99", 0), ok("v", "EVAL", "redis.call('set', KEYS[1], ARGV[1]) return redis.call('get', KEYS[1])", 1, "eval:k", "v"),
		bad("ERR user_script:1: boom", "EVAL", "error('boom')", 0), bad("ERR Number of keys can't be negative", "EVAL", "return 1", -1)},
	"evalsha": {ok("e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "SCRIPT", "LOAD", "return 1"), ok(int64(1), "EVALSHA", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0),
		bad("NOSCRIPT", "EVALSHA", "ffffffffffffffffffffffffffffffffffffffff", 0)},
	"eval_ro": {ok(nil, "EVAL_RO", "return redis.call('get', KEYS[1])", 1, "eval_ro:k"),
		bad("ERR Write commands are not allowed from read-only scripts.", "EVAL_RO", "return redis.call('set', KEYS[1], 'v')", 1, "eval_ro:k")},
	"evalsha_ro": {ok("e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "SCRIPT", "LOAD", "return 1"), ok(int64(1), "EVALSHA_RO", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", 0),
		bad("NOSCRIPT", "EVALSHA_RO", "ffffffffffffffffffffffffffffffffffffffff", 0)},
	"script": {ok("e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "SCRIPT", "LOAD", "return 1"), ok([]any{int64(1), int64(0)}, "SCRIPT", "EXISTS", "e0e1f9fabfc9d4800c877a703b823ac0578ff8db", "abc"),
		bad("NOTBUSY", "SCRIPT", "KILL"), bad("ERR unknown subcommand", "SCRIPT", "NOSUCH")},
	"function": {ok("everylib", "FUNCTION", "LOAD", "REPLACE", "#!lua name=everylib\nredis.register_function('everyfn', function(keys, args) return args[1] end)"),
		ok(anyReply, "FUNCTION", "LIST"), ok(anyReply, "FUNCTION", "STATS"), ok("OK", "FUNCTION", "DELETE", "everylib"),
		bad("ERR Library not found", "FUNCTION", "DELETE", "everylib"), bad("ERR unknown subcommand", "FUNCTION", "NOSUCH")},
	"fcall": {ok("fcalllib", "FUNCTION", "LOAD", "REPLACE", "#!lua name=fcalllib\nredis.register_function('fcallfn', function(keys, args) return args[1] end)"),
		ok("a", "FCALL", "fcallfn", 0, "a"), bad("ERR Function not found", "FCALL", "nosuchfn", 0)},
	"fcall_ro": {ok("fcallrolib", "FUNCTION", "LOAD", "REPLACE", "#!lua name=fcallrolib\nredis.register_function{function_name='fcallrofn', callback=function(keys) return redis.call('exists', keys[1]) end, flags={'no-writes'}}"),
		ok(int64(0), "FCALL_RO", "fcallrofn", 1, "fcall_ro:k"), bad("ERR Function not found", "FCALL_RO", "nosuchfn", 0)},

	"renamenx": {ok("OK", "MSET", "{rn}a", "1", "{rn}b", "2"), ok(int64(0), "RENAMENX", "{rn}a", "{rn}b"), ok(int64(1), "RENAMENX", "{rn}a", "{rn}c"),
		ok(int64(0), "RENAMENX", "{rn}c", "{rn}c"), ok("1", "GET", "{rn}c"), bad("ERR no such key", "RENAMENX", "{rn}x", "{rn}y")},
	"save":     {ok("OK", "SET", "save:k", "v"), ok("OK", "SAVE"), ok("v", "GET", "save:k")},
	"bgsave":   {ok("Background saving started", "BGSAVE"), bad("ERR syntax error", "BGSAVE", "LATER")},
	"lastsave": {ok(anyReply, "LASTSAVE")},
	"wait":     {ok(int64(0), "WAIT", "0", "0"), ok(int64(0), "WAIT", "1", "10"), bad("ERR timeout is negative", "WAIT", "1", "-1")},
	"rpoplpush": {ok(int64(2), "RPUSH", "{rp}s", "a", "b"), ok("b", "RPOPLPUSH", "{rp}s", "{rp}d"), ok([]any{"b"}, "LRANGE", "{rp}d", "0", "-1"),
		ok(nil, "RPOPLPUSH", "{rp}none", "{rp}d"), ok("OK", "SET", "{rp}str", "x"), bad("WRONGTYPE Operation against a key holding the wrong kind of value", "RPOPLPUSH", "{rp}s", "{rp}str")},
	"brpoplpush": {ok(int64(1), "RPUSH", "{bp}s", "x"), ok("x", "BRPOPLPUSH", "{bp}s", "{bp}d", "0.01"), ok(nil, "BRPOPLPUSH", "{bp}s", "{bp}d", "0.01"),
		bad("ERR timeout is negative", "BRPOPLPUSH", "{bp}s", "{bp}d", "-1")},
	"blmpop": {ok(nil, "BLMPOP", "0.01", "1", "blmpop:l", "LEFT"), ok(int64(2), "RPUSH", "blmpop:l", "a", "b"),
		ok([]any{"blmpop:l", []any{"b", "a"}}, "BLMPOP", "0.01", "1", "blmpop:l", "RIGHT", "COUNT", "5"),
		bad("ERR numkeys should be greater than 0", "BLMPOP", "0.01", "0", "blmpop:l", "LEFT")},
	"bzmpop": {ok(nil, "BZMPOP", "0.01", "1", "bzmpop:z", "MIN"), ok(int64(2), "ZADD", "bzmpop:z", "1", "a", "2", "b"),
		ok([]any{"bzmpop:z", []any{[]any{"b", "2"}}}, "BZMPOP", "0.01", "1", "bzmpop:z", "MAX"),
		bad("ERR count should be greater than 0", "BZMPOP", "0.01", "1", "bzmpop:z", "MAX", "COUNT", "0")},
	"fappend":         {ok("OK", "FAPPEND", "fappend:f", 10, "1"), bad("ERR timestamp_ms must be an unsigned integer", "FAPPEND", "fappend:f", -1, "1")},
	"fappendpolicy":   {ok(int64(1), "FAPPENDPOLICY", "fappendpolicy:f", 10, "1", "NX"), ok(int64(0), "FAPPENDPOLICY", "fappendpolicy:f", 10, "2", "NX"), bad("ERR unknown write policy", "FAPPENDPOLICY", "fappendpolicy:f", 10, "1", "sometimes")},
	"fquery":          {ok("OK", "FAPPEND", "fquery:f", 10, "1"), ok([]any{[]any{int64(10), "1"}}, "FQUERY", "fquery:f", 0, 20), bad("ERR syntax error", "FQUERY", "fquery:f", 0, 20, 1, 2)},
	"fqueryfilter":    {ok("OK", "FAPPEND", "fqueryfilter:f", 10, "1"), ok([]any{}, "FQUERYFILTER", "fqueryfilter:f", 0, 20, 10, "gid", "=", 5), bad("ERR unknown filter operator", "FQUERYFILTER", "fqueryfilter:f", 0, 20, 10, "gid", "~", 5)},
	"fqueryfilterstr": {ok([]any{}, "FQUERYFILTERSTR", "fqueryfilterstr:f", 0, 20, 10, "gid >= 2"), bad("ERR unknown filter field", "FQUERYFILTERSTR", "fqueryfilterstr:f", 0, 20, 10, "colour = 1")},
	"fagg":            {ok("OK", "FAPPEND", "fagg:f", 10, "4"), ok(int64(4), "FAGG", "fagg:f", 0, 20, "sum"), bad("ERR unknown aggregator", "FAGG", "fagg:f", 0, 20, "median")},
	"faggs":           {ok("OK", "FAPPEND", "faggs:f", 10, "4"), ok([]any{int64(4), int64(1)}, "FAGGS", "faggs:f", 0, 20, "sum", "count"), bad("ERR unknown aggregator", "FAGGS", "faggs:f", 0, 20, "sum", "p200")},
	"freplace":        {ok("OK", "FREPLACE", "freplace:f", 0, 20, 15, "9"), ok([]any{[]any{int64(15), "9"}}, "FQUERY", "freplace:f", 0, 20), bad("ERR timestamp_ms must be an unsigned integer", "FREPLACE", "freplace:f", 0, 20, "x", "9")},
	"fdel":            {ok("OK", "FAPPEND", "fdel:f", 10, "1"), ok("OK", "FDEL", "fdel:f"), ok("none", "TYPE", "fdel:f"), ok("OK", "SET", "fdel:s", "v"), bad("WRONGTYPE", "FDEL", "fdel:s")},

	"controlstateincr":    {ok("OK", "CONTROLSTATEINCR", "csi:k", 1000, 2), bad("ERR amount must be an integer", "CONTROLSTATEINCR", "csi:k", 1000, "x")},
	"controlstateincropt": {ok("OK", "CONTROLSTATEINCROPT", "csio:k", 1700, 3, 1000, 60000), bad("ERR precision_ms", "CONTROLSTATEINCROPT", "csio:k", 1700, 3, "x", 60000)},
	"controlstatecount":   {ok("OK", "CONTROLSTATEINCR", "csc:k", 1000, 2), ok(int64(2), "CONTROLSTATECOUNT", "csc:k", 0, 2000), bad("ERR", "CONTROLSTATECOUNT", "csc:k", "x", 2000)},
	"controlstatequery":   {ok("OK", "CONTROLSTATEINCR", "csq:k", 1000, 2), ok(int64(2), "CONTROLSTATEQUERY", "csq:k", 0, 2000, "max"), bad("ERR unknown aggregator", "CONTROLSTATEQUERY", "csq:k", 0, 2000, "median")},
	"controlstatedetail":  {ok("OK", "CONTROLSTATEINCR", "csd:k", 1000, 2), ok([]any{[]any{int64(1000), "2"}}, "CONTROLSTATEDETAIL", "csd:k", 0, 2000), bad("ERR syntax error", "CONTROLSTATEDETAIL", "csd:k", 0, 2000, 1, 2)},
	"controlstatedebug":   {ok("OK", "CONTROLSTATEINCR", "csg:k", 1000, 2), ok([]any{"1000", "2"}, "CONTROLSTATEDEBUG", "csg:k", 0, 2000), bad("ERR", "CONTROLSTATEDEBUG", "csg:k", "x", 2000)},
	"controlstatemanager": {ok("OK", "CONTROLSTATEHSET", "csm:k", 10, 4), ok([]any{"h_events", "1", "h_sum", "4", "cpc_events", "0", "cpc_sum", "0"}, "CONTROLSTATEMANAGER", "csm:k"), bad("ERR syntax error", "CONTROLSTATEMANAGER", "csm:k", 1)},
	"controlstatechange":  {ok("OK", "CONTROLSTATECHANGE", "csch:k", 1500, "a"), ok(int64(1), "CONTROLSTATEQUERY", "csch:k", 0, 2000, "change"), bad("ERR wrong number of arguments", "CONTROLSTATECHANGE", "csch:k", 1, "v", 1000)},
	"hchange":             {ok("OK", "HCHANGE", "hch:k", 1500, "a"), ok(int64(1), "HQUERY", "hch:k", 0, 2000, "change"), bad("ERR timestamp_ms", "HCHANGE", "hch:k", "x", "a")},
	"quotatake":           {ok([]any{int64(1), int64(2), int64(0)}, "QUOTATAKE", "qt:k", 3, 60000, 2), bad("ERR", "QUOTATAKE", "qt:k", "x", 60000)},
	"pace":                {ok(anyReply, "PACE", "pc:k", 1, 60000), bad("ERR pacing needs", "PACE", "pc:k", 0, 1000)},
	"folset":              {ok("OK", "FOLSET", "fs:k", "late", 20, 0, "FIRST"), ok("late", "FOLQUERY", "fs:k"), bad("ERR selection type must be FIRST or LAST", "FOLSET", "fs:k", "v", 1, 0, "MIDDLE")},
	"selectionset":        {ok("OK", "SELECTIONSET", "ss:k", "v", 20, 0, "LAST"), ok("v", "SELECTIONQUERY", "ss:k"), bad("ERR ttl_ms", "SELECTIONSET", "ss:k", "v", 20, "x", "LAST")},
	"folquery":            {ok(nil, "FOLQUERY", "fq:none"), bad("ERR wrong number of arguments", "FOLQUERY", "fq:k", 0, 10)},
	"pfadd": {ok(int64(1), "PFADD", "pfadd:k", "a", "b"), ok(int64(0), "PFADD", "pfadd:k", "a"), ok(int64(1), "PFADD", "pfadd:e"),
		ok("OK", "SET", "pfadd:s", "v"), bad("WRONGTYPE Key is not a valid HyperLogLog string value.", "PFADD", "pfadd:s", "a")},
	"pfcount": {ok(int64(1), "PFADD", "{pfcount}a", "x", "y"), ok(int64(2), "PFCOUNT", "{pfcount}a"), ok(int64(0), "PFCOUNT", "{pfcount}none"),
		ok(int64(2), "PFCOUNT", "{pfcount}a", "{pfcount}none"),
		ok("OK", "SET", "{pfcount}bad", "HYLL\x01xxxxxxxxxx\x80\x7f\xfe"),
		bad("INVALIDOBJ Corrupted HLL object detected", "PFCOUNT", "{pfcount}bad")},
	"pfmerge": {ok(int64(1), "PFADD", "{pfmerge}a", "x"), ok("OK", "PFMERGE", "{pfmerge}d", "{pfmerge}a", "{pfmerge}none"), ok(int64(1), "PFCOUNT", "{pfmerge}d"),
		ok("OK", "PFMERGE", "{pfmerge}e"), ok(int64(1), "EXISTS", "{pfmerge}e"), ok(int64(1), "LPUSH", "{pfmerge}l", "x"),
		bad("WRONGTYPE Operation against a key holding the wrong kind of value", "PFMERGE", "{pfmerge}d", "{pfmerge}l")},
	"pfdebug": {ok(int64(1), "PFADD", "pfdebug:k", "a"), ok("sparse", "PFDEBUG", "ENCODING", "pfdebug:k"), ok(anyReply, "PFDEBUG", "DECODE", "pfdebug:k"),
		ok(int64(1), "PFDEBUG", "TODENSE", "pfdebug:k"), ok(int64(0), "PFDEBUG", "TODENSE", "pfdebug:k"), ok(anyReply, "PFDEBUG", "GETREG", "pfdebug:k"),
		bad("ERR HLL encoding is not sparse", "PFDEBUG", "DECODE", "pfdebug:k"), bad("ERR The specified key does not exist", "PFDEBUG", "ENCODING", "pfdebug:none"),
		bad("ERR Unknown PFDEBUG subcommand 'nosuch'", "PFDEBUG", "nosuch", "pfdebug:k")},
	"pfselftest":     {ok("OK", "PFSELFTEST")},
	"selectionquery": {ok(nil, "SELECTIONQUERY", "sq:none"), bad("ERR wrong number of arguments", "SELECTIONQUERY", "sq:k", 0)},
}

// familySteps are the steps of the family verbs, which come in the
// original's spellings: H or COUNTER, CPC or DISTINCT, FOL or SELECTION.
func familySteps(name string) []step {
	k := name + ":k"
	upper := strings.ToUpper(name)
	return []step{
		ok("OK", "CONTROLSTATE"+upper+"SET", k, 10, 4),
		ok(anyReply, upper+"SETANDGET", k, 20, 1, 0, 100, "sum"),
		ok(anyReply, upper+"SETANDGETOPT", k, 30, 3, 0, 100, "sum", 0, 0, "req-1"),
		ok(anyReply, upper+"QUERY", k, 0, 100, "sum"),
		bad("ERR timestamp_ms must be an unsigned integer", "CONTROLSTATE"+upper+"SET", k, "x", 4),
		bad("ERR amount must be an integer", upper+"SETANDGET", k, 20, "x", 0, 100, "sum"),
		bad("ERR ttl_ms", upper+"SETANDGETOPT", k, 30, 3, 0, 100, "sum", 0, "x", "req-2"),
		bad("ERR unknown aggregator", upper+"QUERY", k, 0, 100, "median"),
	}
}

// everyCommandCases is everyCommandSteps with the family verbs' steps.
func everyCommandCases() map[string][]step {
	cases := maps.Clone(everyCommandSteps)
	for _, fam := range []string{"h", "counter", "cpc", "distinct", "fol", "selection"} {
		for _, name := range []string{"controlstate" + fam + "set", fam + "setandget", fam + "setandgetopt", fam + "query"} {
			if cases[name] == nil {
				cases[name] = familySteps(fam)
			}
		}
	}
	return cases
}

func sortedKeys(m map[string][]step) []string { return slices.Sorted(maps.Keys(m)) }

// Every command the server serves is run here, through go-redis, with a
// happy path and an error, or drawn by TestRepliesMatchRedis, which checks
// both against redis-server; and every command refuses a wrong number of
// arguments with Redis's error. A new command without a test fails here.
func TestEveryCommand(t *testing.T) {
	addr, _ := start(t, Options{})
	// One connection, so MULTI and WATCH hold across calls.
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 1})
	t.Cleanup(func() { c.Close() })
	ctx := t.Context()
	cases := everyCommandCases()
	drawn := genArgsNames()
	for _, name := range Commands() {
		if name == "auth" || name == "quit" {
			continue // their own tests below
		}
		if clusterVerbs[name] {
			continue // a standalone server refuses them: TestClusterRouting runs them
		}
		require.True(t, drawn[name] || cases[name] != nil, "%s: no test runs it", name)
	}
	for _, name := range sortedKeys(cases) {
		require.Contains(t, commands, name, "a case for a command not served")
		happy := false
		for i, st := range cases[name] {
			v, err := c.Do(ctx, st.args...).Result()
			where := fmt.Sprintf("%s, step %d: %v", name, i, st.args)
			if st.err != "" {
				require.Error(t, err, where)
				require.True(t, strings.HasPrefix(err.Error(), st.err), "%s: %v", where, err)
				continue
			}
			happy = happy || strings.EqualFold(fmt.Sprint(st.args[0]), name) || strings.EqualFold(name, "multi")
			if st.want == nil {
				require.ErrorIs(t, err, redis.Nil, where)
				continue
			}
			require.NoError(t, err, where)
			if st.want != anyReply {
				require.Equal(t, st.want, v, where)
			}
		}
		require.True(t, happy || name == "exec" || name == "discard", "%s: no step succeeds with the command itself", name)
	}
	require.Equal(t, int64(len(commands)), c.Do(ctx, "COMMAND", "COUNT").Val())

	// A wrong number of arguments, for every command: one short of the
	// least it takes, or one more than a fixed arity allows.
	for _, name := range Commands() {
		spec := commands[name]
		n := spec.arity
		var args []any
		switch {
		case n > 0:
			args = make([]any, n) // one more than the n-1 arguments it takes
		case n < -1:
			args = make([]any, -n-2) // one fewer than the least
		default:
			continue // any number
		}
		args = append([]any{name}, args...)
		for i := 1; i < len(args); i++ {
			args[i] = "1"
		}
		if len(args) == 1 && n > 0 {
			continue
		}
		err := c.Do(ctx, args...).Err()
		require.Error(t, err, "%v", args)
		want := fmt.Sprintf("ERR wrong number of arguments for '%s' command", name)
		if name == "exec" {
			// As Redis: a refused EXEC aborts, in MULTI or not.
			want = "EXECABORT Transaction discarded because of: wrong number of arguments for 'exec' command"
		}
		require.Equal(t, want, err.Error(), "%v", args)
	}
}

// AUTH against a server with a token: the happy path, a wrong token, and
// AUTH where no token is configured.
func TestEveryCommandAuth(t *testing.T) {
	ctx := t.Context()
	addr, _ := start(t, Options{Tokens: []string{"tok"}})
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, PoolSize: 1})
	t.Cleanup(func() { c.Close() })
	require.ErrorContains(t, c.Do(ctx, "GET", "k").Err(), "NOAUTH")
	require.ErrorContains(t, c.Do(ctx, "AUTH", "wrong").Err(), "WRONGPASS")
	require.Equal(t, "OK", c.Do(ctx, "AUTH", "tok").Val())
	require.ErrorIs(t, c.Do(ctx, "GET", "k").Err(), redis.Nil)
	open, _ := start(t, Options{})
	o := client(t, open, 2)
	require.ErrorContains(t, o.Do(ctx, "AUTH", "tok").Err(), "ERR")
}

// QUIT replies +OK and closes the connection, after the replies before it.
func TestEveryCommandQuit(t *testing.T) {
	addr, _ := start(t, Options{})
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte("PING\r\nQUIT\r\nPING\r\n"))
	require.NoError(t, err)
	r := bufio.NewReader(nc)
	for _, want := range []string{"+PONG\r\n", "+OK\r\n"} {
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, want, line)
	}
	_, err = r.ReadString('\n')
	require.Error(t, err, "the connection is closed after QUIT")
}

// INCRBYFLOAT and HINCRBYFLOAT print the digits Redis prints: sums made
// in long double precision, with 17 decimals trimmed (0.1 + 0.2 is 0.3).
func TestIncrByFloatDigitsMatchRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ours := client(t, addr, 2)
	theirs := testredis.Start(t)
	ctx := t.Context()
	incs := []string{"0.1", "0.2", "0.1", "-0.3", "1e-3", "5.0e3", "3.0e-17", "1.1", "-5000.001", "10.5", "0.000000000000000001", "-10.6", "1234567.891", "1e20", "-1e20", "2.5e-5"}
	for _, proto := range []*redis.Client{theirs, ours} {
		require.NoError(t, proto.Del(ctx, "f", "h").Err())
	}
	for i, inc := range incs {
		want, err := theirs.Do(ctx, "INCRBYFLOAT", "f", inc).Result()
		require.NoError(t, err)
		got, err := ours.Do(ctx, "INCRBYFLOAT", "f", inc).Result()
		require.NoError(t, err)
		require.Equal(t, want, got, "step %d: INCRBYFLOAT f %s", i, inc)
		want, err = theirs.Do(ctx, "HINCRBYFLOAT", "h", "x", inc).Result()
		require.NoError(t, err)
		got, err = ours.Do(ctx, "HINCRBYFLOAT", "h", "x", inc).Result()
		require.NoError(t, err)
		require.Equal(t, want, got, "step %d: HINCRBYFLOAT h x %s", i, inc)
	}
	require.Equal(t, theirs.Get(ctx, "f").Val(), ours.Get(ctx, "f").Val())
}

// The verbs over several keys take them from one key group: across groups
// they get CROSSSLOT, as from a Redis cluster, and change nothing.
func TestGroupedVerbsRefuseCrossSlot(t *testing.T) {
	addr, _ := start(t, Options{})
	c := client(t, addr, 2)
	ctx := t.Context()
	keys := make([]any, 10)
	for i := range keys {
		keys[i] = fmt.Sprint("spread", i)
		require.NoError(t, c.SAdd(ctx, keys[i].(string), "m").Err())
	}
	for _, args := range [][]any{
		append([]any{"SINTERSTORE", "dst"}, keys...),
		append([]any{"SUNIONSTORE", "dst"}, keys...),
		append([]any{"SDIFFSTORE", "dst"}, keys...),
		{"MSETNX", "x0", "1", "x1", "1", "x2", "1", "x3", "1", "x4", "1", "x5", "1", "x6", "1", "x7", "1"},
	} {
		require.ErrorContains(t, c.Do(ctx, args...).Err(), "CROSSSLOT", "%v", args)
	}
	crossed := 0
	for _, k := range keys[1:] {
		if err := c.Do(ctx, "SMOVE", keys[0], k, "m").Err(); err != nil {
			require.ErrorContains(t, err, "CROSSSLOT")
			crossed++
		}
	}
	require.Positive(t, crossed)
	require.Equal(t, int64(0), c.Exists(ctx, "dst", "x0", "x7").Val())
}
