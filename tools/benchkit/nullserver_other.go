//go:build !linux

package benchkit

import "errors"

// NullServer is Linux-only (an epoll loop); elsewhere the runs leave it out.
type NullServer struct{ Port int }

// StartNullServer fails: the null server needs Linux.
func StartNullServer() (*NullServer, error) {
	return nil, errors.New("null server: needs Linux (epoll)")
}

// StartDurableNullServer fails: the null server needs Linux.
func StartDurableNullServer(string) (*NullServer, error) {
	return nil, errors.New("null server: needs Linux (epoll)")
}

func (s *NullServer) SetValueSize(int) {}
func (s *NullServer) Close()           {}
