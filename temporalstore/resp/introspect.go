package resp

import (
	"strconv"
	"strings"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// OBJECT, MEMORY and DEBUG: the introspection verbs client libraries and
// their test suites send. Encodings are Redis 7.0's, judged from the
// value as it is now by the thresholds CONFIG SET keeps (Redis converts
// on a write and never back, so right after CONFIG SET, or for a
// collection that shrank, the two may differ).

func registerIntrospection() {
	register(
		&cmdSpec{name: "object", arity: -2, first: 2, last: 2, step: 1, run: cmdObject},
		&cmdSpec{name: "memory", arity: -2, first: 2, last: 2, step: 1, run: cmdMemory},
		&cmdSpec{name: "debug", arity: -2, flags: flagNoTx, run: cmdDebug},
	)
}

// keyShape is what the introspection verbs know of a key.
type keyShape struct {
	typ, encoding string
	// value is a string's value (nil for other types).
	value []byte
	// bytes estimates the key's memory: its name, its value or
	// elements, and a per-element overhead.
	bytes int64
}

// shape reads key's type and contents; ok is false (and nothing written)
// for a missing key, or after an error reply.
func (c *conn) shape(key []byte) (keyShape, bool, bool) {
	r, ok := c.exec(ts.Command{Kind: ts.KindType, Key: key})
	if !ok {
		return keyShape{}, false, false
	}
	sh := keyShape{typ: string(r.Value), bytes: int64(len(key)) + 16}
	set := c.s.settings
	switch sh.typ {
	case "none":
		return sh, false, true
	case "string":
		r, ok := c.exec(ts.Command{Kind: ts.KindGet, Key: key})
		if !ok {
			return sh, false, false
		}
		v := r.Value
		sh.value = v
		sh.bytes += int64(len(v)) + 8
		_, err := parseInt(v)
		switch {
		case err == nil && len(v) <= 20:
			sh.encoding = "int"
		case len(v) <= 44:
			sh.encoding = "embstr"
		default:
			sh.encoding = "raw"
		}
	case "hash":
		r, ok := c.exec(ts.Command{Kind: ts.KindHGetAll, Key: key})
		if !ok {
			return sh, false, false
		}
		longest := c.account(&sh, r.Values)
		sh.encoding = "hashtable"
		if int64(len(r.Values)/2) <= set.int("hash-max-listpack-entries") && longest <= set.int("hash-max-listpack-value") {
			sh.encoding = "listpack"
		}
	case "set":
		r, ok := c.exec(ts.Command{Kind: ts.KindSMembers, Key: key})
		if !ok {
			return sh, false, false
		}
		c.account(&sh, r.Values)
		ints := true
		for _, m := range r.Values {
			if _, err := parseInt(m); err != nil {
				ints = false
				break
			}
		}
		sh.encoding = "hashtable"
		if ints && int64(len(r.Values)) <= set.int("set-max-intset-entries") {
			sh.encoding = "intset"
		}
	case "zset":
		r, ok := c.exec(ts.Command{Kind: ts.KindZRange, Key: key, Range: ts.ZRange{Start: 0, Stop: -1}})
		if !ok {
			return sh, false, false
		}
		longest := c.account(&sh, r.Values)
		sh.bytes += int64(len(r.Values)) * 8 // the scores
		sh.encoding = "skiplist"
		if int64(len(r.Values)) <= set.int("zset-max-listpack-entries") && longest <= set.int("zset-max-listpack-value") {
			sh.encoding = "listpack"
		}
	case "list":
		r, ok := c.exec(ts.Command{Kind: ts.KindLRange, Key: key, Start: 0, End: -1})
		if !ok {
			return sh, false, false
		}
		c.account(&sh, r.Values)
		sh.encoding = "quicklist"
	default:
		// The engine's own models (series, control state) have no
		// Redis encoding: they are named for what they are.
		sh.encoding = sh.typ
	}
	return sh, true, true
}

// account adds values' memory to sh and returns the longest value's length.
func (c *conn) account(sh *keyShape, values [][]byte) int64 {
	var longest int64
	for _, v := range values {
		sh.bytes += int64(len(v)) + 16
		longest = max(longest, int64(len(v)))
	}
	return longest
}

var objectHelp = []string{
	"OBJECT <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"ENCODING <key>",
	"    Return the kind of internal representation used in order to store the value",
	"    associated with a <key>.",
	"FREQ <key>",
	"    Return the access frequency index of the <key>. The returned integer is",
	"    proportional to the logarithm of the recent access frequency of the key.",
	"IDLETIME <key>",
	"    Return the idle time of the <key>, that is the approximated number of",
	"    seconds elapsed since the last access to the key.",
	"REFCOUNT <key>",
	"    Return the number of references of the value associated with the specified",
	"    <key>.",
	"HELP",
	"    Print this help.",
}

func cmdObject(c *conn, a [][]byte) {
	sub := strings.ToLower(string(a[1]))
	if sub == "help" && len(a) == 2 {
		c.w.simpleLines(objectHelp)
		return
	}
	switch {
	case sub != "encoding" && sub != "refcount" && sub != "idletime" && sub != "freq" && sub != "help":
		c.errorf("ERR unknown subcommand '%s'. Try OBJECT HELP.", a[1])
		return
	case len(a) != 3:
		c.errorf("ERR wrong number of arguments for 'object|%s' command", sub)
		return
	}
	sh, found, ok := c.shape(a[2])
	switch {
	case !ok:
		return
	case !found:
		c.w.null()
		return
	}
	lfu := strings.HasSuffix(c.s.settings.get("maxmemory-policy"), "-lfu")
	switch sub {
	case "encoding":
		c.w.bulkString(sh.encoding)
	case "refcount":
		// Redis shares the integers below 10000 (OBJ_SHARED_REFCOUNT).
		if n, err := parseInt(sh.value); sh.encoding == "int" && err == nil && n >= 0 && n < 10000 {
			c.w.int(2147483647)
			return
		}
		c.w.int(1)
	case "idletime":
		if lfu {
			c.errorf("ERR An LFU maxmemory policy is selected, idle time not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.w.int(0) // access times are not tracked: every key is as fresh
	case "freq":
		if !lfu {
			c.errorf("ERR An LFU maxmemory policy is not selected, access frequency not tracked. Please note that when switching between policies at runtime LRU and LFU data will take some time to adjust.")
			return
		}
		c.w.int(0)
	}
}

var memoryHelp = []string{
	"MEMORY <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"DOCTOR",
	"    Return memory problems reports.",
	"MALLOC-STATS",
	"    Return internal statistics report from the memory allocator.",
	"PURGE",
	"    Attempt to purge dirty pages for reclamation by the allocator.",
	"STATS",
	"    Return information about the memory usage of the server.",
	"USAGE <key> [SAMPLES <count>]",
	"    Return memory in bytes used by <key> and its value. Nested values are",
	"    sampled up to <count> times (default: 5, 0 means sample all).",
	"HELP",
	"    Print this help.",
}

func cmdMemory(c *conn, a [][]byte) {
	sub := strings.ToLower(string(a[1]))
	switch {
	case sub == "help" && len(a) == 2:
		c.w.simpleLines(memoryHelp)
	case sub == "usage" && len(a) >= 3:
		if len(a) != 3 && len(a) != 5 {
			c.syntaxErr()
			return
		}
		if len(a) == 5 {
			if !is(a[3], "samples") {
				c.syntaxErr()
				return
			}
			n, ok := c.intArg(a[4])
			if !ok {
				return
			}
			if n < 0 {
				c.syntaxErr() // as Redis answers a negative count
				return
			}
		}
		sh, found, ok := c.shape(a[2])
		switch {
		case !ok:
		case !found:
			c.w.null()
		default:
			c.w.int(sh.bytes)
		}
	case sub == "doctor" && len(a) == 2:
		c.w.bulkString("Hi Sam, I can't find any memory issue in your instance. I can only account for what occurs on this base.")
	case sub == "purge" && len(a) == 2:
		c.w.ok()
	case sub == "malloc-stats" && len(a) == 2:
		c.w.bulkString("Stats not supported for the current allocator")
	case sub == "help" || sub == "usage" || sub == "doctor" || sub == "purge" || sub == "malloc-stats" || sub == "stats":
		c.errorf("ERR wrong number of arguments for 'memory|%s' command", sub)
	default:
		c.errorf("ERR unknown subcommand '%s'. Try MEMORY HELP.", a[1])
	}
}

var debugHelp = []string{
	"DEBUG <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
	"OBJECT <key>",
	"    Show low level info about the key and associated value.",
	"RELOAD",
	"    Checkpoint every shard (the engine's SAVE); a restart replays only the log past it.",
	"SET-ACTIVE-EXPIRE <0|1>",
	"    Accepted; the engine's expiry sweep keeps running.",
	"SLEEP <seconds>",
	"    Stop the connection for <seconds> (a decimal), as Redis stops the server.",
	"HELP",
	"    Print this help.",
}

// cmdDebug serves DEBUG's safe subset: nothing in it can crash, corrupt or
// stop the server (no SEGFAULT, PANIC, RESTART, JMAP, no change of state).
func cmdDebug(c *conn, a [][]byte) {
	sub := strings.ToLower(string(a[1]))
	switch {
	case sub == "help" && len(a) == 2:
		c.w.simpleLines(debugHelp)
	case sub == "sleep" && len(a) == 3:
		secs, err := strconv.ParseFloat(string(a[2]), 64)
		if err != nil || secs < 0 || secs > 3600 {
			c.errorf("ERR value is not a valid float")
			return
		}
		t := time.NewTimer(time.Duration(secs * float64(time.Second)))
		defer t.Stop()
		select {
		case <-t.C:
		case <-c.ctx.Done():
		}
		c.w.ok()
	case sub == "object" && len(a) == 3:
		sh, found, ok := c.shape(a[2])
		switch {
		case !ok:
		case !found:
			c.errorf("ERR no such key")
		default:
			c.w.simple("Value at:0x0 refcount:1 encoding:" + sh.encoding + " serializedlength:" + strconv.FormatInt(sh.bytes, 10) + " lru:0 lru_seconds_idle:0")
		}
	case sub == "reload" && len(a) == 2:
		if err := c.s.save(c.ctx); err != nil {
			c.engineError(err)
			return
		}
		c.w.ok()
	case sub == "set-active-expire" && len(a) == 3:
		if _, ok := c.intArg(a[2]); ok {
			c.w.ok()
		}
	default:
		c.errorf("ERR unknown subcommand or wrong number of arguments for '%s'. Try DEBUG HELP.", a[1])
	}
}
