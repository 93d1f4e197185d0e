// Package s3compat tests the S3-compatible handler of matrixobject
// (matrixobject/s3api) with real S3 clients: aws-sdk-go-v2's S3 client in
// process, and boto3 from PyPI in a Python virtual environment the test
// creates and caches. Each test starts the handler on a free loopback port
// and stops it afterwards.
//
// The package holds only tests (and StartServer, which they share). It lives
// in the tools module so that the AWS SDK never enters matrixobject's
// go.mod.
package s3compat

import (
	"net"
	"net/http"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixobject"
	"github.com/temporalstore/temporalstore-go/matrixobject/s3api"
)

// Server is a running S3 handler over a store.
type Server struct {
	URL   string
	Store *matrixobject.Store
	srv   *http.Server
	ln    net.Listener
}

// StartServer opens a store in dir and serves it on 127.0.0.1 at a free
// port with the given credentials.
func StartServer(dir string, storeOpts matrixobject.Options, creds map[string]string) (*Server, error) {
	st, err := matrixobject.Open(dir, storeOpts)
	if err != nil {
		return nil, err
	}
	h, err := s3api.New(st, s3api.Options{Credentials: creds})
	if err != nil {
		st.Close()
		return nil, err
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		st.Close()
		return nil, err
	}
	s := &Server{URL: "http://" + ln.Addr().String(), Store: st, ln: ln,
		srv: &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}}
	go s.srv.Serve(ln)
	return s, nil
}

// Close stops the server and closes the store.
func (s *Server) Close() error {
	s.srv.Close()
	return s.Store.Close()
}
