package resp

import (
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

// PushLimits bound the frames queued for a connection that does not read
// them, as Redis's client-output-buffer-limit pubsub: past Hard bytes, or
// past Soft bytes for SoftFor without a break, the connection is closed
// (without an error frame); other connections are not slowed. Zero
// disables a bound.
type PushLimits struct {
	Hard, Soft int64
	SoftFor    time.Duration
}

// DefaultPushLimits are Redis 7's "pubsub 32mb 8mb 60".
var DefaultPushLimits = PushLimits{Hard: 32 << 20, Soft: 8 << 20, SoftFor: 60 * time.Second}

// pushState is a connection's push queue.
type pushState struct {
	// outMu orders socket writes between the connection and its pusher.
	outMu sync.Mutex
	// holdingOut is set while the connection's own goroutine holds outMu
	// for the request it serves.
	holdingOut bool
	mu         sync.Mutex
	// on is set once pushes are on (read on every request, so atomic).
	on        atomic.Bool
	queue     []byte
	overSince time.Time // when the queue went past the soft limit
	dropped   bool
	wake      chan struct{}
	// subscriptions is the connection's count (SetSubscriptions): in
	// RESP2 a connection with subscriptions runs only the pub/sub verbs.
	subscriptions int
	onClose       []func()
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
func (c *conn) enqueue(frame []byte) bool {
	p := &c.push
	p.mu.Lock()
	if p.dropped {
		p.mu.Unlock()
		return false
	}
	p.queue = append(p.queue, frame...)
	n := int64(len(p.queue))
	lim := c.s.opts.PushLimits
	over := lim.Hard > 0 && n > lim.Hard
	if lim.Soft > 0 && n > lim.Soft {
		if p.overSince.IsZero() {
			p.overSince = time.Now()
		} else if lim.SoftFor >= 0 && time.Since(p.overSince) >= lim.SoftFor {
			over = true
		}
	} else {
		p.overSince = time.Time{}
	}
	if over {
		p.dropped, p.queue = true, nil
	}
	p.mu.Unlock()
	if over {
		c.s.stats.pushDrops.Add(1)
		c.s.opts.Logger.Warn("resp: connection closed for its push queue's size", "id", c.id, "bytes", n)
		c.nc.Close()
		return false
	}
	select {
	case p.wake <- struct{}{}:
	default:
	}
	return true
}

// takeQueue returns the queued frames and empties the queue.
func (c *conn) takeQueue() []byte {
	p := &c.push
	p.mu.Lock()
	q := p.queue
	p.queue = nil
	if len(q) > 0 {
		p.overSince = time.Time{}
	}
	p.mu.Unlock()
	return q
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
		q := c.takeQueue()
		var err error
		if len(q) > 0 {
			_, err = c.w.out.Write(q)
		}
		p.outMu.Unlock()
		if err != nil {
			c.nc.Close()
			return
		}
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
	var err error
	if q := c.takeQueue(); len(q) > 0 {
		_, err = c.w.out.Write(q)
	}
	if err == nil {
		err = c.w.bw.Flush()
	}
	return err
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
func (r *Request) Pusher() func(frame []byte) bool {
	c := r.c
	c.enablePush()
	return func(frame []byte) bool {
		if c.ctx.Err() != nil {
			return false
		}
		return c.enqueue(frame)
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
