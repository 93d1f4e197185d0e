package stream

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// FuzzParseID: any text parses or is refused with ErrInvalidID, never a
// panic; a parsed ID's text parses back to it, strictly and as a bound.
func FuzzParseID(f *testing.F) {
	for _, s := range []string{"-", "+", "0", "5-3", "18446744073709551615-18446744073709551615", " +7-08", "-1", "1-*", "(5", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, missing := range []uint64{0, MaxID.Seq} {
			id, err := ParseID(s, missing)
			if err != nil {
				require.ErrorIs(t, err, ErrInvalidID)
				continue
			}
			back, err := ParseStrictID(id.String())
			require.NoError(t, err)
			require.Equal(t, id, back)
		}
		if id, auto, err := ParseAddID(s); err == nil && !auto {
			again, err := ParseStrictID(s)
			require.NoError(t, err)
			require.Equal(t, id, again)
		}
	})
}
