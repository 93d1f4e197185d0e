package resp

import (
	"math"
	"sync"
	"sync/atomic"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// Blocking pops (BLPOP, BRPOP, BLMOVE, BRPOPLPUSH, BLMPOP, BZPOPMIN,
// BZPOPMAX, BZMPOP) and their non-blocking kin (LMPOP, ZMPOP).
//
// A blocking command first tries at once. If nothing is there, its
// connection joins the server's queue of blocked clients and waits; after
// every write any connection of the server makes, and every
// blockedPollInterval (for writes through other surfaces), the server's
// unblocker tries the queued clients again in the order they came, each
// client's pop done by the unblocker itself, so that the client blocked
// longest is served first, as in Redis. A client leaves the queue when it
// is served, when its timeout passes, when it disconnects and when the
// server closes. Inside MULTI a blocking command does not block: it
// replies as its timeout had passed.

// blockedPollInterval bounds how long a blocked client misses a push that
// did not come through this server (the HTTP surface, another process).
const blockedPollInterval = 100 * time.Millisecond

// blockedClient is a connection waiting in a blocking command.
type blockedClient struct {
	id int64 // the connection's CLIENT ID
	mu sync.Mutex
	// try runs the command's pop; true when it found something and
	// replied. Called with mu held, by the unblocker.
	try    func() bool
	served bool
	gone   bool
	done   chan struct{}
	// unblocked is closed by CLIENT UNBLOCK; withError makes the command
	// reply UNBLOCKED instead of as its timeout had passed.
	unblocked chan struct{}
	withError bool
}

// unblock ends the wait of the blocked connection id (CLIENT UNBLOCK):
// false when it is not blocked.
func (b *blockers) unblock(id int64, withError bool) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, bc := range b.queue {
		bc.mu.Lock()
		ok := bc.id == id && !bc.served && !bc.gone
		if ok {
			bc.gone, bc.withError = true, withError
			close(bc.unblocked)
		}
		bc.mu.Unlock()
		if ok {
			return true
		}
	}
	return false
}

// blockers is a server's queue of blocked clients and its unblocker.
type blockers struct {
	mu    sync.Mutex
	queue []*blockedClient
	once  sync.Once
	kick  chan struct{}
	stop  chan struct{}
	count atomic.Int64 // len(queue), read without the lock by writers
}

func (b *blockers) start() {
	b.once.Do(func() {
		b.kick, b.stop = make(chan struct{}, 1), make(chan struct{})
		go b.loop()
	})
}

// wake asks the unblocker to try the blocked clients: a write may have
// given them something. A write costs one atomic load when none wait.
func (b *blockers) wake() {
	if b.count.Load() == 0 {
		return
	}
	select {
	case b.kick <- struct{}{}:
	default:
	}
}

// close ends the unblocker; the blocked clients end with their
// connections.
func (b *blockers) close() {
	b.once.Do(func() {}) // a server that never blocked starts nothing
	if b.stop != nil {
		close(b.stop)
	}
}

func (b *blockers) loop() {
	t := time.NewTicker(blockedPollInterval)
	defer t.Stop()
	for {
		select {
		case <-b.stop:
			return
		case <-b.kick:
		case <-t.C:
		}
		b.serve()
	}
}

// serve tries every queued client once, in order, and drops those served
// or gone.
func (b *blockers) serve() {
	b.mu.Lock()
	queue := append([]*blockedClient(nil), b.queue...)
	b.mu.Unlock()
	for _, bc := range queue {
		bc.mu.Lock()
		if !bc.gone && !bc.served && bc.try() {
			bc.served = true
			close(bc.done)
		}
		bc.mu.Unlock()
	}
	b.mu.Lock()
	kept := b.queue[:0]
	for _, bc := range b.queue {
		bc.mu.Lock()
		if !bc.gone && !bc.served {
			kept = append(kept, bc)
		}
		bc.mu.Unlock()
	}
	clear(b.queue[len(kept):])
	b.queue = kept
	b.count.Store(int64(len(kept)))
	b.mu.Unlock()
}

func (b *blockers) add(bc *blockedClient) {
	b.mu.Lock()
	b.queue = append(b.queue, bc)
	b.count.Store(int64(len(b.queue)))
	b.mu.Unlock()
}

// parseTimeout reads a blocking command's timeout in seconds (0: none), as
// Redis reads it.
func (c *conn) parseTimeout(b []byte) (time.Duration, bool) {
	f, err := parseFloat(b)
	switch {
	case err != nil || math.IsInf(f, 0):
		c.errorf("ERR timeout is not a float or out of range")
		return 0, false
	case f < 0:
		c.errorf("ERR timeout is negative")
		return 0, false
	case f*1e3 > float64(math.MaxInt64/int64(time.Millisecond)):
		c.errorf("ERR timeout is out of range")
		return 0, false
	}
	return time.Duration(f * float64(time.Second)), true
}

// block runs a blocking command: try replies and returns true when it
// found something; timedOut replies when the timeout passes first. The
// time spent waiting is not the command's (c.blockedFor), as in Redis.
func (c *conn) block(timeout time.Duration, try func() bool, timedOut func()) {
	if try() {
		return
	}
	if c.inExec {
		timedOut() // MULTI never blocks
		return
	}
	began := time.Now()
	defer func() { c.blockedFor += time.Since(began) }()
	bc := &blockedClient{id: c.id, try: try, done: make(chan struct{}), unblocked: make(chan struct{})}
	s := &c.s.blocked
	s.start()
	s.add(bc)
	s.wake() // a push between the try and the queue
	var expired <-chan time.Time
	if timeout > 0 {
		t := time.NewTimer(timeout)
		defer t.Stop()
		expired = t.C
	}
	gone := c.watchDisconnect()
	takeBack := c.lendOut()
	select {
	case <-bc.done:
	case <-bc.unblocked:
	case <-expired:
	case <-gone:
	case <-c.ctx.Done():
	case <-s.stop:
	}
	takeBack()
	c.stopWatch()
	bc.mu.Lock()
	served, withError := bc.served, bc.withError
	bc.gone = true
	bc.mu.Unlock()
	s.wake() // drop it from the queue soon
	switch {
	case served:
	case withError:
		c.errorf("UNBLOCKED client unblocked via CLIENT UNBLOCK")
	default:
		timedOut()
	}
}

// watchDisconnect reports, on the channel it returns, that the client
// closed its connection while its command blocks: a goroutine waits to
// read from it (a request pipelined after the blocking one stays
// buffered). stopWatch ends the wait.
func (c *conn) watchDisconnect() <-chan struct{} {
	gone := make(chan struct{})
	c.watchDone = make(chan struct{})
	go func() {
		defer close(c.watchDone)
		if _, err := c.r.br.Peek(1); err != nil && !isTimeout(err) {
			close(gone)
		}
	}()
	return gone
}

func (c *conn) stopWatch() {
	_ = c.nc.SetReadDeadline(time.Unix(1, 0))
	<-c.watchDone
	_ = c.nc.SetReadDeadline(time.Time{})
}

func isTimeout(err error) bool {
	t, ok := err.(interface{ Timeout() bool })
	return ok && t.Timeout()
}

// popFirst pops from the first of keys that has something, with kind
// (LPOP, RPOP, ZPOPMIN or ZPOPMAX; count 0: one, as the kind pops without
// a count), and hands it to reply; true once it replied, with that or with
// an error.
func (c *conn) popFirst(keys [][]byte, kind ts.Kind, count int, reply func(key []byte, r ts.Response)) bool {
	for _, k := range keys {
		r, ok := c.exec(ts.Command{Kind: kind, Key: k, Count: count, HasCount: count > 0})
		if !ok {
			return true
		}
		if r.Found || len(r.Values) > 0 {
			reply(k, r)
			return true
		}
	}
	return false
}

// popKind is the pop from one end: LPOP or RPOP, ZPOPMIN or ZPOPMAX.
func popKind(first bool, firstKind, lastKind ts.Kind) ts.Kind {
	if first {
		return firstKind
	}
	return lastKind
}

// keysThenTimeout serves a blocking command of the form key [key ...]
// timeout, try popping from keys and replying (true when it found
// something), nil on a timeout.
func keysThenTimeout(try func(c *conn, keys [][]byte) bool) func(c *conn, a [][]byte) {
	return func(c *conn, a [][]byte) {
		timeout, ok := c.parseTimeout(a[len(a)-1])
		if !ok {
			return
		}
		keys := a[1 : len(a)-1]
		c.block(timeout, func() bool { return try(c, keys) }, c.w.nullArray)
	}
}

// cmdBPop is BLPOP and BRPOP, replying key, value.
func cmdBPop(left bool) func(c *conn, a [][]byte) {
	return keysThenTimeout(func(c *conn, keys [][]byte) bool {
		return c.popFirst(keys, popKind(left, ts.KindLPop, ts.KindRPop), 0, func(k []byte, r ts.Response) {
			c.w.array(2)
			c.w.bulk(k)
			c.w.bulk(r.Value)
		})
	})
}

// cmdBLMove is BLMOVE source destination LEFT|RIGHT LEFT|RIGHT timeout, and
// BRPOPLPUSH source destination timeout.
func cmdBLMove(c *conn, a [][]byte) {
	from, to := false, true // BRPOPLPUSH
	if len(a) == 6 {
		var ok1, ok2 bool
		from, ok1 = side(a[3])
		to, ok2 = side(a[4])
		if !ok1 || !ok2 {
			c.syntaxErr()
			return
		}
	}
	timeout, ok := c.parseTimeout(a[len(a)-1])
	if !ok {
		return
	}
	c.block(timeout, func() bool {
		r, ok := c.exec(ts.Command{Kind: ts.KindLMove, Key: a[1], Dest: a[2], FromLeft: from, ToLeft: to})
		if ok && r.Found {
			c.w.bulk(r.Value)
		}
		return !ok || r.Found
	}, func() {
		// Redis replies a null array when the wait times out, a null
		// string when it does not wait (inside MULTI).
		if c.inExec {
			c.w.null()
		} else {
			c.w.nullArray()
		}
	})
}

// side reads LEFT or RIGHT.
func side(b []byte) (left, ok bool) {
	switch {
	case is(b, "left"):
		return true, true
	case is(b, "right"):
		return false, true
	}
	return false, false
}

// cmdBZPop is BZPOPMIN and BZPOPMAX, replying key, member, score.
func cmdBZPop(kind ts.Kind) func(c *conn, a [][]byte) {
	return keysThenTimeout(func(c *conn, keys [][]byte) bool {
		return c.popFirst(keys, kind, 0, func(k []byte, r ts.Response) {
			c.w.array(3)
			c.w.bulk(k)
			c.w.bulk(r.Values[0])
			c.w.double(r.Scores[0])
		})
	})
}

// mpopArgs reads LMPOP's and ZMPOP's numkeys key [key ...] WHERE [COUNT n]
// from a (a[0] is numkeys); where is LEFT|RIGHT or MIN|MAX.
func (c *conn) mpopArgs(a [][]byte, whereA, whereB string) (keys [][]byte, first bool, count int, ok bool) {
	n, err := parseInt(a[0])
	switch {
	case err != nil || n <= 0:
		c.errorf("ERR numkeys should be greater than 0")
		return nil, false, 0, false
	case n >= int64(len(a)-1): // the keys and then LEFT|RIGHT or MIN|MAX
		c.syntaxErr()
		return nil, false, 0, false
	}
	keys, rest := a[1:1+n], a[1+n:]
	switch {
	case is(rest[0], whereA):
		first = true
	case is(rest[0], whereB):
	default:
		c.syntaxErr()
		return nil, false, 0, false
	}
	count = 1
	rest = rest[1:]
	countSeen := false
	for len(rest) > 0 {
		if !is(rest[0], "count") || len(rest) < 2 || countSeen {
			c.syntaxErr()
			return nil, false, 0, false
		}
		v, err := parseInt(rest[1])
		if err != nil || v <= 0 {
			c.errorf("ERR count should be greater than 0")
			return nil, false, 0, false
		}
		count, countSeen, rest = int(v), true, rest[2:]
	}
	return keys, first, count, true
}

// mpop serves LMPOP and ZMPOP (numkeys key [key ...] WHERE [COUNT n])
// and, with a timeout first, BLMPOP and BZMPOP; where is LEFT|RIGHT or
// MIN|MAX, and try pops (first: LEFT or MIN) and replies, true when it
// found something.
func mpop(blocking bool, whereA, whereB string, try func(c *conn, keys [][]byte, first bool, count int) bool) func(c *conn, a [][]byte) {
	return func(c *conn, a [][]byte) {
		var timeout time.Duration
		args := a[1:]
		if blocking {
			args = a[2:]
		}
		keys, first, count, ok := c.mpopArgs(args, whereA, whereB)
		if !ok {
			return
		}
		// The timeout is read last, as Redis reads it.
		if blocking {
			if timeout, ok = c.parseTimeout(a[1]); !ok {
				return
			}
		}
		pop := func() bool { return try(c, keys, first, count) }
		if !blocking {
			if !pop() {
				c.w.nullArray()
			}
			return
		}
		c.block(timeout, pop, c.w.nullArray)
	}
}

// lmpopTry replies [key, [values]] from the first non-empty list.
func lmpopTry(c *conn, keys [][]byte, left bool, count int) bool {
	return c.popFirst(keys, popKind(left, ts.KindLPop, ts.KindRPop), count, func(k []byte, r ts.Response) {
		c.w.array(2)
		c.w.bulk(k)
		c.w.values(r.Values)
	})
}

// zmpopTry replies [key, [[member, score] ...]] from the first non-empty
// sorted set.
func zmpopTry(c *conn, keys [][]byte, lowest bool, count int) bool {
	return c.popFirst(keys, popKind(lowest, ts.KindZPopMin, ts.KindZPopMax), count, func(k []byte, r ts.Response) {
		c.w.array(2)
		c.w.bulk(k)
		c.w.array(len(r.Values))
		for i, v := range r.Values {
			c.w.array(2)
			c.w.bulk(v)
			c.w.double(r.Scores[i])
		}
	})
}

// cmdWait is WAIT numreplicas timeout: the server has no replicas, so
// none acknowledges; as a Redis without replicas, it answers 0 at once
// when none is asked for, else once the timeout (ms; 0: none) passes.
func cmdWait(c *conn, a [][]byte) {
	n, ok := c.intArg(a[1])
	if !ok {
		return
	}
	ms, ok := c.intArg(a[2])
	switch {
	case !ok:
		return
	case ms < 0:
		c.errorf("ERR timeout is negative")
		return
	case ms > math.MaxInt64/int64(time.Millisecond):
		// Longer than a time.Duration holds: as Redis, a wait that
		// never ends by itself.
		ms = 0
	}
	if n <= 0 {
		c.w.int(0)
		return
	}
	c.block(time.Duration(ms)*time.Millisecond, func() bool { return false }, func() { c.w.int(0) })
}

func registerBlocking() {
	register(
		&cmdSpec{name: "wait", arity: 3, run: cmdWait},
		&cmdSpec{name: "blpop", arity: -3, flags: flagWrite, first: 1, last: -2, step: 1, run: cmdBPop(true)},
		&cmdSpec{name: "brpop", arity: -3, flags: flagWrite, first: 1, last: -2, step: 1, run: cmdBPop(false)},
		&cmdSpec{name: "blmove", arity: 6, flags: flagWrite, first: 1, last: 2, step: 1, run: cmdBLMove},
		&cmdSpec{name: "brpoplpush", arity: 4, flags: flagWrite, first: 1, last: 2, step: 1, run: cmdBLMove},
		&cmdSpec{name: "bzpopmin", arity: -3, flags: flagWrite, first: 1, last: -2, step: 1, run: cmdBZPop(ts.KindZPopMin)},
		&cmdSpec{name: "bzpopmax", arity: -3, flags: flagWrite, first: 1, last: -2, step: 1, run: cmdBZPop(ts.KindZPopMax)},
		&cmdSpec{name: "lmpop", arity: -4, flags: flagWrite, keys: numKeys(1, false), run: mpop(false, "left", "right", lmpopTry)},
		&cmdSpec{name: "blmpop", arity: -5, flags: flagWrite, keys: numKeys(2, false), run: mpop(true, "left", "right", lmpopTry)},
		&cmdSpec{name: "zmpop", arity: -4, flags: flagWrite, keys: numKeys(1, false), run: mpop(false, "min", "max", zmpopTry)},
		&cmdSpec{name: "bzmpop", arity: -5, flags: flagWrite, keys: numKeys(2, false), run: mpop(true, "min", "max", zmpopTry)},
	)
}
