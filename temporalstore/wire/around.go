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

// ValueLen is how many bytes ValueTo writes for a value of n bytes, or -1
// when it cannot tell without the bytes (JSON, whose numbers' widths vary).
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

// ErrValueTooLarge is ValueTo's error for a value MessagePack cannot
// frame (4 GiB or more).
var ErrValueTooLarge = errors.New("wire: value too large for one reply")

// ValueTo writes the n bytes r reads as the value of a reply ResultAround
// split: in MessagePack a binary header and the bytes, handed to w as
// they are (io.Copy of an io.LimitedReader, so a connection may send a
// file's with sendfile); in JSON the array of numbers they encode to.
// beforeLast, if set, runs before the value's last byte is written, and
// its error ends the write there: a caller checking the bytes meanwhile
// holds back the end of a reply it may have to leave unfinished.
func (e *Encoder) ValueTo(w io.Writer, r io.Reader, n int64, beforeLast func() error) (int64, error) {
	if beforeLast == nil {
		beforeLast = func() error { return nil }
	}
	if _, mp := e.w.(*msgpackWriter); mp {
		if n >= 1<<32 {
			return 0, ErrValueTooLarge
		}
		h, err := w.Write(msgpackBinHeader(nil, n))
		written := int64(h)
		if err != nil {
			return written, err
		}
		for _, part := range [2]int64{max(n-1, 0), min(n, 1)} {
			if part == 1 || n == 0 {
				if err := beforeLast(); err != nil {
					return written, err
				}
			}
			m, err := io.Copy(w, io.LimitReader(r, part))
			written += m
			if err == nil && m != part {
				err = io.ErrUnexpectedEOF
			}
			if err != nil {
				return written, err
			}
		}
		return written, nil
	}
	in := make([]byte, 32<<10)
	out := make([]byte, 0, 4*len(in)+1)
	out = append(out, '[')
	var written, read int64
	for read < n {
		k, err := io.ReadFull(r, in[:min(int64(len(in)), n-read)])
		for j, c := range in[:k] {
			if read+int64(j) > 0 {
				out = append(out, ',')
			}
			out = strconv.AppendUint(out, uint64(c), 10)
		}
		read += int64(k)
		if err != nil {
			return written, err
		}
		if read == n {
			break // the last bytes wait for beforeLast
		}
		m, err := w.Write(out)
		written += int64(m)
		if err != nil {
			return written, err
		}
		out = out[:0]
	}
	if err := beforeLast(); err != nil {
		return written, err
	}
	m, err := w.Write(append(out, ']'))
	return written + int64(m), err
}
