package resp

import (
	"context"
	"strings"
)

// Keyspace is keys another module keeps in database 0 beside the engine's
// (ferricstore's streams, whose verbs Options.Commands mounts), so that
// the key commands see them as Redis's do: DEL, UNLINK, EXISTS, TOUCH,
// TYPE, KEYS, SCAN, DBSIZE, FLUSHDB and FLUSHALL. Such keys never expire:
// TTL and PTTL answer -1 and EXPIRE and its kin refuse them. RENAME, COPY,
// MOVE and DUMP do not reach them. A name should live in one of the two
// only; the server does not check that a write of one kind finds no key
// of the other.
type Keyspace interface {
	// Type is the key's type as TYPE names it, "" when it holds no key.
	Type(ctx context.Context, key []byte) (string, error)
	// Delete removes key and reports whether it held it.
	Delete(ctx context.Context, key []byte) (bool, error)
	// Keys calls fn with every key it holds and its type until fn
	// returns false; fn must not call the Keyspace.
	Keys(ctx context.Context, fn func(key []byte, typ string) bool) error
	// Flush removes every key.
	Flush(ctx context.Context) error
}

// keyspace is the Keyspace the connection's database holds beside the
// engine's keys: Options.Keyspace in database 0, none elsewhere.
func (c *conn) keyspace() Keyspace {
	if c.db.Load() != 0 || c.tenant != "" {
		// A tenant's namespace holds the engine's keys alone.
		return nil
	}
	return c.s.opts.Keyspace
}

// keyspaceErr writes the error reply of a failed Keyspace call.
func (c *conn) keyspaceErr(err error) {
	msg := err.Error()
	if !strings.HasPrefix(msg, "ERR ") {
		msg = "ERR " + msg
	}
	c.errorf("%s", msg)
}

// extraDeleted is how many of keys the connection's Keyspace held and
// deleted (DEL, UNLINK); false after writing the error reply.
func (c *conn) extraDeleted(keys [][]byte) (int64, bool) {
	ks := c.keyspace()
	if ks == nil {
		return 0, true
	}
	var n int64
	for _, k := range keys {
		ok, err := ks.Delete(c.ctx, k)
		if err != nil {
			c.keyspaceErr(err)
			return 0, false
		}
		if ok {
			n++
			c.notify(notifyGeneric, "del", k)
		}
	}
	return n, true
}

// extraType is key's type in the connection's Keyspace, "" when it holds
// none; false after writing the error reply.
func (c *conn) extraType(key []byte) (string, bool) {
	ks := c.keyspace()
	if ks == nil {
		return "", true
	}
	typ, err := ks.Type(c.ctx, key)
	if err != nil {
		c.keyspaceErr(err)
		return "", false
	}
	return typ, true
}

// extraExisting is how many of keys (repeats counted, as EXISTS does) the
// connection's Keyspace holds; false after writing the error reply.
func (c *conn) extraExisting(keys [][]byte) (int64, bool) {
	if c.keyspace() == nil {
		return 0, true
	}
	var n int64
	for _, k := range keys {
		typ, ok := c.extraType(k)
		if !ok {
			return 0, false
		}
		if typ != "" {
			n++
		}
	}
	return n, true
}

// extraKeys calls fn with every key of the connection's Keyspace and its
// type; false after writing the error reply.
func (c *conn) extraKeys(fn func(key []byte, typ string)) bool {
	ks := c.keyspace()
	if ks == nil {
		return true
	}
	if err := ks.Keys(c.ctx, func(k []byte, typ string) bool { fn(k, typ); return true }); err != nil {
		c.keyspaceErr(err)
		return false
	}
	return true
}
