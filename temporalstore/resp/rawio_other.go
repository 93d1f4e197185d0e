//go:build !linux

package resp

import (
	"io"
	"net"
)

// rawIO is the connection itself outside Linux (see rawio_linux.go).
func rawIO(nc net.Conn) (io.Reader, io.Writer) { return nc, nc }
