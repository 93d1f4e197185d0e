package tcptransport

import (
	"bytes"
	"errors"
	"fmt"
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

func TestGroupedFrameRoundTrip(t *testing.T) {
	m := appMsg(1, 2, 9, []byte("hello"))
	plain, err := proto.Marshal(m)
	require.NoError(t, err)
	head := snapMsg(1, 2, 42, nil)
	for _, group := range []uint64{0, 1, 300, 1 << 40, ^uint64(0)} {
		t.Run(fmt.Sprint(group), func(t *testing.T) {
			// Through the frame reader, as a connection carries them.
			payload, err := proto.MarshalOptions{}.MarshalAppend(appendGroup(nil, group), m)
			require.NoError(t, err)
			snap, err := encodeSnapHeader(group, 1<<33, head)
			require.NoError(t, err)
			var buf bytes.Buffer
			buf.Write(appendFrame(nil, messageFrameType(group), payload))
			buf.Write(appendFrame(nil, snapHeaderFrameType(group), snap))
			fr := frameReader{r: &buf, maxSize: 1 << 20}

			typ, got, err := fr.next()
			require.NoError(t, err)
			if group == 0 {
				// The Transport's own messages are what they always were.
				require.Equal(t, frameMessage, typ)
				require.Equal(t, plain, got)
			} else {
				require.Equal(t, frameGroupMessage, typ)
			}
			g, back, err := decodeMessageFrame(typ, got)
			require.NoError(t, err)
			require.Equal(t, group, g)
			require.True(t, proto.Equal(m, back))

			typ, got, err = fr.next()
			require.NoError(t, err)
			require.Equal(t, group == 0, typ == frameSnapHeader)
			hdr, err := decodeSnapHeader(typ, got)
			require.NoError(t, err)
			require.Equal(t, group, hdr.group)
			require.Equal(t, uint64(1<<33), hdr.size)
			require.True(t, proto.Equal(head, hdr.m))
		})
	}
}

func TestGroupedFrameDecodeErrors(t *testing.T) {
	msg, err := proto.Marshal(appMsg(1, 2, 9, nil))
	require.NoError(t, err)
	withGroup := func(g []byte, rest []byte) []byte { return append(bytes.Clone(g), rest...) }
	overlong := bytes.Repeat([]byte{0xff}, 11)
	decodeMsg := func(typ byte, b []byte) error { _, _, err := decodeMessageFrame(typ, b); return err }
	decodeHead := func(typ byte, b []byte) error { _, err := decodeSnapHeader(typ, b); return err }
	for _, tc := range []struct {
		name    string
		decode  func(byte, []byte) error
		typ     byte
		payload []byte
	}{
		{"message: empty", decodeMsg, frameGroupMessage, nil},
		{"message: group 0", decodeMsg, frameGroupMessage, withGroup([]byte{0}, msg)},
		{"message: group 0 spelt long", decodeMsg, frameGroupMessage, withGroup([]byte{0x80, 0x00}, msg)},
		{"message: cut group ID", decodeMsg, frameGroupMessage, []byte{0x80}},
		{"message: group ID overflows", decodeMsg, frameGroupMessage, withGroup(overlong, msg)},
		{"message: bad protobuf", decodeMsg, frameGroupMessage, withGroup([]byte{7}, []byte{0xff, 0xff})},
		{"message: not a message frame", decodeMsg, frameSnapChunk, msg},
		{"snapshot header: empty", decodeHead, frameGroupSnapHeader, nil},
		{"snapshot header: group 0", decodeHead, frameGroupSnapHeader, []byte{0, 1}},
		{"snapshot header: no size", decodeHead, frameGroupSnapHeader, []byte{7}},
		{"snapshot header: cut size", decodeHead, frameGroupSnapHeader, []byte{7, 0x80}},
		{"snapshot header: bad protobuf", decodeHead, frameGroupSnapHeader, []byte{7, 1, 0xff}},
		{"snapshot header: not a header frame", decodeHead, frameGroupMessage, []byte{7, 1}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			require.ErrorIs(t, tc.decode(tc.typ, tc.payload), ErrCorruptFrame)
		})
	}
	t.Run("damaged on the wire", func(t *testing.T) {
		good := appendFrame(nil, frameGroupMessage, withGroup([]byte{7}, msg))
		for i := frameHeaderSize; i < len(good); i++ {
			bad := bytes.Clone(good)
			bad[i] ^= 0x10
			fr := frameReader{r: bytes.NewReader(bad), maxSize: 1 << 20}
			_, _, err := fr.next()
			require.ErrorIs(t, err, ErrCorruptFrame, "byte %d flipped", i)
		}
		bad := bytes.Clone(good)
		bad[1] = frameGroupSnapHeader + 1
		fr := frameReader{r: bytes.NewReader(bad), maxSize: 1 << 20}
		_, _, err := fr.next()
		require.ErrorIs(t, err, ErrCorruptFrame, "a frame type past the known ones")
	})
}

// FuzzGroupedFrame feeds arbitrary payloads to the grouped frames'
// decoders: they must never panic, must fail only with ErrCorruptFrame,
// never accept group 0 in a grouped frame, and whatever they accept must
// survive re-encoding.
func FuzzGroupedFrame(f *testing.F) {
	msg, err := proto.Marshal(appMsg(1, 2, 9, []byte("x")))
	if err != nil {
		f.Fatal(err)
	}
	snap, err := encodeSnapHeader(5, 100, snapMsg(1, 2, 3, nil))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(false, append([]byte{5}, msg...))
	f.Add(false, append([]byte{0x80, 0x80, 0x01}, msg...))
	f.Add(false, []byte{0})
	f.Add(false, []byte{})
	f.Add(true, snap)
	f.Add(true, []byte{5, 0x80})
	f.Add(true, bytes.Repeat([]byte{0xff}, 12))
	f.Fuzz(func(t *testing.T, isSnap bool, payload []byte) {
		if isSnap {
			hdr, err := decodeSnapHeader(frameGroupSnapHeader, payload)
			if err != nil {
				if !errors.Is(err, ErrCorruptFrame) {
					t.Fatalf("unexpected error %v", err)
				}
				return
			}
			if hdr.group == 0 {
				t.Fatal("a grouped snapshot header accepted group 0")
			}
			re, err := encodeSnapHeader(hdr.group, hdr.size, hdr.m)
			if err != nil {
				t.Fatalf("re-encoding: %v", err)
			}
			back, err := decodeSnapHeader(frameGroupSnapHeader, re)
			if err != nil || back.group != hdr.group || back.size != hdr.size || !proto.Equal(back.m, hdr.m) {
				t.Fatalf("snapshot header does not survive a round trip: %+v, %+v, %v", hdr, back, err)
			}
			return
		}
		group, m, err := decodeMessageFrame(frameGroupMessage, payload)
		if err != nil {
			if !errors.Is(err, ErrCorruptFrame) {
				t.Fatalf("unexpected error %v", err)
			}
			return
		}
		if group == 0 {
			t.Fatal("a grouped message accepted group 0")
		}
		re, err := proto.MarshalOptions{}.MarshalAppend(appendGroup(nil, group), m)
		if err != nil {
			t.Fatalf("re-encoding: %v", err)
		}
		g2, m2, err := decodeMessageFrame(messageFrameType(group), re)
		if err != nil || g2 != group || !proto.Equal(m, m2) {
			t.Fatalf("message of group %d does not survive a round trip: group %d, %v", group, g2, err)
		}
	})
}
