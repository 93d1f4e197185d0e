package crc16

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestChecksum(t *testing.T) {
	tests := []struct {
		in   string
		want uint16
	}{
		{"", 0},
		{"123456789", 0x31C3}, // the catalogue's check value
		{"foo", 0xAF96},       // Redis: CLUSTER KEYSLOT foo is 12182, 0xAF96 mod 16384
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, Checksum([]byte(tc.in)), "%q", tc.in)
	}
}

// FuzzChecksum compares the table with the bit-at-a-time definition.
func FuzzChecksum(f *testing.F) {
	f.Add([]byte("123456789"))
	f.Add([]byte{0xff, 0x00, 0x80})
	f.Fuzz(func(t *testing.T, b []byte) {
		var c uint16
		for _, x := range b {
			c ^= uint16(x) << 8
			for range 8 {
				if c&0x8000 != 0 {
					c = c<<1 ^ 0x1021
				} else {
					c <<= 1
				}
			}
		}
		require.Equal(t, c, Checksum(b))
	})
}
