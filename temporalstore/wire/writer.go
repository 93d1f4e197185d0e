package wire

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
)

// writer writes a reply in JSON or MessagePack. A map or array is opened
// with its length (MessagePack needs it) and closed with end (JSON does).
type writer interface {
	mapLen(n int)
	key(k string)
	arrayLen(n int)
	end()
	str(s string)
	// bin writes payload bytes: an array of numbers in JSON (as the
	// original replies), bin in MessagePack; nil is null.
	bin(b []byte)
	// text writes a name: a string when it is valid UTF-8, else as bin.
	text(b []byte)
	int(i int64)
	uint(u uint64)
	float(f float64)
	boolean(b bool)
	null()
	// raw writes an encoded value as it is.
	raw(b []byte)
	bytes() []byte
	// reset empties the writer and says whether its buffer is within keep.
	reset(keep int) bool
}

type jsonWriter struct {
	buf []byte
	// first says, per open map or array, that no element is written yet;
	// afterKey that a map's value follows its key.
	first    []bool
	closers  []byte
	afterKey bool
}

func (w *jsonWriter) sep() {
	if w.afterKey {
		w.afterKey = false
		return
	}
	if n := len(w.first); n > 0 {
		if !w.first[n-1] {
			w.buf = append(w.buf, ',')
		}
		w.first[n-1] = false
	}
}

func (w *jsonWriter) mapLen(int) {
	w.sep()
	w.buf = append(w.buf, '{')
	w.first = append(w.first, true)
	w.closers = append(w.closers, '}')
}

func (w *jsonWriter) arrayLen(int) {
	w.sep()
	w.buf = append(w.buf, '[')
	w.first = append(w.first, true)
	w.closers = append(w.closers, ']')
}

func (w *jsonWriter) key(k string) {
	w.sep()
	w.buf = strconv.AppendQuote(w.buf, k) // keys are ASCII identifiers
	w.buf = append(w.buf, ':')
	w.afterKey = true
}

// end closes the innermost open map or array.
func (w *jsonWriter) end() {
	w.first = w.first[:len(w.first)-1]
	w.buf = append(w.buf, w.closers[len(w.closers)-1])
	w.closers = w.closers[:len(w.closers)-1]
}

func (w *jsonWriter) str(s string) {
	w.sep()
	b, _ := json.Marshal(s)
	w.buf = append(w.buf, b...)
}

func (w *jsonWriter) bin(b []byte) {
	w.sep()
	if b == nil {
		w.buf = append(w.buf, "null"...)
		return
	}
	w.buf = appendNumbers(w.buf, b)
}

func (w *jsonWriter) text(b []byte) {
	if b != nil && utf8.Valid(b) {
		w.str(string(b))
		return
	}
	w.bin(b)
}

func (w *jsonWriter) raw(b []byte) {
	w.sep()
	w.buf = append(w.buf, b...)
}

func (w *jsonWriter) int(i int64) {
	w.sep()
	w.buf = strconv.AppendInt(w.buf, i, 10)
}

func (w *jsonWriter) uint(u uint64) {
	w.sep()
	w.buf = strconv.AppendUint(w.buf, u, 10)
}

func (w *jsonWriter) float(f float64) {
	w.sep()
	w.buf = appendFloat(w.buf, f)
}

func (w *jsonWriter) boolean(b bool) {
	w.sep()
	w.buf = strconv.AppendBool(w.buf, b)
}

func (w *jsonWriter) null() {
	w.sep()
	w.buf = append(w.buf, "null"...)
}

func (w *jsonWriter) bytes() []byte { return w.buf }

func (w *jsonWriter) reset(keep int) bool {
	w.buf, w.first, w.closers, w.afterKey = w.buf[:0], w.first[:0], w.closers[:0], false
	return cap(w.buf) <= keep
}

type msgpackWriter struct {
	buf bytes.Buffer
	enc *msgpack.Encoder
}

func newMsgpackWriter() *msgpackWriter {
	w := &msgpackWriter{}
	w.enc = msgpack.NewEncoder(&w.buf)
	w.enc.UseCompactInts(true)
	return w
}

// A bytes.Buffer never fails a write, so the encoder's errors are nil.
func (w *msgpackWriter) mapLen(n int)   { _ = w.enc.EncodeMapLen(n) }
func (w *msgpackWriter) key(k string)   { _ = w.enc.EncodeString(k) }
func (w *msgpackWriter) arrayLen(n int) { _ = w.enc.EncodeArrayLen(n) }
func (w *msgpackWriter) end()           {}
func (w *msgpackWriter) str(s string)   { _ = w.enc.EncodeString(s) }
func (w *msgpackWriter) bin(b []byte) {
	if b == nil {
		_ = w.enc.EncodeNil()
		return
	}
	_ = w.enc.EncodeBytes(b)
}
func (w *msgpackWriter) text(b []byte) {
	if b != nil && utf8.Valid(b) {
		_ = w.enc.EncodeString(string(b))
		return
	}
	w.bin(b)
}
func (w *msgpackWriter) int(i int64)     { _ = w.enc.EncodeInt(i) }
func (w *msgpackWriter) uint(u uint64)   { _ = w.enc.EncodeUint(u) }
func (w *msgpackWriter) float(f float64) { _ = w.enc.EncodeFloat64(f) }
func (w *msgpackWriter) boolean(b bool)  { _ = w.enc.EncodeBool(b) }
func (w *msgpackWriter) null()           { _ = w.enc.EncodeNil() }
func (w *msgpackWriter) raw(b []byte)    { w.buf.Write(b) }
func (w *msgpackWriter) bytes() []byte   { return w.buf.Bytes() }

func (w *msgpackWriter) reset(keep int) bool {
	w.buf.Reset()
	return w.buf.Cap() <= keep
}
