package resp

import (
	"math/rand/v2"
	"strconv"
)

// fuzzGen draws the differential fuzzer's commands: every family the
// server shares with Redis, with arguments drawn to hit the edges.
// All keys carry one {hash tag}, so multi-key commands and transactions
// stay in one shard, as they would have to in a Redis cluster.
type fuzzGen struct {
	rng *rand.Rand
}

// fuzzKeys is the small key space, so commands collide: on types, on
// missing keys and on expiries. One key is binary.
var fuzzKeys = []string{"{t}a", "{t}b", "{t}c", "{t}d", "{t}\x00\r\n\xff"}

func (g *fuzzGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }
func (g *fuzzGen) chance(n int) bool        { return g.rng.IntN(n) == 0 }

func (g *fuzzGen) key() string { return fuzzKeys[g.rng.IntN(len(fuzzKeys))] }

// edgeInt is an integer argument at an edge of a parser or a range, or
// not an integer at all.
func (g *fuzzGen) edgeInt() string {
	return g.pick("0", "-1", "1", "2147483647", "2147483648", "-2147483648", "-2147483649",
		"4294967296", "-4294967296", "9223372036854775807", "-9223372036854775808",
		"9223372036854775808", "-9223372036854775809", "18446744073709551616",
		"x", "", "1.5", " 1", "1 ", "+1", "01", "0x10", "-0", "1e3", "100000000000000000000")
}

// smallInt is a small index or count, now and then an edge.
func (g *fuzzGen) smallInt() string {
	if g.chance(6) {
		return g.edgeInt()
	}
	return strconv.Itoa(g.rng.IntN(11) - 5)
}

// count is a count that is usually valid and small.
func (g *fuzzGen) count() string {
	if g.chance(5) {
		return g.pick("0", "-1", "-5", "9223372036854775807", "-9223372036854775808", "x", "2147483648", "1.5")
	}
	return strconv.Itoa(g.rng.IntN(6) + 1)
}

// randCount is a count for SRANDMEMBER and friends: no huge negatives,
// which ask for that many repeated picks.
func (g *fuzzGen) randCount() string {
	return g.pick("0", "1", "2", "5", "100", "-1", "-3", "-10", "x", "9223372036854775807", "-9223372036854775808", "1.5")
}

func (g *fuzzGen) float() string {
	if g.chance(3) {
		return g.pick("inf", "-inf", "+inf", "nan", "1e308", "1e309", "-1e308", "0x10", "1.5e", "",
			"5e-324", " 1", "1 ", "-0", "1.7976931348623157e308", "infinity", "3.0000000000000004", "x", "9223372036854775807")
	}
	return g.pick("0", "1", "-1", "2.5", "-0.5", "10", "3", "1e3", "0.1")
}

// value is a string value: plain, numeric (so INCR and friends meet
// them), at a numeric edge, empty or binary.
func (g *fuzzGen) value() string {
	if g.chance(4) {
		return g.pick("", "\x00", "a\r\nb", "\xff\xfe", "9223372036854775807", "-9223372036854775808",
			"9223372036854775806", "1e308", "inf", "nan", "0x10", " 1", "1.5e", "18446744073709551615", "abcdefghijklmnopqrstuvwxyz0123456789")
	}
	return g.pick("x", "10", "-3", "0", "v v", "2.5", "abc", "1")
}

func (g *fuzzGen) member() string {
	if g.chance(8) {
		return g.pick("", "\x00", "a\r\n", "\xff")
	}
	return string(rune('a' + g.rng.IntN(5)))
}

// secs and millis are expiries: relative ones the TTL replies tolerate,
// absolute ones far in the past or the future (so both servers agree
// whether a key lives), and edges.
func (g *fuzzGen) secs() string {
	return g.pick("1000", "100", "0", "-1", "x", "4102444800", "9223372036854775807", "-9223372036854775808",
		"9223372036854775", "922337203685477", "1.5", "2147483648")
}

func (g *fuzzGen) unixSecs() string {
	return g.pick("4102444800", "4102444900", "1", "0", "-1", "x", "9223372036854775807", "922337203685477", "9223372036854776")
}

func (g *fuzzGen) unixMillis() string {
	return g.pick("4102444800000", "4102444900000", "1", "0", "1000", "-1", "x", "9223372036854775807", "9223372036854775808")
}

func (g *fuzzGen) millis() string {
	return g.pick("1000000", "100000", "0", "-1", "x", "9223372036854775807", "-9223372036854775808", "9223372036854776")
}

// scoreBound and lexBound are ZRANGE's bounds, valid and not.
func (g *fuzzGen) scoreBound() string {
	return g.pick("-inf", "+inf", "inf", "0", "1", "(1", "2.5", "(2.5", "-1", "(inf", "(-inf", "nan", "(nan", "[1", "x", "(", "")
}

func (g *fuzzGen) lexBound() string {
	return g.pick("-", "+", "[a", "(a", "[c", "(c", "[", "(", "a", "", "[\xff", "(\x00")
}

func (g *fuzzGen) expiryOpt() []string {
	switch g.rng.IntN(6) {
	case 0:
		return []string{"EX", g.secs()}
	case 1:
		return []string{"PX", g.millis()}
	case 2:
		return []string{"EXAT", g.unixSecs()}
	case 3:
		return []string{"PXAT", g.unixMillis()}
	case 4:
		return []string{"KEEPTTL"}
	}
	return []string{g.pick("PERSIST", "EX", "ex", "PXAT")}
}

// keys returns n keys, n at least 1.
func (g *fuzzGen) keys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = g.key()
	}
	return out
}

// numKeys returns a numkeys argument and the keys after it, sometimes
// disagreeing.
func (g *fuzzGen) numKeys() []string {
	n := 1 + g.rng.IntN(3)
	num := strconv.Itoa(n)
	if g.chance(6) {
		num = g.pick("0", "-1", strconv.Itoa(n+1), "x", "9223372036854775807", "2147483648")
	}
	return append([]string{num}, g.keys(n)...)
}

// fuzzCommands are the commands the fuzzer draws, each with a weight
// (how often, relative to 1) and its argument generator.
var fuzzCommands = []struct {
	weight int
	gen    func(g *fuzzGen) []string
}{
	// Strings.
	{4, func(g *fuzzGen) []string {
		args := []string{"SET", g.key(), g.value()}
		for range g.rng.IntN(3) {
			if g.chance(2) {
				args = append(args, g.expiryOpt()...)
			} else {
				args = append(args, g.pick("NX", "XX", "GET", "KEEPTTL", "nx"))
			}
		}
		return args
	}},
	{3, func(g *fuzzGen) []string { return []string{"GET", g.key()} }},
	{1, func(g *fuzzGen) []string { return []string{"GETSET", g.key(), g.value()} }},
	{1, func(g *fuzzGen) []string { return []string{"GETDEL", g.key()} }},
	{2, func(g *fuzzGen) []string {
		args := []string{"GETEX", g.key()}
		if g.chance(4) {
			return args
		}
		args = append(args, g.expiryOpt()...)
		if g.chance(6) {
			args = append(args, g.expiryOpt()...)
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return []string{"SETNX", g.key(), g.value()} }},
	{1, func(g *fuzzGen) []string { return []string{"SETEX", g.key(), g.secs(), g.value()} }},
	{1, func(g *fuzzGen) []string { return []string{"PSETEX", g.key(), g.millis(), g.value()} }},
	{1, func(g *fuzzGen) []string {
		args := []string{g.pick("MSET", "MSETNX")}
		for range 1 + g.rng.IntN(3) {
			args = append(args, g.key(), g.value())
		}
		if g.chance(8) {
			args = args[:len(args)-1]
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return append([]string{"MGET"}, g.keys(1+g.rng.IntN(3))...) }},
	{2, func(g *fuzzGen) []string { return []string{"APPEND", g.key(), g.value()} }},
	{1, func(g *fuzzGen) []string { return []string{"STRLEN", g.key()} }},
	{2, func(g *fuzzGen) []string {
		return []string{g.pick("GETRANGE", "SUBSTR"), g.key(), g.smallInt(), g.smallInt()}
	}},
	{2, func(g *fuzzGen) []string {
		// The largest offset in range only with an empty value, which
		// allocates nothing; those past 512 MB, and those that overflow
		// with the value's length, are refused by both before anything
		// is allocated.
		off := g.pick("0", "1", "3", "10", "-1", "x", "536870911", "100", "536870912", "5368709120",
			"9223372036854775807", "9223372036854775806", "-9223372036854775808")
		v := g.value()
		if off == "536870911" {
			v = ""
		}
		return []string{"SETRANGE", g.key(), off, v}
	}},
	{2, func(g *fuzzGen) []string { return []string{g.pick("INCR", "DECR"), g.key()} }},
	{2, func(g *fuzzGen) []string { return []string{g.pick("INCRBY", "DECRBY"), g.key(), g.smallInt()} }},
	{2, func(g *fuzzGen) []string { return []string{"INCRBYFLOAT", g.key(), g.float()} }},
	// Bitmaps.
	{2, func(g *fuzzGen) []string {
		// Offsets below 2^32 allocate up to 512MB: the edges asked are
		// the invalid ones and small ones.
		return []string{"SETBIT", g.key(), g.pick("0", "1", "7", "8", "100", "-1", "4294967296", "x", "9223372036854775807"), g.pick("0", "1", "2", "-1", "x", "")}
	}},
	{1, func(g *fuzzGen) []string {
		return []string{"GETBIT", g.key(), g.pick("0", "1", "7", "100", "-1", "4294967295", "4294967296", "x")}
	}},
	{2, func(g *fuzzGen) []string {
		args := []string{"BITCOUNT", g.key()}
		switch g.rng.IntN(4) {
		case 0:
		case 1:
			args = append(args, g.smallInt())
		default:
			args = append(args, g.smallInt(), g.smallInt())
			if g.chance(2) {
				args = append(args, g.pick("BYTE", "BIT", "byte", "WORD"))
			}
		}
		return args
	}},
	{2, func(g *fuzzGen) []string {
		args := []string{"BITPOS", g.key(), g.pick("0", "1", "2", "x")}
		for range g.rng.IntN(3) {
			args = append(args, g.smallInt())
		}
		if len(args) == 5 && g.chance(2) {
			args = append(args, g.pick("BYTE", "BIT", "bit", "WORD"))
		}
		return args
	}},
	{1, func(g *fuzzGen) []string {
		op := g.pick("AND", "OR", "XOR", "NOT", "and", "NAND")
		n := 1 + g.rng.IntN(3)
		if op == "NOT" && !g.chance(4) {
			n = 1
		}
		return append([]string{"BITOP", op, g.key()}, g.keys(n)...)
	}},
	// Keys.
	{2, func(g *fuzzGen) []string {
		return append([]string{g.pick("DEL", "UNLINK", "EXISTS", "TOUCH")}, g.keys(1+g.rng.IntN(3))...)
	}},
	{2, func(g *fuzzGen) []string { return []string{"TYPE", g.key()} }},
	{3, func(g *fuzzGen) []string {
		var args []string
		switch g.rng.IntN(4) {
		case 0:
			args = []string{"EXPIRE", g.key(), g.secs()}
		case 1:
			args = []string{"PEXPIRE", g.key(), g.millis()}
		case 2:
			args = []string{"EXPIREAT", g.key(), g.unixSecs()}
		default:
			args = []string{"PEXPIREAT", g.key(), g.unixMillis()}
		}
		for range g.rng.IntN(3) {
			args = append(args, g.pick("NX", "XX", "GT", "LT", "gt", "YY"))
		}
		return args
	}},
	{3, func(g *fuzzGen) []string {
		return []string{g.pick("TTL", "PTTL", "EXPIRETIME", "PEXPIRETIME", "PERSIST"), g.key()}
	}},
	{1, func(g *fuzzGen) []string {
		args := []string{"COPY", g.key(), g.key()}
		for range g.rng.IntN(3) {
			args = append(args, g.pick("REPLACE", "DB", "0", "replace"))
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return []string{g.pick("RENAME", "RENAMENX"), g.key(), g.key()} }},
	{1, func(g *fuzzGen) []string {
		args := []string{"SCAN", g.pick("0", "0", "0", "x", "-1", "18446744073709551615", "18446744073709551616")}
		for range g.rng.IntN(3) {
			switch g.rng.IntN(4) {
			case 0:
				args = append(args, "MATCH", g.pick("*", "{t}[ab]", "{t}?", "\\{t\\}a", "*[", "x*"))
			case 1:
				args = append(args, "COUNT", g.pick("100", "10", "0", "-1", "x"))
			case 2:
				args = append(args, "TYPE", g.pick("string", "hash", "set", "zset", "list", "none", "STRING"))
			default:
				args = append(args, g.pick("COUNT", "MATCH", "NOPE"))
			}
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return []string{"KEYS", g.pick("*", "{t}[a-c]", "{t}?", "*\\", "nope")} }},
	{1, func(g *fuzzGen) []string { return []string{"RANDOMKEY"} }},
	// Hashes.
	{4, func(g *fuzzGen) []string {
		args := []string{g.pick("HSET", "HSET", "HMSET"), g.key()}
		for range 1 + g.rng.IntN(3) {
			args = append(args, g.member(), g.value())
		}
		if g.chance(8) {
			args = args[:len(args)-1]
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return []string{"HSETNX", g.key(), g.member(), g.value()} }},
	{2, func(g *fuzzGen) []string {
		return []string{g.pick("HGET", "HEXISTS", "HSTRLEN"), g.key(), g.member()}
	}},
	{1, func(g *fuzzGen) []string {
		return append([]string{g.pick("HMGET", "HDEL"), g.key()}, g.member(), g.member())
	}},
	{2, func(g *fuzzGen) []string {
		return []string{g.pick("HLEN", "HKEYS", "HVALS", "HGETALL"), g.key()}
	}},
	{2, func(g *fuzzGen) []string { return []string{"HINCRBY", g.key(), g.member(), g.smallInt()} }},
	{2, func(g *fuzzGen) []string { return []string{"HINCRBYFLOAT", g.key(), g.member(), g.float()} }},
	{1, func(g *fuzzGen) []string {
		args := []string{"HRANDFIELD", g.key()}
		if !g.chance(3) {
			args = append(args, g.randCount())
			if g.chance(2) {
				args = append(args, g.pick("WITHVALUES", "withvalues", "WITHSCORES"))
			}
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return g.scanArgs("HSCAN") }},
	// Sets.
	{4, func(g *fuzzGen) []string {
		return append([]string{"SADD", g.key()}, g.member(), g.member(), g.pick("1", "2", "-1", "x"))
	}},
	{2, func(g *fuzzGen) []string { return []string{"SREM", g.key(), g.member(), g.member()} }},
	{2, func(g *fuzzGen) []string { return []string{g.pick("SMEMBERS", "SCARD"), g.key()} }},
	{1, func(g *fuzzGen) []string { return []string{"SISMEMBER", g.key(), g.member()} }},
	{1, func(g *fuzzGen) []string { return []string{"SMISMEMBER", g.key(), g.member(), g.member()} }},
	{1, func(g *fuzzGen) []string {
		// A SPOP of every member is the only one both servers agree on.
		return []string{"SPOP", g.key(), g.pick("100", "0", "-1", "x", "9223372036854775807", "-9223372036854775808")}
	}},
	{1, func(g *fuzzGen) []string {
		args := []string{"SRANDMEMBER", g.key()}
		if g.chance(2) {
			args = append(args, g.randCount())
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return []string{"SMOVE", g.key(), g.key(), g.member()} }},
	{2, func(g *fuzzGen) []string {
		return append([]string{g.pick("SINTER", "SUNION", "SDIFF")}, g.keys(1+g.rng.IntN(3))...)
	}},
	{2, func(g *fuzzGen) []string {
		return append([]string{g.pick("SINTERSTORE", "SUNIONSTORE", "SDIFFSTORE"), g.key()}, g.keys(1+g.rng.IntN(3))...)
	}},
	{1, func(g *fuzzGen) []string {
		args := append([]string{"SINTERCARD"}, g.numKeys()...)
		if g.chance(2) {
			args = append(args, "LIMIT", g.pick("0", "1", "2", "-1", "x"))
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return g.scanArgs("SSCAN") }},
	// Sorted sets.
	{5, func(g *fuzzGen) []string {
		args := []string{"ZADD", g.key()}
		for range g.rng.IntN(3) {
			args = append(args, g.pick("NX", "XX", "GT", "LT", "CH", "INCR", "nx"))
		}
		for range 1 + g.rng.IntN(2) {
			args = append(args, g.float(), g.member())
		}
		if g.chance(10) {
			args = args[:len(args)-1]
		}
		return args
	}},
	{2, func(g *fuzzGen) []string { return []string{"ZINCRBY", g.key(), g.float(), g.member()} }},
	{2, func(g *fuzzGen) []string { return []string{"ZREM", g.key(), g.member(), g.member()} }},
	{1, func(g *fuzzGen) []string { return []string{"ZCARD", g.key()} }},
	{2, func(g *fuzzGen) []string {
		return []string{g.pick("ZSCORE", "ZRANK", "ZREVRANK"), g.key(), g.member()}
	}},
	{1, func(g *fuzzGen) []string { return []string{"ZMSCORE", g.key(), g.member(), g.member()} }},
	{1, func(g *fuzzGen) []string { return []string{"ZCOUNT", g.key(), g.scoreBound(), g.scoreBound()} }},
	{1, func(g *fuzzGen) []string { return []string{"ZLEXCOUNT", g.key(), g.lexBound(), g.lexBound()} }},
	{5, func(g *fuzzGen) []string { return g.zrangeArgs("ZRANGE", g.key()) }},
	{1, func(g *fuzzGen) []string { return g.zrangeArgs("ZRANGESTORE", g.key(), g.key()) }},
	{2, func(g *fuzzGen) []string {
		name := g.pick("ZRANGEBYSCORE", "ZREVRANGEBYSCORE", "ZRANGEBYLEX", "ZREVRANGEBYLEX", "ZREVRANGE")
		var args []string
		switch name {
		case "ZRANGEBYLEX", "ZREVRANGEBYLEX":
			args = []string{name, g.key(), g.lexBound(), g.lexBound()}
		case "ZREVRANGE":
			args = []string{name, g.key(), g.smallInt(), g.smallInt()}
		default:
			args = []string{name, g.key(), g.scoreBound(), g.scoreBound()}
		}
		for range g.rng.IntN(3) {
			if g.chance(2) {
				args = append(args, "LIMIT", g.smallInt(), g.smallInt())
			} else {
				args = append(args, g.pick("WITHSCORES", "LIMIT"))
			}
		}
		return args
	}},
	{2, func(g *fuzzGen) []string {
		switch g.rng.IntN(3) {
		case 0:
			return []string{"ZREMRANGEBYRANK", g.key(), g.smallInt(), g.smallInt()}
		case 1:
			return []string{"ZREMRANGEBYSCORE", g.key(), g.scoreBound(), g.scoreBound()}
		}
		return []string{"ZREMRANGEBYLEX", g.key(), g.lexBound(), g.lexBound()}
	}},
	{2, func(g *fuzzGen) []string {
		args := []string{g.pick("ZPOPMIN", "ZPOPMAX"), g.key()}
		if g.chance(2) {
			args = append(args, g.count())
		}
		return args
	}},
	{1, func(g *fuzzGen) []string {
		args := append([]string{"ZMPOP"}, g.numKeys()...)
		args = append(args, g.pick("MIN", "MAX", "min", "MID"))
		if g.chance(2) {
			args = append(args, "COUNT", g.count())
		}
		return args
	}},
	{1, func(g *fuzzGen) []string {
		args := []string{"ZRANDMEMBER", g.key()}
		if !g.chance(3) {
			args = append(args, g.randCount())
			if g.chance(2) {
				args = append(args, g.pick("WITHSCORES", "withscores", "WITHVALUES"))
			}
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return g.scanArgs("ZSCAN") }},
	{3, func(g *fuzzGen) []string {
		name := g.pick("ZUNION", "ZINTER", "ZDIFF", "ZUNIONSTORE", "ZINTERSTORE", "ZDIFFSTORE")
		args := []string{name}
		if name[len(name)-1] == 'E' {
			args = append(args, g.key())
		}
		nk := g.numKeys()
		args = append(args, nk...)
		for range g.rng.IntN(3) {
			switch g.rng.IntN(4) {
			case 0:
				args = append(args, "WEIGHTS")
				for range len(nk) - 1 {
					args = append(args, g.float())
				}
			case 1:
				args = append(args, "AGGREGATE", g.pick("SUM", "MIN", "MAX", "max", "AVG"))
			case 2:
				args = append(args, "WITHSCORES")
			default:
				args = append(args, g.pick("LIMIT", "WEIGHTS", "AGGREGATE"))
			}
		}
		return args
	}},
	{1, func(g *fuzzGen) []string {
		args := append([]string{"ZINTERCARD"}, g.numKeys()...)
		if g.chance(2) {
			args = append(args, "LIMIT", g.pick("0", "1", "-1", "x"))
		}
		return args
	}},
	// Lists.
	{5, func(g *fuzzGen) []string {
		return append([]string{g.pick("LPUSH", "RPUSH", "LPUSH", "RPUSH", "LPUSHX", "RPUSHX"), g.key()}, g.value(), g.member())
	}},
	{2, func(g *fuzzGen) []string {
		args := []string{g.pick("LPOP", "RPOP"), g.key()}
		if g.chance(2) {
			args = append(args, g.count())
		}
		return args
	}},
	{1, func(g *fuzzGen) []string { return []string{"LLEN", g.key()} }},
	{3, func(g *fuzzGen) []string { return []string{"LRANGE", g.key(), g.smallInt(), g.smallInt()} }},
	{1, func(g *fuzzGen) []string { return []string{"LINDEX", g.key(), g.smallInt()} }},
	{1, func(g *fuzzGen) []string { return []string{"LSET", g.key(), g.smallInt(), g.value()} }},
	{1, func(g *fuzzGen) []string {
		return []string{"LINSERT", g.key(), g.pick("BEFORE", "AFTER", "after", "MIDDLE"), g.member(), g.value()}
	}},
	{1, func(g *fuzzGen) []string { return []string{"LREM", g.key(), g.smallInt(), g.member()} }},
	{1, func(g *fuzzGen) []string { return []string{"LTRIM", g.key(), g.smallInt(), g.smallInt()} }},
	{2, func(g *fuzzGen) []string {
		args := []string{"LPOS", g.key(), g.member()}
		for range g.rng.IntN(4) {
			switch g.rng.IntN(4) {
			case 0:
				// Not RANK -9223372036854775808: fixed elsewhere.
				args = append(args, "RANK", g.pick("1", "-1", "2", "-2", "0", "x", "9223372036854775807", "-9223372036854775807"))
			case 1:
				args = append(args, "COUNT", g.pick("0", "1", "2", "-1", "x", "9223372036854775807"))
			case 2:
				args = append(args, "MAXLEN", g.pick("0", "1", "2", "-1", "x", "9223372036854775807"))
			default:
				args = append(args, g.pick("RANK", "COUNT", "NOPE"))
			}
		}
		return args
	}},
	{1, func(g *fuzzGen) []string {
		return []string{"LMOVE", g.key(), g.key(), g.pick("LEFT", "RIGHT", "left"), g.pick("LEFT", "RIGHT", "UP")}
	}},
	{1, func(g *fuzzGen) []string {
		args := append([]string{"LMPOP"}, g.numKeys()...)
		args = append(args, g.pick("LEFT", "RIGHT", "right", "UP"))
		if g.chance(2) {
			args = append(args, "COUNT", g.count())
		}
		return args
	}},
	// Blocking verbs, with a short wait or a bad timeout: rare, as each
	// wait on an empty key costs its timeout.
	{1, func(g *fuzzGen) []string {
		timeout := g.pick("0.01", "-1", "x", "0.01", "nan", "inf")
		if timeout == "inf" || timeout == "nan" {
			timeout = g.pick("-1", "x", "1e400")
		}
		switch g.rng.IntN(5) {
		case 0:
			return append(append([]string{g.pick("BLPOP", "BRPOP")}, g.keys(1+g.rng.IntN(2))...), timeout)
		case 1:
			return append(append([]string{g.pick("BZPOPMIN", "BZPOPMAX")}, g.keys(1+g.rng.IntN(2))...), timeout)
		case 2:
			return []string{"BLMOVE", g.key(), g.key(), g.pick("LEFT", "RIGHT"), g.pick("LEFT", "RIGHT"), timeout}
		case 3:
			return append(append([]string{"BLMPOP", timeout}, g.numKeys()...), g.pick("LEFT", "RIGHT"), "COUNT", g.count())
		}
		return append(append([]string{"BZMPOP", timeout}, g.numKeys()...), g.pick("MIN", "MAX"))
	}},
	// Connection.
	{1, func(g *fuzzGen) []string {
		if g.chance(2) {
			return []string{"PING", g.value()}
		}
		return []string{"ECHO", g.value()}
	}},
}

func (g *fuzzGen) scanArgs(name string) []string {
	args := []string{name, g.key(), g.pick("0", "0", "0", "x", "-1", "18446744073709551616")}
	for range g.rng.IntN(3) {
		switch g.rng.IntN(3) {
		case 0:
			args = append(args, "MATCH", g.pick("*", "a*", "[ab]", "?", "*[", "\\a"))
		case 1:
			args = append(args, "COUNT", g.pick("100", "10", "1", "0", "-1", "x"))
		default:
			args = append(args, g.pick("COUNT", "MATCH", "NOVALUES", "TYPE"))
		}
	}
	return args
}

// zrangeArgs is ZRANGE's (or ZRANGESTORE's) arguments: by rank, score or
// lex, with REV, LIMIT and WITHSCORES in any order.
func (g *fuzzGen) zrangeArgs(head ...string) []string {
	args := head
	switch g.rng.IntN(3) {
	case 0:
		args = append(args, g.smallInt(), g.smallInt())
	case 1:
		args = append(args, g.scoreBound(), g.scoreBound(), "BYSCORE")
	default:
		args = append(args, g.lexBound(), g.lexBound(), "BYLEX")
	}
	for range g.rng.IntN(4) {
		switch g.rng.IntN(5) {
		case 0:
			args = append(args, "LIMIT", g.smallInt(), g.smallInt())
		case 1:
			args = append(args, "REV")
		case 2:
			args = append(args, "WITHSCORES")
		case 3:
			args = append(args, g.pick("BYSCORE", "BYLEX", "rev"))
		default:
			args = append(args, g.pick("LIMIT", "WITHSCORE"))
		}
	}
	return args
}

// command draws one command.
func (g *fuzzGen) command() []string {
	total := 0
	for _, c := range fuzzCommands {
		total += c.weight
	}
	n := g.rng.IntN(total)
	for _, c := range fuzzCommands {
		if n < c.weight {
			return c.gen(g)
		}
		n -= c.weight
	}
	panic("unreachable")
}

// sequence draws a run of commands, with transactions among them:
// MULTI ... EXEC or DISCARD, sometimes after a WATCH, sometimes with a
// command that fails to queue, and the odd stray EXEC or nested MULTI.
func (g *fuzzGen) sequence() [][]string {
	var seq [][]string
	n := 1 + g.rng.IntN(40)
	for len(seq) < n {
		if !g.chance(10) {
			seq = append(seq, g.command())
			continue
		}
		if g.chance(2) {
			seq = append(seq, append([]string{"WATCH"}, g.keys(1+g.rng.IntN(2))...))
			for range g.rng.IntN(3) {
				seq = append(seq, g.command())
			}
		}
		seq = append(seq, []string{"MULTI"})
		for range g.rng.IntN(6) {
			switch {
			case g.chance(15):
				seq = append(seq, []string{"GET"}) // fails to queue: EXECABORT
			case g.chance(15):
				seq = append(seq, []string{g.pick("MULTI", "WATCH", "NOSUCHCOMMAND"), g.key()})
			default:
				seq = append(seq, g.command())
			}
		}
		switch {
		case g.chance(6):
			seq = append(seq, []string{"DISCARD"})
		case g.chance(10):
			seq = append(seq, []string{"UNWATCH"})
			seq = append(seq, []string{"EXEC"})
		default:
			seq = append(seq, []string{"EXEC"})
		}
		if g.chance(10) {
			seq = append(seq, []string{g.pick("EXEC", "DISCARD", "UNWATCH")})
		}
	}
	return seq
}
