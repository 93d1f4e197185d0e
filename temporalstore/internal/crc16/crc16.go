package crc16

// table[i] is the CRC of the byte i, shifted into the high byte.
var table = func() (t [256]uint16) {
	for i := range t {
		c := uint16(i) << 8
		for range 8 {
			if c&0x8000 != 0 {
				c = c<<1 ^ 0x1021
			} else {
				c <<= 1
			}
		}
		t[i] = c
	}
	return t
}()

// Checksum is the CRC-16/XMODEM of b.
func Checksum(b []byte) uint16 {
	var c uint16
	for _, x := range b {
		c = c<<8 ^ table[byte(c>>8)^x]
	}
	return c
}
