package kvwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
)

// MaxFrame bounds a frame's body: a 512 KiB value and its key with room
// to spare, well under raft's message size.
const MaxFrame = 1 << 20

// Op is a request's operation.
type Op byte

// The operations.
const (
	OpPut      Op = 'p'
	OpGet      Op = 'g'
	OpStaleGet Op = 's'
)

// Status is a response's outcome.
type Status byte

// The statuses.
const (
	// StatusOK: the put was applied, or the get found the key (payload:
	// the value).
	StatusOK Status = 0
	// StatusNotFound: the get found no such key.
	StatusNotFound Status = 1
	// StatusNotLeader: this member is not the leader (payload: the
	// leader's raft ID as a uvarint, 0 when none is known). Nothing was
	// proposed; retry on the leader.
	StatusNotLeader Status = 2
	// StatusUnknown: the request timed out in raft; a put may or may not
	// be applied.
	StatusUnknown Status = 3
	// StatusUnavailable: raft dropped the proposal or is stopping;
	// nothing was applied and a retry is safe.
	StatusUnavailable Status = 4
	// StatusBadRequest: the request is malformed; nothing was done.
	StatusBadRequest Status = 5
	// StatusError: any other failure (payload: a message).
	StatusError Status = 6
)

// Errors a frame decoder returns.
var (
	ErrFrameTooLarge = errors.New("kvwire: frame too large")
	ErrMalformed     = errors.New("kvwire: malformed frame")
)

// Request is a decoded request.
type Request struct {
	ID    uint64
	Op    Op
	Key   string
	Value []byte
}

// Response is a decoded response.
type Response struct {
	ID      uint64
	Status  Status
	Payload []byte
}

const headerLen = 4

// AppendRequest appends r's frame to b.
func AppendRequest(b []byte, r Request) []byte {
	n := 8 + 1 + uvarintLen(uint64(len(r.Key))) + len(r.Key) + len(r.Value)
	b = binary.BigEndian.AppendUint32(b, uint32(n))
	b = binary.BigEndian.AppendUint64(b, r.ID)
	b = append(b, byte(r.Op))
	b = binary.AppendUvarint(b, uint64(len(r.Key)))
	b = append(b, r.Key...)
	return append(b, r.Value...)
}

// AppendResponse appends r's frame to b.
func AppendResponse(b []byte, r Response) []byte {
	b = binary.BigEndian.AppendUint32(b, uint32(8+1+len(r.Payload)))
	b = binary.BigEndian.AppendUint64(b, r.ID)
	b = append(b, byte(r.Status))
	return append(b, r.Payload...)
}

// DecodeRequest decodes a request body (the frame without its length).
// Value aliases body.
func DecodeRequest(body []byte) (Request, error) {
	if len(body) < 9 {
		return Request{}, fmt.Errorf("%w: request of %d bytes", ErrMalformed, len(body))
	}
	r := Request{ID: binary.BigEndian.Uint64(body), Op: Op(body[8])}
	switch r.Op {
	case OpPut, OpGet, OpStaleGet:
	default:
		return r, fmt.Errorf("%w: unknown operation %q", ErrMalformed, byte(r.Op))
	}
	rest := body[9:]
	kl, w := binary.Uvarint(rest)
	if w <= 0 || kl > uint64(len(rest)-w) {
		return r, fmt.Errorf("%w: bad key length", ErrMalformed)
	}
	rest = rest[w:]
	r.Key = string(rest[:kl])
	if r.Key == "" {
		return r, fmt.Errorf("%w: empty key", ErrMalformed)
	}
	r.Value = rest[kl:]
	if r.Op != OpPut && len(r.Value) > 0 {
		return r, fmt.Errorf("%w: a get carries no value", ErrMalformed)
	}
	return r, nil
}

// DecodeResponse decodes a response body. Payload aliases body.
func DecodeResponse(body []byte) (Response, error) {
	if len(body) < 9 {
		return Response{}, fmt.Errorf("%w: response of %d bytes", ErrMalformed, len(body))
	}
	r := Response{ID: binary.BigEndian.Uint64(body), Status: Status(body[8]), Payload: body[9:]}
	if r.Status > StatusError {
		return r, fmt.Errorf("%w: unknown status %d", ErrMalformed, r.Status)
	}
	return r, nil
}

// readFrame reads one frame's body into a buffer of its own, which the
// caller may keep.
func readFrame(r io.Reader) ([]byte, error) {
	var h [headerLen]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return nil, err
	}
	n := binary.BigEndian.Uint32(h[:])
	if n > MaxFrame {
		return nil, fmt.Errorf("%w: %d bytes", ErrFrameTooLarge, n)
	}
	buf := make([]byte, n)
	if _, err := io.ReadFull(r, buf); err != nil {
		if err == io.EOF {
			err = io.ErrUnexpectedEOF
		}
		return nil, err
	}
	return buf, nil
}

func uvarintLen(v uint64) int {
	n := 1
	for v >= 0x80 {
		v >>= 7
		n++
	}
	return n
}
