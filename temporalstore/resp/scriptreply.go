package resp

import (
	"bytes"
	"errors"
	"strconv"
)

// errBadReply is a reply a script's command wrote that does not parse:
// never expected, since the server's own writer wrote it.
var errBadReply = errors.New("resp: malformed reply")

// maxReplyDepth bounds the nesting parseReply follows, so no reply can
// exhaust the stack.
const maxReplyDepth = 1000

// reply is one decoded RESP2 or RESP3 reply, as a script's redis.call
// receives it. kind is the type's prefix byte; null marks RESP2's null
// bulk string and null array ('$', '*') as RESP3's null ('_') has no
// other value.
type reply struct {
	kind  byte
	null  bool
	str   []byte
	n     int64
	f     float64
	elems []reply
}

// parseReply decodes the first reply of b and returns the rest.
func parseReply(b []byte) (reply, []byte, error) { return parseReplyAt(b, 0) }

func parseReplyAt(b []byte, depth int) (reply, []byte, error) {
	if depth > maxReplyDepth {
		return reply{}, nil, errBadReply
	}
	i := bytes.Index(b, []byte("\r\n"))
	if i < 1 {
		return reply{}, nil, errBadReply
	}
	r := reply{kind: b[0]}
	line, rest := b[1:i], b[i+2:]
	switch r.kind {
	case '+', '-', '(':
		r.str = line
	case ':':
		n, err := strconv.ParseInt(string(line), 10, 64)
		if err != nil {
			return reply{}, nil, errBadReply
		}
		r.n = n
	case ',':
		f, err := parseFloat(line)
		if err != nil {
			return reply{}, nil, errBadReply
		}
		r.f = f
	case '_':
		r.null = true
	case '#':
		if len(line) != 1 || (line[0] != 't' && line[0] != 'f') {
			return reply{}, nil, errBadReply
		}
		r.n = int64(bytes.IndexByte([]byte("ft"), line[0]))
	case '$', '=', '!':
		n, err := strconv.Atoi(string(line))
		switch {
		case err != nil || n < -1:
			return reply{}, nil, errBadReply
		case n == -1:
			r.null = true
			return r, rest, nil
		case len(rest) < n+2 || rest[n] != '\r' || rest[n+1] != '\n':
			return reply{}, nil, errBadReply
		}
		r.str, rest = rest[:n], rest[n+2:]
	case '*', '~', '%', '>':
		n, err := strconv.Atoi(string(line))
		switch {
		case err != nil || n < -1:
			return reply{}, nil, errBadReply
		case n == -1:
			r.null = true
			return r, rest, nil
		}
		if r.kind == '%' {
			n *= 2
		}
		if n > len(rest)/3 { // each element takes at least 3 bytes
			return reply{}, nil, errBadReply
		}
		r.elems = make([]reply, n)
		for j := range n {
			r.elems[j], rest, err = parseReplyAt(rest, depth+1)
			if err != nil {
				return reply{}, nil, err
			}
		}
	default:
		return reply{}, nil, errBadReply
	}
	return r, rest, nil
}
