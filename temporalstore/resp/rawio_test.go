package resp

import (
	"bytes"
	"crypto/rand"
	"errors"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// tcpPair returns the two ends of a loopback TCP connection: the accepted
// one (as the server holds it) and the dialled one.
func tcpPair(t *testing.T) (server, client net.Conn) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	accepted := make(chan net.Conn, 1)
	go func() {
		c, err := ln.Accept()
		if err != nil {
			close(accepted)
			return
		}
		accepted <- c
	}()
	client, err = net.Dial("tcp", ln.Addr().String())
	require.NoError(t, err)
	server = <-accepted
	require.NotNil(t, server)
	t.Cleanup(func() { server.Close(); client.Close() })
	return server, client
}

func TestRawIORoundTrip(t *testing.T) {
	srv, cli := tcpPair(t)
	r, w := rawIO(srv)
	_, err := cli.Write([]byte("*1\r\n$4\r\nPING\r\n"))
	require.NoError(t, err)
	buf := make([]byte, 64)
	n, err := r.Read(buf)
	require.NoError(t, err)
	require.Equal(t, "*1\r\n$4\r\nPING\r\n", string(buf[:n]))

	n, err = w.Write([]byte("+PONG\r\n"))
	require.NoError(t, err)
	require.Equal(t, 7, n)
	got := make([]byte, 7)
	_, err = io.ReadFull(cli, got)
	require.NoError(t, err)
	require.Equal(t, "+PONG\r\n", string(got))

	n, err = r.Read(nil)
	require.NoError(t, err)
	require.Zero(t, n)
}

// A write larger than the socket's buffers waits for the peer to read
// (the would-block path) and delivers every byte in order.
func TestRawIOLargeWrite(t *testing.T) {
	srv, cli := tcpPair(t)
	_, w := rawIO(srv)
	data := make([]byte, 8<<20+123)
	_, err := rand.Read(data)
	require.NoError(t, err)
	got := make(chan []byte, 1)
	go func() {
		var b bytes.Buffer
		chunk := make([]byte, 4096)
		for b.Len() < len(data) {
			n, err := cli.Read(chunk)
			if err != nil {
				break
			}
			b.Write(chunk[:n])
			if b.Len() < 1<<20 {
				time.Sleep(time.Millisecond) // slow at first: the writer must wait
			}
		}
		got <- b.Bytes()
	}()
	n, err := w.Write(data)
	require.NoError(t, err)
	require.Equal(t, len(data), n)
	require.True(t, bytes.Equal(data, <-got))
}

func TestRawIOEnds(t *testing.T) {
	t.Run("peer closes: EOF", func(t *testing.T) {
		srv, cli := tcpPair(t)
		r, _ := rawIO(srv)
		require.NoError(t, cli.Close())
		_, err := r.Read(make([]byte, 16))
		require.ErrorIs(t, err, io.EOF)
	})
	t.Run("closed locally while reading: net.ErrClosed", func(t *testing.T) {
		srv, _ := tcpPair(t)
		r, _ := rawIO(srv)
		done := make(chan error, 1)
		go func() {
			_, err := r.Read(make([]byte, 16))
			done <- err
		}()
		time.Sleep(20 * time.Millisecond)
		require.NoError(t, srv.Close())
		select {
		case err := <-done:
			require.ErrorIs(t, err, net.ErrClosed)
		case <-time.After(5 * time.Second):
			t.Fatal("a read blocked on a closed connection did not return")
		}
	})
	t.Run("peer gone: writes fail", func(t *testing.T) {
		srv, cli := tcpPair(t)
		_, w := rawIO(srv)
		require.NoError(t, cli.(*net.TCPConn).SetLinger(0)) // close with a reset
		require.NoError(t, cli.Close())
		var err error
		for range 100 {
			if _, err = w.Write(make([]byte, 64<<10)); err != nil {
				break
			}
			time.Sleep(time.Millisecond)
		}
		require.Error(t, err)
		require.False(t, errors.Is(err, io.EOF))
	})
}

// A connection that is not a plain socket (TLS, a pipe) is used as is.
func TestRawIOOtherConns(t *testing.T) {
	a, b := net.Pipe()
	defer a.Close()
	defer b.Close()
	r, w := rawIO(a)
	require.Equal(t, a, r)
	require.Equal(t, a, w)
}
