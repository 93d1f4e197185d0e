//go:build linux

package resp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// On Linux a TCP connection takes the raw path.
func TestRawIOTakesTCP(t *testing.T) {
	srv, _ := tcpPair(t)
	r, w := rawIO(srv)
	require.IsType(t, rawReader{}, r)
	require.IsType(t, rawWriter{}, w)
}
