package resp

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"net"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

// start runs a server over a fresh engine on a loopback port.
func start(t testing.TB, opts Options) (string, *temporalstore.Engine) {
	t.Helper()
	s, addr := startServer(t, opts)
	return addr, s.opts.Engine
}

// startServer is start returning the server.
func startServer(t testing.TB, opts Options) (*Server, string) {
	t.Helper()
	e, err := local.Open(t.Context(), temporalstore.Options{Dir: t.TempDir(), MaintenanceInterval: temporalstore.Disabled})
	require.NoError(t, err)
	opts.Engine = e
	s, err := New(opts)
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	done := make(chan error, 1)
	go func() { done <- s.Serve(l) }()
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		require.ErrorIs(t, <-done, ErrClosed)
		require.NoError(t, e.Close())
	})
	return s, l.Addr().String()
}

func client(t testing.TB, addr string, proto int) *redis.Client {
	c := redis.NewClient(&redis.Options{Addr: addr, Protocol: proto})
	t.Cleanup(func() { c.Close() })
	return c
}

// The same random commands on our server and on redis-server, through
// go-redis, give the same replies (errors compared by their code), in RESP2
// and in RESP3.
func TestRepliesMatchRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx := t.Context()
			ours := client(t, addr, proto)
			theirs := redis.NewClient(&redis.Options{Addr: ref.Options().Addr, Protocol: proto})
			defer theirs.Close()
			require.NoError(t, theirs.FlushAll(ctx).Err())
			require.NoError(t, ours.FlushAll(ctx).Err())
			rng := rand.New(rand.NewPCG(uint64(proto), 11))
			seen := map[string]bool{}
			for step := range 3000 {
				args := genArgs(rng)
				seen[strings.ToLower(fmt.Sprint(args[0]))] = true
				sameReply(t, ours, theirs, args, fmt.Sprintf("step %d: %v", step, args))
			}
			require.Greater(t, len(seen), 60)
		})
	}
}

// sameReply runs args on both servers and requires redis-server's reply,
// or an error of the same code.
func sameReply(t *testing.T, ours, theirs *redis.Client, args []any, where string) {
	t.Helper()
	ctx := t.Context()
	want, werr := theirs.Do(ctx, args...).Result()
	got, gerr := ours.Do(ctx, args...).Result()
	if werr != nil && !errors.Is(werr, redis.Nil) {
		require.Error(t, gerr, "%s: redis says %v, we replied %v", where, werr, got)
		require.Equal(t, errCode(werr), errCode(gerr), "%s: redis %v, ours %v", where, werr, gerr)
		return
	}
	require.Equal(t, errors.Is(werr, redis.Nil), errors.Is(gerr, redis.Nil), "%s: redis %v, ours %v", where, werr, gerr)
	if !errors.Is(gerr, redis.Nil) {
		require.NoError(t, gerr, "%s: redis replied %v", where, want)
	}
	if !closeTimes(args, want, got) {
		require.Equal(t, normalize(args, want), normalize(args, got), where)
	}
}

// Sorted-set algebra over sets and sorted sets of one {hash tag}, with
// weights, aggregators and ZRANGESTORE, gives redis-server's replies and
// leaves every key as redis-server leaves it.
func TestZAlgebraMatchesRedis(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ours := client(t, addr, proto)
			theirs := redis.NewClient(&redis.Options{Addr: ref.Options().Addr, Protocol: proto})
			defer theirs.Close()
			rng := rand.New(rand.NewPCG(uint64(proto), 31))
			pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
			key := func() string { return "{z}" + string(rune('a'+rng.IntN(5))) }
			mem := func() string { return string(rune('a' + rng.IntN(6))) }
			for step := range 1500 {
				var args []any
				switch rng.IntN(10) {
				case 0, 1:
					args = []any{"ZADD", key(), pick("1", "2.5", "-1", "inf", "-inf", "0"), mem(), pick("0", "3", "1e3"), mem()}
				case 2:
					args = []any{"SADD", key(), mem(), mem()}
				case 3:
					args = []any{"DEL", key()}
				case 4:
					args = []any{"ZRANGESTORE", key(), key(), pick("0", "(1", "-inf", "[a", "-", "1"), pick("-1", "+inf", "2", "+", "(c"), pick("BYSCORE", "BYLEX", "REV", "LIMIT", "WITHSCORES"), pick("REV", "BYSCORE", "0")}
				case 5:
					args = []any{"ZRANGE", key(), "0", "-1", "WITHSCORES"}
				default:
					kind := pick("ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE")
					args = []any{kind}
					if strings.HasSuffix(kind, "STORE") {
						args = append(args, key())
					}
					n := rng.IntN(3) + 1
					args = append(args, pick(strconv.Itoa(n), strconv.Itoa(n), strconv.Itoa(n), "0", "20", "x"))
					for range n {
						args = append(args, key())
					}
					for range rng.IntN(3) {
						switch rng.IntN(4) {
						case 0:
							args = append(args, "WEIGHTS")
							for range n {
								args = append(args, pick("2", "0.5", "-1", "0", "inf", "-inf", "x"))
							}
						case 1:
							args = append(args, "AGGREGATE", pick("SUM", "MIN", "MAX", "sum", "AVG"))
						case 2:
							args = append(args, "WITHSCORES")
						default:
							args = append(args, pick("LIMIT", "WEIGHTS"))
						}
					}
				}
				where := fmt.Sprintf("step %d: %v", step, args)
				sameReply(t, ours, theirs, args, where)
				// Every key's state too, so a divergence shows where it
				// starts, not where a later reply shows it.
				for _, k := range []string{"{z}a", "{z}b", "{z}c", "{z}d", "{z}e"} {
					sameReply(t, ours, theirs, []any{"ZRANGE", k, "0", "-1", "WITHSCORES"}, where)
					sameReply(t, ours, theirs, []any{"SMEMBERS", k}, where)
				}
			}
		})
	}
}

// closeTimes reports whether want and got are the same TTL or expiry
// time of a key given a relative expiry: equal up to the time between the
// two servers' runs of the command that set it.
func closeTimes(args []any, want, got any) bool {
	w, ok1 := want.(int64)
	g, ok2 := got.(int64)
	if !ok1 || !ok2 || w < 0 || g < 0 {
		return false
	}
	slack := int64(1)
	switch strings.ToLower(fmt.Sprint(args[0])) {
	case "pttl", "pexpiretime":
		slack = 1000
	case "ttl", "expiretime":
	default:
		return false
	}
	return w-g <= slack && g-w <= slack
}

func errCode(err error) string {
	code, _, _ := strings.Cut(err.Error(), " ")
	return code
}

// normalize sorts replies whose order Redis leaves open.
func normalize(args []any, v any) any {
	name := strings.ToLower(fmt.Sprint(args[0]))
	switch name {
	case "smembers", "sinter", "sunion", "sdiff", "hkeys", "hvals", "keys":
		if arr, ok := v.([]any); ok {
			out := slices.Clone(arr)
			slices.SortFunc(out, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
			return out
		}
	case "randomkey":
		return v == nil
	case "srandmember", "hrandfield", "zrandmember":
		if len(args) == 2 {
			return v == nil
		}
		if arr, ok := v.([]any); ok {
			return len(arr)
		}
	case "hscan", "sscan", "zscan":
		// A small collection comes back whole, in an order Redis leaves
		// open: the cursor and the set of its entries (pairs kept whole).
		if arr, ok := v.([]any); ok && len(arr) == 2 {
			items, _ := arr[1].([]any)
			step := 2
			if args[0] == "SSCAN" {
				step = 1
			}
			var entries []string
			for i := 0; i+step <= len(items); i += step {
				entries = append(entries, fmt.Sprint(items[i:i+step]))
			}
			slices.Sort(entries)
			return []any{arr[0], entries}
		}
	case "hgetall":
		switch m := v.(type) {
		case map[any]any:
			return fmt.Sprint(m) // fmt sorts map keys
		case []any:
			mm := map[any]any{}
			for i := 0; i+1 < len(m); i += 2 {
				mm[m[i]] = m[i+1]
			}
			return fmt.Sprint(mm)
		}
	}
	return v
}

func genArgs(rng *rand.Rand) []any {
	key := func(fam string) string { return fam + strconv.Itoa(rng.IntN(3)) }
	mem := func() string { return string(rune('a' + rng.IntN(5))) }
	val := func() string { return []string{"x", "10", "-3", "", "v v", "2.5"}[rng.IntN(6)] }
	num := func() string { return strconv.Itoa(rng.IntN(9) - 4) }
	pick := func(xs ...string) string { return xs[rng.IntN(len(xs))] }
	fam := pick("s", "s", "t", "h", "e", "z", "x", "l", "o", "g", "b", "k")
	k := key(fam)
	switch fam {
	case "s":
		switch rng.IntN(20) {
		case 0:
			return []any{"SET", k, val()}
		case 1:
			return []any{"SET", k, val(), pick("NX", "XX", "GET", "KEEPTTL", "EX", "PX")}
		case 2:
			return []any{"GET", k}
		case 3:
			return []any{"INCR", k}
		case 4:
			return []any{"DECRBY", k, num()}
		case 5:
			return []any{"INCRBYFLOAT", k, pick("1.5", "-2", "abc", "0")}
		case 6:
			return []any{"APPEND", k, val()}
		case 7:
			return []any{"STRLEN", k}
		case 8:
			return []any{"GETRANGE", k, num(), num()}
		case 9:
			return []any{"SETRANGE", k, strconv.Itoa(rng.IntN(4)), val()}
		case 10:
			return []any{"MGET", k, key("s"), key("h")}
		case 11:
			return []any{"MSET", k, val(), key("s"), val()}
		case 12:
			return []any{"GETDEL", k}
		case 13:
			return []any{"SETNX", k, val()}
		case 14:
			return []any{"GETSET", k, val()}
		case 15:
			return []any{"SET", k, val(), "EX", pick("100", "0", "-1", "x")}
		case 16:
			return []any{"TTL", k}
		case 17:
			return []any{"EXISTS", k, key("s"), k}
		case 18:
			return []any{"TYPE", k}
		default:
			return []any{"DEL", k, key("l")}
		}
	case "t": // strings' other verbs and expiry (fixed times, so replies match)
		k = key("s")
		switch rng.IntN(19) {
		case 0:
			return []any{"DECR", k}
		case 1:
			return []any{"SETEX", k, pick("100", "0", "-1", "x"), val()}
		case 2:
			return []any{"PSETEX", k, pick("100000", "0", "x"), val()}
		case 3:
			return []any{"GETEX", k, pick("EX", "PX", "EXAT", "PXAT"), pick("100000", "0", "x", "4102444800")}
		case 4:
			return []any{"GETEX", k, pick("PERSIST", "KEEPTTL")}
		case 5:
			return []any{"SUBSTR", k, num(), num()}
		case 6:
			return []any{"EXPIREAT", k, pick("4102444800", "4102444801", "1", "x")}
		case 7:
			return []any{"PEXPIREAT", k, pick("4102444800000", "1", "x")}
		case 8:
			return []any{pick("EXPIRETIME", "PEXPIRETIME"), k}
		case 9:
			return []any{"PEXPIRE", k, pick("100000", "0", "-5", "x")}
		case 10:
			opts := []any{pick("EXPIREAT", "PEXPIREAT"), k, pick("4102444800", "4102444900000", "4102444700000", "1")}
			for range rng.IntN(3) {
				opts = append(opts, pick("NX", "XX", "GT", "LT", "YY"))
			}
			return opts
		case 11:
			return []any{"UNLINK", k, key(pick("h", "z"))}
		case 12:
			// A hash tag keeps a rename within one shard; other renames
			// are refused (CROSSSLOT), as a Redis cluster refuses them.
			if rng.IntN(2) == 0 {
				return []any{pick("SET", "RPUSH"), "{r}" + mem(), val()}
			}
			return []any{"RENAME", "{r}" + mem(), "{r}" + mem()}
		case 13:
			return []any{pick("GETEX", "PERSIST"), k}
		case 14:
			return []any{"PTTL", k}
		case 16:
			// GT and LT against a relative time would race the clock;
			// case 10 tries them with absolute times.
			return []any{"EXPIRE", k, pick("100", "-1", "x"), pick("NX", "XX")}
		case 17:
			return []any{"EXPIRE", k, pick("100", "0", "x")}
		case 18:
			return []any{"INCRBY", k, pick("5", "-3", "x", "1000")}
		default:
			if rng.IntN(2) == 0 {
				return []any{"SET", k, val(), "EXAT", pick("4102444800", "1", "x")}
			}
			return []any{"SET", k, val(), "PXAT", pick("4102444800000", "1", "x")}
		}
	case "h":
		switch rng.IntN(16) {
		case 0, 1:
			return []any{"HSET", k, mem(), val(), mem(), val()}
		case 2:
			return []any{"HGET", k, mem()}
		case 3:
			return []any{"HMGET", k, mem(), mem()}
		case 4:
			return []any{"HGETALL", k}
		case 5:
			return []any{"HDEL", k, mem(), mem()}
		case 6:
			return []any{"HINCRBY", k, mem(), num()}
		case 7:
			return []any{"HLEN", k}
		case 8:
			return []any{"HEXISTS", k, mem()}
		case 9:
			return []any{"HKEYS", k}
		case 10:
			return []any{"HSETNX", k, mem(), val()}
		case 11:
			return []any{"HINCRBYFLOAT", k, mem(), pick("1.5", "-2", "x", "3e2")}
		case 12:
			return []any{"HMSET", k, mem(), val(), mem(), val()}
		case 13:
			return []any{"HSCAN", k, "0"}
		case 14:
			if rng.IntN(2) == 0 {
				return []any{"HRANDFIELD", k, pick("2", "-3", "0", "x"), pick("WITHVALUES", "WITHSCORES")}[:2+rng.IntN(3)]
			}
			return []any{"HVALS", k}
		default:
			return []any{"HSTRLEN", k, mem()}
		}
	case "e":
		switch rng.IntN(12) {
		case 0, 1:
			return []any{"SADD", k, mem(), mem()}
		case 2:
			return []any{"SREM", k, mem()}
		case 3:
			return []any{"SMEMBERS", k}
		case 4:
			return []any{"SISMEMBER", k, mem()}
		case 5:
			return []any{"SMISMEMBER", k, mem(), mem()}
		case 6:
			return []any{"SCARD", k}
		case 7:
			return []any{pick("SINTER", "SUNION", "SDIFF"), k, key("e")}
		case 8:
			return []any{"SRANDMEMBER", k}
		case 9:
			return []any{"SRANDMEMBER", k, pick("2", "-3", "0", "10", "x")}
		case 10:
			return []any{"SSCAN", k, "0"}
		default:
			return []any{"SPOP", k, "0"}
		}
	case "z":
		switch rng.IntN(21) {
		case 0, 1:
			return []any{"ZADD", k, pick("1", "2.5", "-1"), mem(), pick("0", "3"), mem()}
		case 2:
			return []any{"ZADD", k, pick("NX", "XX", "GT", "LT", "CH"), pick("1", "4"), mem()}
		case 3:
			return []any{"ZADD", k, "INCR", pick("1", "-0.5"), mem()}
		case 4:
			return []any{"ZRANGE", k, num(), num(), "WITHSCORES"}
		case 5:
			return []any{"ZRANGE", k, pick("-inf", "(1", "0"), pick("+inf", "3", "(2.5"), "BYSCORE", "LIMIT", "0", pick("1", "-1")}
		case 6:
			return []any{"ZREVRANGE", k, num(), num()}
		case 7:
			return []any{"ZRANGEBYSCORE", k, pick("-inf", "1"), pick("+inf", "(3"), "WITHSCORES"}
		case 8:
			return []any{"ZREVRANGEBYSCORE", k, pick("+inf", "3"), pick("-inf", "(0")}
		case 9:
			return []any{"ZRANK", k, mem()}
		case 10:
			return []any{"ZSCORE", k, mem()}
		case 11:
			return []any{"ZINCRBY", k, pick("1", "2.5"), mem()}
		case 12:
			return []any{"ZREM", k, mem()}
		case 13:
			return []any{"ZCOUNT", k, pick("-inf", "(0"), pick("+inf", "2.5")}
		case 14:
			switch rng.IntN(3) {
			case 0:
				return []any{"ZMPOP", pick("1", "2", "0", "x"), k, key("z"), pick("MIN", "MAX", "MID"), "COUNT", pick("1", "2", "0", "x")}[:5+rng.IntN(3)]
			case 1:
				return []any{pick("BZPOPMIN", "BZPOPMAX"), k, key("z"), pick("0.01", "-1", "x")}
			}
			return []any{pick("ZPOPMIN", "ZPOPMAX"), k}
		case 15:
			return []any{"ZMSCORE", k, mem(), mem()}
		case 16:
			return []any{"ZREVRANK", k, mem()}
		case 17:
			return []any{"ZREMRANGEBYRANK", k, num(), num()}
		case 18:
			return []any{"ZREMRANGEBYSCORE", k, pick("-inf", "(1", "x"), pick("+inf", "2.5")}
		case 19:
			if rng.IntN(2) == 0 {
				return []any{"ZRANDMEMBER", k, pick("2", "-3", "0", "x"), pick("WITHSCORES", "WITHVALUES")}[:2+rng.IntN(3)]
			}
			return []any{"ZSCAN", k, "0"}
		default:
			return []any{"ZCARD", k}
		}
	case "o": // option combinations and edge values, across the kinds
		sk, hk, zk, lk := key("s"), key("h"), key("z"), key("l")
		edge := pick(" 1", "010", "+1", "1.0", "9223372036854775807", "-9223372036854775808", "1e3", "0x10", "-0", "inf", "1 ")
		switch rng.IntN(24) {
		case 0:
			return []any{"SET", sk, edge}
		case 1:
			return []any{pick("INCR", "DECR"), sk}
		case 2:
			return []any{pick("INCRBY", "DECRBY"), sk, edge}
		case 3:
			return []any{"INCRBYFLOAT", sk, edge}
		case 4:
			return []any{"SET", sk, val(), pick("NX", "XX"), "GET"}
		case 5:
			return []any{"SET", sk, val(), "GET", pick("NX", "XX", "EX", "KEEPTTL"), pick("100", "GET", "NX")}
		case 6:
			return []any{"SET", sk, val(), "KEEPTTL", pick("EX", "PX", "EXAT"), "100"}
		case 7:
			return []any{"SET", sk, val(), pick("EX", "NX"), "100", pick("PX", "XX", "EX"), "100"}
		case 8:
			return []any{"SET", hk, val(), "GET"}
		case 9:
			return []any{"ZADD", zk, pick("GT", "LT", "NX", "XX"), pick("GT", "LT", "NX", "XX", "CH"), pick("1", "x", "nan"), mem()}
		case 10:
			return []any{"ZADD", zk, "INCR", "1", mem(), "2", mem()}
		case 11:
			return []any{"ZRANGE", zk, pick("0", "(1", "-inf", "[a"), pick("-1", "+inf", "(3", "+"), pick("REV", "BYSCORE", "BYLEX", "LIMIT"), pick("REV", "WITHSCORES", "BYSCORE")}
		case 12:
			return []any{"ZRANGE", zk, "+inf", "-inf", "BYSCORE", "REV", "LIMIT", pick("0", "1"), pick("1", "2", "-1")}
		case 13:
			return []any{"LPOS", lk, val(), pick("MAXLEN", "RANK", "COUNT"), pick("0", "1", "-1", "2")}
		case 14:
			return []any{"LINSERT", lk, pick("BEFORE", "AFTER", "MIDDLE"), "nope", val()}
		case 15:
			return []any{pick("HINCRBY", "HINCRBYFLOAT"), hk, mem(), pick("9223372036854775807", "-9223372036854775808", "x", "1e3")}
		case 16:
			return []any{"SETRANGE", sk, pick("536870912", "-1", "0", "3"), val()}
		case 17:
			return []any{"GETRANGE", sk, pick("-100", "0", "100", "-1"), pick("-100", "-1", "100", "0")}
		case 18:
			return []any{"MSET", sk, val(), key("s")}
		case 19:
			return []any{"MGET", hk, sk, zk, lk}
		case 20:
			return []any{"RENAME", sk, sk}
		case 21:
			return []any{"EXPIRE", pick(hk, zk, lk), pick("100", "0", "-1")}
		case 22:
			return []any{pick("PERSIST", "TYPE", "STRLEN", "GET"), pick(hk, zk, lk, key("e"))}
		default:
			return []any{"ZRANGEBYSCORE", zk, pick("(1", "1", "x", "(inf", "-inf"), pick("+inf", "(2.5", "[1"), "LIMIT", pick("1", "0", "x"), pick("1", "-1")}
		}
	case "g": // verbs over several keys, of one {hash tag} (one key group)
		gk := func() string { return "{g}" + string(rune('a'+rng.IntN(4))) }
		if rng.IntN(2) == 0 { // sorted-set algebra over sets and sorted sets
			kind := pick("ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE")
			args := []any{kind}
			if strings.HasSuffix(kind, "STORE") {
				args = append(args, gk())
			}
			n := rng.IntN(3) + 1
			args = append(args, pick(strconv.Itoa(n), strconv.Itoa(n), "0", "20", "x"))
			for range n {
				args = append(args, gk())
			}
			switch rng.IntN(6) {
			case 0:
				args = append(args, "WEIGHTS")
				for range n {
					args = append(args, pick("2", "0.5", "-1", "0", "x", "inf"))
				}
			case 1:
				args = append(args, "AGGREGATE", pick("SUM", "MIN", "MAX", "AVG"))
			case 2:
				args = append(args, "WITHSCORES")
			case 3:
				args = append(args, "WEIGHTS", "1", "AGGREGATE", "MAX", "WITHSCORES")
			}
			switch rng.IntN(5) {
			case 0:
				return []any{"ZADD", gk(), pick("1", "2.5", "-1", "inf"), mem(), pick("0", "3", "-inf"), mem()}
			case 1:
				return []any{"ZRANGESTORE", gk(), gk(), pick("0", "(1", "-inf", "[a", "-"), pick("-1", "+inf", "2", "+"), pick("BYSCORE", "BYLEX", "REV", "WITHSCORES", "LIMIT"), pick("REV", "BYSCORE")}
			case 2:
				return []any{"ZRANGE", gk(), "0", "-1", "WITHSCORES"}
			}
			return args
		}
		switch rng.IntN(14) {
		case 0, 1:
			return []any{"SADD", gk(), mem(), mem(), mem()}
		case 2:
			return []any{"SMOVE", gk(), gk(), mem()}
		case 3:
			return []any{pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), gk(), gk(), gk()}
		case 4:
			return []any{"SINTERCARD", pick("2", "1", "0", "3", "x"), gk(), gk(), pick("LIMIT", "x"), pick("1", "0", "-1")}
		case 5:
			return []any{"SINTERCARD", "2", gk(), gk()}
		case 6:
			return []any{"MSETNX", gk(), val(), gk(), val()}
		case 7:
			return []any{pick("LPUSHX", "RPUSHX"), gk(), val(), val()}
		case 8:
			return []any{pick("LPUSH", "SET"), gk(), val()}
		case 9:
			if rng.IntN(2) == 0 {
				return []any{pick("ZINTERCARD", "SINTERCARD"), pick("2", "1", "0", "3", "x"), gk(), gk(), pick("LIMIT", "x"), pick("1", "0", "-1", "5")}[:4+2*rng.IntN(2)]
			}
			return []any{pick("TOUCH", "RENAMENX"), gk(), gk(), "nokey"}[:3+rng.IntN(2)]
		case 10:
			return []any{pick("SMEMBERS", "SCARD", "TYPE", "LRANGE"), gk(), "0", "-1"}[:map[bool]int{true: 4, false: 2}[rng.IntN(2) == 0]]
		case 11:
			if rng.IntN(2) == 0 {
				return []any{"COPY", gk(), gk(), pick("REPLACE", "DB", "x"), pick("0", "REPLACE", "1")}[:2+rng.IntN(3)]
			}
			return []any{"DEL", gk()}
		case 12:
			return []any{"GET", gk()}
		default:
			return []any{"MSETNX", gk(), val()}
		}
	case "b": // bitmaps, over strings of one {hash tag} for BITOP
		bk := "{b}" + strconv.Itoa(rng.IntN(3))
		off := pick(strconv.Itoa(rng.IntN(40)), strconv.Itoa(rng.IntN(40)), "-1", "x", "4294967296", "4294967295")
		idx := func() string { return pick(strconv.Itoa(rng.IntN(12)-6), strconv.Itoa(rng.IntN(40)-20), "x") }
		switch rng.IntN(12) {
		case 0, 1:
			if off == "4294967295" {
				off = "7" // a real bit there would take 512 MiB
			}
			return []any{"SETBIT", bk, off, pick("0", "1", "1", "2", "x")}
		case 2:
			return []any{"GETBIT", bk, off}
		case 3:
			return []any{"BITCOUNT", bk}
		case 4:
			return []any{"BITCOUNT", bk, idx(), idx(), pick("BYTE", "BIT", "BIT", "x")}[:2+2+rng.IntN(2)]
		case 5:
			return []any{"BITCOUNT", bk, idx()}
		case 6, 7:
			return []any{"BITPOS", bk, pick("0", "1", "2", "x"), idx(), idx(), pick("BYTE", "BIT", "BIT", "x")}[:3+rng.IntN(4)]
		case 8:
			return []any{"BITOP", pick("AND", "OR", "XOR", "NOT", "NAND"), "{b}" + strconv.Itoa(rng.IntN(4)), bk, "{b}" + strconv.Itoa(rng.IntN(4))}[:4+rng.IntN(2)]
		case 9:
			return []any{pick("SET", "APPEND"), bk, pick("\xff", "a", "", "\x00\xff", "foobar", "\x80")}
		case 10:
			return []any{pick("LPUSH", "GET", "STRLEN", "DEL"), bk, "x"}[:2+rng.IntN(2)]
		default:
			return []any{"GET", bk}
		}
	case "x": // sorted sets of equal scores, for the lexicographic verbs
		lo, hi := pick("-", "[a", "(b", "x"), pick("+", "[c", "(d")
		switch rng.IntN(7) {
		case 0, 1:
			return []any{"ZADD", k, "0", mem(), "0", mem()}
		case 2:
			return []any{"ZRANGEBYLEX", k, lo, hi}
		case 3:
			return []any{"ZREVRANGEBYLEX", k, hi, lo, "LIMIT", "0", pick("1", "-1")}
		case 4:
			return []any{"ZLEXCOUNT", k, lo, hi}
		case 5:
			return []any{"ZREMRANGEBYLEX", k, lo, hi}
		default:
			return []any{"ZRANGE", k, lo, hi, "BYLEX"}
		}
	case "l":
		switch rng.IntN(13) {
		case 0, 1:
			return []any{pick("LPUSH", "RPUSH"), k, val(), val()}
		case 2:
			return []any{pick("LPOP", "RPOP"), k}
		case 3:
			return []any{pick("LPOP", "RPOP"), k, strconv.Itoa(rng.IntN(3))}
		case 4:
			return []any{"LRANGE", k, num(), num()}
		case 5:
			return []any{"LLEN", k}
		case 6:
			return []any{"LINDEX", k, num()}
		case 7:
			return []any{"LSET", k, num(), val()}
		case 8:
			return []any{"LTRIM", k, num(), num()}
		case 9:
			return []any{"LREM", k, num(), val()}
		case 10:
			return []any{"LINSERT", k, pick("BEFORE", "AFTER"), val(), val()}
		case 11:
			switch rng.IntN(4) {
			case 0:
				return []any{"LMPOP", pick("1", "2", "0", "3", "x"), k, key("l"), pick("LEFT", "RIGHT", "UP"), "COUNT", pick("1", "2", "0", "-1", "x")}[:5+rng.IntN(3)]
			case 1:
				return []any{pick("BLPOP", "BRPOP"), k, key("l"), pick("0.01", "-1", "x")}
			case 2:
				return []any{"BLMOVE", k, k, pick("LEFT", "RIGHT"), pick("LEFT", "RIGHT", "UP"), pick("0.01", "x")}
			}
			return []any{"LPOS", k, val(), "RANK", pick("1", "-1", "0"), "COUNT", pick("0", "1")}
		default:
			return []any{"LMOVE", k, k, pick("LEFT", "RIGHT"), pick("LEFT", "RIGHT")}
		}
	}
	switch rng.IntN(10) {
	case 0:
		return []any{"SET", k, val()}
	case 1:
		return []any{"HSET", k, mem(), val()}
	case 2:
		return []any{"RPUSH", k, val()}
	case 3:
		return []any{"GET", k}
	case 4:
		return []any{"LLEN", k}
	case 5:
		return []any{"PING"}
	case 6:
		return []any{"ECHO", val()}
	case 7:
		if rng.IntN(2) == 0 {
			// Not DBSIZE: Redis counts keys that expired and were not
			// yet reclaimed; TestEveryCommand checks it.
			return []any{pick("UNWATCH", "FLUSHDB", "RANDOMKEY")}
		}
		return []any{pick("NOSUCHCOMMAND", "UNWATCH", "KEYS"), k}
	case 8:
		return []any{"GET"}
	default:
		return []any{"TYPE", k}
	}
}

// A transaction takes keys of one key group, not merely of one shard: a
// one-shard table with four groups refuses what a four-shard table refuses,
// as the server's default table does on a small machine.
func TestTransactionsFollowKeyGroups(t *testing.T) {
	e, err := local.Open(t.Context(), temporalstore.Options{Dir: t.TempDir(), MaintenanceInterval: temporalstore.Disabled})
	require.NoError(t, err)
	require.NoError(t, e.CreateTable(t.Context(), "app", "one", temporalstore.TableOptions{Shards: 1, KeyGroups: 4}))
	s, err := New(Options{Engine: e, Namespace: "app", Table: "one"})
	require.NoError(t, err)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	go func() { _ = s.Serve(l) }()
	t.Cleanup(func() {
		require.NoError(t, s.Close())
		require.NoError(t, e.Close())
	})
	ctx := t.Context()
	c := client(t, l.Addr().String(), 2)
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 20 {
			p.Set(ctx, fmt.Sprint("spread", i), "v", 0)
		}
		return nil
	})
	require.ErrorContains(t, err, "CROSSSLOT")
	require.Zero(t, c.Exists(ctx, "spread0", "spread1", "spread2").Val(), "a refused transaction runs nothing")
	// A watched key counts too.
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			for i := range 20 {
				p.Set(ctx, fmt.Sprint("{w}", i), "v", 0)
			}
			return nil
		})
		return err
	}, "spread0", "spread1", "spread2", "spread3", "spread4")
	require.ErrorContains(t, err, "CROSSSLOT")
	cmds, err := c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 20 {
			p.Set(ctx, fmt.Sprint("{tag}", i), "v", 0)
		}
		return nil
	})
	require.NoError(t, err)
	require.Len(t, cmds, 20)
	require.Equal(t, "v", c.Get(ctx, "{tag}19").Val())
	info, err := c.Info(ctx, "server").Result()
	require.NoError(t, err)
	for _, l := range []string{"table:app/one", "table_shards:1", "table_key_groups:4", "table_commit:durable"} {
		require.Contains(t, info, l+"\r\n")
	}
}

func TestPipelineTransactionsAndRESP3(t *testing.T) {
	addr, _ := start(t, Options{})
	ctx := t.Context()
	c := client(t, addr, 3)
	// A pipeline of 1,000 commands is answered in order.
	pipe := c.Pipeline()
	for i := range 1000 {
		pipe.Set(ctx, fmt.Sprint("p", i), i, 0)
	}
	get := pipe.Get(ctx, "p999")
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, "999", get.Val())

	// MULTI/EXEC over one shard.
	txp := c.TxPipeline()
	txp.Incr(ctx, "{u}a")
	txp.Incr(ctx, "{u}b")
	incr := txp.IncrBy(ctx, "{u}a", 10)
	_, err = txp.Exec(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(11), incr.Val())
	// A transaction spanning shards is refused and runs nothing.
	_, err = c.TxPipelined(ctx, func(p redis.Pipeliner) error {
		for i := range 20 {
			p.Set(ctx, fmt.Sprint("spread", i), "v", 0)
		}
		return nil
	})
	require.ErrorContains(t, err, "CROSSSLOT")
	require.Zero(t, c.Exists(ctx, "spread0", "spread1", "spread2").Val())
	// WATCH: a change by another client makes EXEC fail.
	other := client(t, addr, 2)
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		require.NoError(t, other.Set(ctx, "{u}a", "changed", 0).Err())
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "{u}a", "mine", 0)
			return nil
		})
		return err
	}, "{u}a")
	require.ErrorIs(t, err, redis.TxFailedErr)
	require.Equal(t, "changed", c.Get(ctx, "{u}a").Val())
	// Unchanged, it runs.
	err = c.Watch(ctx, func(tx *redis.Tx) error {
		_, err := tx.TxPipelined(ctx, func(p redis.Pipeliner) error {
			p.Set(ctx, "{u}a", "mine", 0)
			return nil
		})
		return err
	}, "{u}a")
	require.NoError(t, err)
	require.Equal(t, "mine", c.Get(ctx, "{u}a").Val())

	// RESP3 types: a map, a set, a double.
	require.NoError(t, c.HSet(ctx, "h", "f", "v").Err())
	m, err := c.Do(ctx, "HGETALL", "h").Result()
	require.NoError(t, err)
	require.Equal(t, map[any]any{"f": "v"}, m)
	require.NoError(t, c.ZAdd(ctx, "z", redis.Z{Score: 1.5, Member: "m"}).Err())
	sc, err := c.Do(ctx, "ZSCORE", "z", "m").Result()
	require.NoError(t, err)
	require.Equal(t, 1.5, sc)
	// Unknown commands are errors, never a fake success.
	require.ErrorContains(t, c.Do(ctx, "NOSUCHVERB", "INFO").Err(), "unknown command")
	// SCAN, DBSIZE, INFO.
	n, err := c.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Positive(t, n)
	keys, _, err := c.Scan(ctx, 0, "p99*", 10000).Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"p99", "p990", "p991", "p992", "p993", "p994", "p995", "p996", "p997", "p998", "p999"}, keys)
	info, err := c.Info(ctx, "keyspace").Result()
	require.NoError(t, err)
	require.Contains(t, info, "db0:keys=")
	info, err = c.Info(ctx, "server").Result()
	require.NoError(t, err)
	require.Contains(t, info, "table:default/default\r\ntable_shards:4\r\ntable_key_groups:4\r\ntable_commit:durable\r\n")
	// The persistence section: Redis's fields that hold, and the logs'
	// fsyncs, which these durable writes made.
	info, err = c.Info(ctx, "persistence").Result()
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(info, "# Persistence\r\nloading:0\r\naof_enabled:1\r\n"), info)
	fields := map[string]int64{}
	for _, l := range strings.Split(strings.TrimSpace(info), "\r\n")[1:] {
		k, v, ok := strings.Cut(l, ":")
		require.True(t, ok, l)
		n, err := strconv.ParseInt(v, 10, 64)
		require.NoError(t, err, l)
		fields[k] = n
	}
	require.Positive(t, fields["engine_log_records"])
	require.Positive(t, fields["engine_log_fsyncs"])
	require.Positive(t, fields["engine_log_fsync_p99_usec"])
	require.LessOrEqual(t, fields["engine_log_fsync_p50_usec"], fields["engine_log_fsync_p99_usec"])
	all, err := c.Info(ctx).Result()
	require.NoError(t, err)
	require.Regexp(t, `(?s)# Memory.*# Persistence.*# Stats.*# Replication.*# CPU.*# Errorstats.*# Keyspace`, all, "in Redis's order, among the default sections")
	cpu, err := c.Info(ctx, "cpu").Result()
	require.NoError(t, err)
	used := regexp.MustCompile(`used_cpu_sys:([0-9.]+)\r\nused_cpu_user:([0-9.]+)\r\n`).FindStringSubmatch(cpu)
	require.NotNil(t, used, cpu)
	user, err := strconv.ParseFloat(used[2], 64)
	require.NoError(t, err)
	require.Positive(t, user, "the server has run")
}

func TestAuthAndReadOnly(t *testing.T) {
	addr, _ := start(t, Options{Tokens: []string{"rw-secret"}, ReadOnlyTokens: []string{"ro-secret"}})
	ctx := t.Context()
	anon := client(t, addr, 2)
	require.ErrorContains(t, anon.Get(ctx, "k").Err(), "NOAUTH")
	require.NoError(t, anon.Ping(ctx).Err())
	bad := redis.NewClient(&redis.Options{Addr: addr, Password: "nope", Protocol: 2})
	defer bad.Close()
	require.ErrorContains(t, bad.Ping(ctx).Err(), "WRONGPASS")
	rw := redis.NewClient(&redis.Options{Addr: addr, Password: "rw-secret", Protocol: 3})
	defer rw.Close()
	require.NoError(t, rw.Set(ctx, "k", "v", 0).Err())
	ro := redis.NewClient(&redis.Options{Addr: addr, Password: "ro-secret", Protocol: 2})
	defer ro.Close()
	require.Equal(t, "v", ro.Get(ctx, "k").Val())
	require.ErrorContains(t, ro.Set(ctx, "k", "w", 0).Err(), "NOPERM")
	require.Equal(t, "v", rw.Get(ctx, "k").Val())
}

// redis-cli, the real binary, against the server: inline and multibulk.
func TestRedisCLI(t *testing.T) {
	cli, err := exec.LookPath("redis-cli")
	if err != nil {
		t.Fatalf("redis-cli is not installed (make deps): %v", err)
	}
	addr, _ := start(t, Options{})
	host, port, _ := net.SplitHostPort(addr)
	run := func(args ...string) string {
		out, err := exec.Command(cli, append([]string{"-h", host, "-p", port}, args...)...).CombinedOutput()
		require.NoError(t, err, string(out))
		return strings.TrimSpace(string(out))
	}
	require.Equal(t, "OK", run("SET", "greeting", "hello world"))
	require.Equal(t, "hello world", run("GET", "greeting"))
	require.Equal(t, "3", run("RPUSH", "l", "a", "b", "c"))
	require.Equal(t, "a\nb\nc", run("LRANGE", "l", "0", "-1"))
	require.Contains(t, run("INCR", "greeting"), "ERR value is not an integer")
	require.Contains(t, run("HSET", "l", "f", "v"), "WRONGTYPE")
	require.Equal(t, "PONG", run("PING"))
	// Inline commands, as a telnet user would type them.
	nc, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer nc.Close()
	_, err = nc.Write([]byte("SET inline \"two words\"\r\nGET inline\r\n"))
	require.NoError(t, err)
	buf := make([]byte, 64)
	require.NoError(t, nc.SetReadDeadline(time.Now().Add(5*time.Second)))
	got := ""
	for !strings.Contains(got, "two words") {
		n, err := nc.Read(buf)
		require.NoError(t, err)
		got += string(buf[:n])
	}
	require.Equal(t, "+OK\r\n$9\r\ntwo words\r\n", got)
}

func TestProtocolErrorsCloseTheConnection(t *testing.T) {
	addr, _ := start(t, Options{})
	for _, req := range []string{"*2\r\n$3\r\nGET\r\n:1\r\n", "*1\r\n$-5\r\n", "*x\r\n", "GET \"unbalanced\r\n"} {
		nc, err := net.Dial("tcp", addr)
		require.NoError(t, err)
		_, err = nc.Write([]byte(req))
		require.NoError(t, err)
		require.NoError(t, nc.SetReadDeadline(time.Now().Add(5*time.Second)))
		b := make([]byte, 256)
		n, _ := nc.Read(b)
		require.Contains(t, string(b[:n]), "-ERR Protocol error", req)
		_, err = nc.Read(b)
		require.Error(t, err, "closed after a protocol error")
		nc.Close()
	}
}

// FuzzReader: any bytes parse into requests or a protocol error, never a
// panic or an unbounded allocation.
func FuzzReader(f *testing.F) {
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
	f.Add([]byte("SET a \"b c\" 'd'\r\nPING\r\n"))
	f.Add([]byte("*1\r\n$0\r\n\r\n"))
	f.Add([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$2\r\nvv\r\n*2\r\n$3\r\nGET\r\n$1\r\nk\r\n"))
	f.Add([]byte("*2\r\n$3\r\nGET\r\n$+1\r\nk\r\n*1\r\n$4\r\nPING\n\r\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		// The in-place parse of buffered requests and the general one
		// agree on every request and error.
		r := newReader(strings.NewReader(string(b)), 1<<20)
		g := newReader(strings.NewReader(string(b)), 1<<20)
		g.general = true
		for range 100 {
			args, err := r.next()
			want, wantErr := g.next()
			require.Equal(t, wantErr, err)
			require.Equal(t, want, args)
			if err != nil {
				return
			}
			for _, a := range args {
				require.LessOrEqual(t, len(a), len(b))
			}
		}
	})
}

var _ = context.Background

// Pipelines with runs of plain SETs (which the server writes together) and
// of GETs (which it reads together) among other commands, SETs over
// collections, GETs of collections and bad SETs and GETs give redis's
// replies, in order, command by command.
func TestPipelinedSetRunsMatchRedis(t *testing.T) {
	addr, e := start(t, Options{})
	ref := testredis.Start(t)
	ctx := t.Context()
	ours := client(t, addr, 2)
	theirs := redis.NewClient(&redis.Options{Addr: ref.Options().Addr, Protocol: 2})
	defer theirs.Close()
	require.NoError(t, theirs.FlushAll(ctx).Err())
	rng := rand.New(rand.NewPCG(21, 22))
	fams := []string{"s", "h", "e", "z", "l", "k"}
	compare := func(round int, cmds [][]any) {
		t.Helper()
		run := func(c *redis.Client) []redis.Cmder {
			pipe := c.Pipeline()
			for _, a := range cmds {
				pipe.Do(ctx, a...)
			}
			res, _ := pipe.Exec(ctx)
			return res
		}
		want, got := run(theirs), run(ours)
		require.Len(t, got, len(want))
		for i := range want {
			where := fmt.Sprintf("round %d, command %d: %v", round, i, cmds[i])
			wv, werr := want[i].(*redis.Cmd).Result()
			gv, gerr := got[i].(*redis.Cmd).Result()
			if werr != nil && !errors.Is(werr, redis.Nil) {
				require.Error(t, gerr, where)
				require.Equal(t, errCode(werr), errCode(gerr), "%s: redis %v, ours %v", where, werr, gerr)
				continue
			}
			require.Equal(t, errors.Is(werr, redis.Nil), errors.Is(gerr, redis.Nil), "%s: redis %v, ours %v", where, werr, gerr)
			if !closeTimes(cmds[i], wv, gv) {
				require.Equal(t, normalize(cmds[i], wv), normalize(cmds[i], gv), where)
			}
		}
	}
	// A run of GETs over a collection, an absent key, an empty string and
	// a key set earlier in the same pipeline.
	compare(-1, [][]any{
		{"HSET", "h9", "f", "v"}, {"SET", "s9", ""}, {"SET", "s8", "eight"},
		{"GET", "h9"}, {"GET", "absent"}, {"GET", "s9"}, {"GET", "s8"}, {"GET", "h9"},
		{"SET", "s8", "again"}, {"GET", "s8"}, {"GET", "s8", "x"}, {"GET", "s9"},
	})
	for round := range 150 {
		var cmds [][]any
		for range 1 + rng.IntN(40) {
			k := fams[rng.IntN(len(fams))] + strconv.Itoa(rng.IntN(3))
			switch rng.IntN(14) {
			case 0, 1, 2, 3, 4, 5:
				// Plain SETs, also over the other families' keys (a SET
				// replaces a collection).
				cmds = append(cmds, []any{"SET", k, strconv.Itoa(rng.IntN(100))})
			case 6:
				cmds = append(cmds, []any{"SET", "s1"}) // wrong arity
			case 10, 11, 12:
				// GETs, read together in runs: of strings, absent keys
				// and collections (WRONGTYPE).
				cmds = append(cmds, []any{"GET", k})
			case 13:
				cmds = append(cmds, []any{"GET", k, "extra"}) // wrong arity
			default:
				cmds = append(cmds, genArgs(rng))
			}
		}
		compare(round, cmds)
	}
	// A run is written together: 200 pipelined SETs take one record per
	// shard (4), not 200.
	records := func() (n uint64) {
		stats, err := e.Stats()
		require.NoError(t, err)
		for _, st := range stats {
			n += st.LogRecords
		}
		return n
	}
	before := records()
	pipe := ours.Pipeline()
	for i := range 200 {
		pipe.Set(ctx, fmt.Sprint("run", i), i, 0)
	}
	_, err := pipe.Exec(ctx)
	require.NoError(t, err)
	require.LessOrEqual(t, records()-before, uint64(20))
	require.Equal(t, "199", ours.Get(ctx, "run199").Val())
}
