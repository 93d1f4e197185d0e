package h64

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSum(t *testing.T) {
	for _, c := range []struct {
		in   string
		want uint64
	}{
		{"foobar", 0x85944171f73967e8},
		{"", 0xcbf29ce484222325}, // the offset basis: nothing hashed
		{"a", 0xaf63dc4c8601ec8c},
	} {
		require.Equal(t, c.want, Sum(c.in), c.in)
	}
}
