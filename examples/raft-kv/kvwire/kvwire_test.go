package kvwire

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestRequestRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		req  Request
	}{
		{"put", Request{ID: 1, Op: OpPut, Key: "k", Value: []byte("v")}},
		{"put empty value", Request{ID: 2, Op: OpPut, Key: "k", Value: []byte{}}},
		{"put long key", Request{ID: 3, Op: OpPut, Key: string(bytes.Repeat([]byte("x"), 300)), Value: []byte("v")}},
		{"get", Request{ID: 1 << 60, Op: OpGet, Key: "key"}},
		{"stale get", Request{ID: 5, Op: OpStaleGet, Key: "key"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := AppendRequest(nil, tc.req)
			require.Equal(t, uint32(len(f)-headerLen), binary.BigEndian.Uint32(f))
			got, err := DecodeRequest(f[headerLen:])
			require.NoError(t, err)
			require.Equal(t, tc.req.ID, got.ID)
			require.Equal(t, tc.req.Op, got.Op)
			require.Equal(t, tc.req.Key, got.Key)
			require.Equal(t, len(tc.req.Value), len(got.Value))
			require.True(t, bytes.Equal(tc.req.Value, got.Value))
		})
	}
}

func TestDecodeRequestRefuses(t *testing.T) {
	valid := AppendRequest(nil, Request{ID: 9, Op: OpPut, Key: "k", Value: []byte("v")})[headerLen:]
	for _, tc := range []struct {
		name string
		body []byte
	}{
		{"empty", nil},
		{"short", valid[:8]},
		{"unknown op", append(append([]byte{}, valid[:8]...), 'x', 1, 'k')},
		{"key past end", append(append([]byte{}, valid[:9]...), 5, 'k')},
		{"bad varint", append(append([]byte{}, valid[:9]...), 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff)},
		{"empty key", append(append([]byte{}, valid[:9]...), 0)},
		{"get with value", AppendRequest(nil, Request{ID: 1, Op: OpGet, Key: "k", Value: []byte("v")})[headerLen:]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := DecodeRequest(tc.body)
			require.ErrorIs(t, err, ErrMalformed)
		})
	}
}

func TestResponseRoundTrip(t *testing.T) {
	for _, st := range []Status{StatusOK, StatusNotFound, StatusNotLeader, StatusUnknown, StatusUnavailable, StatusBadRequest, StatusError} {
		f := AppendResponse(nil, Response{ID: 77, Status: st, Payload: []byte("p")})
		got, err := DecodeResponse(f[headerLen:])
		require.NoError(t, err)
		require.Equal(t, Response{ID: 77, Status: st, Payload: []byte("p")}, got)
	}
	_, err := DecodeResponse(AppendResponse(nil, Response{ID: 1, Status: StatusError + 1})[headerLen:])
	require.ErrorIs(t, err, ErrMalformed)
	_, err = DecodeResponse([]byte{1, 2, 3})
	require.ErrorIs(t, err, ErrMalformed)
}

func FuzzDecodeRequest(f *testing.F) {
	f.Add(AppendRequest(nil, Request{ID: 1, Op: OpPut, Key: "k", Value: []byte("v")})[headerLen:])
	f.Add(AppendRequest(nil, Request{ID: 2, Op: OpGet, Key: "key"})[headerLen:])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeRequest(body)
		if err != nil {
			return
		}
		again, err := DecodeRequest(AppendRequest(nil, r)[headerLen:])
		require.NoError(t, err)
		require.Equal(t, r.ID, again.ID)
		require.Equal(t, r.Key, again.Key)
		require.True(t, bytes.Equal(r.Value, again.Value))
	})
}

func FuzzDecodeResponse(f *testing.F) {
	f.Add(AppendResponse(nil, Response{ID: 1, Status: StatusOK, Payload: []byte("v")})[headerLen:])
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, body []byte) {
		r, err := DecodeResponse(body)
		if err != nil {
			return
		}
		again, err := DecodeResponse(AppendResponse(nil, r)[headerLen:])
		require.NoError(t, err)
		require.Equal(t, r, again)
	})
}

// memStore is a handler over a map; puts of key "slow-N" wait N ms, so
// that answers come back out of order.
type memStore struct {
	mu sync.Mutex
	m  map[string][]byte
}

func (s *memStore) handle(ctx context.Context, req Request) (Status, []byte) {
	var ms int
	if _, err := fmt.Sscanf(req.Key, "slow-%d", &ms); err == nil {
		select {
		case <-time.After(time.Duration(ms) * time.Millisecond):
		case <-ctx.Done():
			return StatusUnknown, nil
		}
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	switch {
	case req.Key == "not-leader":
		return StatusNotLeader, binary.AppendUvarint(nil, 3)
	case req.Key == "dropped":
		return StatusUnavailable, []byte("proposal dropped")
	case req.Op == OpPut:
		s.m[req.Key] = req.Value
		return StatusOK, nil
	}
	v, ok := s.m[req.Key]
	if !ok {
		return StatusNotFound, nil
	}
	return StatusOK, v
}

func startServer(t *testing.T, h Handler, opts ServerOptions) (*Server, string) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	srv := NewServer(h, opts)
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	t.Cleanup(func() {
		require.NoError(t, srv.Close())
		require.ErrorIs(t, <-done, ErrServerClosed)
	})
	return srv, ln.Addr().String()
}

func TestClientServer(t *testing.T) {
	st := &memStore{m: map[string][]byte{}}
	_, addr := startServer(t, st.handle, ServerOptions{})
	ctx := context.Background()
	c, err := Dial(ctx, addr)
	require.NoError(t, err)
	defer c.Close()

	require.NoError(t, c.Put(ctx, "a", []byte("1")))
	v, err := c.Get(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, []byte("1"), v)
	v, err = c.GetStale(ctx, "a")
	require.NoError(t, err)
	require.Equal(t, []byte("1"), v)
	_, err = c.Get(ctx, "missing")
	require.ErrorIs(t, err, ErrNotFound)
	var nl *NotLeaderError
	require.ErrorAs(t, c.Put(ctx, "not-leader", []byte("x")), &nl)
	require.Equal(t, uint64(3), nl.Leader)
	require.ErrorIs(t, c.Put(ctx, "dropped", nil), ErrUnavailable)
	require.ErrorIs(t, c.Put(ctx, "", []byte("x")), ErrBadRequest)
	require.ErrorIs(t, c.Put(ctx, "big", make([]byte, MaxFrame)), ErrFrameTooLarge)

	// Many in flight on one connection, answered out of order: each
	// caller gets its own answer.
	var wg sync.WaitGroup
	errs := make(chan error, 200)
	for i := range 200 {
		wg.Go(func() {
			key := "k" + strconv.Itoa(i)
			if i%10 == 0 {
				key = fmt.Sprintf("slow-%d", 20+i%7)
			}
			val := []byte(strconv.Itoa(i))
			if err := c.Put(ctx, key, val); err != nil {
				errs <- err
				return
			}
			got, err := c.Get(ctx, key)
			if err == nil && !bytes.Equal(got, val) && i%10 != 0 {
				err = fmt.Errorf("%s: got %q, want %q", key, got, val)
			}
			if err != nil {
				errs <- err
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
}

func TestServerAnswersMalformedAndGoesOn(t *testing.T) {
	st := &memStore{m: map[string][]byte{}}
	_, addr := startServer(t, st.handle, ServerOptions{})
	conn, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer conn.Close()
	bad := AppendRequest(nil, Request{ID: 41, Op: OpGet, Key: "k"})
	bad[headerLen+8] = 'x' // unknown operation
	good := AppendRequest(nil, Request{ID: 42, Op: OpPut, Key: "k", Value: []byte("v")})
	_, err = conn.Write(append(bad, good...))
	require.NoError(t, err)
	got := map[uint64]Status{}
	for range 2 {
		body, err := readFrame(conn)
		require.NoError(t, err)
		r, err := DecodeResponse(body)
		require.NoError(t, err)
		got[r.ID] = r.Status
	}
	require.Equal(t, map[uint64]Status{41: StatusBadRequest, 42: StatusOK}, got)
	require.Equal(t, []byte("v"), st.m["k"])

	// A frame over MaxFrame ends the connection.
	_, err = conn.Write(binary.BigEndian.AppendUint32(nil, MaxFrame+1))
	require.NoError(t, err)
	require.NoError(t, conn.SetReadDeadline(time.Now().Add(5*time.Second)))
	_, err = readFrame(conn)
	require.Error(t, err)
	var ne net.Error
	require.False(t, errors.As(err, &ne) && ne.Timeout(), "the server kept the connection open")
}

func TestClientContextAndClose(t *testing.T) {
	st := &memStore{m: map[string][]byte{}}
	srv, addr := startServer(t, st.handle, ServerOptions{MaxInFlight: 4})
	c, err := Dial(context.Background(), addr)
	require.NoError(t, err)

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, c.Put(ctx, "slow-2000", []byte("x")), context.DeadlineExceeded)
	// The connection still serves after an abandoned request.
	require.NoError(t, c.Put(context.Background(), "a", []byte("1")))

	// Closing the server fails what is in flight as an unknown outcome
	// and every later request.
	errc := make(chan error, 1)
	go func() { errc <- c.Put(context.Background(), "slow-5000", []byte("x")) }()
	time.Sleep(50 * time.Millisecond)
	require.NoError(t, srv.Close())
	select {
	case err := <-errc:
		require.Error(t, err)
	case <-time.After(5 * time.Second):
		t.Fatal("a request in flight outlived its connection")
	}
	require.Error(t, c.Put(context.Background(), "b", nil))
	require.NoError(t, c.Close())
	require.ErrorIs(t, c.Put(context.Background(), "b", nil), ErrClientClosed)
}
