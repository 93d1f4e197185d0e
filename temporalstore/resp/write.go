package resp

import (
	"bufio"
	"io"
	"math"
	"strconv"
)

// writer encodes replies in the connection's protocol: RESP2, or RESP3
// after HELLO 3. The RESP3-only types degrade as Redis degrades them.
type writer struct {
	bw    *bufio.Writer
	out   *countWriter
	resp3 bool
	num   [32]byte
	fnum  [32]byte // a double's digits, apart from num, which header uses
}

// countWriter counts the bytes written to the connection.
type countWriter struct {
	w    io.Writer
	n    int64
	fail func([]byte) // a test's fault, raised before each write
}

func (cw *countWriter) Write(p []byte) (int, error) {
	if cw.fail != nil {
		cw.fail(p)
	}
	n, err := cw.w.Write(p)
	cw.n += int64(n)
	return n, err
}

// produced is how many bytes of replies the writer has taken: written to
// the connection or buffered.
func (w *writer) produced() int64 {
	if w.out == nil {
		return int64(w.bw.Buffered())
	}
	return w.out.n + int64(w.bw.Buffered())
}

// room returns the buffer's free space, empty, with at least n bytes of
// capacity, flushing first when less is free: a reply's pieces appended to
// it and written back are copied once, by no call per piece. It returns
// nil when n exceeds the whole buffer (or a flush failed); the caller then
// writes piece by piece.
func (w *writer) room(n int) []byte {
	if w.bw.Available() < n {
		if n > w.bw.Size() || w.bw.Flush() != nil {
			return nil
		}
	}
	return w.bw.AvailableBuffer()
}

// maxHeader is the longest header: a prefix, 20 digits and a sign, CRLF.
const maxHeader = 24

func appendHeader(b []byte, prefix byte, n int64) []byte {
	b = append(b, prefix)
	b = strconv.AppendInt(b, n, 10)
	return append(b, '\r', '\n')
}

func (w *writer) header(prefix byte, n int64) {
	if b := w.room(maxHeader); b != nil {
		w.bw.Write(appendHeader(b, prefix, n))
		return
	}
	w.bw.WriteByte(prefix)
	w.bw.Write(strconv.AppendInt(w.num[:0], n, 10))
	w.bw.WriteString("\r\n")
}

func (w *writer) simple(s string) {
	w.bw.WriteByte('+')
	w.bw.WriteString(s)
	w.bw.WriteString("\r\n")
}

func (w *writer) ok() { w.bw.WriteString("+OK\r\n") }

// err writes an error reply; msg starts with its code (ERR, WRONGTYPE ...).
func (w *writer) err(msg string) {
	w.bw.WriteByte('-')
	for i := 0; i < len(msg); i++ {
		if c := msg[i]; c == '\r' || c == '\n' {
			w.bw.WriteByte(' ')
		} else {
			w.bw.WriteByte(c)
		}
	}
	w.bw.WriteString("\r\n")
}

func (w *writer) int(n int64) { w.header(':', n) }

func (w *writer) bulk(b []byte) {
	if r := w.room(maxHeader + len(b) + 2); r != nil {
		r = appendHeader(r, '$', int64(len(b)))
		r = append(r, b...)
		w.bw.Write(append(r, '\r', '\n'))
		return
	}
	w.header('$', int64(len(b)))
	w.bw.Write(b)
	w.bw.WriteString("\r\n")
}

// pair writes a [timestamp, value] pair: an array of an integer and a
// bulk string.
func (w *writer) pair(ts int64, v []byte) {
	if r := w.room(2*maxHeader + 4 + len(v) + 2); r != nil {
		r = append(r, "*2\r\n"...)
		r = appendHeader(r, ':', ts)
		r = appendHeader(r, '$', int64(len(v)))
		r = append(r, v...)
		w.bw.Write(append(r, '\r', '\n'))
		return
	}
	w.array(2)
	w.int(ts)
	w.bulk(v)
}

func (w *writer) bulkString(s string) {
	w.header('$', int64(len(s)))
	w.bw.WriteString(s)
	w.bw.WriteString("\r\n")
}

// null is a missing value: RESP3's null, RESP2's null bulk string.
func (w *writer) null() {
	if w.resp3 {
		w.bw.WriteString("_\r\n")
		return
	}
	w.bw.WriteString("$-1\r\n")
}

// nullArray is a missing array: RESP3's null, RESP2's null multibulk.
func (w *writer) nullArray() {
	if w.resp3 {
		w.bw.WriteString("_\r\n")
		return
	}
	w.bw.WriteString("*-1\r\n")
}

func (w *writer) array(n int) { w.header('*', int64(n)) }

// simpleLines writes lines as an array of simple strings, as Redis's HELP
// subcommands reply.
func (w *writer) simpleLines(lines []string) {
	w.array(len(lines))
	for _, l := range lines {
		w.simple(l)
	}
}

// mapHeader starts a map of n pairs: RESP3's map, RESP2's flat array.
func (w *writer) mapHeader(n int) {
	if w.resp3 {
		w.header('%', int64(n))
		return
	}
	w.header('*', int64(2*n))
}

// setHeader starts a set: RESP3's set, RESP2's array.
func (w *writer) setHeader(n int) {
	if w.resp3 {
		w.header('~', int64(n))
		return
	}
	w.header('*', int64(n))
}

// double writes a float: RESP3's double, RESP2's bulk string, formatted as
// Redis formats scores.
func (w *writer) double(f float64) {
	s := formatDouble(w.fnum[:0], f)
	if w.resp3 {
		w.bw.WriteByte(',')
		w.bw.Write(s)
		w.bw.WriteString("\r\n")
		return
	}
	w.bulk(s)
}

func formatDouble(dst []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(dst, "inf"...)
	case math.IsInf(f, -1):
		return append(dst, "-inf"...)
	}
	return strconv.AppendFloat(dst, f, 'g', -1, 64)
}

// values writes an array of values, nil elements as nulls.
func (w *writer) values(vs [][]byte) {
	w.array(len(vs))
	for _, v := range vs {
		if v == nil {
			w.null()
		} else {
			w.bulk(v)
		}
	}
}
