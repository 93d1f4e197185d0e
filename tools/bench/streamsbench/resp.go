package streamsbench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
)

// conn is a RESP2 client connection: commands are written to a buffer and
// sent by flush, replies read one at a time. The same code talks to both
// servers, so the client's cost per request is the same for each. Not
// safe for concurrent use.
type conn struct {
	c       net.Conn
	r       *bufio.Reader
	w       *bufio.Writer
	scratch []byte
}

// respError is an error reply (-ERR ...) of the server.
type respError string

func (e respError) Error() string { return "server replied: " + string(e) }

// dial connects to addr. The connection is closed when ctx is done, so a
// cancelled or timed-out run unblocks every read.
func dial(ctx context.Context, addr string) (*conn, error) {
	var d net.Dialer
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	context.AfterFunc(ctx, func() { c.Close() })
	return &conn{c: c, r: bufio.NewReaderSize(c, 64<<10), w: bufio.NewWriterSize(c, 64<<10)}, nil
}

// dialAll opens n connections to addr; on error it closes those it opened.
func dialAll(ctx context.Context, addr string, n int) ([]*conn, error) {
	cs := make([]*conn, 0, n)
	for range n {
		c, err := dial(ctx, addr)
		if err != nil {
			closeAll(cs)
			return nil, err
		}
		cs = append(cs, c)
	}
	return cs, nil
}

func closeAll(cs []*conn) {
	for _, c := range cs {
		c.Close()
	}
}

func (c *conn) Close() error { return c.c.Close() }

// writeArray writes the header of a command of n arguments.
func (c *conn) writeArray(n int) {
	c.writeHeader('*', n)
}

func (c *conn) writeHeader(kind byte, n int) {
	c.scratch = append(c.scratch[:0], kind)
	c.scratch = strconv.AppendInt(c.scratch, int64(n), 10)
	c.scratch = append(c.scratch, '\r', '\n')
	c.w.Write(c.scratch)
}

// writeBulk writes one argument.
func (c *conn) writeBulk(b []byte) {
	c.writeHeader('$', len(b))
	c.w.Write(b)
	c.w.WriteString("\r\n")
}

func (c *conn) writeBulkString(s string) {
	c.writeHeader('$', len(s))
	c.w.WriteString(s)
	c.w.WriteString("\r\n")
}

// writeCommand writes a command of string arguments (setup and control
// commands; the measured ones write their arguments without converting).
func (c *conn) writeCommand(args ...string) {
	c.writeArray(len(args))
	for _, a := range args {
		c.writeBulkString(a)
	}
}

func (c *conn) flush() error { return c.w.Flush() }

// do sends one command and returns its reply; an error reply is an error.
func (c *conn) do(args ...string) (value, error) {
	c.writeCommand(args...)
	if err := c.flush(); err != nil {
		return value{}, err
	}
	return c.read()
}

// value is one RESP2 reply. Null bulk strings and arrays have null set.
type value struct {
	kind  byte // '+', ':', '$' or '*'
	str   []byte
	n     int64
	elems []value
	null  bool
}

// line reads one line without its CRLF. The slice is valid until the
// next read.
func (c *conn) line() ([]byte, error) {
	b, err := c.r.ReadSlice('\n')
	if err != nil {
		return nil, err
	}
	if len(b) < 3 || b[len(b)-2] != '\r' {
		return nil, fmt.Errorf("resp: malformed line %q", b)
	}
	return b[:len(b)-2], nil
}

// header reads a line and returns its type byte and its integer (for
// ':', '$' and '*'), or the text of a simple string or error.
func (c *conn) header() (kind byte, n int64, text []byte, err error) {
	b, err := c.line()
	if err != nil {
		return 0, 0, nil, err
	}
	kind, rest := b[0], b[1:]
	switch kind {
	case '+':
		return kind, 0, rest, nil
	case '-':
		return kind, 0, nil, respError(rest)
	case ':', '$', '*':
		n, err := parseInt(rest)
		return kind, n, nil, err
	}
	return 0, 0, nil, fmt.Errorf("resp: unexpected reply type %q", b)
}

// parseInt parses a RESP length or integer without allocating.
func parseInt(b []byte) (int64, error) {
	neg := len(b) > 0 && b[0] == '-'
	if neg {
		b = b[1:]
	}
	if len(b) == 0 {
		return 0, errors.New("resp: empty integer")
	}
	var n int64
	for _, ch := range b {
		if ch < '0' || ch > '9' {
			return 0, fmt.Errorf("resp: bad integer %q", b)
		}
		n = n*10 + int64(ch-'0')
	}
	if neg {
		n = -n
	}
	return n, nil
}

// read reads one reply whole.
func (c *conn) read() (value, error) {
	kind, n, text, err := c.header()
	if err != nil {
		return value{}, err
	}
	v := value{kind: kind, n: n}
	switch kind {
	case '+':
		v.str = append([]byte(nil), text...)
	case '$':
		if n < 0 {
			v.null = true
			break
		}
		v.str = make([]byte, n)
		err = c.bulkBody(v.str)
	case '*':
		if n < 0 {
			v.null = true
			break
		}
		v.elems = make([]value, n)
		for i := range v.elems {
			if v.elems[i], err = c.read(); err != nil {
				break
			}
		}
	}
	return v, err
}

// bulkBody reads a bulk string's len(dst) bytes and its CRLF into dst.
func (c *conn) bulkBody(dst []byte) error {
	if _, err := io.ReadFull(c.r, dst); err != nil {
		return err
	}
	if _, err := c.r.Discard(2); err != nil {
		return err
	}
	return nil
}

// skip reads one reply and throws it away without allocating; an error
// reply is an error.
func (c *conn) skip() error {
	kind, n, _, err := c.header()
	if err != nil {
		return err
	}
	switch {
	case kind == '$' && n >= 0:
		_, err = c.r.Discard(int(n) + 2)
	case kind == '*':
		for range max(n, 0) {
			if err = c.skip(); err != nil {
				break
			}
		}
	}
	return err
}

// readInt reads an integer reply.
func (c *conn) readInt() (int64, error) {
	kind, n, _, err := c.header()
	if err != nil {
		return 0, err
	}
	if kind != ':' {
		return 0, fmt.Errorf("resp: want an integer reply, got type %q", kind)
	}
	return n, nil
}
