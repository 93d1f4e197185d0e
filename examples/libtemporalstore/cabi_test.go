//go:build cgo

package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime/cgo"
	"strconv"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/api"
	"github.com/temporalstore/temporalstore-go/temporalstore/client"
	"github.com/temporalstore/temporalstore-go/temporalstore/httpapi"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// TestHeaderCodes holds temporalstore.h's result codes to the library's.
func TestHeaderCodes(t *testing.T) {
	h, err := os.ReadFile("temporalstore.h")
	require.NoError(t, err)
	got := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^#define (TS_\w+) \(?(-?\d+)\)?$`).FindAllStringSubmatch(string(h), -1) {
		got[m[1]], _ = strconv.Atoi(m[2])
	}
	require.Equal(t, map[string]int{
		"TS_OK": codeOK, "TS_ERR_HANDLE": codeHandle, "TS_ERR_REQUEST": codeRequest,
		"TS_ERR_REMOTE": codeRemote, "TS_ERR_INTERNAL": codeInternal, "TS_ERR_ARGUMENT": codeArgument,
	}, got)
}

func TestHandles(t *testing.T) {
	c := &conn{}
	h := newHandle(c)
	require.NotZero(t, h)
	require.Same(t, c, lookup(h))

	foreign := cgo.NewHandle("not a conn")
	defer foreign.Delete()
	for _, bad := range []uintptr{0, uintptr(foreign), h + 1000} {
		require.Nil(t, lookup(bad), "handle %d", bad)
		require.Nil(t, release(bad), "handle %d", bad)
	}

	require.Same(t, c, release(h))
	require.Nil(t, lookup(h), "a released handle")
	require.Nil(t, release(h), "released twice")
	require.NotEqual(t, h, newHandle(c), "handles are not reused")
}

// request encodes an /execute request of one command.
func request(t testing.TB, c wire.Command) []byte {
	t.Helper()
	b, err := wire.EncodeValue(wire.Request{Command: &c}, true)
	require.NoError(t, err)
	return b
}

// decodeReply decodes an /execute reply.
func decodeReply(t testing.TB, b []byte) wire.ExecuteResponse {
	t.Helper()
	var r wire.ExecuteResponse
	require.NoError(t, wire.DecodeValue(b, true, &r))
	return r
}

func openTestEngine(t *testing.T, dir string) *conn {
	t.Helper()
	c, err := openEngine(t.Context(), dir)
	require.NoError(t, err)
	return c
}

func TestExecuteEmbedded(t *testing.T) {
	dir := t.TempDir()
	c := openTestEngine(t, dir)
	defer func() { require.NoError(t, c.close()) }()

	_, err := openEngine(t.Context(), dir)
	require.ErrorIs(t, err, storage.ErrLocked, "one handle a directory")

	ttl := int64(1000)
	for _, tc := range []struct {
		name     string
		body     []byte
		code     int
		status   string
		kind     string
		value    string // the bytes value, when kind is bytes
		nilValue bool
	}{
		{name: "string_set", body: request(t, wire.Command{Kind: "string_set", Key: wire.Text("k"), Value: wire.Bytes("a\x00b")}), status: wire.CodeOK, kind: "empty"},
		{name: "string_get", body: request(t, wire.Command{Kind: "string_get", Key: wire.Text("k")}), status: wire.CodeOK, kind: "bytes", value: "a\x00b"},
		{name: "get", body: request(t, wire.Command{Kind: "get", Key: wire.Text("k")}), status: wire.CodeOK, kind: "bytes", value: "a\x00b"},
		{name: "missing key", body: request(t, wire.Command{Kind: "get", Key: wire.Text("absent")}), status: wire.CodeOK, kind: "bytes", nilValue: true},
		{name: "expire of a missing key", body: request(t, wire.Command{Kind: "common_expire", Key: wire.Text("absent"), TTLMs: &ttl}), status: wire.CodeNotFound, kind: "empty"},
		{name: "wrong type", body: request(t, wire.Command{Kind: "hash_get", Key: wire.Text("k"), Field: wire.Text("f")}), status: "wrong_type", kind: "empty"},
		{name: "undecodable", body: []byte{0xc1}, code: codeRequest, status: wire.CodeBadRequest, kind: "empty"},
		{name: "empty", body: nil, code: codeRequest, status: wire.CodeBadRequest, kind: "empty"},
		{name: "no command", body: []byte{0x80}, code: codeRequest, status: wire.CodeBadRequest, kind: "empty"},
		{name: "unknown kind", body: request(t, wire.Command{Kind: "no_such_kind"}), code: codeRequest, status: wire.CodeBadRequest, kind: "empty"},
		{name: "no key", body: request(t, wire.Command{Kind: "string_get"}), code: codeRequest, status: wire.CodeBadRequest, kind: "empty"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := c.execute(t.Context(), tc.body)
			require.Equal(t, tc.code, code)
			r := decodeReply(t, out)
			require.Equal(t, tc.status, r.Status.Code, "%s", r.Status.Message)
			require.Equal(t, tc.status == wire.CodeOK, r.Status.OK)
			require.Equal(t, tc.kind, r.Response.Kind)
			if tc.kind == "bytes" {
				require.Equal(t, tc.nilValue, r.Response.Value.IsNull())
				if !tc.nilValue {
					var v wire.Bytes
					require.NoError(t, r.Response.Value.Decode(&v))
					require.Equal(t, tc.value, string(v))
				}
			}
		})
	}
}

// fakeClient answers every command with resp and err, or panics.
type fakeClient struct {
	resp  api.Response
	err   error
	panic bool
}

func (f fakeClient) Execute(context.Context, api.Command) (api.Response, error) {
	if f.panic {
		panic("boom")
	}
	return f.resp, f.err
}

func (f fakeClient) Batch(context.Context, []api.Command) ([]client.Result, error) {
	return nil, errors.ErrUnsupported
}

func (fakeClient) Close() error { return nil }

// TestOutcomes checks how a command's outcome becomes the result code and
// the reply's status, in process and over a connection.
func TestOutcomes(t *testing.T) {
	get := request(t, wire.Command{Kind: "get", Key: wire.Text("k")})
	for _, tc := range []struct {
		name    string
		c       conn
		code    int
		status  string
		message string
	}{
		{name: "found", c: conn{c: fakeClient{resp: api.Response{Found: true, Value: []byte("v")}}}, status: wire.CodeOK},
		{name: "engine error", c: conn{c: fakeClient{err: api.ErrWrongType}}, status: "wrong_type", message: api.ErrWrongType.Error()},
		{name: "panic", c: conn{c: fakeClient{panic: true}}, code: codeInternal, status: wire.CodeInternal, message: "libtemporalstore: panic: boom"},
		{name: "server's engine error", c: conn{c: fakeClient{err: wire.Status{Code: "wrong_type", Message: "WRONGTYPE"}.Err()}, remote: true}, status: "wrong_type", message: "WRONGTYPE"},
		{name: "server's own refusal", c: conn{c: fakeClient{err: wire.Status{Code: wire.CodeForbidden, Message: "read-only"}.Err()}, remote: true}, status: wire.CodeForbidden, message: "read-only"},
		{name: "no reply", c: conn{c: fakeClient{err: errors.New("connection refused")}, remote: true}, code: codeRemote, status: wire.CodeInternal, message: "connection refused"},
		{name: "deadline", c: conn{c: fakeClient{err: context.DeadlineExceeded}, remote: true}, code: codeRemote, status: "deadline_exceeded", message: context.DeadlineExceeded.Error()},
	} {
		t.Run(tc.name, func(t *testing.T) {
			out, code := tc.c.run(t.Context(), get)
			require.Equal(t, tc.code, code)
			r := decodeReply(t, out)
			require.Equal(t, wire.Status{OK: tc.status == wire.CodeOK, Code: tc.status, Message: tc.message}, r.Status)
		})
	}
}

// TestConcurrentExecute runs commands on one engine from many goroutines,
// as C threads sharing a handle do.
func TestConcurrentExecute(t *testing.T) {
	c := openTestEngine(t, t.TempDir())
	defer func() { require.NoError(t, c.close()) }()
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			key := wire.Text(fmt.Sprintf("g%d", g))
			for i := range 20 {
				val := wire.Bytes(strconv.Itoa(i))
				out, code := c.execute(context.Background(), request(t, wire.Command{Kind: "set", Key: key, Value: val}))
				if code != codeOK || !decodeReply(t, out).Status.OK {
					t.Errorf("set %s: code %d", key, code)
					return
				}
				out, _ = c.execute(context.Background(), request(t, wire.Command{Kind: "get", Key: key}))
				var v wire.Bytes
				if err := decodeReply(t, out).Response.Value.Decode(&v); err != nil || !bytes.Equal(v, val) {
					t.Errorf("get %s: %q, %v; want %q", key, v, err, val)
					return
				}
			}
		})
	}
	wg.Wait()
}

// TestCABI builds the shared library and the C smoke program, and runs it
// on an engine in a directory and against a running server.
func TestCABI(t *testing.T) {
	gcc, err := exec.LookPath("gcc")
	if err != nil {
		t.Skip("gcc is not installed: the C smoke program cannot be built")
	}
	dir := t.TempDir()
	lib, server := filepath.Join(dir, "libtemporalstore.so"), filepath.Join(dir, "server")
	var wg sync.WaitGroup
	var libOut, serverOut []byte
	var libErr, serverErr error
	wg.Go(func() {
		libOut, libErr = exec.Command("go", "build", "-buildmode=c-shared", "-o", lib, ".").CombinedOutput()
	})
	wg.Go(func() { serverOut, serverErr = exec.Command("go", "build", "-o", server, "../server").CombinedOutput() })
	wg.Wait()
	require.NoError(t, libErr, "%s", libOut)
	require.NoError(t, serverErr, "%s", serverOut)

	smoke := filepath.Join(dir, "smoke")
	out, err := exec.Command(gcc, "-std=c99", "-Wall", "-Wextra", "-Wpedantic", "-Werror", "-I", ".",
		"-o", smoke, filepath.Join("testdata", "smoke.c"), "-L", dir, "-ltemporalstore", "-Wl,-rpath,"+dir, "-pthread").CombinedOutput()
	require.NoError(t, err, "%s", out)
	if gxx, err := exec.LookPath("g++"); err == nil {
		out, err := exec.Command(gxx, "-fsyntax-only", "-Wall", "-Werror", "-x", "c++", "temporalstore.h").CombinedOutput()
		require.NoError(t, err, "the header as C++: %s", out)
	}

	runSmoke := func(t *testing.T, args ...string) {
		out, err := exec.Command(smoke, args...).CombinedOutput()
		require.NoError(t, err, "%s", out)
		require.Equal(t, "ok\n", string(out))
	}
	t.Run("embedded", func(t *testing.T) { runSmoke(t, "embedded", t.TempDir()) })

	addr := servertest.FreeAddr(t)
	srv := servertest.Start(t, server, "--data", t.TempDir(), "--resp", "", "--http", addr, "--s3", "")
	defer func() { require.NoError(t, srv.Stop()) }()
	url := "http://" + addr
	t.Run("connect", func(t *testing.T) { runSmoke(t, "connect", url) })
	t.Run("replies are the server's", func(t *testing.T) { testSameReplies(t, url) })
}

// testSameReplies sends the same requests to the server's /execute, to a
// connection to it and to an engine in the process: the replies are the
// same bytes, and the connection's result codes are the embedded ones.
func testSameReplies(t *testing.T, url string) {
	remote, err := connect(url, "")
	require.NoError(t, err)
	defer func() { require.NoError(t, remote.close()) }()
	embedded := openTestEngine(t, t.TempDir())
	defer func() { require.NoError(t, embedded.close()) }()

	post := func(body []byte) []byte {
		resp, err := http.Post(url+"/execute", wire.ContentTypeMsgpack, bytes.NewReader(body))
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		return b
	}
	// Each target writes keys of its own prefix, so that every one sees
	// the same state.
	one, ttl, at := 1, int64(1000), int64(1_700_000_000_000)
	until := at + 1000
	steps := func(p string) [][]byte {
		k := func(s string) wire.Text { return wire.Text(p + s) }
		cmds := []wire.Command{
			{Kind: "string_set", Key: k("s"), Value: wire.Bytes("a\x00b")},
			{Kind: "string_get", Key: k("s")},
			{Kind: "get", Key: k("s")},
			{Kind: "string_get", Key: k("absent")},
			{Kind: "set", Key: k("n"), Value: wire.Bytes("x"), ReturnOld: true},
			{Kind: "hash_set", Key: k("h"), Field: wire.Text("f"), Value: wire.Bytes("v")},
			{Kind: "hash_get_all", Key: k("h")},
			{Kind: "hash_incr_by", Key: k("h"), Field: wire.Text("f"), Increment: &ttl},
			{Kind: "common_expire", Key: k("absent"), TTLMs: &ttl},
			{Kind: "hash_get", Key: k("s"), Field: wire.Text("f")},
			{Kind: "zadd", Key: k("z"), Args: []wire.Bytes{wire.Bytes("a"), wire.Bytes("b")}, Scores: []wire.Float{1, 2.5}},
			{Kind: "zrange", Key: k("z"), Range: &wire.Range{Stop: -1, WithScores: true}},
			{Kind: "incr_by", Key: k("c"), Delta: 5},
			{Kind: "feature_append", Key: k("f"), Points: []wire.Point{{TimestampMs: at, Value: wire.Bytes("p")}}},
			{Kind: "feature_query", Key: k("f"), StartMs: &at, EndMs: &until, Count: &one},
			{Kind: "no_such_kind", Key: k("s")},
		}
		out := make([][]byte, 0, len(cmds)+2)
		for _, c := range cmds {
			out = append(out, request(t, c))
		}
		return append(out, []byte{0xc1}, []byte{0x80})
	}
	served, viaConn, inProcess := steps("http:"), steps("conn:"), steps("embedded:")
	for i := range served {
		want := post(served[i])
		got, code := remote.execute(t.Context(), viaConn[i])
		require.Equal(t, want, got, "step %d over a connection: %+v", i, decodeReply(t, got))
		local, localCode := embedded.execute(t.Context(), inProcess[i])
		require.Equal(t, want, local, "step %d in process: %+v", i, decodeReply(t, local))
		require.Equal(t, localCode, code, "step %d", i)
	}
}

// A connection sends its token: allowed with it, unauthorized without, and
// a read-only token's write forbidden, in the reply's status as over HTTP.
func TestConnectToken(t *testing.T) {
	e, err := local.Open(t.Context(), temporalstore.Options{Dir: t.TempDir()})
	require.NoError(t, err)
	defer e.Close()
	h, err := httpapi.New(httpapi.Options{Engine: e, ReadWriteTokens: []string{"rw"}, ReadOnlyTokens: []string{"ro"}})
	require.NoError(t, err)
	srv := httptest.NewServer(h)
	defer srv.Close()
	set := request(t, wire.Command{Kind: "string_set", Key: wire.Text("k"), Value: wire.Bytes("v")})
	for _, tc := range []struct{ token, status string }{
		{"rw", wire.CodeOK},
		{"", wire.CodeUnauthorized},
		{"wrong", wire.CodeUnauthorized},
		{"ro", wire.CodeForbidden},
	} {
		c, err := connect(srv.URL, tc.token)
		require.NoError(t, err)
		out, code := c.run(t.Context(), set)
		require.NoError(t, c.close())
		require.Equal(t, codeOK, code, tc.token)
		var r wire.ExecuteResponse
		require.NoError(t, wire.Decode(out, true, &r))
		require.Equal(t, tc.status, r.Status.Code, tc.token)
	}
}
