package faultproxy

import (
	"bufio"
	"io"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// echo serves lines back on a loopback port for the test's length.
func echo(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return ln.Addr().String()
}

func start(t *testing.T) (*Proxy, net.Conn, *bufio.Reader) {
	t.Helper()
	p, err := Start(echo(t))
	require.NoError(t, err)
	t.Cleanup(func() { p.Close() })
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return p, c, bufio.NewReader(c)
}

// roundTrip sends a line and reads it back within wait.
func roundTrip(c net.Conn, r *bufio.Reader, line string, wait time.Duration) (string, error) {
	if _, err := c.Write([]byte(line + "\n")); err != nil {
		return "", err
	}
	_ = c.SetReadDeadline(time.Now().Add(wait))
	got, err := r.ReadString('\n')
	_ = c.SetReadDeadline(time.Time{})
	return got, err
}

func TestPassThrough(t *testing.T) {
	_, c, r := start(t)
	for _, line := range []string{"one", "two", string(make([]byte, 100<<10))} {
		got, err := roundTrip(c, r, line, 5*time.Second)
		require.NoError(t, err)
		require.Equal(t, line+"\n", got)
	}
}

func TestDelay(t *testing.T) {
	p, c, r := start(t)
	p.SetDelay(100 * time.Millisecond)
	t0 := time.Now()
	got, err := roundTrip(c, r, "slow", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "slow\n", got)
	// Held each way: at least twice the delay.
	require.GreaterOrEqual(t, time.Since(t0), 200*time.Millisecond)

	p.SetDelay(0)
	t0 = time.Now()
	_, err = roundTrip(c, r, "fast", 5*time.Second)
	require.NoError(t, err)
	require.Less(t, time.Since(t0), 100*time.Millisecond)
}

func TestBlackhole(t *testing.T) {
	p, c, r := start(t)
	p.SetBlackhole(true)
	_, err := roundTrip(c, r, "lost", 300*time.Millisecond)
	var ne net.Error
	require.ErrorAs(t, err, &ne)
	require.True(t, ne.Timeout())

	// Healed: the connection was never closed, and what was sent in the
	// blackhole stays lost.
	p.SetBlackhole(false)
	got, err := roundTrip(c, r, "back", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "back\n", got)
}

func TestDropAll(t *testing.T) {
	p, c, r := start(t)
	_, err := roundTrip(c, r, "hello", 5*time.Second)
	require.NoError(t, err)
	p.DropAll()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = r.ReadString('\n')
	require.ErrorIs(t, err, io.EOF)

	// New connections still pass.
	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c2.Close()
	got, err := roundTrip(c2, bufio.NewReader(c2), "again", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "again\n", got)
}

func TestRefuse(t *testing.T) {
	p, c, r := start(t)
	// c is through the proxy once a line went round: a dial returns when
	// the kernel queued the connection, before the proxy accepted it.
	_, err := roundTrip(c, r, "first", 5*time.Second)
	require.NoError(t, err)
	p.SetRefuse(true)
	c2, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c2.Close()
	_ = c2.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = bufio.NewReader(c2).ReadString('\n')
	require.ErrorIs(t, err, io.EOF)

	// Open connections are untouched.
	got, err := roundTrip(c, r, "still", 5*time.Second)
	require.NoError(t, err)
	require.Equal(t, "still\n", got)
}

func TestTargetDown(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	p, err := Start(addr)
	require.NoError(t, err)
	defer p.Close()
	c, err := net.Dial("tcp", p.Addr())
	require.NoError(t, err)
	defer c.Close()
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err = c.Read(make([]byte, 1))
	require.ErrorIs(t, err, io.EOF)
}

func TestClose(t *testing.T) {
	p, c, r := start(t)
	require.NoError(t, p.Close())
	_ = c.SetReadDeadline(time.Now().Add(5 * time.Second))
	_, err := r.ReadString('\n')
	require.ErrorIs(t, err, io.EOF)
	_, err = net.DialTimeout("tcp", p.Addr(), time.Second)
	require.Error(t, err)
}
