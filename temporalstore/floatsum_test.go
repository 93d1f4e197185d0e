package temporalstore

import (
	"errors"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"
)

// addFloat gives Redis's INCRBYFLOAT digits (checked against redis-server
// by the resp package's TestIncrByFloatDigitsMatchRedis).
func TestAddFloat(t *testing.T) {
	errOld := errors.New("old is not a float")
	for _, tc := range []struct {
		old     string
		found   bool
		inc     string
		want    string
		wantErr error
	}{
		{"", false, "0.1", "0.1", nil},
		{"0.1", true, "0.2", "0.3", nil},
		{"10.5", true, "0.1", "10.6", nil},
		{"-0.1", true, "0.1", "0", nil},
		{"5", true, "3.0e-17", "5.00000000000000003", nil},
		{"0", true, "1e20", "100000000000000000000", nil},
		{"1", true, "-1.5", "-0.5", nil},
		{"0x10", true, "0x1", "17", nil},
		{"1", true, "0x1_0", "", ErrInvalid},
		{"abc", true, "1", "", errOld},
		{"inf", true, "1", "", ErrInvalid}, // Redis reads a stored inf; the sum is refused
		{"inf", true, "x", "", ErrInvalid},
		{" inf", true, "1", "", errOld},
		{"1", true, "x", "", ErrInvalid},
		{"1e4932", true, "1e4932", "", ErrInvalid},
	} {
		got, _, err := addFloat([]byte(tc.old), tc.found, []byte(tc.inc), 0, errOld)
		if tc.wantErr != nil {
			require.ErrorIs(t, err, tc.wantErr, "%s + %s", tc.old, tc.inc)
			continue
		}
		require.NoError(t, err, "%s + %s", tc.old, tc.inc)
		require.Equal(t, tc.want, string(got), "%s + %s", tc.old, tc.inc)
	}
	// A float64 increment counts as its shortest digits.
	got, f, err := addFloat([]byte("10.5"), true, nil, 0.1, errOld)
	require.NoError(t, err)
	require.Equal(t, "10.6", string(got))
	require.Equal(t, 10.6, f)
}

// Whatever the texts, addFloat returns an error or a sum that parses back.
func FuzzAddFloat(f *testing.F) {
	f.Add("0.1", "0.2")
	f.Add("-1e300", "1e-300")
	f.Add("x", "1")
	f.Fuzz(func(t *testing.T, old, inc string) {
		got, _, err := addFloat([]byte(old), true, []byte(inc), 0, ErrNotFloat)
		if err != nil {
			return
		}
		_, ok := parseLongDouble(got)
		require.True(t, ok, "%q + %q = %q", old, inc, got)
		_, err = strconv.ParseFloat(string(got), 64)
		if err != nil {
			require.ErrorIs(t, err, strconv.ErrRange, "%q", got)
		}
	})
}
