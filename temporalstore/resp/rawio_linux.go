//go:build linux

package resp

import (
	"io"
	"net"
	"os"
	"syscall"
	"unsafe"
)

// On Linux a plain TCP or Unix connection is read and written with raw
// system calls through its RawConn: the socket is non-blocking, so a call
// never waits in the kernel (a would-block answer parks the goroutine on
// the poller, as the standard path does), and skipping the runtime's
// syscall bookkeeping means the scheduler never takes the processor away
// from a goroutine in a short write, then wakes another thread to run
// its queue: on a loopback socket a write runs the receiver's network
// stack too, long enough for that to happen on most requests.

// rawChunk bounds one raw write, so that a huge reply still gives the
// processor back between system calls.
const rawChunk = 256 << 10

// rawOp is one direction of a connection: read(2) or write(2) on its
// socket, with the buffer and result of the call in progress (a
// connection is read by one goroutine and written by one at a time), and
// the callback RawConn runs, bound once so that a call allocates nothing.
type rawOp struct {
	// run is the RawConn's Read or Write: it calls fn until fn returns
	// true, waiting for the socket between calls.
	run   func(fn func(fd uintptr) bool) error
	trap  uintptr
	op    string // "read" or "write", for errors
	net   string // the connection's network ("tcp", "unix"), for errors
	buf   []byte
	n     int
	errno syscall.Errno
	fn    func(fd uintptr) bool
}

func newRawOp(run func(func(uintptr) bool) error, trap uintptr, op, network string) *rawOp {
	o := &rawOp{run: run, trap: trap, op: op, net: network}
	o.fn = o.call
	return o
}

// do runs the system call on p through RawConn and returns its count, or
// the error net.Conn would return.
func (o *rawOp) do(p []byte) (int, error) {
	o.buf = p
	err := o.run(o.fn)
	o.buf = nil
	switch {
	case err != nil:
		return 0, err
	case o.errno != 0:
		return 0, &net.OpError{Op: o.op, Net: o.net, Err: os.NewSyscallError(o.op, o.errno)}
	}
	return o.n, nil
}

// call makes the system call; false (would block) has RawConn wait for
// the socket to be ready and call again.
func (o *rawOp) call(fd uintptr) bool {
	for {
		n, _, e := syscall.RawSyscall(o.trap, fd, uintptr(unsafe.Pointer(unsafe.SliceData(o.buf))), uintptr(len(o.buf)))
		switch e {
		case syscall.EINTR:
			continue
		case syscall.EAGAIN:
			return false
		}
		o.n, o.errno = int(n), e
		return true
	}
}

type rawReader struct{ *rawOp }

type rawWriter struct{ *rawOp }

// rawIO returns the raw reader and writer of nc, or nc itself for both
// when nc is not a plain socket (TLS, for one).
func rawIO(nc net.Conn) (io.Reader, io.Writer) {
	var sc syscall.Conn
	switch c := nc.(type) {
	case *net.TCPConn:
		sc = c
	case *net.UnixConn:
		sc = c
	default:
		return nc, nc
	}
	rc, err := sc.SyscallConn()
	if err != nil {
		return nc, nc
	}
	network := nc.LocalAddr().Network()
	return rawReader{newRawOp(rc.Read, syscall.SYS_READ, "read", network)},
		rawWriter{newRawOp(rc.Write, syscall.SYS_WRITE, "write", network)}
}

func (r rawReader) Read(p []byte) (int, error) {
	if len(p) == 0 {
		return 0, nil
	}
	n, err := r.do(p)
	if err == nil && n == 0 {
		return 0, io.EOF
	}
	return n, err
}

func (w rawWriter) Write(p []byte) (int, error) {
	total := 0
	for total < len(p) {
		n, err := w.do(p[total:min(len(p), total+rawChunk)])
		if err != nil {
			return total, err
		}
		total += n
	}
	return total, nil
}
