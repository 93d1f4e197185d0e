package api

// Bitmap kinds over strings, with Redis's semantics. A bit's offset counts
// from the most significant bit of the first byte.
const (
	// KindSetBit sets the bit at offset Start to Delta (0 or 1), growing
	// the string with zero bytes as needed; Response.Int is the bit's old
	// value (SETBIT).
	KindSetBit Kind = "setbit"
	// KindGetBit returns the bit at offset Start in Response.Int; 0 past
	// the end and for a missing key (GETBIT).
	KindGetBit Kind = "getbit"
	// KindBitCount counts the set bits of the string, or of Bits's range
	// (BITCOUNT).
	KindBitCount Kind = "bitcount"
	// KindBitPos returns the offset of the first bit equal to Delta in the
	// string, or in Bits's range, or -1; searching for 0 without an end,
	// the string counts as followed by zero bits (BITPOS).
	KindBitPos Kind = "bitpos"
	// KindBitOp stores at Dest the AND, OR, XOR (Aggregator "and", "or",
	// "xor") of the strings at Keys, or the NOT of the one string at Keys
	// (Aggregator "not"), a missing key counting as empty and a shorter
	// string as zero-padded; Response.Int is the result's length (BITOP).
	// Dest and Keys share a key group.
	KindBitOp Kind = "bitop"
)

// BitRange is BITCOUNT's and BITPOS's range: Start and End inclusive,
// negative counting from the end, in bytes or (Bit) in bits. HasEnd says
// End was given (BITPOS's start may come alone).
type BitRange struct {
	Start, End  int64
	HasEnd, Bit bool
}
