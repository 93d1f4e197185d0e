//go:build !linux

package respbench

import "errors"

// nullServer is Linux-only (an epoll loop); elsewhere the runs leave it out.
type nullServer struct{ port int }

func startNull() (*nullServer, error) { return nil, errors.New("null server: needs Linux (epoll)") }

func (s *nullServer) setValueSize(int) {}
func (s *nullServer) close()           {}
