package kvwire

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"io"
	"log/slog"
	"net"
	"sync"
)

// DefaultMaxInFlight is ServerOptions.MaxInFlight's default.
const DefaultMaxInFlight = 1024

// Handler serves one request and returns its status and payload. It runs
// on a goroutine of its own, concurrently with the connection's other
// requests; ctx ends when the connection does. req.Value aliases a buffer
// the handler may keep.
type Handler func(ctx context.Context, req Request) (Status, []byte)

// ServerOptions configures a Server.
type ServerOptions struct {
	// MaxInFlight bounds the requests one connection has being served;
	// past it the server stops reading that connection until one is
	// answered. Default DefaultMaxInFlight.
	MaxInFlight int
	// Logger receives connection errors. Default: slog.Default().
	Logger *slog.Logger
}

// Server serves the protocol on the listeners given to Serve.
type Server struct {
	h    Handler
	opts ServerOptions

	mu     sync.Mutex
	closed bool
	lns    map[net.Listener]struct{}
	conns  map[net.Conn]struct{}
	wg     sync.WaitGroup
}

// ErrServerClosed is what Serve returns after Close.
var ErrServerClosed = errors.New("kvwire: server closed")

// NewServer returns a server that answers requests with h.
func NewServer(h Handler, opts ServerOptions) *Server {
	if opts.MaxInFlight <= 0 {
		opts.MaxInFlight = DefaultMaxInFlight
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	return &Server{h: h, opts: opts, lns: map[net.Listener]struct{}{}, conns: map[net.Conn]struct{}{}}
}

// Serve accepts connections on ln until Close, and returns
// ErrServerClosed then, or the listener's error.
func (s *Server) Serve(ln net.Listener) error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		ln.Close()
		return ErrServerClosed
	}
	s.lns[ln] = struct{}{}
	s.mu.Unlock()
	for {
		conn, err := ln.Accept()
		if err != nil {
			s.mu.Lock()
			closed := s.closed
			delete(s.lns, ln)
			s.mu.Unlock()
			if closed {
				return ErrServerClosed
			}
			return err
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			conn.Close()
			return ErrServerClosed
		}
		s.conns[conn] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go func() {
			defer s.wg.Done()
			s.serveConn(conn)
			s.mu.Lock()
			delete(s.conns, conn)
			s.mu.Unlock()
		}()
	}
}

// Close stops the listeners, closes every connection (abandoning their
// requests in flight) and waits until their handlers have returned.
func (s *Server) Close() error {
	s.mu.Lock()
	s.closed = true
	for ln := range s.lns {
		ln.Close()
	}
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	s.wg.Wait()
	return nil
}

// serveConn reads requests, serves each on a goroutine, and leaves the
// answers to a writer that flushes whenever no other answer is waiting,
// so answers ready together share a write.
func (s *Server) serveConn(conn net.Conn) {
	defer conn.Close()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	out := make(chan Response, s.opts.MaxInFlight+1)
	sem := make(chan struct{}, s.opts.MaxInFlight)
	writerDone := make(chan struct{})
	go func() {
		defer close(writerDone)
		if err := writeResponses(conn, out); err != nil && !errors.Is(err, net.ErrClosed) {
			s.opts.Logger.Debug("kvwire: write", "remote", conn.RemoteAddr().String(), "err", err)
		}
	}()
	var handlers sync.WaitGroup
	br := bufio.NewReaderSize(conn, 64<<10)
	for {
		body, err := readFrame(br) // the handler may keep the value
		if err != nil {
			if !errors.Is(err, io.EOF) && !errors.Is(err, net.ErrClosed) {
				s.opts.Logger.Debug("kvwire: read", "remote", conn.RemoteAddr().String(), "err", err)
			}
			break
		}
		req, err := DecodeRequest(body)
		if err != nil {
			if len(body) >= 8 {
				out <- Response{ID: binary.BigEndian.Uint64(body), Status: StatusBadRequest, Payload: []byte(err.Error())}
			}
			continue
		}
		sem <- struct{}{}
		handlers.Add(1)
		go func() {
			defer handlers.Done()
			st, payload := s.h(ctx, req)
			out <- Response{ID: req.ID, Status: st, Payload: payload}
			<-sem
		}()
	}
	cancel()
	handlers.Wait()
	close(out)
	<-writerDone
}

// writeResponses writes the answers from out until it is closed. After a
// write error it keeps draining out, so that handlers never block.
func writeResponses(w io.Writer, out <-chan Response) error {
	bw := bufio.NewWriterSize(w, 64<<10)
	var werr error
	var hdr [headerLen + 9]byte
	for r := range out {
		if werr != nil {
			continue
		}
		binary.BigEndian.PutUint32(hdr[:], uint32(9+len(r.Payload)))
		binary.BigEndian.PutUint64(hdr[headerLen:], r.ID)
		hdr[headerLen+8] = byte(r.Status)
		_, werr = bw.Write(hdr[:])
		if werr == nil {
			_, werr = bw.Write(r.Payload)
		}
		if werr == nil && len(out) == 0 {
			werr = bw.Flush()
		}
	}
	return werr
}
