package resp

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"
)

// Command is a verb a front end adds to a Server (Options.Commands), so
// that another module's commands (streams, pub/sub, flows) are served on
// the same listener as the engine's. It goes through what every built-in
// verb goes through: arity and AUTH checks, read-only tokens, MULTI
// queueing, COMMAND, INFO commandstats, the slowlog and the latency
// monitor.
type Command struct {
	// Name is the verb, matched without regard to case. It may not be a
	// built-in verb the server serves (without an engine, only the
	// connection's and server's own are served, so DBSIZE, say, may be
	// added).
	Name string
	// Arity is Redis's: positive for exactly that many arguments, the
	// name included, negative for at least that many.
	Arity int
	// Write marks a verb that changes data: refused to read-only tokens.
	Write bool
	// Connection marks a verb that acts on the connection itself (the
	// pub/sub verbs): refused inside MULTI and to scripts.
	Connection bool
	// FirstKey, LastKey (negative: from the end) and KeyStep say where
	// its keys are, as COMMAND reports them; FirstKey 0 when it has none.
	FirstKey, LastKey, KeyStep int
	// Group and Summary are what COMMAND DOCS says of it.
	Group, Summary string
	// Run serves one call. It writes exactly one reply (which may be an
	// error) through the request's Reply.
	Run func(r *Request)
	// RunMany, when set, serves a run of the verb's calls that a client
	// pipelined (consecutive, already buffered, outside MULTI), writing
	// each call's reply in order: the run's writes can then share one
	// fsync, as Redis's appendfsync always shares one between the
	// commands of an event-loop pass. Default: each call runs alone.
	RunMany func(rs []*Request)
}

// Request is one call of an added Command.
type Request struct {
	c *conn
	// Args are the call's arguments, the name first. They are valid until
	// Run returns.
	Args [][]byte
}

// Context is the connection's context, cancelled when it closes.
func (r *Request) Context() context.Context { return r.c.ctx }

// ClientID is the connection's id, as CLIENT ID reports it.
func (r *Request) ClientID() int64 { return r.c.id }

// Protocol is the connection's protocol version, 2 or 3 (HELLO).
func (r *Request) Protocol() int {
	if r.c.w.resp3 {
		return 3
	}
	return 2
}

// MayBlock reports whether the call may wait (a blocking read): not
// inside MULTI/EXEC or a script, where Redis answers at once as if the
// wait had timed out.
func (r *Request) MayBlock() bool { return !r.c.inExec }

// Block runs wait, a blocking call's wait, as the built-in blocking verbs
// wait: with a context that ends when the client disconnects or the
// server closes, and with the connection's pushes written meanwhile (a
// RESP3 subscriber blocked in a read still gets its messages). The time
// it takes is not the call's in the command statistics.
func (r *Request) Block(wait func(ctx context.Context)) {
	c := r.c
	began := time.Now()
	defer func() { c.blockedFor += time.Since(began) }()
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	gone := c.watchDisconnect()
	watched := make(chan struct{})
	go func() {
		select {
		case <-gone:
			cancel()
		case <-watched:
		}
	}()
	takeBack := c.lendOut()
	wait(ctx)
	takeBack()
	close(watched)
	c.stopWatch()
}

// Reply is the writer of the call's reply: the one the built-in verbs
// use, in the connection's protocol.
func (r *Request) Reply() Reply { return Reply{c: r.c} }

// Reply writes replies. Aggregates are written as a header and then their
// elements, each one a reply.
type Reply struct{ c *conn }

// OK writes +OK.
func (w Reply) OK() { w.c.w.ok() }

// Simple writes a simple string (no CR or LF in s).
func (w Reply) Simple(s string) { w.c.w.simple(s) }

// Error writes an error reply; msg starts with its code ("ERR", "WRONGTYPE",
// ...) as Redis's do. It counts in INFO errorstats.
func (w Reply) Error(msg string) { w.c.errorf("%s", msg) }

// Int writes an integer.
func (w Reply) Int(n int64) { w.c.w.int(n) }

// Bulk writes a bulk string.
func (w Reply) Bulk(b []byte) { w.c.w.bulk(b) }

// BulkString writes s as a bulk string, without converting it first.
func (w Reply) BulkString(s string) { w.c.w.bulkString(s) }

// Null writes the null reply (RESP2's null bulk string).
func (w Reply) Null() { w.c.w.null() }

// NullArray writes RESP2's null array (RESP3's null).
func (w Reply) NullArray() { w.c.w.nullArray() }

// Double writes a double (a bulk string in RESP2).
func (w Reply) Double(f float64) { w.c.w.double(f) }

// Array writes the header of an array of n elements.
func (w Reply) Array(n int) { w.c.w.array(n) }

// Map writes the header of a map of n pairs (an array of 2n in RESP2).
func (w Reply) Map(n int) { w.c.w.mapHeader(n) }

// Set writes the header of a set of n elements (an array in RESP2).
func (w Reply) Set(n int) { w.c.w.setHeader(n) }

// commandTable is a server's commands: the built-in ones, and the ones
// Options.Commands adds after them (their ids follow the built-ins').
// list holds every built-in, served or not, so that ids index it.
type commandTable struct {
	byName map[string]*cmdSpec
	list   []*cmdSpec
	// many are the specs with a runMany, which a request's name is
	// compared with before the table is looked up (manySpec).
	many []*cmdSpec
}

// engineFree are the built-in verbs a server without an engine serves:
// the connection's and the server's own, which read and write no key.
// SELECT addresses database 0 alone there; MULTI/EXEC queue and run the
// added commands in order (see Options.Engine). WATCH, DBSIZE, the key
// commands, SAVE, FLUSHALL and scripts need the engine's keys.
var engineFree = map[string]bool{"ping": true, "echo": true, "auth": true, "hello": true, "quit": true, "reset": true,
	"client": true, "command": true, "config": true, "info": true, "time": true, "slowlog": true, "latency": true,
	"select": true, "multi": true, "exec": true, "discard": true}

// builtins is the table of a server that adds no command.
func builtins() commandTable { return commandTable{byName: commands, list: commandList} }

// extend returns the built-in table, only its engineFree verbs when
// withEngine is false, with cmds added.
func extend(cmds []Command, withEngine bool) (commandTable, error) {
	t := builtins()
	if len(cmds) == 0 && withEngine {
		return t, nil
	}
	t = commandTable{byName: maps.Clone(commands), list: slices.Clone(commandList)}
	if !withEngine {
		maps.DeleteFunc(t.byName, func(name string, _ *cmdSpec) bool { return !engineFree[name] })
	}
	for _, c := range cmds {
		name := strings.ToLower(c.Name)
		switch {
		case name == "" || strings.ContainsAny(name, " \r\n"):
			return t, fmt.Errorf("%w: command name %q", ErrInvalidOptions, c.Name)
		case c.Arity == 0 || c.Run == nil:
			return t, fmt.Errorf("%w: command %q needs an arity and a Run", ErrInvalidOptions, c.Name)
		case t.byName[name] != nil:
			return t, fmt.Errorf("%w: command %q is served already", ErrInvalidOptions, c.Name)
		}
		run := c.Run
		spec := &cmdSpec{name: name, arity: c.Arity, first: c.FirstKey, last: c.LastKey, step: c.KeyStep,
			group: c.Group, summary: c.Summary, id: len(t.list),
			run: func(cn *conn, args [][]byte) { run(&Request{c: cn, Args: args}) }}
		if c.Write {
			spec.flags |= flagWrite
		}
		if c.Connection {
			spec.flags |= flagNoTx | flagNoScript
		}
		if many := c.RunMany; many != nil {
			spec.runMany = func(cn *conn, calls [][][]byte) {
				rs := make([]*Request, len(calls))
				for i, args := range calls {
					rs[i] = &Request{c: cn, Args: args}
				}
				many(rs)
			}
			t.many = append(t.many, spec)
		}
		t.byName[name] = spec
		t.list = append(t.list, spec)
	}
	return t, nil
}

// names are the table's command names in order.
func (t commandTable) names() []string { return slices.Sorted(maps.Keys(t.byName)) }

// Notifying reports whether keyspace notifications are on
// (notify-keyspace-events names a class and K or E).
func (r *Request) Notifying() bool { return r.c.s.notifying() }

// NotifyKeyspace publishes a keyspace notification of the call's
// database: event on key, in class, Redis's class character ('t' for
// streams, 'g' generic, ...), if that class is on.
func (r *Request) NotifyKeyspace(class byte, event string, key []byte) {
	for _, c := range notifyClasses {
		if c.c == class {
			r.c.notify(c.flag, event, key)
			return
		}
	}
}
