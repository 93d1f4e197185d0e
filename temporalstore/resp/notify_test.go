package resp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

// The forms CONFIG GET gives are redis-server 7.0.15's for the same SET.
func TestNotifyFlagsFormat(t *testing.T) {
	for _, tc := range []struct{ in, out, err string }{
		{in: "", out: ""},
		{in: "KEA", out: "AKE"},
		{in: "Elg", out: "glE"},
		{in: "Kgxmn", out: "gxnKm"},
		{in: "KEAmn", out: "AKEm"},
		{in: "ndtexzhsl$gEK", out: "AKE"},
		{in: "ndtexzhsl$EK", out: "$lshzxetdnKE"},
		{in: "AA", out: "A"},
		{in: "KA$lq", err: errNotifyClass.Error()},
		{in: "k", err: errNotifyClass.Error()},
	} {
		f, err := parseNotify(tc.in)
		if tc.err != "" {
			require.EqualError(t, err, tc.err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Equal(t, tc.out, formatNotify(f), tc.in)
	}
}

// Whatever parses formats to a value that parses to the same classes,
// but for n, which A's form hides (as Redis's does).
func FuzzParseNotify(f *testing.F) {
	for _, s := range []string{"", "KEA", "Kgxmn", "$lshzxetdnKE", "Q"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		flags, err := parseNotify(s)
		if err != nil {
			return
		}
		again, err := parseNotify(formatNotify(flags))
		require.NoError(t, err)
		if flags&notifyAll == notifyAll {
			flags &^= notifyNew
		}
		require.Equal(t, flags, again)
	})
}
