//go:build linux

package benchkit

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync/atomic"
	"time"

	"golang.org/x/sys/unix"
)

// NullServer answers RESP requests and does nothing else: +OK to every
// command but GET, which gets a value of the size set by SetValueSize,
// and CONFIG, which gets an empty array (redis-benchmark asks for two
// settings first). One goroutine runs an epoll loop over every
// connection, reading what is ready, parsing whole requests and writing
// their replies in one write: Redis's event loop without Redis's work.
// Its throughput is what a server that only reads, parses and writes
// reaches with this client on this machine; over Redis's, about the most any
// server's ratio can be here.
type NullServer struct {
	// Port is the loopback port it listens on.
	Port      int
	lfd, epfd int
	// log, when not nil, gets every request's bytes, written and
	// fdatasynced once an event-loop round before that round's replies:
	// Redis's appendfsync always without Redis's work.
	log        *os.File
	getReply   atomic.Pointer[[]byte]
	stop, done chan struct{}
}

// nullConn is one connection's unparsed input and, in a durable server,
// its replies waiting for the round's fdatasync.
type nullConn struct {
	in, out []byte
}

// StartNullServer starts a NullServer on a free loopback port.
func StartNullServer() (*NullServer, error) {
	return startNullServer(nil)
}

// StartDurableNullServer starts a NullServer that appends every request
// to a file in dir and answers a round's requests only after one write and
// fdatasync of them all: the ceiling of a durable server that group-commits
// what one event-loop round read.
func StartDurableNullServer(dir string) (*NullServer, error) {
	f, err := os.OpenFile(filepath.Join(dir, "null.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("null server: %w", err)
	}
	s, err := startNullServer(f)
	if err != nil {
		f.Close()
	}
	return s, err
}

func startNullServer(log *os.File) (*NullServer, error) {
	lfd, err := unix.Socket(unix.AF_INET, unix.SOCK_STREAM|unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC, 0)
	if err != nil {
		return nil, fmt.Errorf("null server: socket: %w", err)
	}
	s := &NullServer{lfd: lfd, epfd: -1, log: log, stop: make(chan struct{}), done: make(chan struct{})}
	fail := func(what string, err error) (*NullServer, error) {
		unix.Close(lfd)
		if s.epfd >= 0 {
			unix.Close(s.epfd)
		}
		return nil, fmt.Errorf("null server: %s: %w", what, err)
	}
	if err := unix.Bind(lfd, &unix.SockaddrInet4{Addr: [4]byte{127, 0, 0, 1}}); err != nil {
		return fail("bind", err)
	}
	if err := unix.Listen(lfd, 1024); err != nil {
		return fail("listen", err)
	}
	sa, err := unix.Getsockname(lfd)
	if err != nil {
		return fail("getsockname", err)
	}
	s.Port = sa.(*unix.SockaddrInet4).Port
	if s.epfd, err = unix.EpollCreate1(unix.EPOLL_CLOEXEC); err != nil {
		return fail("epoll", err)
	}
	if err := unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, lfd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(lfd)}); err != nil {
		return fail("epoll_ctl", err)
	}
	s.SetValueSize(3)
	go s.loop()
	return s, nil
}

// SetValueSize makes GET replies values of n bytes.
func (s *NullServer) SetValueSize(n int) {
	r := append([]byte("$"+strconv.Itoa(n)+"\r\n"), bytes.Repeat([]byte("x"), n)...)
	r = append(r, "\r\n"...)
	s.getReply.Store(&r)
}

// Close stops it and closes its connections.
func (s *NullServer) Close() {
	close(s.stop)
	<-s.done
}

func (s *NullServer) loop() {
	defer close(s.done)
	conns := map[int]*nullConn{}
	defer func() {
		for fd := range conns {
			unix.Close(fd)
		}
		unix.Close(s.epfd)
		unix.Close(s.lfd)
		if s.log != nil {
			s.log.Close()
		}
	}()
	events := make([]unix.EpollEvent, 256)
	buf := make([]byte, 64<<10)
	var out, logged []byte
	var waiting []int // durable: the fds whose replies wait for the sync
	for {
		select {
		case <-s.stop:
			return
		default:
		}
		n, err := unix.EpollWait(s.epfd, events, 50) // ms: how soon close is seen
		if err != nil {
			continue // EINTR
		}
		for _, ev := range events[:n] {
			fd := int(ev.Fd)
			if fd == s.lfd {
				s.accept(conns)
				continue
			}
			c := conns[fd]
			m, err := unix.Read(fd, buf)
			if errors.Is(err, unix.EAGAIN) {
				continue
			}
			if m <= 0 {
				unix.Close(fd)
				delete(conns, fd)
				continue
			}
			c.in = append(c.in, buf[:m]...)
			if s.log != nil {
				var used int
				before := len(c.out)
				used, c.out = s.answer(c.in, c.out)
				logged = append(logged, c.in[:used]...)
				c.in = c.in[:copy(c.in, c.in[used:])]
				if before == 0 && len(c.out) > 0 {
					waiting = append(waiting, fd)
				}
				continue
			}
			var used int
			used, out = s.answer(c.in, out[:0])
			c.in = c.in[:copy(c.in, c.in[used:])]
			if writeAll(fd, out) != nil {
				unix.Close(fd)
				delete(conns, fd)
			}
		}
		if len(waiting) > 0 {
			s.commit(logged, waiting, conns)
			logged, waiting = logged[:0], waiting[:0]
		}
	}
}

// commit makes a durable round's requests durable, then answers them.
func (s *NullServer) commit(logged []byte, waiting []int, conns map[int]*nullConn) {
	if _, err := s.log.Write(logged); err != nil {
		panic(fmt.Sprintf("null server: log write: %v", err))
	}
	if err := unix.Fdatasync(int(s.log.Fd())); err != nil {
		panic(fmt.Sprintf("null server: fdatasync: %v", err))
	}
	for _, fd := range waiting {
		c := conns[fd]
		if c == nil {
			continue
		}
		if writeAll(fd, c.out) != nil {
			unix.Close(fd)
			delete(conns, fd)
			continue
		}
		c.out = c.out[:0]
	}
}

func (s *NullServer) accept(conns map[int]*nullConn) {
	for {
		fd, _, err := unix.Accept4(s.lfd, unix.SOCK_NONBLOCK|unix.SOCK_CLOEXEC)
		if err != nil {
			return
		}
		_ = unix.SetsockoptInt(fd, unix.IPPROTO_TCP, unix.TCP_NODELAY, 1)
		if unix.EpollCtl(s.epfd, unix.EPOLL_CTL_ADD, fd, &unix.EpollEvent{Events: unix.EPOLLIN, Fd: int32(fd)}) != nil {
			unix.Close(fd)
			continue
		}
		conns[fd] = &nullConn{}
	}
}

// writeAll writes p to the non-blocking fd, waiting out a full socket.
func writeAll(fd int, p []byte) error {
	for len(p) > 0 {
		n, err := unix.Write(fd, p)
		switch {
		case errors.Is(err, unix.EAGAIN):
			time.Sleep(50 * time.Microsecond)
			continue
		case err != nil:
			return err
		}
		p = p[n:]
	}
	return nil
}

// answer appends the replies of the whole multibulk requests at the start
// of in to out and returns how many bytes they took; a partial request is
// left for the next read. Anything else than a multibulk array is taken as
// one inline request a line.
func (s *NullServer) answer(in, out []byte) (int, []byte) {
	used := 0
	for used < len(in) {
		name, n := nextRequest(in[used:])
		if n == 0 {
			break
		}
		used += n
		switch {
		case bytes.EqualFold(name, []byte("get")):
			out = append(out, *s.getReply.Load()...)
		case bytes.EqualFold(name, []byte("config")):
			out = append(out, "*0\r\n"...)
		default:
			out = append(out, "+OK\r\n"...)
		}
	}
	return used, out
}

// nextRequest returns the first request's command name and length in p,
// or a length of 0 when p does not hold a whole request.
func nextRequest(p []byte) ([]byte, int) {
	eol := bytes.IndexByte(p, '\n')
	if eol < 0 {
		return nil, 0
	}
	if p[0] != '*' {
		f := bytes.Fields(p[:eol])
		if len(f) == 0 {
			return nil, eol + 1
		}
		return f[0], eol + 1
	}
	count, err := strconv.Atoi(string(bytes.TrimRight(p[1:eol], "\r")))
	if err != nil {
		return nil, eol + 1 // not RESP: skipped
	}
	pos := eol + 1
	var name []byte
	for i := range count {
		rest := p[pos:]
		e := bytes.IndexByte(rest, '\n')
		if e < 0 || rest[0] != '$' {
			return nil, 0
		}
		l, err := strconv.Atoi(string(bytes.TrimRight(rest[1:e], "\r")))
		if err != nil || l < 0 {
			return nil, 0
		}
		if len(rest) < e+1+l+2 {
			return nil, 0
		}
		if i == 0 {
			name = rest[e+1 : e+1+l]
		}
		pos += e + 1 + l + 2
	}
	return name, pos
}
