package kvwire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"sync"
)

// Errors a Client returns.
var (
	// ErrNotFound: a get found no such key.
	ErrNotFound = errors.New("kvwire: no such key")
	// ErrUnknownOutcome: the request timed out in raft, or the
	// connection ended with it in flight; a put may or may not be
	// applied.
	ErrUnknownOutcome = errors.New("kvwire: outcome unknown")
	// ErrUnavailable: raft dropped the proposal or is stopping; nothing
	// was applied.
	ErrUnavailable = errors.New("kvwire: unavailable")
	// ErrBadRequest: the server refused the request as malformed.
	ErrBadRequest = errors.New("kvwire: bad request")
	// ErrClientClosed: Close was called.
	ErrClientClosed = errors.New("kvwire: client closed")
)

// NotLeaderError is the answer of a member that is not the leader.
type NotLeaderError struct {
	// Leader is the leader's raft ID, 0 when the member knows none.
	Leader uint64
}

func (e *NotLeaderError) Error() string {
	return fmt.Sprintf("kvwire: not the leader (leader %d)", e.Leader)
}

// Client sends requests over one connection, many in flight at once. It
// is safe for concurrent use. Requests from concurrent callers share the
// connection's writes: a writer flushes whenever no other request waits.
type Client struct {
	conn net.Conn
	out  chan []byte
	done chan struct{}

	mu      sync.Mutex
	nextID  uint64
	pending map[uint64]chan Response
	err     error // why the connection ended, once it has
}

// Dial connects to a raft-kv member's kvwire address.
func Dial(ctx context.Context, addr string) (*Client, error) {
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	c := &Client{
		conn: conn, out: make(chan []byte, 4096), done: make(chan struct{}),
		pending: map[uint64]chan Response{},
	}
	go c.writeLoop()
	go c.readLoop()
	return c, nil
}

// Put writes key = value through the member, which must be the leader.
// It returns once the write is applied there.
func (c *Client) Put(ctx context.Context, key string, value []byte) error {
	_, err := c.do(ctx, Request{Op: OpPut, Key: key, Value: value})
	return err
}

// Get reads key linearizably; ErrNotFound when it is absent.
func (c *Client) Get(ctx context.Context, key string) ([]byte, error) {
	return c.do(ctx, Request{Op: OpGet, Key: key})
}

// GetStale reads the member's local value of key, which may lag.
func (c *Client) GetStale(ctx context.Context, key string) ([]byte, error) {
	return c.do(ctx, Request{Op: OpStaleGet, Key: key})
}

// Close closes the connection; requests in flight fail with
// ErrClientClosed (a put among them may still be applied).
func (c *Client) Close() error {
	c.mu.Lock()
	if c.err != nil { // already ended: later calls say why from now on
		c.err = ErrClientClosed
		c.mu.Unlock()
		return nil
	}
	c.mu.Unlock()
	c.fail(ErrClientClosed)
	return nil
}

func (c *Client) do(ctx context.Context, req Request) ([]byte, error) {
	if req.Key == "" {
		return nil, fmt.Errorf("%w: empty key", ErrBadRequest)
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	ch := make(chan Response, 1)
	c.mu.Lock()
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return nil, err
	}
	c.nextID++
	req.ID = c.nextID
	c.pending[req.ID] = ch
	c.mu.Unlock()
	frame := AppendRequest(nil, req)
	if len(frame)-headerLen > MaxFrame {
		c.forget(req.ID)
		return nil, fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, len(frame)-headerLen)
	}
	select {
	case c.out <- frame:
	case <-c.done:
		return nil, c.connErr()
	case <-ctx.Done():
		c.forget(req.ID)
		return nil, ctx.Err()
	}
	select {
	case r := <-ch:
		return answer(r)
	case <-c.done:
		// The reader may have delivered it just before ending.
		select {
		case r := <-ch:
			return answer(r)
		default:
		}
		if req.Op == OpPut {
			return nil, fmt.Errorf("%w: %w", ErrUnknownOutcome, c.connErr())
		}
		return nil, c.connErr()
	case <-ctx.Done():
		c.forget(req.ID)
		return nil, ctx.Err()
	}
}

func answer(r Response) ([]byte, error) {
	switch r.Status {
	case StatusOK:
		return r.Payload, nil
	case StatusNotFound:
		return nil, ErrNotFound
	case StatusNotLeader:
		leader, _ := binary.Uvarint(r.Payload)
		return nil, &NotLeaderError{Leader: leader}
	case StatusUnknown:
		return nil, ErrUnknownOutcome
	case StatusUnavailable:
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, r.Payload)
	case StatusBadRequest:
		return nil, fmt.Errorf("%w: %s", ErrBadRequest, r.Payload)
	default:
		return nil, fmt.Errorf("kvwire: server error: %s", r.Payload)
	}
}

func (c *Client) forget(id uint64) {
	c.mu.Lock()
	delete(c.pending, id)
	c.mu.Unlock()
}

func (c *Client) connErr() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.err
}

// fail ends the connection once, with err as the reason.
func (c *Client) fail(err error) {
	c.mu.Lock()
	if c.err != nil {
		c.mu.Unlock()
		return
	}
	c.err = err
	c.pending = nil
	close(c.done)
	c.mu.Unlock()
	c.conn.Close()
}

func (c *Client) writeLoop() {
	bw := bufio.NewWriterSize(c.conn, 64<<10)
	for {
		select {
		case f := <-c.out:
			_, err := bw.Write(f)
			if err == nil && len(c.out) == 0 {
				err = bw.Flush()
			}
			if err != nil {
				c.fail(fmt.Errorf("kvwire: write: %w", err))
				return
			}
		case <-c.done:
			return
		}
	}
}

func (c *Client) readLoop() {
	br := bufio.NewReaderSize(c.conn, 64<<10)
	for {
		body, err := readFrame(br)
		if err != nil {
			c.fail(fmt.Errorf("kvwire: read: %w", err))
			return
		}
		r, err := DecodeResponse(body)
		if err != nil {
			c.fail(err)
			return
		}
		c.mu.Lock()
		ch := c.pending[r.ID]
		delete(c.pending, r.ID)
		c.mu.Unlock()
		if ch != nil {
			ch <- r // buffered: never blocks
		}
	}
}
