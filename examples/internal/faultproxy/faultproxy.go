package faultproxy

import (
	"net"
	"sync"
	"sync/atomic"
	"time"
)

// Proxy forwards connections on its loopback address to a target.
type Proxy struct {
	target string
	ln     net.Listener

	delay     atomic.Int64 // nanoseconds
	blackhole atomic.Bool
	refuse    atomic.Bool

	mu     sync.Mutex
	conns  map[net.Conn]struct{}
	closed bool
	wg     sync.WaitGroup
}

// Start listens on a free loopback port and forwards what connects there
// to target.
func Start(target string) (*Proxy, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	p := &Proxy{target: target, ln: ln, conns: map[net.Conn]struct{}{}}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial instead of the target's.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetDelay holds every chunk of bytes, each way, d after it was read
// before passing it on; 0 passes at once.
func (p *Proxy) SetDelay(d time.Duration) { p.delay.Store(int64(max(d, 0))) }

// SetBlackhole turns the blackhole on or off: while on, what either side
// sends is swallowed (the writes succeed, nothing arrives, and what was
// sent meanwhile is lost).
func (p *Proxy) SetBlackhole(on bool) { p.blackhole.Store(on) }

// SetRefuse turns refusal on or off: while on, new connections are
// closed as soon as they are accepted (the target is never dialled).
func (p *Proxy) SetRefuse(on bool) { p.refuse.Store(on) }

// DropAll closes every open connection, both sides.
func (p *Proxy) DropAll() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		c.Close()
	}
}

// Close stops listening and closes every connection.
func (p *Proxy) Close() error {
	p.mu.Lock()
	p.closed = true
	p.mu.Unlock()
	err := p.ln.Close()
	p.DropAll()
	p.wg.Wait()
	return err
}

func (p *Proxy) track(c net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return false
	}
	p.conns[c] = struct{}{}
	return true
}

func (p *Proxy) untrack(c net.Conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
	c.Close()
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		c, err := p.ln.Accept()
		if err != nil {
			return
		}
		if p.refuse.Load() {
			c.Close()
			continue
		}
		p.wg.Add(1)
		go p.serve(c)
	}
}

func (p *Proxy) serve(client net.Conn) {
	defer p.wg.Done()
	server, err := net.Dial("tcp", p.target)
	if err != nil {
		client.Close()
		return
	}
	if !p.track(client) || !p.track(server) {
		client.Close()
		server.Close()
		return
	}
	var both sync.WaitGroup
	// When one direction ends, the other is ended too: a proxy that
	// half-closed would hide a dropped connection from one side.
	for _, d := range [][2]net.Conn{{server, client}, {client, server}} {
		both.Go(func() {
			p.pipe(d[0], d[1])
			p.untrack(client)
			p.untrack(server)
		})
	}
	both.Wait()
}

// chunk is bytes read from one side and when.
type chunk struct {
	b  []byte
	at time.Time
}

// pipe copies from src to dst through a queue, so that a delay holds each
// chunk from the time it was read rather than from the previous write.
func (p *Proxy) pipe(dst, src net.Conn) {
	q := make(chan chunk, 256)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range q {
			if wait := time.Until(c.at.Add(time.Duration(p.delay.Load()))); wait > 0 {
				time.Sleep(wait)
			}
			if _, err := dst.Write(c.b); err != nil {
				for range q { // drain: the reader ends when src is closed
				}
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 && !p.blackhole.Load() {
			q <- chunk{b: append([]byte(nil), buf[:n]...), at: time.Now()}
		}
		if err != nil {
			break // EOF, a reset or a close: the connection ended either way
		}
	}
	close(q)
	<-done
}
