package tcptransport

import (
	"bytes"
	"errors"
	"io"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixraft"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

func TestFrameRoundTrip(t *testing.T) {
	msg, err := proto.Marshal(&pb.Message{Type: new(pb.MsgApp), To: new(uint64(2)), From: new(uint64(1)), Term: new(uint64(7)),
		Entries: []*pb.Entry{{Term: new(uint64(7)), Index: new(uint64(9)), Data: []byte("hello")}}})
	require.NoError(t, err)
	for _, tc := range []struct {
		name    string
		typ     byte
		payload []byte
	}{
		{"empty message", frameMessage, nil},
		{"raft message", frameMessage, msg},
		{"hello", frameHello, hello{from: 1, to: 1 << 40, kind: streamSnapshot}.encode()},
		{"snapshot chunk", frameSnapChunk, bytes.Repeat([]byte{0xAB}, 4096)},
		{"snapshot ack", frameSnapAck, []byte{snapAckOK}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Two frames back to back, one appended, one written: the
			// reader must find both boundaries.
			var buf bytes.Buffer
			buf.Write(appendFrame(nil, tc.typ, tc.payload))
			n, err := writeFrame(&buf, tc.typ, tc.payload)
			require.NoError(t, err)
			require.Equal(t, frameHeaderSize+len(tc.payload), n)
			fr := frameReader{r: &buf, maxSize: 1 << 20}
			for range 2 {
				typ, got, err := fr.next()
				require.NoError(t, err)
				require.Equal(t, tc.typ, typ)
				require.Equal(t, len(tc.payload), len(got))
				require.True(t, bytes.Equal(tc.payload, got))
			}
			_, _, err = fr.next()
			require.ErrorIs(t, err, io.EOF)
		})
	}
}

func TestFrameDecodeErrors(t *testing.T) {
	good := appendFrame(nil, frameMessage, []byte("payload"))
	mut := func(f func(b []byte) []byte) []byte { return f(bytes.Clone(good)) }
	for _, tc := range []struct {
		name  string
		data  []byte
		limit int
		want  error
	}{
		{"bad version", mut(func(b []byte) []byte { b[0] = 9; return b }), 1 << 20, ErrCorruptFrame},
		{"unknown type", mut(func(b []byte) []byte { b[1] = 0; return b }), 1 << 20, ErrCorruptFrame},
		{"flipped payload bit", mut(func(b []byte) []byte { b[len(b)-1] ^= 1; return b }), 1 << 20, ErrCorruptFrame},
		{"flipped checksum bit", mut(func(b []byte) []byte { b[7] ^= 1; return b }), 1 << 20, ErrCorruptFrame},
		{"over the limit", good, 6, ErrFrameTooLarge},
		{"huge length", mut(func(b []byte) []byte { b[2], b[3], b[4], b[5] = 0xff, 0xff, 0xff, 0xff; return b }), 64 << 20, ErrFrameTooLarge},
		{"cut in the header", good[:5], 1 << 20, io.ErrUnexpectedEOF},
		{"cut in the payload", good[:len(good)-2], 1 << 20, io.ErrUnexpectedEOF},
		{"nothing", nil, 1 << 20, io.EOF},
	} {
		t.Run(tc.name, func(t *testing.T) {
			fr := frameReader{r: bytes.NewReader(tc.data), maxSize: tc.limit}
			_, _, err := fr.next()
			require.ErrorIs(t, err, tc.want)
			if tc.want == ErrFrameTooLarge {
				require.ErrorIs(t, err, matrixraft.ErrFrameTooLarge, "matched through the Transport interface's package too")
			}
			require.Less(t, cap(fr.buf), 1<<20, "a rejected length must not be allocated")
		})
	}
}

func TestHelloDecode(t *testing.T) {
	h := hello{from: 3, to: 12345678901, kind: streamMessages}
	got, err := decodeHello(h.encode())
	require.NoError(t, err)
	require.Equal(t, h, got)
	for _, bad := range [][]byte{nil, {0x80}, {1}, {1, 2}, {1, 2, 9}, {1, 2, streamMessages, 0}} {
		_, err := decodeHello(bad)
		require.ErrorIs(t, err, ErrCorruptFrame, "%x", bad)
	}
}

// FuzzDecodeFrame feeds arbitrary bytes to the frame reader: it must never
// panic or allocate past its limit, must fail only with a known error, and
// every frame it accepts must re-encode to exactly the bytes it consumed.
func FuzzDecodeFrame(f *testing.F) {
	f.Add(appendFrame(nil, frameMessage, []byte("x")))
	f.Add(appendFrame(appendFrame(nil, frameHello, hello{from: 1, to: 2, kind: streamMessages}.encode()), frameMessage, nil))
	f.Add(appendFrame(nil, frameSnapChunk, bytes.Repeat([]byte{1}, 300)))
	f.Add([]byte{frameVersion, frameSnapAck, 0, 0, 0, 1, 0, 0, 0, 0, 0})
	f.Add([]byte{frameVersion, frameMessage, 0xff, 0xff, 0xff, 0xff})
	f.Add([]byte{})
	const limit = 1 << 12
	f.Fuzz(func(t *testing.T, data []byte) {
		r := bytes.NewReader(data)
		fr := frameReader{r: r, maxSize: limit}
		consumed := 0
		for {
			typ, payload, err := fr.next()
			if err != nil {
				if !errors.Is(err, io.EOF) && !errors.Is(err, io.ErrUnexpectedEOF) &&
					!errors.Is(err, ErrCorruptFrame) && !errors.Is(err, ErrFrameTooLarge) {
					t.Fatalf("unexpected error %v", err)
				}
				if cap(fr.buf) > limit {
					t.Fatalf("buffer of %d bytes past the %d limit", cap(fr.buf), limit)
				}
				return
			}
			end := len(data) - r.Len()
			if re := appendFrame(nil, typ, payload); !bytes.Equal(re, data[consumed:end]) {
				t.Fatalf("frame at %d does not re-encode to its bytes", consumed)
			}
			if typ == frameHello {
				if h, err := decodeHello(payload); err == nil {
					if back, err := decodeHello(h.encode()); err != nil || back != h {
						t.Fatalf("hello %+v does not survive a round trip: %+v, %v", h, back, err)
					}
				}
			}
			consumed = end
		}
	})
}
