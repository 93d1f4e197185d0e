//go:build linux

package benchkit

import (
	"bufio"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestNextRequest(t *testing.T) {
	for _, tc := range []struct {
		in   string
		name string
		n    int
	}{
		{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n", "SET", 27},
		{"*2\r\n$3\r\nget\r\n$1\r\nk\r\n*2\r\n", "get", 20},
		{"*2\r\n$3\r\nget\r\n$1\r\n", "", 0}, // partial
		{"*2\r\n$3\r\nget\r\n$5\r\nk\r\n", "", 0},
		{"*2\r\n", "", 0},
		{"PING\r\n", "PING", 6},
		{"\r\n", "", 2},
		{"*x\r\n", "", 4}, // not RESP: skipped
	} {
		name, n := nextRequest([]byte(tc.in))
		require.Equal(t, tc.name, string(name), "%q", tc.in)
		require.Equal(t, tc.n, n, "%q", tc.in)
	}
}

func FuzzNextRequest(f *testing.F) {
	for _, s := range []string{"*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n", "PING\r\n", "*1\r\n$-1\r\n", "*2\r\n$3\r\nget"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, p []byte) {
		if len(p) == 0 {
			return
		}
		_, n := nextRequest(p)
		require.GreaterOrEqual(t, n, 0)
		require.LessOrEqual(t, n, len(p))
	})
}

// The null server answers pipelined requests in order, a partial one once
// the rest arrives, and GETs with a value of the size set.
func TestNullServerAnswers(t *testing.T) {
	s, err := StartNullServer()
	require.NoError(t, err)
	defer s.Close()
	s.SetValueSize(5)
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
	require.NoError(t, err)
	defer c.Close()
	_, err = c.Write([]byte("*3\r\n$3\r\nSET\r\n$1\r\nk\r\n$1\r\nv\r\n*2\r\n$3\r\nGET\r\n$1"))
	require.NoError(t, err)
	r := bufio.NewReader(c)
	line, err := r.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "+OK\r\n", line)
	_, err = c.Write([]byte("\r\nk\r\nCONFIG GET save\r\n"))
	require.NoError(t, err)
	for _, want := range []string{"$5\r\n", "xxxxx\r\n", "*0\r\n"} {
		line, err = r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, want, line)
	}
}

// The durable null server answers only what it has written to its log.
func TestDurableNullServerLogsBeforeAnswering(t *testing.T) {
	dir := t.TempDir()
	s, err := StartDurableNullServer(dir)
	require.NoError(t, err)
	defer s.Close()
	c, err := net.Dial("tcp", "127.0.0.1:"+strconv.Itoa(s.Port))
	require.NoError(t, err)
	defer c.Close()
	r := bufio.NewReader(c)
	reqs := "*3\r\n$4\r\nXADD\r\n$1\r\ns\r\n$1\r\n*\r\n"
	for i := 1; i <= 3; i++ {
		_, err = c.Write([]byte(reqs))
		require.NoError(t, err)
		line, err := r.ReadString('\n')
		require.NoError(t, err)
		require.Equal(t, "+OK\r\n", line)
		logged, err := os.ReadFile(filepath.Join(dir, "null.log"))
		require.NoError(t, err)
		require.Equal(t, strings.Repeat(reqs, i), string(logged))
	}
}
