package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/httpapi"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/kindcases"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
	"github.com/temporalstore/temporalstore-go/temporalstore/local"
)

var epoch = time.Unix(1_764_460_800, 0)

func newEngine(t *testing.T, clk *testclock.Clock) *ts.Engine {
	t.Helper()
	e, err := local.Open(t.Context(), ts.Options{Dir: t.TempDir(), Now: clk.Now, MaintenanceInterval: ts.Disabled})
	require.NoError(t, err)
	t.Cleanup(func() { e.Close() })
	return e
}

// serve starts a live HTTP server over a new engine; wrap, when given,
// wraps its handler.
func serve(t *testing.T, clk *testclock.Clock, opts func(*httpapi.Options), wrap func(http.Handler) http.Handler) (*httptest.Server, *ts.Engine) {
	t.Helper()
	e := newEngine(t, clk)
	o := httpapi.Options{Engine: e}
	if opts != nil {
		opts(&o)
	}
	h, err := httpapi.New(o)
	require.NoError(t, err)
	var hh http.Handler = h
	if wrap != nil {
		hh = wrap(h)
	}
	srv := httptest.NewServer(hh)
	t.Cleanup(srv.Close)
	return srv, e
}

func newHTTP(t *testing.T, o HTTPOptions) *HTTP {
	t.Helper()
	c, err := NewHTTP(o)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return c
}

// engineSentinels are the engine's errors a client result is matched on.
var engineSentinels = []error{
	ts.ErrInvalid, ts.ErrUnknownKind, ts.ErrWrongType, ts.ErrNotInteger, ts.ErrNotFloat,
	ts.ErrOverflow, ts.ErrTooLarge, ts.ErrCrossShard, ts.ErrNoSuchKey, ts.ErrOutOfRange,
	ts.ErrNoTable, ts.ErrReadOnly, ts.ErrReadQPS, ts.ErrWriteQPS, ts.ErrTenantQPS, ts.ErrShardRate, ts.ErrClosed,
}

func requireSame(t *testing.T, want ts.Response, wantErr error, got ts.Response, gotErr error, msg string) {
	t.Helper()
	if wantErr != nil {
		require.Error(t, gotErr, msg)
		require.Equal(t, wantErr.Error(), gotErr.Error(), msg)
		for _, s := range engineSentinels {
			require.Equal(t, errors.Is(wantErr, s), errors.Is(gotErr, s), "%s: errors.Is %v", msg, s)
		}
		return
	}
	require.NoError(t, gotErr, msg)
	require.Equal(t, want, got, msg)
}

// The in-process client and the HTTP client (JSON and MessagePack) give
// identical results, errors included, for a sequence that runs every
// kind, one command at a time and in batches; the HTTP client's commands
// are applied to the server's engine.
func TestLocalAndHTTPAgree(t *testing.T) {
	for _, enc := range []string{JSON, MessagePack} {
		t.Run(enc, func(t *testing.T) {
			clk := testclock.New(epoch)
			local := NewLocal(newEngine(t, clk))
			srv, remote := serve(t, clk, nil, nil)
			hc := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Encoding: enc})
			steps := kindcases.Steps(clk.Now())
			kinds := map[ts.Kind]bool{}
			for i, c := range steps {
				kinds[c.Kind] = true
				want, wantErr := local.Execute(t.Context(), c)
				got, gotErr := hc.Execute(t.Context(), c)
				requireSame(t, want, wantErr, got, gotErr, fmt.Sprintf("step %d: %s %q", i, c.Kind, c.Key))
			}
			require.Len(t, kinds, len(ts.Kinds()))
			r, err := remote.Execute(t.Context(), ts.Command{Kind: ts.KindHGet, Key: []byte("h"), Args: [][]byte{[]byte("f2")}})
			require.NoError(t, err)
			require.Equal(t, "two", string(r.Value))

			// The same sequence again, in batches of 7 and split by table.
			local = NewLocal(newEngine(t, clk))
			srv, remote = serve(t, clk, nil, nil)
			hc = newHTTP(t, HTTPOptions{BaseURL: srv.URL, Encoding: enc, MaxBatch: 7})
			for _, e := range []*ts.Engine{local.e.(*ts.Engine), remote} {
				require.NoError(t, e.CreateTable(t.Context(), "ns", "t", ts.TableOptions{Shards: 2}))
			}
			steps = append(steps, ts.Command{Namespace: "ns", Table: "t", Kind: ts.KindSet, Key: []byte("k"), Value: []byte("in t")},
				ts.Command{Namespace: "ns", Table: "t", Kind: ts.KindGet, Key: []byte("k")},
				ts.Command{Kind: ts.KindGet, Key: []byte("k")},
				ts.Command{Namespace: "ns", Table: "missing", Kind: ts.KindGet, Key: []byte("k")})
			want, err := local.Batch(t.Context(), steps)
			require.NoError(t, err)
			got, err := hc.Batch(t.Context(), steps)
			require.NoError(t, err)
			require.Len(t, got, len(want))
			for i := range want {
				requireSame(t, want[i].Response, want[i].Err, got[i].Response, got[i].Err, fmt.Sprintf("batch step %d: %s", i, steps[i].Kind))
			}
			n := len(steps)
			require.Equal(t, "in t", string(got[n-3].Response.Value))
			require.False(t, got[n-2].Response.Found)
			require.ErrorIs(t, got[n-1].Err, ts.ErrNoTable)
		})
	}
}

// The HTTP client keeps its connections: many sequential commands use
// one connection.
func TestHTTPReusesConnections(t *testing.T) {
	var conns atomic.Int64
	clk := testclock.New(epoch)
	e := newEngine(t, clk)
	h, err := httpapi.New(httpapi.Options{Engine: e})
	require.NoError(t, err)
	srv := httptest.NewUnstartedServer(h)
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			conns.Add(1)
		}
	}
	srv.Start()
	defer srv.Close()
	hc := newHTTP(t, HTTPOptions{BaseURL: srv.URL})
	for i := range 200 {
		_, err := hc.Execute(t.Context(), ts.Command{Kind: ts.KindSet, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v")})
		require.NoError(t, err)
	}
	require.Equal(t, int64(1), conns.Load())
}

// failFirst answers the first n requests with status code, or, with code
// 0, closes their connections after reading them (the request reached
// the server but got no reply); then it serves.
func failFirst(n int64, code int, hits *atomic.Int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if hits.Add(1) > n {
				next.ServeHTTP(w, r)
				return
			}
			if code != 0 {
				w.WriteHeader(code)
				return
			}
			conn, _, err := http.NewResponseController(w).Hijack()
			if err == nil {
				conn.Close()
			}
		})
	}
}

// Reads are retried after a 503 and after a broken connection; writes
// are not (they may have been applied), and fail with the error.
func TestHTTPRetriesOnlyWhatIsSafe(t *testing.T) {
	clk := testclock.New(epoch)
	for _, code := range []int{http.StatusServiceUnavailable, 0} {
		t.Run(fmt.Sprint(code), func(t *testing.T) {
			var hits atomic.Int64
			srv, e := serve(t, clk, nil, failFirst(2, code, &hits))
			_, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindSet, Key: []byte("k"), Value: []byte("v")})
			require.NoError(t, err)
			hc := newHTTP(t, HTTPOptions{BaseURL: srv.URL, RetryBackoff: time.Millisecond})
			r, err := hc.Execute(t.Context(), ts.Command{Kind: ts.KindGet, Key: []byte("k")})
			require.NoError(t, err)
			require.Equal(t, "v", string(r.Value))
			require.Equal(t, int64(3), hits.Load())

			hits.Store(0)
			_, err = hc.Execute(t.Context(), ts.Command{Kind: ts.KindIncrBy, Key: []byte("n"), Delta: 1})
			require.Error(t, err)
			require.Equal(t, int64(1), hits.Load(), "a write was retried")
			hits.Store(0)
			res, err := hc.Batch(t.Context(), []ts.Command{{Kind: ts.KindGet, Key: []byte("k")}, {Kind: ts.KindMGet, Keys: [][]byte{[]byte("k")}}})
			require.NoError(t, err)
			require.Equal(t, "v", string(res[0].Response.Value))
			require.Equal(t, int64(3), hits.Load())
			hits.Store(0)
			_, err = hc.Batch(t.Context(), []ts.Command{{Kind: ts.KindGet, Key: []byte("k")}, {Kind: ts.KindIncrBy, Key: []byte("n"), Delta: 1}})
			require.Error(t, err)
			require.Equal(t, int64(1), hits.Load(), "a batch with a write was retried")

			// The server is healthy again: the write was never applied.
			r, err = e.Execute(t.Context(), ts.Command{Kind: ts.KindGet, Key: []byte("n")})
			require.NoError(t, err)
			require.False(t, r.Found)
		})
	}
}

// A write is retried when its connection could not be made: it never
// reached the server.
func TestHTTPRetriesAWriteThatWasNotSent(t *testing.T) {
	var hits atomic.Int64
	srv, e := serve(t, testclock.New(epoch), nil, failFirst(0, 0, &hits))
	var dials atomic.Int64
	tr := http.DefaultTransport.(*http.Transport).Clone()
	d := &net.Dialer{}
	tr.DialContext = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) == 1 {
			return d.DialContext(ctx, network, "127.0.0.1:1") // nothing listens on port 1
		}
		return d.DialContext(ctx, network, addr)
	}
	hc := newHTTP(t, HTTPOptions{BaseURL: srv.URL, HTTPClient: &http.Client{Transport: tr}, RetryBackoff: time.Millisecond})
	r, err := hc.Execute(t.Context(), ts.Command{Kind: ts.KindIncrBy, Key: []byte("n"), Delta: 5})
	require.NoError(t, err)
	require.Equal(t, int64(5), r.Int)
	require.Equal(t, int64(2), dials.Load())
	require.Equal(t, int64(1), hits.Load())
	got, err := e.Execute(t.Context(), ts.Command{Kind: ts.KindGet, Key: []byte("n")})
	require.NoError(t, err)
	require.Equal(t, "5", string(got.Value))

	// With retries off, the dial error is the caller's.
	dials.Store(0)
	tr.CloseIdleConnections()
	hc = newHTTP(t, HTTPOptions{BaseURL: srv.URL, HTTPClient: &http.Client{Transport: tr}, MaxRetries: Disabled})
	_, err = hc.Execute(t.Context(), ts.Command{Kind: ts.KindIncrBy, Key: []byte("n"), Delta: 5})
	var op *net.OpError
	require.ErrorAs(t, err, &op)
	require.Equal(t, "dial", op.Op)
}

// A call ends with its context: a cancelled one does not send, and a
// deadline stops the retries of a read against a server that keeps
// failing.
func TestHTTPHonoursContext(t *testing.T) {
	var hits atomic.Int64
	srv, _ := serve(t, testclock.New(epoch), nil, failFirst(1<<30, http.StatusServiceUnavailable, &hits))
	hc := newHTTP(t, HTTPOptions{BaseURL: srv.URL, MaxRetries: 1000, RetryBackoff: 20 * time.Millisecond})
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	_, err := hc.Execute(ctx, ts.Command{Kind: ts.KindGet, Key: []byte("k")})
	require.ErrorIs(t, err, context.Canceled)
	require.Zero(t, hits.Load())

	ctx, cancel = context.WithTimeout(t.Context(), 150*time.Millisecond)
	defer cancel()
	t0 := time.Now()
	_, err = hc.Execute(ctx, ts.Command{Kind: ts.KindGet, Key: []byte("k")})
	require.Error(t, err)
	require.Less(t, time.Since(t0), 2*time.Second)
	require.Greater(t, hits.Load(), int64(1))
	require.Less(t, hits.Load(), int64(20))
}

// Tokens: the client sends its bearer token; a wrong one and a read-only
// one writing get the surface's errors.
func TestHTTPAuth(t *testing.T) {
	srv, _ := serve(t, testclock.New(epoch), func(o *httpapi.Options) {
		o.ReadWriteTokens, o.ReadOnlyTokens = []string{"rw"}, []string{"ro"}
	}, nil)
	set := ts.Command{Kind: ts.KindSet, Key: []byte("k"), Value: []byte("v")}
	get := ts.Command{Kind: ts.KindGet, Key: []byte("k")}
	_, err := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Token: "rw"}).Execute(t.Context(), set)
	require.NoError(t, err)
	_, err = newHTTP(t, HTTPOptions{BaseURL: srv.URL, Token: "nope"}).Execute(t.Context(), get)
	require.ErrorIs(t, err, httpapi.ErrUnauthorized)
	ro := newHTTP(t, HTTPOptions{BaseURL: srv.URL, Token: "ro", Encoding: JSON})
	r, err := ro.Execute(t.Context(), get)
	require.NoError(t, err)
	require.Equal(t, "v", string(r.Value))
	_, err = ro.Execute(t.Context(), set)
	require.ErrorIs(t, err, httpapi.ErrForbidden)
	_, err = ro.Batch(t.Context(), []ts.Command{get, set})
	require.ErrorIs(t, err, httpapi.ErrForbidden)

	for _, o := range []HTTPOptions{{}, {BaseURL: "ftp://x"}, {BaseURL: srv.URL, Encoding: "xml"}, {BaseURL: srv.URL, MaxRetries: -2}} {
		_, err := NewHTTP(o)
		require.ErrorIs(t, err, ErrInvalidOptions)
	}
}

// The HTTP client over TLS, with the server's self-signed certificate.
func TestHTTPOverTLS(t *testing.T) {
	e := newEngine(t, testclock.New(epoch))
	h, err := httpapi.New(httpapi.Options{Engine: e})
	require.NoError(t, err)
	srv := httptest.NewTLSServer(h)
	defer srv.Close()
	tr := srv.Client().Transport.(*http.Transport)
	hc := newHTTP(t, HTTPOptions{BaseURL: srv.URL, TLSConfig: tr.TLSClientConfig})
	_, err = hc.Execute(t.Context(), ts.Command{Kind: ts.KindSet, Key: []byte("k"), Value: []byte("tls")})
	require.NoError(t, err)
	r, err := hc.Execute(t.Context(), ts.Command{Kind: ts.KindGet, Key: []byte("k")})
	require.NoError(t, err)
	require.Equal(t, "tls", string(r.Value))
	_, err = newHTTP(t, HTTPOptions{BaseURL: srv.URL, MaxRetries: Disabled}).Execute(t.Context(), ts.Command{Kind: ts.KindGet, Key: []byte("k")})
	require.Error(t, err, "the certificate is not trusted by default")
}
