package resp

import (
	"cmp"
	"context"
	"strconv"
	"strings"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// Keyspace notification classes, the characters of Redis's
// notify-keyspace-events.
const (
	notifyKeyspace uint32 = 1 << iota // K: __keyspace@<db>__:<key> <event>
	notifyKeyevent                    // E: __keyevent@<db>__:<event> <key>
	notifyGeneric                     // g: del, expire, rename_*, ...
	notifyString                      // $
	notifyList                        // l
	notifySet                         // s
	notifyHash                        // h
	notifyZSet                        // z
	notifyExpired                     // x
	notifyEvicted                     // e
	notifyStream                      // t
	notifyModule                      // d
	notifyNew                         // n
	notifyKeyMiss                     // m

	// notifyAll is A: every class but n and m, as in Redis.
	notifyAll = notifyGeneric | notifyString | notifyList | notifySet | notifyHash | notifyZSet |
		notifyExpired | notifyEvicted | notifyStream | notifyModule
)

// notifyClasses are the class characters in the order CONFIG GET lists
// them.
var notifyClasses = []struct {
	c    byte
	flag uint32
}{
	{'g', notifyGeneric}, {'$', notifyString}, {'l', notifyList}, {'s', notifySet}, {'h', notifyHash},
	{'z', notifyZSet}, {'x', notifyExpired}, {'e', notifyEvicted}, {'t', notifyStream}, {'d', notifyModule},
	{'n', notifyNew},
}

// errNotifyClass is Redis's error for a character it does not know.
const errNotifyClass configRefusal = "Invalid event class character. Use 'Ag$lshzxeKEtmdn'."

// parseNotify parses a notify-keyspace-events value.
func parseNotify(s string) (uint32, error) {
	var f uint32
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case 'A':
			f |= notifyAll
		case 'K':
			f |= notifyKeyspace
		case 'E':
			f |= notifyKeyevent
		case 'm':
			f |= notifyKeyMiss
		default:
			j := 0
			for j < len(notifyClasses) && notifyClasses[j].c != c {
				j++
			}
			if j == len(notifyClasses) {
				return 0, errNotifyClass
			}
			f |= notifyClasses[j].flag
		}
	}
	return f, nil
}

// formatNotify is CONFIG GET's form of f: "A" for all the classes A
// names (and then, as Redis 7 writes it, no "n"), K, E and m last.
func formatNotify(f uint32) string {
	var b strings.Builder
	if f&notifyAll == notifyAll {
		b.WriteByte('A')
	} else {
		for _, c := range notifyClasses {
			if f&c.flag != 0 {
				b.WriteByte(c.c)
			}
		}
	}
	for _, c := range []struct {
		c    byte
		flag uint32
	}{{'K', notifyKeyspace}, {'E', notifyKeyevent}, {'m', notifyKeyMiss}} {
		if f&c.flag != 0 {
			b.WriteByte(c.c)
		}
	}
	return b.String()
}

// notifying reports whether any notification may be published, so that
// a write checks one atomic before doing anything for them.
func (s *Server) notifying() bool {
	f := s.notify.Load()
	return f&(notifyKeyspace|notifyKeyevent) != 0 && f&^(notifyKeyspace|notifyKeyevent) != 0 && s.opts.Publish != nil
}

// publishEvent publishes event on key of database db if class is on.
func (s *Server) publishEvent(db int, class uint32, event string, key []byte) {
	f := s.notify.Load()
	if f&class == 0 || s.opts.Publish == nil {
		return
	}
	d := strconv.Itoa(db)
	if f&notifyKeyspace != 0 {
		s.opts.Publish("__keyspace@"+d+"__:"+string(key), []byte(event))
	}
	if f&notifyKeyevent != 0 {
		s.opts.Publish("__keyevent@"+d+"__:"+event, key)
	}
}

// notify publishes event on key of the connection's database.
func (c *conn) notify(class uint32, event string, key []byte) {
	c.s.publishEvent(int(c.db.Load()), class, event, key)
}

// writeEvents publishes one applied write's keyspace events on its
// database: the engine calls it (an Engine.OnWrite hook) for writes from
// any surface, with view running reads where the write ran.
type writeEvents struct {
	s    *Server
	db   int
	cmd  *ts.Command
	ctx  context.Context
	view ts.WriteView
}

func (e writeEvents) notify(class uint32, event string, key []byte) {
	e.s.publishEvent(e.db, class, event, key)
}

// notifyGone publishes del for key when a command that removes elements
// left it empty, and so removed it.
func (e writeEvents) notifyGone(key []byte) {
	r, err := e.view.Execute(e.ctx, ts.Command{Namespace: e.cmd.Namespace, Table: e.cmd.Table, Kind: ts.KindExistsKeys, Keys: [][]byte{key}})
	if err == nil && r.Int == 0 {
		e.notify(notifyGeneric, "del", key)
	}
}

// notifyWrite publishes the events of a write the engine has applied, by
// its kind, as Redis's commands do; r is its response.
func (e writeEvents) write(r ts.Response) {
	cmd := e.cmd
	key := cmd.Key
	switch cmd.Kind {
	case ts.KindSet:
		if r.Applied {
			e.notify(notifyString, "set", key)
			e.notifyExpiry(key)
		}
	case ts.KindMSet:
		for i := 0; i < len(cmd.Keys); i++ {
			e.notify(notifyString, "set", cmd.Keys[i])
		}
	case ts.KindMSetNX:
		if r.Int == 1 {
			for i := 0; i < len(cmd.Keys); i++ {
				e.notify(notifyString, "set", cmd.Keys[i])
			}
		}
	case ts.KindGetDel:
		if r.Found {
			e.notify(notifyGeneric, "del", key)
		}
	case ts.KindGetEx:
		if r.Found {
			e.notifyExpiry(key)
		}
	case ts.KindIncrBy:
		e.notify(notifyString, "incrby", key)
	case ts.KindIncrByFloat:
		e.notify(notifyString, "incrbyfloat", key)
	case ts.KindAppend:
		e.notify(notifyString, "append", key)
	case ts.KindSetRange:
		if len(cmd.Value) > 0 {
			e.notify(notifyString, "setrange", key)
		}
	case ts.KindSetBit:
		e.notify(notifyString, "setbit", key)
	case ts.KindBitOp:
		e.notify(notifyString, "set", cmd.Dest)
	case ts.KindPFAdd, ts.KindPFMerge:
		if r.Int == 1 || cmd.Kind == ts.KindPFMerge {
			e.notify(notifyString, "pfadd", cmd.Dest)
		}
	case ts.KindDelete:
		// Also each key a KindDeleteKeys deleted (WriteHook).
		if r.Int > 0 {
			e.notify(notifyGeneric, "del", key)
		}
	case ts.KindExpire:
		if r.Int == 1 {
			// A time not in the future deletes the key.
			e.notify(notifyGeneric, pick(cmd.TTL > 0 || cmd.ExpireAt.After(time.Now()), "expire", "del"), key)
		}
	case ts.KindPersist:
		if r.Int == 1 {
			e.notify(notifyGeneric, "persist", key)
		}
	case ts.KindRename:
		if cmd.Cond != ts.IfAbsent || r.Applied {
			e.notify(notifyGeneric, "rename_from", key)
			e.notify(notifyGeneric, "rename_to", cmd.Dest)
		}
	case ts.KindCopy:
		if r.Int == 1 {
			e.notify(notifyGeneric, "copy_to", cmd.Dest)
		}
	case ts.KindLPush, ts.KindRPush:
		if r.Int > 0 {
			e.notify(notifyList, pick(cmd.Kind == ts.KindLPush, "lpush", "rpush"), key)
		}
	case ts.KindLPop, ts.KindRPop:
		if r.Found || len(r.Values) > 0 {
			e.notify(notifyList, pick(cmd.Kind == ts.KindLPop, "lpop", "rpop"), key)
			e.notifyGone(key)
		}
	case ts.KindLInsert:
		if r.Int > 0 {
			e.notify(notifyList, "linsert", key)
		}
	case ts.KindLSet:
		e.notify(notifyList, "lset", key)
	case ts.KindLTrim:
		e.notify(notifyList, "ltrim", key)
		e.notifyGone(key)
	case ts.KindLRem:
		if r.Int > 0 {
			e.notify(notifyList, "lrem", key)
			e.notifyGone(key)
		}
	case ts.KindLMove:
		if r.Found {
			// Redis publishes the push before the pop.
			e.notify(notifyList, pick(cmd.ToLeft, "lpush", "rpush"), cmd.Dest)
			e.notify(notifyList, pick(cmd.FromLeft, "lpop", "rpop"), key)
			e.notifyGone(key)
		}
	case ts.KindHSet:
		e.notify(notifyHash, "hset", key)
	case ts.KindHSetNX:
		if r.Int == 1 {
			e.notify(notifyHash, "hset", key)
		}
	case ts.KindHIncrBy:
		e.notify(notifyHash, "hincrby", key)
	case ts.KindHIncrByFloat:
		e.notify(notifyHash, "hincrbyfloat", key)
	case ts.KindHDel:
		if r.Int > 0 {
			e.notify(notifyHash, "hdel", key)
			e.notifyGone(key)
		}
	case ts.KindSAdd:
		if r.Int > 0 {
			e.notify(notifySet, "sadd", key)
		}
	case ts.KindSRem:
		if r.Int > 0 {
			e.notify(notifySet, "srem", key)
			e.notifyGone(key)
		}
	case ts.KindSPop:
		if r.Found || len(r.Values) > 0 {
			e.notify(notifySet, "spop", key)
			e.notifyGone(key)
		}
	case ts.KindSMove:
		if r.Int == 1 {
			e.notify(notifySet, "srem", key)
			e.notifyGone(key)
			e.notify(notifySet, "sadd", cmd.Dest)
		}
	case ts.KindSInterStore, ts.KindSUnionStore, ts.KindSDiffStore,
		ts.KindZInterStore, ts.KindZUnionStore, ts.KindZDiffStore, ts.KindZRangeStore:
		e.notifyStore(r)
	case ts.KindZAdd:
		if cmd.ZAdd.Incr {
			if r.Found {
				e.notify(notifyZSet, "zincr", key)
			}
		} else if r.Int > 0 || r.Applied {
			e.notify(notifyZSet, "zadd", key)
		}
	case ts.KindZIncrBy:
		e.notify(notifyZSet, "zincr", key)
	case ts.KindZRem:
		if r.Int > 0 {
			e.notify(notifyZSet, "zrem", key)
			e.notifyGone(key)
		}
	case ts.KindZRemRange:
		if r.Int > 0 {
			e.notify(notifyZSet, [...]string{ts.ByRank: "zremrangebyrank", ts.ByScore: "zremrangebyscore", ts.ByLex: "zremrangebylex"}[cmd.Range.By], key)
			e.notifyGone(key)
		}
	case ts.KindZPopMin, ts.KindZPopMax:
		if len(r.Values) > 0 {
			e.notify(notifyZSet, pick(cmd.Kind == ts.KindZPopMin, "zpopmin", "zpopmax"), key)
			e.notifyGone(key)
		}
	}
}

// pick is a when cond holds, else b.
func pick(cond bool, a, b string) string {
	if cond {
		return a
	}
	return b
}

// notifyExpiry publishes what a write's expiry did: expire for a time in
// the future, del for one already past (the key is gone), persist for a
// TTL removed (GETEX PERSIST).
func (e writeEvents) notifyExpiry(key []byte) {
	cmd := e.cmd
	switch {
	case cmd.Persist:
		e.notify(notifyGeneric, "persist", key)
	case cmd.TTL > 0:
		e.notify(notifyGeneric, "expire", key)
	case !cmd.ExpireAt.IsZero():
		if cmd.ExpireAt.After(time.Now()) {
			e.notify(notifyGeneric, "expire", key)
		} else {
			e.notify(notifyGeneric, "del", key)
		}
	}
}

// storeEvents are the events of the *STORE commands, by kind.
var storeEvents = map[ts.Kind]struct {
	class uint32
	event string
}{
	ts.KindSInterStore: {notifySet, "sinterstore"}, ts.KindSUnionStore: {notifySet, "sunionstore"},
	ts.KindSDiffStore: {notifySet, "sdiffstore"}, ts.KindZInterStore: {notifyZSet, "zinterstore"},
	ts.KindZUnionStore: {notifyZSet, "zunionstore"}, ts.KindZDiffStore: {notifyZSet, "zdiffstore"},
	ts.KindZRangeStore: {notifyZSet, "zrangestore"},
}

// notifyStore publishes a *STORE's event on its destination, or del when
// the result was empty (and the destination is gone).
func (e writeEvents) notifyStore(r ts.Response) {
	if r.Int > 0 {
		ev := storeEvents[e.cmd.Kind]
		e.notify(ev.class, ev.event, e.cmd.Dest)
		return
	}
	e.notify(notifyGeneric, "del", e.cmd.Dest)
}

// expiredEvents publishes expired for the keys the engine's expiry sweep
// deleted from a table that is one of the server's databases.
func (s *Server) expiredEvents(namespace, table string, keys [][]byte) {
	if s.notify.Load()&notifyExpired == 0 {
		return
	}
	if db, ok := s.dbOf(namespace, table); ok {
		for _, k := range keys {
			s.publishEvent(db, notifyExpired, "expired", k)
		}
	}
}

// wroteEvents is the server's Engine.OnWrite hook.
func (s *Server) wroteEvents(ctx context.Context, c *ts.Command, r ts.Response, view ts.WriteView) {
	if !s.notifying() {
		return
	}
	if db, ok := s.dbOf(c.Namespace, c.Table); ok {
		writeEvents{s: s, db: db, cmd: c, ctx: ctx, view: view}.write(r)
	}
}

// dbOf is the database whose table is namespace/table, false for a table
// that is none of the server's databases.
func (s *Server) dbOf(namespace, table string) (int, bool) {
	if cmp.Or(namespace, ts.DefaultNamespace) != cmp.Or(s.opts.Namespace, ts.DefaultNamespace) {
		return 0, false
	}
	for db := range s.opts.Databases {
		if cmp.Or(ts.DatabaseTable(s.opts.Table, db), ts.DefaultTable) == cmp.Or(table, ts.DefaultTable) {
			return db, true
		}
	}
	return 0, false
}
