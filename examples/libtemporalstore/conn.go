//go:build cgo

package main

import (
	"context"
	"errors"
	"fmt"

	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/api"
	"github.com/temporalstore/temporalstore-go/temporalstore/client"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// Result codes of ts_execute and ts_close, as temporalstore.h defines
// them (a test holds the two together).
const (
	codeOK       = 0
	codeHandle   = -1
	codeRequest  = -2
	codeRemote   = -3
	codeInternal = -4
	codeArgument = -5
)

// Errors of ts_open and ts_connect.
var (
	errNoDir = errors.New("libtemporalstore: data_dir is NULL")
	errNoURL = errors.New("libtemporalstore: url is NULL")
)

// conn is what a handle stands for: an engine in the process or a
// server's HTTP surface, both behind client.Client, so that one path
// decodes, runs and encodes every command.
type conn struct {
	c      client.Client
	close  func() error // the engine's Close, or the client's
	remote bool
}

// openEngine opens the engine in dir with the default wiring and durable
// commits.
func openEngine(ctx context.Context, dir string) (*conn, error) {
	e, err := local.Open(ctx, temporalstore.Options{Dir: dir})
	if err != nil {
		return nil, err
	}
	// client.Local does not close the engine it wraps: the handle does.
	return &conn{c: client.NewLocal(e), close: e.Close}, nil
}

// connect returns a connection to the server at url, in MessagePack,
// sending token as a bearer token when it is not empty.
func connect(url, token string) (*conn, error) {
	h, err := client.NewHTTP(client.HTTPOptions{BaseURL: url, Token: token, Encoding: client.MessagePack})
	if err != nil {
		return nil, err
	}
	return &conn{c: h, close: h.Close, remote: true}, nil
}

// run is execute with a panic answered as an internal error: no panic
// may unwind into C.
func (c *conn) run(ctx context.Context, body []byte) (out []byte, code int) {
	defer func() {
		if r := recover(); r != nil {
			out, code = panicReply(r), codeInternal
		}
	}()
	return c.execute(ctx, body)
}

// execute runs an /execute request body and returns the reply, in
// MessagePack, with its result code; as the server's handler does, it
// decodes and translates with package wire and answers in its shapes.
func (c *conn) execute(ctx context.Context, body []byte) ([]byte, int) {
	var req wire.Request
	if err := wire.Decode(body, true, &req); err != nil {
		return failed(wire.Status{Code: wire.CodeBadRequest, Message: err.Error()}), codeRequest
	}
	if req.Command == nil {
		return failed(wire.Status{Code: wire.CodeBadRequest, Message: "missing field `command`"}), codeRequest
	}
	cl, err := wire.Translate(req.Command, req.Namespace, req.TableName, req.Tenant)
	if err != nil {
		return failed(wire.Status{Code: wire.CodeBadRequest, Message: err.Error()}), codeRequest
	}
	var resp api.Response
	if !cl.Unsupported() {
		resp, err = c.c.Execute(ctx, cl.Command())
	}
	st := wire.StatusOf(&cl, &resp, err)
	if c.remote && err != nil {
		var se *wire.StatusError
		if !errors.As(err, &se) {
			// No status came back: the server was not reached, or its
			// reply did not read.
			return failed(wire.StatusOfError(err)), codeRemote
		}
		if st.Code == wire.CodeInternal {
			// A code of the surface's own (unauthorized, forbidden, ...)
			// that no engine error stands for: the server's, as it said.
			st.Code = se.Code
		}
	}
	enc := wire.NewEncoder(true)
	enc.Result(&cl, &resp, st)
	return enc.Bytes(), codeOK
}

// failed is /execute's reply to a request it does not run: the status st
// and the empty response.
func failed(st wire.Status) []byte {
	enc := wire.NewEncoder(true)
	enc.ExecuteFailed(st)
	return enc.Bytes()
}

// panicReply is the reply to a call that panicked with r.
func panicReply(r any) []byte {
	return failed(wire.Status{Code: wire.CodeInternal, Message: fmt.Sprintf("libtemporalstore: panic: %v", r)})
}
