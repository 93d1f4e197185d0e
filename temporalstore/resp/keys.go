package resp

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

func registerKeys() {
	multi := func(name string, flags cmdFlags, kind ts.Kind) *cmdSpec {
		return &cmdSpec{name: name, arity: -2, flags: flags, first: 1, last: -1, step: 1, run: func(c *conn, a [][]byte) {
			r, ok := c.exec(ts.Command{Kind: kind, Keys: a[1:]})
			if !ok {
				return
			}
			extra := c.extraExisting
			if kind == ts.KindDeleteKeys {
				extra = c.extraDeleted
			}
			if n, ok := extra(a[1:]); ok {
				c.w.int(r.Int + n)
			}
		}}
	}
	register(
		multi("del", flagWrite, ts.KindDeleteKeys),
		multi("unlink", flagWrite, ts.KindDeleteKeys),
		multi("exists", 0, ts.KindExistsKeys),
		multi("touch", 0, ts.KindExistsKeys),
		keyed("type", 2, 0, func(c *conn, a [][]byte) {
			r, ok := c.exec(ts.Command{Kind: ts.KindType, Key: a[1]})
			if !ok {
				return
			}
			typ := string(r.Value)
			if typ == "none" {
				if typ, ok = c.extraType(a[1]); !ok {
					return
				}
				typ = cmp.Or(typ, "none")
			}
			c.w.simple(typ)
		}),
		keyed("expire", -3, flagWrite, func(c *conn, a [][]byte) { expire(c, a, time.Second, false) }),
		keyed("pexpire", -3, flagWrite, func(c *conn, a [][]byte) { expire(c, a, time.Millisecond, false) }),
		keyed("expireat", -3, flagWrite, func(c *conn, a [][]byte) { expire(c, a, time.Second, true) }),
		keyed("pexpireat", -3, flagWrite, func(c *conn, a [][]byte) { expire(c, a, time.Millisecond, true) }),
		keyed("ttl", 2, 0, func(c *conn, a [][]byte) {
			if r, ok := c.pttl(a[1]); ok {
				if r.Int < 0 {
					c.w.int(r.Int)
				} else {
					c.w.int((r.Int + 500) / 1000)
				}
			}
		}),
		keyed("pttl", 2, 0, func(c *conn, a [][]byte) {
			if r, ok := c.pttl(a[1]); ok {
				c.w.int(r.Int)
			}
		}),
		keyed("expiretime", 2, 0, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindExpireTime, Key: a[1]}); ok {
				if r.Int < 0 {
					c.w.int(r.Int)
				} else {
					c.w.int(r.Int / 1000)
				}
			}
		}),
		keyed("pexpiretime", 2, 0, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindExpireTime, Key: a[1]}); ok {
				c.w.int(r.Int)
			}
		}),
		keyed("persist", 2, flagWrite, func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindPersist, Key: a[1]}); ok {
				c.w.int(r.Int)
			}
		}),
		&cmdSpec{name: "rename", arity: 3, flags: flagWrite, first: 1, last: 2, step: 1, run: func(c *conn, a [][]byte) {
			if _, ok := c.exec(ts.Command{Kind: ts.KindRename, Key: a[1], Dest: a[2]}); ok {
				c.w.ok()
			}
		}},
		&cmdSpec{name: "renamenx", arity: 3, flags: flagWrite, first: 1, last: 2, step: 1, run: func(c *conn, a [][]byte) {
			if r, ok := c.exec(ts.Command{Kind: ts.KindRename, Key: a[1], Dest: a[2], Cond: ts.IfAbsent}); ok {
				c.w.int(b2i(r.Applied))
			}
		}},
		&cmdSpec{name: "save", arity: 1, flags: flagNoTx, run: func(c *conn, _ [][]byte) {
			save := c.s.save
			if sv := c.s.opts.Saver; sv != nil {
				if c.access == accessRead {
					c.errorf("NOPERM this user has no permissions to run the 'save' command")
					return
				}
				save = sv.Save
			}
			if err := save(c.ctx); err != nil {
				c.engineError(err)
				return
			}
			c.w.ok()
		}},
		&cmdSpec{name: "bgsave", arity: -1, flags: flagNoTx, run: cmdBGSave},
		&cmdSpec{name: "lastsave", arity: 1, run: func(c *conn, _ [][]byte) {
			if sv := c.s.opts.Saver; sv != nil {
				// Before the first backup, the server's start, as Redis
				// answers before its first save.
				c.w.int(cmp.Or(sv.LastSave(), c.s.started.Unix()))
				return
			}
			c.w.int(c.s.lastSave.Load())
		}},
		&cmdSpec{name: "scan", arity: -2, flags: flagNoTx, run: cmdScan},
		&cmdSpec{name: "keys", arity: 2, flags: flagNoTx, run: func(c *conn, a [][]byte) {
			var out [][]byte
			err := c.scanAll(func(k []byte) {
				if globMatch(a[1], k) {
					out = append(out, k)
				}
			})
			if err == nil && c.extraKeys(func(k []byte, _ string) {
				if globMatch(a[1], k) {
					out = append(out, k)
				}
			}) {
				c.w.values(out)
			}
		}},
		&cmdSpec{name: "flushdb", arity: -1, flags: flagWrite | flagNoTx | flagOwnDB, run: cmdFlush},
		&cmdSpec{name: "flushall", arity: -1, flags: flagWrite | flagNoTx | flagOwnDB, run: cmdFlush},
	)
}

// expire is EXPIRE and its kin: a relative or absolute time in unit, and
// Redis 7's NX, XX, GT and LT options, checked in Redis's order.
func expire(c *conn, a [][]byte, unit time.Duration, abs bool) {
	var cond ts.ExpireCond
	for _, opt := range a[3:] {
		switch {
		case is(opt, "nx"):
			cond |= ts.ExpireIfNone
		case is(opt, "xx"):
			cond |= ts.ExpireIfSet
		case is(opt, "gt"):
			cond |= ts.ExpireIfLater
		case is(opt, "lt"):
			cond |= ts.ExpireIfEarlier
		default:
			c.errorf("ERR Unsupported option %s", opt)
			return
		}
	}
	switch {
	case cond&ts.ExpireIfNone != 0 && cond != ts.ExpireIfNone:
		c.errorf("ERR NX and XX, GT or LT options at the same time are not compatible")
		return
	case cond&(ts.ExpireIfLater|ts.ExpireIfEarlier) == ts.ExpireIfLater|ts.ExpireIfEarlier:
		c.errorf("ERR GT and LT options at the same time are not compatible")
		return
	}
	n, ok := c.intArg(a[2])
	if !ok {
		return
	}
	cmd := ts.Command{Kind: ts.KindExpire, Key: a[1], ExpireCond: cond}
	if !setExpiry(&cmd, n, unit, abs) {
		c.errorf("ERR invalid expire time in '%s' command", strings.ToLower(string(a[0])))
		return
	}
	if abs && !cmd.ExpireAt.After(time.Unix(0, 0)) {
		cmd.ExpireAt = time.Unix(0, 1)
	}
	r, ok := c.exec(cmd)
	if !ok {
		return
	}
	if r.Int == 0 {
		typ, ok := c.extraType(a[1])
		if !ok {
			return
		}
		if typ != "" {
			c.errorf("ERR keys of type %s cannot expire on this server", typ)
			return
		}
	}
	c.w.int(r.Int)
}

// cmdScan is SCAN cursor [MATCH pattern] [COUNT n] [TYPE type]: MATCH and
// TYPE filter the page the engine returns, as in Redis (a page may come
// back empty with a non-zero cursor).
func cmdScan(c *conn, a [][]byte) {
	cur, ok := parseCursor(a[1])
	if !ok {
		c.errorf("ERR invalid cursor")
		return
	}
	cmd := ts.Command{Kind: ts.KindScan, Cursor: cur}
	var match, typ []byte
	for i := 2; i < len(a); i += 2 {
		if i+1 >= len(a) {
			c.syntaxErr()
			return
		}
		switch {
		case is(a[i], "match"):
			match = a[i+1]
		case is(a[i], "count"):
			n, ok := c.intArg(a[i+1])
			if !ok {
				return
			}
			if n < 1 {
				c.syntaxErr()
				return
			}
			cmd.Count = int(n)
		case is(a[i], "type"):
			typ = a[i+1]
		default:
			c.syntaxErr()
			return
		}
	}
	r, ok := c.exec(cmd)
	if !ok {
		return
	}
	keys := r.Keys[:0]
	for _, k := range r.Keys {
		if match != nil && !globMatch(match, k) {
			continue
		}
		if typ != nil {
			tr, err := c.engine().Execute(c.ctx, ts.Command{Namespace: c.namespace, Tenant: c.tenant, Table: c.table, Kind: ts.KindType, Key: k})
			if err != nil || !is(typ, string(tr.Value)) {
				continue
			}
		}
		keys = append(keys, k)
	}
	// The Keyspace's keys, far fewer than the engine's, all come with
	// the first batch: SCAN promises each key at least once, not evenly.
	if cur == 0 && !c.extraKeys(func(k []byte, t string) {
		if (match == nil || globMatch(match, k)) && (typ == nil || is(typ, t)) {
			keys = append(keys, k)
		}
	}) {
		return
	}
	c.w.array(2)
	c.w.bulkString(strconv.FormatUint(r.Cursor, 10))
	c.w.values(keys)
}

// pttl is the engine's PTTL of key, -1 (no expiry) for a key of the
// connection's Keyspace; false after writing the error reply.
func (c *conn) pttl(key []byte) (ts.Response, bool) {
	r, ok := c.exec(ts.Command{Kind: ts.KindPTTL, Key: key})
	if ok && r.Int == -2 {
		typ, ok := c.extraType(key)
		if !ok {
			return r, false
		}
		if typ != "" {
			r.Int = -1
		}
	}
	return r, ok
}

// scanAll calls fn for every key of the table, writing the error reply
// if the scan fails.
func (c *conn) scanAll(fn func(k []byte)) error { return c.scanTable(c.table, fn) }

// scanTable is scanAll over table.
func (c *conn) scanTable(table string, fn func(k []byte)) error {
	var cur uint64
	for {
		r, err := c.engine().Execute(c.ctx, ts.Command{Namespace: c.namespace, Tenant: c.tenant, Table: table, Kind: ts.KindScan, Cursor: cur, Count: 1000})
		if err != nil {
			c.engineError(err)
			return err
		}
		for _, k := range r.Keys {
			fn(k)
		}
		if cur = r.Cursor; cur == 0 {
			return nil
		}
	}
}

// cmdFlush deletes every key of the selected database (FLUSHDB) or of
// every database (FLUSHALL); ASYNC and SYNC are accepted and both run now.
func cmdFlush(c *conn, a [][]byte) {
	if len(a) > 2 || len(a) == 2 && !is(a[1], "async") && !is(a[1], "sync") {
		c.syntaxErr()
		return
	}
	if !is(a[0], "flushall") {
		if c.flushTable(c.table) {
			c.w.ok()
		}
		return
	}
	for db := range c.s.opts.Databases {
		// A database never written has nothing to flush.
		if t := c.dbTable(db); (db == 0 || c.s.opts.Engine.HasTable(c.namespace, t)) && !c.flushTable(t) {
			return
		}
	}
	c.w.ok()
}

// flushTable deletes every key of table, writing the error reply if that
// fails.
func (c *conn) flushTable(table string) bool {
	var batch [][]byte
	flush := func() bool {
		if len(batch) == 0 {
			return true
		}
		_, err := c.engine().Execute(c.ctx, ts.Command{Namespace: c.namespace, Tenant: c.tenant, Table: table, Kind: ts.KindDeleteKeys, Keys: batch})
		batch = batch[:0]
		if err != nil {
			c.engineError(err)
			return false
		}
		return true
	}
	if ks := c.s.opts.Keyspace; ks != nil && table == c.dbTable(0) {
		if err := ks.Flush(c.ctx); err != nil {
			c.keyspaceErr(err)
			return false
		}
	}
	ok := true
	if err := c.scanTable(table, func(k []byte) {
		batch = append(batch, k)
		if len(batch) == 1000 && ok {
			ok = flush()
		}
	}); err != nil {
		return false
	}
	return ok && flush()
}

// globMatch is Redis's glob: * ? [abc] [^a-z] and \ escapes.
func globMatch(p, s []byte) bool {
	for len(p) > 0 {
		switch p[0] {
		case '*':
			for len(p) > 1 && p[1] == '*' {
				p = p[1:]
			}
			if len(p) == 1 {
				return true
			}
			for i := 0; i <= len(s); i++ {
				if globMatch(p[1:], s[i:]) {
					return true
				}
			}
			return false
		case '?':
			if len(s) == 0 {
				return false
			}
			s = s[1:]
			p = p[1:]
		case '[':
			if len(s) == 0 {
				return false
			}
			p = p[1:]
			not := len(p) > 0 && p[0] == '^'
			if not {
				p = p[1:]
			}
			match := false
			for len(p) > 0 && p[0] != ']' {
				switch {
				case p[0] == '\\' && len(p) > 1:
					match = match || p[1] == s[0]
					p = p[2:]
				case len(p) > 2 && p[1] == '-':
					lo, hi := p[0], p[2]
					if lo > hi {
						lo, hi = hi, lo
					}
					match = match || (s[0] >= lo && s[0] <= hi)
					p = p[3:]
				default:
					match = match || p[0] == s[0]
					p = p[1:]
				}
			}
			if len(p) > 0 {
				p = p[1:] // the ']'
			}
			if match == not {
				return false
			}
			s = s[1:]
		case '\\':
			if len(p) > 1 {
				p = p[1:]
			}
			fallthrough
		default:
			if len(s) == 0 || s[0] != p[0] {
				return false
			}
			s = s[1:]
			p = p[1:]
		}
	}
	return len(s) == 0
}

// save checkpoints every shard of the engine, as Redis's SAVE writes a
// snapshot: a restart then replays only the log after it.
func (s *Server) save(ctx context.Context) error {
	if err := s.opts.Engine.Checkpoint(ctx); err != nil {
		return err
	}
	s.lastSave.Store(time.Now().Unix())
	return nil
}

// cmdBGSave is BGSAVE [SCHEDULE]: SAVE on its own goroutine; a second one
// while one runs is refused, as Redis refuses it.
func cmdBGSave(c *conn, a [][]byte) {
	if len(a) > 2 || len(a) == 2 && !is(a[1], "schedule") {
		c.syntaxErr()
		return
	}
	if sv := c.s.opts.Saver; sv != nil {
		// A backup writes a copy of everything to disk: not a reader's to
		// start.
		if c.access == accessRead {
			c.errorf("NOPERM this user has no permissions to run the 'bgsave' command")
			return
		}
		if err := sv.BackgroundSave(); err != nil {
			c.errorf("ERR %s", err)
			return
		}
		c.w.simple("Background saving started")
		return
	}
	if !c.s.saving.CompareAndSwap(false, true) {
		c.errorf("ERR Background save already in progress")
		return
	}
	c.s.wg.Add(1) // Close waits for it
	go func() {
		defer c.s.wg.Done()
		defer c.s.saving.Store(false)
		if err := c.s.save(context.Background()); err != nil {
			c.s.opts.Logger.Error("resp: BGSAVE", "err", err)
		}
	}()
	c.w.simple("Background saving started")
}
