package resp

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"strconv"
)

// ErrProtocol marks a request that is not RESP: the connection answers
// "-ERR Protocol error: ..." and is closed, as Redis does.
var ErrProtocol = errors.New("protocol error")

// Limits of a request, as Redis's defaults where it has one.
const (
	// DefaultMaxBulk is the largest bulk string a request may carry.
	DefaultMaxBulk = 512 << 20
	// maxArgs bounds a multibulk's count (Redis: 1024*1024*1024; far
	// fewer is plenty and bounds the count before allocation).
	maxArgs = 1 << 20
	// maxInline bounds an inline command's line.
	maxInline = 64 << 10
)

// reader parses requests: multibulk arrays of bulk strings, or inline
// commands. The arguments it returns stay valid until the next call.
type reader struct {
	br      *bufio.Reader
	maxBulk int
	args    [][]byte
	arena   []byte
	// general turns buffered parsing off: the fuzz test compares the two
	// paths.
	general bool
}

func newReader(r io.Reader, maxBulk int) *reader {
	return &reader{br: bufio.NewReaderSize(r, 16<<10), maxBulk: maxBulk}
}

// line reads a line without its "\r\n" (or "\n" for inline commands).
func (r *reader) line(limit int) ([]byte, error) {
	b, err := r.br.ReadSlice('\n')
	if errors.Is(err, bufio.ErrBufferFull) {
		// A line longer than the buffer: only inline commands may be.
		long := append([]byte(nil), b...)
		for errors.Is(err, bufio.ErrBufferFull) && len(long) <= limit {
			b, err = r.br.ReadSlice('\n')
			long = append(long, b...)
		}
		b = long
	}
	if err != nil {
		return nil, err
	}
	if len(b) > limit+2 {
		return nil, fmt.Errorf("%w: too big inline request", ErrProtocol)
	}
	b = b[:len(b)-1]
	if n := len(b); n > 0 && b[n-1] == '\r' {
		b = b[:n-1]
	}
	return b, nil
}

// next returns the next request's arguments; an empty inline line is
// skipped. io.EOF means the client closed between requests.
func (r *reader) next() ([][]byte, error) {
	for {
		c, err := r.br.Peek(1)
		if err != nil {
			return nil, err
		}
		if c[0] == '*' {
			return r.multibulk()
		}
		args, err := r.inline()
		if err != nil || len(args) > 0 {
			return args, err
		}
	}
}

func (r *reader) multibulk() ([][]byte, error) {
	if !r.general {
		if args, ok := r.buffered(); ok {
			return args, nil
		}
	}
	head, err := r.line(64)
	if err != nil {
		return nil, unexpectedEOF(err)
	}
	n, err := strconv.ParseInt(string(head[1:]), 10, 64)
	if err != nil || n > maxArgs {
		return nil, fmt.Errorf("%w: invalid multibulk length", ErrProtocol)
	}
	if n <= 0 {
		return r.args[:0], nil
	}
	lens := make([]int, 0, min(n, 64))
	r.args = r.args[:0]
	r.arena = r.arena[:0]
	for range n {
		h, err := r.line(64)
		if err != nil {
			return nil, unexpectedEOF(err)
		}
		if len(h) == 0 || h[0] != '$' {
			got := byte(' ')
			if len(h) > 0 {
				got = h[0]
			}
			return nil, fmt.Errorf("%w: expected '$', got '%c'", ErrProtocol, got)
		}
		l, err := strconv.ParseInt(string(h[1:]), 10, 64)
		if err != nil || l < 0 || l > int64(r.maxBulk) {
			return nil, fmt.Errorf("%w: invalid bulk length", ErrProtocol)
		}
		at := len(r.arena)
		r.arena = growBy(r.arena, int(l)+2)
		if _, err := io.ReadFull(r.br, r.arena[at:at+int(l)+2]); err != nil {
			return nil, unexpectedEOF(err)
		}
		if !bytes.Equal(r.arena[at+int(l):at+int(l)+2], []byte("\r\n")) {
			return nil, fmt.Errorf("%w: bulk string without CRLF", ErrProtocol)
		}
		r.arena = r.arena[:at+int(l)]
		lens = append(lens, int(l))
	}
	// The arena may have moved while it grew: slice it at the end.
	off := 0
	for _, l := range lens {
		r.args = append(r.args, r.arena[off:off+l:off+l])
		off += l
	}
	return r.args, nil
}

// buffered parses a multibulk request that is wholly in the read buffer
// where it lies, without copying its arguments: a pipeline's requests
// usually are. Anything else (a request cut by the buffer's end, a long
// length, a malformed one) is left to multibulk's general path, which
// reports the errors, so the two cannot disagree on what a request is.
func (r *reader) buffered() ([][]byte, bool) {
	buf, _ := r.br.Peek(r.br.Buffered())
	n, pos, ok := bufferedLen(buf, 0, '*')
	if !ok || n <= 0 || n > maxBufferedArgs {
		return nil, false
	}
	r.args = r.args[:0]
	for range n {
		l, at, ok := bufferedLen(buf, pos, '$')
		if !ok || l > r.maxBulk || l > len(buf)-at-2 || buf[at+l] != '\r' || buf[at+l+1] != '\n' {
			return nil, false
		}
		r.args = append(r.args, buf[at:at+l:at+l])
		pos = at + l + 2
	}
	_, _ = r.br.Discard(pos) // within what Peek returned: cannot fail
	return r.args, true
}

// maxBufferedArgs bounds the requests buffered parses; longer ones take
// the general path.
const maxBufferedArgs = 1024

// bufferedLen reads the line "<mark><digits>\r\n" that starts at at in
// buf and returns the number and where the next line starts. Only plain
// decimal numbers of up to 9 digits are accepted.
func bufferedLen(buf []byte, at int, mark byte) (int, int, bool) {
	if at >= len(buf) || buf[at] != mark {
		return 0, 0, false
	}
	n, i := 0, at+1
	for ; i < len(buf) && '0' <= buf[i] && buf[i] <= '9'; i++ {
		if i-at > 9 {
			return 0, 0, false
		}
		n = n*10 + int(buf[i]-'0')
	}
	if i == at+1 || i+1 >= len(buf) || buf[i] != '\r' || buf[i+1] != '\n' {
		return 0, 0, false
	}
	return n, i + 2, true
}

func growBy(b []byte, n int) []byte {
	if cap(b)-len(b) >= n {
		return b[:len(b)+n]
	}
	nb := make([]byte, len(b)+n, max(2*cap(b), len(b)+n))
	copy(nb, b)
	return nb
}

func unexpectedEOF(err error) error {
	if errors.Is(err, io.EOF) {
		return io.ErrUnexpectedEOF
	}
	return err
}

// inline parses a line of space-separated arguments; double quotes group
// (with backslash escapes) and single quotes group literally, as
// redis-cli and Redis's inline parser do.
func (r *reader) inline() ([][]byte, error) {
	line, err := r.line(maxInline)
	if err != nil {
		return nil, unexpectedEOF(err)
	}
	args, err := splitArgs(line)
	if err != nil {
		return nil, err
	}
	r.args = args
	return args, nil
}

func splitArgs(line []byte) ([][]byte, error) {
	var out [][]byte
	i := 0
	for {
		for i < len(line) && (line[i] == ' ' || line[i] == '\t') {
			i++
		}
		if i == len(line) {
			return out, nil
		}
		var arg []byte
		switch line[i] {
		case '"':
			i++
			for {
				if i >= len(line) {
					return nil, fmt.Errorf("%w: unbalanced quotes in request", ErrProtocol)
				}
				c := line[i]
				if c == '"' {
					i++
					break
				}
				if c == '\\' && i+1 < len(line) {
					i++
					switch line[i] {
					case 'n':
						c = '\n'
					case 'r':
						c = '\r'
					case 't':
						c = '\t'
					case 'x':
						if i+2 < len(line) {
							if v, err := strconv.ParseUint(string(line[i+1:i+3]), 16, 8); err == nil {
								c = byte(v)
								i += 2
								break
							}
						}
						c = 'x'
					default:
						c = line[i]
					}
				}
				arg = append(arg, c)
				i++
			}
			if i < len(line) && line[i] != ' ' && line[i] != '\t' {
				return nil, fmt.Errorf("%w: unbalanced quotes in request", ErrProtocol)
			}
		case '\'':
			i++
			for {
				if i >= len(line) {
					return nil, fmt.Errorf("%w: unbalanced quotes in request", ErrProtocol)
				}
				if line[i] == '\'' {
					i++
					break
				}
				arg = append(arg, line[i])
				i++
			}
		default:
			for i < len(line) && line[i] != ' ' && line[i] != '\t' {
				arg = append(arg, line[i])
				i++
			}
		}
		if arg == nil {
			arg = []byte{}
		}
		out = append(out, arg)
	}
}
