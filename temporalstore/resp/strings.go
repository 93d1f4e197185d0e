package resp

import (
	"fmt"
	"math"
	"strings"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// key is a spec's single key at position 1.
func keyed(name string, arity int, flags cmdFlags, run func(c *conn, args [][]byte)) *cmdSpec {
	return &cmdSpec{name: name, arity: arity, flags: flags, first: 1, last: 1, step: 1, run: run}
}

func registerStrings() {
	register(
		keyed("get", 2, 0, cmdGet),
		keyed("set", -3, flagWrite, cmdSet),
		keyed("setnx", 3, flagWrite, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindSet, Key: a[1], Value: a[2], Cond: ts.IfAbsent}); ok {
				c.w.int(b2i(r.Applied))
			}
		}),
		keyed("setex", 4, flagWrite, func(c *conn, a [][]byte) { setEx(c, a, time.Second) }),
		keyed("psetex", 4, flagWrite, func(c *conn, a [][]byte) { setEx(c, a, time.Millisecond) }),
		keyed("getset", 3, flagWrite, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindSet, Key: a[1], Value: a[2], ReturnOld: true}); ok {
				c.bulkOrNull(r)
			}
		}),
		keyed("getdel", 2, flagWrite, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindGetDel, Key: a[1]}); ok {
				c.bulkOrNull(r)
			}
		}),
		keyed("getex", -2, flagWrite, cmdGetEx),
		&cmdSpec{name: "mget", arity: -2, first: 1, last: -1, step: 1, run: func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindMGet, Keys: a[1:]}); ok {
				c.w.values(r.Values)
			}
		}},
		&cmdSpec{name: "mset", arity: -3, flags: flagWrite, first: 1, last: -1, step: 2, run: func(c *conn, a [][]byte) {
			if cmd, ok := c.keyValues(a, ts.KindMSet); ok {
				if _, ok := c.exec(cmd); ok {
					c.w.ok()
				}
			}
		}},
		&cmdSpec{name: "msetnx", arity: -3, flags: flagWrite, first: 1, last: -1, step: 2, run: func(c *conn, a [][]byte) {
			if cmd, ok := c.keyValues(a, ts.KindMSetNX); ok {
				c.intReply(cmd)
			}
		}},
		keyed("incr", 2, flagWrite, func(c *conn, a [][]byte) { incrBy(c, a[1], 1) }),
		keyed("decr", 2, flagWrite, func(c *conn, a [][]byte) { incrBy(c, a[1], -1) }),
		keyed("incrby", 3, flagWrite, func(c *conn, a [][]byte) {
			if n, ok := c.intArg(a[2]); ok {
				incrBy(c, a[1], n)
			}
		}),
		keyed("decrby", 3, flagWrite, func(c *conn, a [][]byte) {
			n, ok := c.intArg(a[2])
			switch {
			case !ok:
			case n == math.MinInt64:
				c.errorf("ERR decrement would overflow")
			default:
				incrBy(c, a[1], -n)
			}
		}),
		keyed("incrbyfloat", 3, flagWrite, func(c *conn, a [][]byte) {
			f, err := parseFloat(a[2])
			if err != nil && ts.IsLongDouble(a[2]) {
				// Past a float64 but a long double (1e400), as Redis adds
				// in: the engine adds the text.
				f, err = 0, nil
			}
			switch {
			case err != nil:
				c.incrFloatRefused(a[1], err.Error())
				return
			case math.IsInf(f, 0):
				c.incrFloatRefused(a[1], "ERR increment would produce NaN or Infinity")
				return
			}
			if r, ok := c.exec(ts.Command{Kind: ts.KindIncrByFloat, Key: a[1], Float: f, Value: a[2]}); ok {
				c.w.bulk(r.Value)
			}
		}),
		keyed("append", 3, flagWrite, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindAppend, Key: a[1], Value: a[2]}); ok {
				c.w.int(r.Int)
			}
		}),
		keyed("strlen", 2, 0, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindStrLen, Key: a[1]}); ok {
				c.w.int(r.Int)
			}
		}),
		keyed("getrange", 4, 0, getRange),
		keyed("substr", 4, 0, getRange),
		keyed("setrange", 4, flagWrite, func(c *conn, a [][]byte) {
			off, ok := c.intArg(a[2])
			if !ok {
				return
			}
			if off < 0 {
				c.errorf("ERR offset is out of range")
				return
			}
			if r, ok := c.exec(ts.Command{Kind: ts.KindSetRange, Key: a[1], Start: off, Value: a[3]}); ok {
				c.w.int(r.Int)
			}
		}),
	)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

// cmdGet reads into the connection's scratch buffer, which the reply is
// copied from at once: no allocation per GET. A value kept in a file of
// its own (over the large-value threshold) is sent from the file.
func cmdGet(c *conn, a [][]byte) {
	// Not inside MULTI or a script, nor with replies off: the bytes go
	// to the socket.
	if c.atomic == nil && c.serving && c.w.bw == c.bw {
		f, ok, err := c.s.opts.Engine.OpenString(c.ctx, c.tenant, c.namespace, c.table, a[1])
		switch {
		case err != nil:
			c.engineError(err)
			return
		case ok:
			c.sendFile(f)
			return
		}
	}
	v, found, err := c.engine().AppendGet(c.ctx, c.tenant, c.namespace, c.table, a[1], c.scratch[:0])
	if cap(v) <= maxScratch {
		c.scratch = v[:0]
	}
	switch {
	case err != nil:
		c.engineError(err)
	case !found:
		c.w.null()
	default:
		c.w.bulk(v)
	}
}

// sendFile replies with a value from its file: the header and what is
// buffered before it are flushed, and StringFile.WriteTo sends the file's
// bytes to the socket by sendfile(2), checking the file meanwhile. A
// check that fails, or a connection that fails midway, leaves the reply
// unfinished and the connection closed, so no client takes its bytes for
// the value.
func (c *conn) sendFile(f *ts.StringFile) {
	defer f.Close()
	c.w.header('$', f.Len)
	err := c.bw.Flush()
	if err != nil {
		return // the serve loop sees the connection's error
	}
	n, err := f.WriteTo(c.nc)
	c.w.out.n += n
	if err != nil {
		c.s.opts.Logger.Warn("resp: a value sent from its file failed; closing the connection", "err", err)
		c.nc.Close()
		return
	}
	c.bw.WriteString("\r\n")
}

// maxScratch bounds the scratch buffer a connection keeps between
// commands; a larger value's buffer is let go.
const maxScratch = 64 << 10

func (c *conn) bulkOrNull(r ts.Response) {
	if !r.Found {
		c.w.null()
		return
	}
	c.w.bulk(r.Value)
}

func getRange(c *conn, a [][]byte) {
	s, ok1 := c.intArg(a[2])
	if !ok1 {
		return
	}
	e, ok2 := c.intArg(a[3])
	if !ok2 {
		return
	}
	if r, ok := c.exec(ts.Command{Kind: ts.KindGetRange, Key: a[1], Start: s, End: e}); ok {
		c.w.bulk(r.Value)
	}
}

// incrFloatRefused replies to an INCRBYFLOAT whose increment is refused
// with msg, after the checks Redis makes first: the key's type, then its
// value.
func (c *conn) incrFloatRefused(key []byte, msg string) {
	r, ok := c.exec(ts.Command{Kind: ts.KindType, Key: key})
	switch {
	case !ok:
		return
	case string(r.Value) == "string":
		if g, ok := c.exec(ts.Command{Kind: ts.KindGet, Key: key}); !ok {
			return
		} else if !ts.IsLongDouble(g.Value) {
			msg = "ERR value is not a valid float"
		}
	case string(r.Value) != "none":
		msg = "WRONGTYPE Operation against a key holding the wrong kind of value"
	}
	c.errorf("%s", msg)
}

func incrBy(c *conn, key []byte, n int64) {
	if r, ok := c.exec(ts.Command{Kind: ts.KindIncrBy, Key: key, Delta: n}); ok {
		c.w.int(r.Int)
	}
}

func setEx(c *conn, a [][]byte, unit time.Duration) {
	n, ok := c.intArg(a[2])
	if !ok {
		return
	}
	cmd := ts.Command{Kind: ts.KindSet, Key: a[1], Value: a[3]}
	if n <= 0 || !setExpiry(&cmd, n, unit, false) {
		c.errorf("ERR invalid expire time in '%s' command", map[time.Duration]string{time.Second: "setex", time.Millisecond: "psetex"}[unit])
		return
	}
	if _, ok := c.exec(cmd); ok {
		c.w.ok()
	}
}

// expiryArg is the EX, PX, EXAT or PXAT option of SET or GETEX. As in
// Redis, the same option may repeat (the last wins) but not mix with
// another, and only the last one's value is checked, once all the options
// are read.
type expiryArg struct {
	opt  string // "ex", "px", "exat", "pxat"; "" when none was given
	unit time.Duration
	abs  bool
	val  []byte
}

// parse takes a[i] if it is an expiry option: matched says it was one,
// syntaxOK that it has a value and does not clash with an earlier option
// or with blocked (KEEPTTL, PERSIST).
func (e *expiryArg) parse(a [][]byte, i int, blocked bool) (matched, syntaxOK bool) {
	var opt string
	var unit time.Duration
	abs := false
	switch {
	case is(a[i], "ex"):
		opt, unit = "ex", time.Second
	case is(a[i], "px"):
		opt, unit = "px", time.Millisecond
	case is(a[i], "exat"):
		opt, unit, abs = "exat", time.Second, true
	case is(a[i], "pxat"):
		opt, unit, abs = "pxat", time.Millisecond, true
	default:
		return false, true
	}
	if i+1 >= len(a) || blocked || e.opt != "" && e.opt != opt {
		return true, false
	}
	*e = expiryArg{opt: opt, unit: unit, abs: abs, val: a[i+1]}
	return true, true
}

// apply checks the value and sets cmd's TTL or absolute expiry; bad is the
// error reply for a value that is not a valid time.
func (e *expiryArg) apply(cmd *ts.Command, name string) (bad string) {
	if e.opt == "" {
		return ""
	}
	n, err := parseInt(e.val)
	if err != nil {
		return err.Error()
	}
	if n <= 0 || !setExpiry(cmd, n, e.unit, e.abs) {
		return fmt.Sprintf("ERR invalid expire time in '%s' command", name)
	}
	return ""
}

// setExpiry sets cmd's absolute expiry (abs) or TTL to n units; false when
// n is out of Redis's range: n in milliseconds, and a relative n added to
// the clock, must fit an int64 of milliseconds. A relative time too long
// for a time.Duration (292 years) becomes an absolute one.
func setExpiry(cmd *ts.Command, n int64, unit time.Duration, abs bool) bool {
	ms := int64(unit / time.Millisecond)
	if n > math.MaxInt64/ms || n < math.MinInt64/ms {
		return false
	}
	if abs {
		cmd.ExpireAt = time.UnixMilli(n * ms)
		return true
	}
	if limit := math.MaxInt64 / int64(unit) / 2; n <= limit && n >= -limit {
		cmd.TTL = time.Duration(n) * unit
		return true
	}
	now := time.Now().UnixMilli()
	if n*ms > math.MaxInt64-now {
		return false
	}
	// Far in the past: still after the epoch, as a zero expiry means none.
	cmd.ExpireAt = time.UnixMilli(max(now+n*ms, 1))
	return true
}

// keyValues reads MSET's and MSETNX's key, value pairs into a command of kind.
func (c *conn) keyValues(a [][]byte, kind ts.Kind) (ts.Command, bool) {
	if len(a)%2 != 1 {
		c.errorf("ERR wrong number of arguments for '%s' command", strings.ToLower(string(a[0])))
		return ts.Command{}, false
	}
	cmd := ts.Command{Kind: kind}
	for i := 1; i < len(a); i += 2 {
		cmd.Keys = append(cmd.Keys, a[i])
		cmd.Args = append(cmd.Args, a[i+1])
	}
	return cmd, true
}

// cmdSet takes SET's options as Redis does: each may repeat, NX and XX
// exclude each other, KEEPTTL excludes the expiry options, and only the
// last expiry's value is checked.
func cmdSet(c *conn, a [][]byte) {
	cmd := c.command(ts.Command{Kind: ts.KindSet, Key: a[1], Value: a[2]})
	var exp expiryArg
	for i := 3; i < len(a); i++ {
		switch {
		case is(a[i], "nx") && cmd.Cond != ts.IfPresent:
			cmd.Cond = ts.IfAbsent
		case is(a[i], "xx") && cmd.Cond != ts.IfAbsent:
			cmd.Cond = ts.IfPresent
		case is(a[i], "get"):
			cmd.ReturnOld = true
		case is(a[i], "keepttl") && exp.opt == "":
			cmd.KeepTTL = true
		default:
			if matched, ok := exp.parse(a, i, cmd.KeepTTL); !matched || !ok {
				c.syntaxErr()
				return
			}
			i++
		}
	}
	if bad := exp.apply(cmd, "set"); bad != "" {
		c.errorf("%s", bad)
		return
	}
	r, ok := c.execIn(cmd)
	switch {
	case !ok:
	case cmd.ReturnOld:
		c.bulkOrNull(r)
	case !r.Applied:
		c.w.null()
	default:
		c.w.ok()
	}
}

// orLookup replies for a request whose arguments are bad as Redis does,
// having looked the key up first: missing for an absent key, WRONGTYPE for
// a value that is not a string, else bad.
func (c *conn) orLookup(key []byte, bad string, missing func()) {
	r, ok := c.exec(ts.Command{Kind: ts.KindType, Key: key})
	switch {
	case !ok:
	case string(r.Value) == "none":
		missing()
	case string(r.Value) != "string":
		c.errorf("WRONGTYPE Operation against a key holding the wrong kind of value")
	default:
		c.errorf("%s", bad)
	}
}

// cmdGetEx checks, as Redis does, its options' syntax first, then the key
// (absent: nil; not a string: WRONGTYPE), and only then the expire time.
func cmdGetEx(c *conn, a [][]byte) {
	cmd := ts.Command{Kind: ts.KindGetEx, Key: a[1]}
	var exp expiryArg
	for i := 2; i < len(a); i++ {
		if is(a[i], "persist") && exp.opt == "" {
			cmd.Persist = true
			continue
		}
		if matched, ok := exp.parse(a, i, cmd.Persist); !matched || !ok {
			c.syntaxErr()
			return
		}
		i++
	}
	if bad := exp.apply(&cmd, "getex"); bad != "" {
		c.orLookup(a[1], bad, c.w.null)
		return
	}
	if r, ok := c.exec(cmd); ok {
		c.bulkOrNull(r)
	}
}
