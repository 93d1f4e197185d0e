package wire

import (
	"bytes"
	"fmt"
	"testing"

	"github.com/vmihailenco/msgpack/v5"
)

// A batch of ten reads of eleven fields, as a Feast read of ten entities
// sends it, decoded as the server decodes a body.
func BenchmarkDecodeReadBatch(b *testing.B) {
	body := readBatchBody(b)
	for b.Loop() {
		var got BatchRequest
		if err := Decode(body, true, &got); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10, "ns/command")
}

// readBatchBody is a Feast read of ten entities' eleven fields in
// MessagePack.
func readBatchBody(b *testing.B) []byte {
	var req BatchRequest
	for i := range 10 {
		c := Command{Kind: "hmget", Key: Text(fmt.Sprintf("\x01\x00\x00\x00entity-key-%02dproject", i))}
		for f := range 11 {
			c.Args = append(c.Args, Bytes(fmt.Sprintf("fld%d", f)))
		}
		req.Commands = append(req.Commands, c)
	}
	body, err := msgpack.Marshal(&req)
	if err != nil {
		b.Fatal(err)
	}
	return body
}

// The walk that checks a body's claimed lengths before decoding, against
// the library's Skip that did it before.
func BenchmarkCheckBody(b *testing.B) {
	body := readBatchBody(b)
	b.Run("walk", func(b *testing.B) {
		for b.Loop() {
			if err := checkMsgpack(body); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("library-skip", func(b *testing.B) {
		for b.Loop() {
			if err := msgpack.NewDecoder(bytes.NewReader(body)).Skip(); err != nil {
				b.Fatal(err)
			}
		}
	})
}
