package resp

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"strings"
	"time"
)

// The differential fuzzer speaks RESP itself, so it compares the bytes
// each server sent (as a parsed tree that keeps every type mark) rather
// than what a client library makes of them.

// errReplyTooLong guards the fuzzer against a reply it could not hold.
var errReplyTooLong = errors.New("difffuzz: reply too long")

// fuzzConn is one connection sending requests and reading replies as trees.
type fuzzConn struct {
	nc net.Conn
	r  *bufio.Reader
	w  *bufio.Writer
}

func dialFuzz(addr string) (*fuzzConn, error) {
	nc, err := net.Dial("tcp", addr)
	if err != nil {
		return nil, err
	}
	return &fuzzConn{nc: nc, r: bufio.NewReaderSize(nc, 1<<16), w: bufio.NewWriterSize(nc, 1<<16)}, nil
}

func (c *fuzzConn) Close() error { return c.nc.Close() }

// send writes one request as a RESP array of bulk strings.
func (c *fuzzConn) send(args []string) error {
	fmt.Fprintf(c.w, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(c.w, "$%d\r\n%s\r\n", len(a), a)
	}
	return c.w.Flush()
}

// recv reads one reply, waiting at most d.
func (c *fuzzConn) recv(d time.Duration) (wireReply, error) {
	if err := c.nc.SetReadDeadline(time.Now().Add(d)); err != nil {
		return wireReply{}, err
	}
	return readReply(c.r)
}

// wireReply is one RESP reply: its type mark, its text (a simple string, an
// error, a number or a bulk string's bytes), null-ness, and the elements
// of an aggregate (a map's keys and values alternate).
type wireReply struct {
	kind  byte
	text  string
	null  bool
	elems []wireReply
}

func readLine(r *bufio.Reader) (string, error) {
	line, err := r.ReadString('\n')
	if err != nil {
		return "", err
	}
	if !strings.HasSuffix(line, "\r\n") {
		return "", fmt.Errorf("difffuzz: line without CRLF: %q", line)
	}
	return line[:len(line)-2], nil
}

func readReply(r *bufio.Reader) (wireReply, error) {
	line, err := readLine(r)
	if err != nil {
		return wireReply{}, err
	}
	if line == "" {
		return wireReply{}, fmt.Errorf("difffuzz: empty reply line")
	}
	rep := wireReply{kind: line[0], text: line[1:]}
	switch rep.kind {
	case '+', '-', ':', ',', '#', '(':
		return rep, nil
	case '_':
		rep.null = true
		return rep, nil
	case '$', '!', '=':
		n, err := strconv.Atoi(rep.text)
		if err != nil {
			return wireReply{}, fmt.Errorf("difffuzz: bad length %q", line)
		}
		if n < 0 {
			rep.null, rep.text = true, ""
			return rep, nil
		}
		if n > 1<<30 {
			return wireReply{}, errReplyTooLong
		}
		b := make([]byte, n+2)
		if _, err := io.ReadFull(r, b); err != nil {
			return wireReply{}, err
		}
		rep.text = string(b[:n])
		return rep, nil
	case '*', '~', '>', '%', '|':
		n, err := strconv.Atoi(rep.text)
		if err != nil {
			return wireReply{}, fmt.Errorf("difffuzz: bad count %q", line)
		}
		rep.text = ""
		if n < 0 {
			rep.null = true
			return rep, nil
		}
		if rep.kind == '%' || rep.kind == '|' {
			n *= 2
		}
		rep.elems = make([]wireReply, 0, min(n, 1<<16))
		for range n {
			e, err := readReply(r)
			if err != nil {
				return wireReply{}, err
			}
			rep.elems = append(rep.elems, e)
		}
		return rep, nil
	}
	return wireReply{}, fmt.Errorf("difffuzz: unknown reply type %q", line)
}

// String is a reply in a compact, unambiguous form: the type mark, then
// the quoted text or the bracketed elements.
func (r wireReply) String() string {
	var b strings.Builder
	r.write(&b)
	return b.String()
}

func (r wireReply) write(b *strings.Builder) {
	b.WriteByte(r.kind)
	switch {
	case r.null:
		b.WriteString("nil")
	case r.elems != nil || r.kind == '*' || r.kind == '~' || r.kind == '%' || r.kind == '>':
		b.WriteByte('[')
		for i, e := range r.elems {
			if i > 0 {
				b.WriteByte(' ')
			}
			e.write(b)
		}
		b.WriteByte(']')
	case r.kind == ':' || r.kind == ',' || r.kind == '#' || r.kind == '(':
		b.WriteString(r.text)
	default:
		b.WriteString(strconv.Quote(r.text))
	}
}

func (r wireReply) isErr() bool { return r.kind == '-' || r.kind == '!' }
