package resp

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Pushes: frames another goroutine sends a connection (pub/sub messages)
// while it waits for its next request. An added command turns them on
// (Request.Push); from then on the connection holds outMu while it serves
// a request and flushes its replies, and a pusher goroutine holds it while
// it writes queued frames, so that frames and replies never interleave
// mid-frame. At each flush the queued frames go first: a frame queued
// while a command ran (a message the command published to the connection
// itself) precedes the command's reply, as in Redis.

// PushLimits bound the bytes pushed to a connection and not yet written
// to it (queued, or on their way to a client that does not read), as
// Redis's client-output-buffer-limit pubsub: at or past Hard bytes, or at
// or past Soft bytes for more than SoftFor without a break, the
// connection is closed (without an error frame); other connections are
// not slowed. The bounds are checked as a frame is queued and, as Redis's
// clientsCron does, about once a second for every connection with
// pushes, so that one that stays past Soft with nothing more queued is
// closed too. Zero disables a bound. CONFIG SET client-output-buffer-limit
// changes them while the server runs, for every connection.
type PushLimits struct {
	Hard, Soft int64
	SoftFor    time.Duration
}

// DefaultPushLimits are Redis 7's "pubsub 32mb 8mb 60".
var DefaultPushLimits = PushLimits{Hard: 32 << 20, Soft: 8 << 20, SoftFor: 60 * time.Second}

// pushSweepEvery is how often every connection with pushes has its
// bounds checked: Redis's clientsCron visits each client once a second.
const pushSweepEvery = time.Second

// pushChunk is the most the writer of queued frames writes at once, so
// that the bytes not yet written fall as the client reads them.
const pushChunk = 64 << 10

// pushState is a connection's push queue.
type pushState struct {
	// outMu orders socket writes between the connection and its pusher.
	outMu sync.Mutex
	// holdingOut is set while the connection's own goroutine holds outMu
	// for the request it serves.
	holdingOut bool
	mu         sync.Mutex
	// on is set once pushes are on (read on every request, so atomic).
	on    atomic.Bool
	queue []byte
	// spare is the queue last written, kept to be the next (writeQueued).
	spare []byte
	// wakeBy is the connection that will wake the pusher at the end of
	// its run of calls (enqueueBy), nil when none will.
	wakeBy *conn
	// unsent is the bytes queued and not yet written to the socket: the
	// queue, and what was taken from it and is being written.
	unsent    int64
	overSince time.Time // when unsent was first seen past the soft limit
	dropped   bool
	wake      chan struct{}
	// subscriptions is the connection's count (SetSubscriptions): in
	// RESP2 a connection with subscriptions runs only the pub/sub verbs.
	subscriptions int
	onClose       []func()
}

// overLimits reports whether the bytes not yet written are past lim, as
// Redis's checkClientOutputBufferLimits decides: at or past Hard, or at
// or past Soft at a check more than SoftFor after the first check that
// found them there, with no check finding them under it in between. now
// is read only when they are past Soft. The caller holds p.mu.
//
// Redis counts the time on its once-a-second clock, so a soft-seconds of
// 0 closes a client at the first check in a later second; here the
// monotonic clock counts it, and SoftFor 0 closes it at the next check.
func (p *pushState) overLimits(lim PushLimits, now func() time.Time) bool {
	n := p.unsent
	if lim.Soft > 0 && n >= lim.Soft {
		t := now()
		if p.overSince.IsZero() {
			p.overSince = t
		} else if t.Sub(p.overSince) > lim.SoftFor {
			return true
		}
	} else {
		p.overSince = time.Time{}
	}
	return lim.Hard > 0 && n >= lim.Hard
}

// enablePush turns pushes on, from the connection's own goroutine: it
// takes outMu for the rest of the request and starts the pusher.
func (c *conn) enablePush() {
	p := &c.push
	p.mu.Lock()
	on := p.on.Load()
	if !on {
		p.wake = make(chan struct{}, 1)
		p.on.Store(true)
	}
	p.mu.Unlock()
	if on {
		return
	}
	p.outMu.Lock()
	p.holdingOut = true
	go c.pusher()
}

// enqueue queues frame; false once the connection was dropped for its
// queue's size.
func (c *conn) enqueue(frame []byte) bool { return c.enqueueBy(frame, nil) }

// enqueueBy is enqueue from a call of connection by (nil: none), run on
// by's goroutine: the pusher is woken when by's run of calls of one verb
// ends (releaseWakes) rather than now, so that a pipeline of PUBLISHes
// reaches each subscriber in one write, as Redis writes an event loop
// pass's output together.
func (c *conn) enqueueBy(frame []byte, by *conn) bool {
	p := &c.push
	lim := c.s.pushLimits()
	p.mu.Lock()
	if p.dropped {
		p.mu.Unlock()
		return false
	}
	p.queue = append(p.queue, frame...)
	p.unsent += int64(len(frame))
	if p.overLimits(lim, time.Now) {
		c.dropPush()
		return false
	}
	if by != nil {
		// One waker suffices: a frame queued after another
		// connection took the wake goes out with that one's.
		first := p.wakeBy == nil
		if first {
			p.wakeBy = by
		}
		p.mu.Unlock()
		if first {
			by.wakes = append(by.wakes, c)
		}
		return true
	}
	p.mu.Unlock()
	c.wakePusher()
	return true
}

// wakePusher has the pusher write the queue.
func (c *conn) wakePusher() {
	select {
	case c.push.wake <- struct{}{}:
	default:
	}
}

// maxHeldCalls bounds a run of calls whose pushes wait for its end, for a
// client that streams PUBLISHes without ever waiting for the replies.
const maxHeldCalls = 128

// noteCall starts a call of spec: the pushes of the calls before it
// waited for the end of their run of calls of one verb (a pipeline of
// PUBLISHes), which a call of another verb ends, as does the
// maxHeldCalls-th call: never across a call that may block.
func (c *conn) noteCall(spec *cmdSpec) {
	if len(c.wakes) > 0 && (spec != c.heldSpec || c.heldCalls >= maxHeldCalls) {
		c.releaseWakes()
	}
	if spec != c.heldSpec {
		c.heldSpec, c.heldCalls = spec, 0
	}
	c.heldCalls++
}

// releaseWakes wakes the pushers of the connections the calls of this
// one queued frames for.
func (c *conn) releaseWakes() {
	for _, s := range c.wakes {
		p := &s.push
		p.mu.Lock()
		if p.wakeBy == c {
			p.wakeBy = nil
		}
		p.mu.Unlock()
		s.wakePusher()
	}
	clear(c.wakes)
	c.wakes = c.wakes[:0]
	c.heldCalls = 0
}

// checkPushLimits closes the connection when its bytes not yet written
// are past the push limits (the periodic sweep: a client that stays past
// the soft limit with nothing more queued).
func (c *conn) checkPushLimits() {
	p := &c.push
	lim := c.s.pushLimits()
	p.mu.Lock()
	if p.dropped || !p.overLimits(lim, time.Now) {
		p.mu.Unlock()
		return
	}
	c.dropPush()
}

// dropPush closes the connection for its push queue's size. The caller
// holds p.mu, which it releases.
func (c *conn) dropPush() {
	p := &c.push
	n := p.unsent
	p.dropped, p.queue = true, nil
	p.mu.Unlock()
	c.s.stats.pushDrops.Add(1)
	c.s.opts.Logger.Warn("resp: connection closed for its push queue's size", "id", c.id, "bytes", n)
	c.nc.Close()
}

// takeQueue returns the queued frames and empties the queue; they stay
// counted as unsent until writeQueued writes them.
func (c *conn) takeQueue() []byte {
	p := &c.push
	p.mu.Lock()
	q := p.queue
	p.queue, p.spare = p.spare[:0], nil
	p.mu.Unlock()
	return q
}

// maxSpare bounds the written queue kept for reuse: a burst's big buffer
// is not held for the life of the connection.
const maxSpare = 256 << 10

// writeQueued writes frames takeQueue returned, a chunk at a time, each
// uncounted from the unsent bytes once written. The caller holds outMu.
// Once written, q is kept to be the next queue (the two alternate), so a
// steady flow of frames allocates no queue.
func (c *conn) writeQueued(q []byte) error {
	p := &c.push
	for rest := q; len(rest) > 0; {
		n := min(len(rest), pushChunk)
		_, err := c.w.out.Write(rest[:n])
		if err != nil {
			return err
		}
		p.mu.Lock()
		p.unsent -= int64(n)
		p.mu.Unlock()
		rest = rest[n:]
	}
	if cap(q) > 0 && cap(q) <= maxSpare {
		p.mu.Lock()
		if p.spare == nil && !p.dropped {
			p.spare = q[:0]
		}
		p.mu.Unlock()
	}
	return nil
}

// pusher writes queued frames while the connection is not serving a
// request, until it closes.
func (c *conn) pusher() {
	p := &c.push
	for {
		select {
		case <-p.wake:
		case <-c.ctx.Done():
			return
		}
		p.outMu.Lock()
		err := c.writeQueued(c.takeQueue())
		p.outMu.Unlock()
		if err != nil {
			c.nc.Close()
			return
		}
	}
}

// sweepPushes checks every connection with pushes against the push
// limits once every pushSweepEvery until the server closes (Serve starts
// it).
func (s *Server) sweepPushes() {
	defer s.wg.Done()
	t := time.NewTicker(pushSweepEvery)
	defer t.Stop()
	var conns []*conn
	for {
		select {
		case <-s.done:
			return
		case <-t.C:
		}
		s.mu.Lock()
		for c := range s.conns {
			if c.pushOn() {
				conns = append(conns, c)
			}
		}
		s.mu.Unlock()
		for _, c := range conns {
			c.checkPushLimits()
		}
		clear(conns)
		conns = conns[:0]
	}
}

// beginServe takes outMu for a request when pushes are on.
func (c *conn) beginServe() {
	if c.pushOn() {
		c.push.outMu.Lock()
		c.push.holdingOut = true
	}
}

// flushReplies writes the queued frames, then the buffered replies, and
// lets the pusher go on.
func (c *conn) flushReplies() error {
	if !c.push.holdingOut {
		return c.w.bw.Flush()
	}
	if err := c.writeQueued(c.takeQueue()); err != nil {
		return err
	}
	return c.w.bw.Flush()
}

// lendOut lets the pusher write while the connection's command blocks:
// the replies before it go out first, then outMu is released until the
// returned function takes it back. Without pushes it does nothing.
func (c *conn) lendOut() (takeBack func()) {
	if !c.push.holdingOut {
		return func() {}
	}
	_ = c.flushReplies() // a failed write fails the next one too
	c.push.holdingOut = false
	c.push.outMu.Unlock()
	return func() {
		c.push.outMu.Lock()
		c.push.holdingOut = true
	}
}

// endServe releases outMu after a request's flush.
func (c *conn) endServe() {
	if c.push.holdingOut {
		c.push.holdingOut = false
		c.push.outMu.Unlock()
	}
}

func (c *conn) pushOn() bool { return c.push.on.Load() }

// closePush runs the connection's close hooks (once).
func (c *conn) closePush() {
	p := &c.push
	p.mu.Lock()
	hooks := p.onClose
	p.onClose = nil
	p.mu.Unlock()
	for _, h := range hooks {
		h()
	}
}

// subscribedRESP2 reports whether the connection is in RESP2's subscribed
// mode, where only the pub/sub verbs, PING, QUIT and RESET run.
func (c *conn) subscribedRESP2() bool { return c.push.subscriptions > 0 && !c.w.resp3 }

// subscribedVerbs are what a RESP2 connection with subscriptions may run.
var subscribedVerbs = map[string]bool{"subscribe": true, "unsubscribe": true, "psubscribe": true, "punsubscribe": true,
	"ssubscribe": true, "sunsubscribe": true, "ping": true, "quit": true, "reset": true}

// Push queues a pre-encoded frame (the host encodes it for the
// connection's protocol) to be written to the connection between
// replies, in the order queued, and reports false once the connection is
// gone or was closed for its queue's size (Options.PushLimits). It is
// safe to call from any goroutine, also after the call returned; it never
// blocks on the client.
func (r *Request) Push(frame []byte) bool {
	c := r.c
	if c.ctx.Err() != nil {
		return false
	}
	c.enablePush()
	return c.enqueue(frame)
}

// Pusher returns Push for use after the call returns (a subscription's
// deliveries): the function is safe to call from any goroutine.
//
// from, when it is the *Request of another connection's call running on
// the calling goroutine (a PUBLISH), lets the frame's write wait for the
// end of that connection's run of calls of the same verb.
func (r *Request) Pusher() func(frame []byte, from any) bool {
	c := r.c
	c.enablePush()
	return func(frame []byte, from any) bool {
		if c.ctx.Err() != nil {
			return false
		}
		var by *conn
		if rq, ok := from.(*Request); ok && rq.c != c && rq.c.serving {
			by = rq.c
		}
		return c.enqueueBy(frame, by)
	}
}

// SetSubscriptions records the connection's subscription count: while it
// is above zero a RESP2 connection runs only (P|S)SUBSCRIBE,
// (P|S)UNSUBSCRIBE, PING, QUIT and RESET.
func (r *Request) SetSubscriptions(n int) { r.c.push.subscriptions = n }

// OnClose registers fn to run once when the connection closes or is
// RESET (a subscription's cleanup).
func (r *Request) OnClose(fn func()) {
	p := &r.c.push
	p.mu.Lock()
	p.onClose = append(p.onClose, fn)
	p.mu.Unlock()
}

// Client output buffer limits are Redis's client-output-buffer-limit
// setting, which CONFIG GET shows and CONFIG SET changes: for each of
// three classes of client, "class hard soft soft-seconds". Only pubsub is
// acted on: it is the push limits (PushLimits). normal and replica
// (which Redis reports as "slave") are accepted, checked, remembered and
// reported, and bound nothing: a reply here is written to the socket as
// its request is served, with no queue of its own to bound, and there
// are no replicas.
const (
	classNormal = iota
	classReplica
	classPubSub
	bufferClasses
)

// bufferClassNames are the classes as CONFIG GET names them.
var bufferClassNames = [bufferClasses]string{"normal", "slave", "pubsub"}

// bufferLimit is one class's limits, in Redis's units.
type bufferLimit struct {
	hard, soft uint64
	seconds    int64
}

// bufferLimits is the setting's value; push is its pubsub class as
// enqueue applies it.
type bufferLimits struct {
	class [bufferClasses]bufferLimit
	push  PushLimits
}

// newBufferLimits is the setting at start: Redis's defaults, with the
// server's push limits as the pubsub class.
func newBufferLimits(push PushLimits) *bufferLimits {
	b := &bufferLimits{push: push}
	b.class[classReplica] = bufferLimit{hard: 256 << 20, soft: 64 << 20, seconds: 60}
	b.class[classPubSub] = bufferLimit{hard: uint64(max(push.Hard, 0)), soft: uint64(max(push.Soft, 0)), seconds: int64(push.SoftFor / time.Second)}
	return b
}

// String is the value as Redis's CONFIG GET writes it.
func (b *bufferLimits) String() string {
	var sb strings.Builder
	for i, l := range b.class {
		if i > 0 {
			sb.WriteByte(' ')
		}
		fmt.Fprintf(&sb, "%s %d %d %d", bufferClassNames[i], l.hard, l.soft, l.seconds)
	}
	return sb.String()
}

// pushLimits are the push limits in force.
func (s *Server) pushLimits() PushLimits { return s.buffers.Load().push }

// checkBufferLimits is CONFIG SET client-output-buffer-limit's check: it
// returns what applies v (over the classes v names, leaving the others
// as they are then), or Redis's reason for refusing it.
func (s *Server) checkBufferLimits(v string) (func(), error) {
	changes, err := parseBufferLimits(v)
	if err != nil {
		return nil, err
	}
	return func() {
		s.buffersMu.Lock()
		defer s.buffersMu.Unlock()
		b := *s.buffers.Load()
		for class, l := range changes {
			b.class[class] = l
			if class == classPubSub {
				b.push = PushLimits{Hard: int64(min(l.hard, math.MaxInt64)), Soft: int64(min(l.soft, math.MaxInt64)),
					SoftFor: time.Duration(l.seconds) * time.Second}
			}
		}
		s.buffers.Store(&b)
	}, nil
}

// configRefusal is CONFIG SET's reason for refusing a value of a text
// setting (client-output-buffer-limit, notify-keyspace-events), in
// Redis's words.
type configRefusal string

func (r configRefusal) Error() string { return string(r) }

// Redis's reasons for refusing a client-output-buffer-limit value.
const (
	errBufferLimitArgs  configRefusal = "Wrong number of arguments in buffer limit configuration."
	errBufferLimitClass configRefusal = "Invalid client class specified in buffer limit configuration."
	errBufferLimitValue configRefusal = "Error in hard, soft or soft_seconds setting in buffer limit configuration."
)

// parseBufferLimits reads a client-output-buffer-limit value as Redis 7
// does: words split at each single space (so two spaces make an empty
// word), in fours of class, hard, soft and soft-seconds; a later four of
// a class wins; the empty value names no class. It returns the limits by
// class.
func parseBufferLimits(v string) (map[int]bufferLimit, error) {
	if v == "" {
		return nil, nil
	}
	words := strings.Split(v, " ")
	if len(words)%4 != 0 {
		return nil, errBufferLimitArgs
	}
	out := map[int]bufferLimit{}
	for i := 0; i < len(words); i += 4 {
		class := -1
		switch asciiLower(words[i]) {
		case "normal":
			class = classNormal
		case "slave", "replica":
			class = classReplica
		case "pubsub":
			class = classPubSub
		}
		if class < 0 {
			// master too, as in Redis.
			return nil, errBufferLimitClass
		}
		hard, okHard := memtoull(words[i+1])
		soft, okSoft := memtoull(words[i+2])
		secs, okSecs := softSeconds(words[i+3])
		if !okHard || !okSoft || !okSecs {
			return nil, errBufferLimitValue
		}
		out[class] = bufferLimit{hard: hard, soft: soft, seconds: secs}
	}
	return out, nil
}

// asciiLower is s with ASCII letters lowered, as C's strcasecmp compares
// (strings.ToLower would also fold the Kelvin sign to k).
func asciiLower(s string) string {
	return string(lowerName([]byte(s), make([]byte, 0, len(s))))
}

// memtoull reads a byte count as Redis's memtoull does: digits then an
// optional unit, b, or k, m, g (powers of 1000) or kb, mb, gb (powers of
// 1024) in any case; a leading minus is refused. As there, no digits read
// as 0, digits past 2^64-1 as 2^64-1, and the unit's product wraps.
func memtoull(v string) (uint64, bool) {
	if strings.HasPrefix(v, "-") {
		return 0, false
	}
	i := 0
	for i < len(v) && '0' <= v[i] && v[i] <= '9' {
		i++
	}
	var mul uint64
	switch asciiLower(v[i:]) {
	case "", "b":
		mul = 1
	case "k":
		mul = 1000
	case "kb":
		mul = 1 << 10
	case "m":
		mul = 1000 * 1000
	case "mb":
		mul = 1 << 20
	case "g":
		mul = 1000 * 1000 * 1000
	case "gb":
		mul = 1 << 30
	default:
		return 0, false
	}
	if i >= 128 { // Redis copies the digits into a buffer of 128
		return 0, false
	}
	n, err := strconv.ParseUint(v[:i], 10, 64)
	switch {
	case errors.Is(err, strconv.ErrRange):
		n = math.MaxUint64
	case err != nil:
		n = 0 // no digits
	}
	return n * mul, true
}

// softSeconds reads soft-seconds as Redis does: C's strtoll (leading
// white space, a sign, digits, saturating; without digits it reads
// nothing, which only the empty word gets past), kept in a C int, and
// refused when that is negative or anything follows the digits.
func softSeconds(v string) (int64, bool) {
	i := 0
	for i < len(v) && strings.IndexByte(" \t\n\v\f\r", v[i]) >= 0 {
		i++
	}
	neg := false
	if i < len(v) && (v[i] == '+' || v[i] == '-') {
		neg = v[i] == '-'
		i++
	}
	j := i
	for j < len(v) && '0' <= v[j] && v[j] <= '9' {
		j++
	}
	if j == i {
		return 0, v == ""
	}
	if j != len(v) {
		return 0, false
	}
	u, err := strconv.ParseUint(v[i:j], 10, 64)
	var n int64
	switch {
	case neg && (err != nil || u > 1<<63):
		n = math.MinInt64
	case neg:
		n = -int64(u)
	case err != nil || u > math.MaxInt64:
		n = math.MaxInt64
	default:
		n = int64(u)
	}
	secs := int64(int32(n)) // the C int it is kept in
	return secs, secs >= 0
}
