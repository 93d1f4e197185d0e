package freeport

import (
	"net"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestAddrIsBindableDistinctAndBelowTheEphemeralRange(t *testing.T) {
	seen := map[string]bool{}
	for range 200 {
		a, err := Addr()
		require.NoError(t, err)
		require.False(t, seen[a], "handed out twice: %s", a)
		seen[a] = true
		_, ps, err := net.SplitHostPort(a)
		require.NoError(t, err)
		p, _ := strconv.Atoi(ps)
		require.GreaterOrEqual(t, p, lowest)
		require.Less(t, p, ephemeralLow())
	}
	a, err := Addr()
	require.NoError(t, err)
	l, err := net.Listen("tcp", a)
	require.NoError(t, err)
	l.Close()
}
