package wire

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"strconv"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
)

// ValueReply says c's reply is a value alone (a GET's), which ResultAround
// can write around.
func (c *Call) ValueReply() bool { return c.c.shape == shBytes && !c.c.unsupported }

// aroundMark stands for the value while ResultAround encodes the reply: 16
// bytes the rest of a reply never holds.
var aroundMark = []byte("\xf0\x9fVALUE\x00HERE\xff\x01\x02\x03\x04")

// ResultAround is Result for a found value of n bytes that the caller
// sends from elsewhere (a file): it writes the reply with st (which must
// be OK) and returns its bytes before the value's and after them, and
// ValueTo writes the value's own. ok is false for a call whose reply is
// not a value alone (ValueReply). The bytes are e's, valid until it is
// reset.
func (e *Encoder) ResultAround(c *Call, st Status) (before, after []byte, ok bool) {
	if !c.ValueReply() || !st.OK {
		return nil, nil, false
	}
	r := api.Response{Found: true, Value: aroundMark}
	e.Result(c, &r, st)
	out := e.Bytes()
	var mark []byte
	if _, mp := e.w.(*msgpackWriter); mp {
		mark = append([]byte{0xc4, byte(len(aroundMark))}, aroundMark...)
	} else {
		mark = appendNumbers(nil, aroundMark)
	}
	i := bytes.Index(out, mark)
	if i < 0 {
		return nil, nil, false
	}
	return out[:i], out[i+len(mark):], true
}

// ValueLen is how many bytes a value of n bytes takes in the reply, or -1
// when it cannot tell without the bytes (JSON, whose numbers' widths
// vary).
func (e *Encoder) ValueLen(n int64) int64 {
	if _, mp := e.w.(*msgpackWriter); mp {
		return int64(len(msgpackBinHeader(nil, n))) + n
	}
	return -1
}

// msgpackBinHeader appends the MessagePack header of n bytes of binary.
func msgpackBinHeader(b []byte, n int64) []byte {
	switch {
	case n < 1<<8:
		return append(b, 0xc4, byte(n))
	case n < 1<<16:
		return binary.BigEndian.AppendUint16(append(b, 0xc5), uint16(n))
	default:
		return binary.BigEndian.AppendUint32(append(b, 0xc6), uint32(n))
	}
}

// ErrValueTooLarge is ValueWriter's error for a value MessagePack cannot
// frame (4 GiB or more).
var ErrValueTooLarge = errors.New("wire: value too large for one reply")

// ValueWriter starts, in w, the value of n bytes of a reply ResultAround
// split, and returns the writer its bytes go through and the function
// that ends it. In MessagePack that writer is w itself, after the value's
// binary header, so that a connection may send a file's bytes with
// sendfile; in JSON it writes the array of numbers they encode to.
func (e *Encoder) ValueWriter(w io.Writer, n int64) (io.Writer, func() error, error) {
	if _, mp := e.w.(*msgpackWriter); mp {
		if n >= 1<<32 {
			return nil, nil, ErrValueTooLarge
		}
		_, err := w.Write(msgpackBinHeader(nil, n))
		return w, func() error { return nil }, err
	}
	nw := &numbersWriter{w: w, first: true}
	_, err := w.Write([]byte{'['})
	return nw, func() error { _, err := w.Write([]byte{']'}); return err }, err
}

// numbersWriter writes the bytes written to it as JSON numbers, comma
// separated.
type numbersWriter struct {
	w     io.Writer
	first bool
	buf   []byte
}

func (nw *numbersWriter) Write(p []byte) (int, error) {
	written := 0
	for len(p) > 0 {
		chunk := p[:min(len(p), 32<<10)]
		nw.buf = nw.buf[:0]
		for _, c := range chunk {
			if !nw.first {
				nw.buf = append(nw.buf, ',')
			}
			nw.first = false
			nw.buf = strconv.AppendUint(nw.buf, uint64(c), 10)
		}
		if _, err := nw.w.Write(nw.buf); err != nil {
			return written, err
		}
		written += len(chunk)
		p = p[len(chunk):]
	}
	return written, nil
}
