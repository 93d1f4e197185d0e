package pubsub

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestMatch(t *testing.T) {
	for _, tc := range []struct {
		pattern, s string
		want       bool
	}{
		{"*", "", false}, // as redis-server: only an empty pattern matches ""
		{"*", "anything", true},
		{"news.*", "news.art", true},
		{"news.*", "news", false},
		{"h?llo", "hello", true},
		{"h?llo", "hllo", false},
		{"h[ae]llo", "hallo", true},
		{"h[ae]llo", "hillo", false},
		{"h[^e]llo", "hallo", true},
		{"h[^e]llo", "hello", false},
		{"h[a-b]llo", "hbllo", true},
		{"h[b-a]llo", "hallo", true}, // a reversed range is swapped
		{"h[a-b]llo", "hcllo", false},
		{`h\*llo`, "h*llo", true},
		{`h\*llo`, "hello", false},
		{`[\]]`, "]", true},
		{"a[bc", "ab", true}, // an unterminated class ends at the pattern's end
		{"a[bc", "abc", false},
		{"[", "x", false},
		{"a**b", "axxb", true},
		{"a*b*c", "abbbc", true},
		{"a*b*c", "abbbd", false},
		{"", "", true},
		{"", "a", false},
		{"a*", "a", true},
		{"\xff", "\xff", true},
		{"[\x01-\xff]", "a", false}, // signed chars: 0xff is -1, the range is -1..1
		{"[\x01-\xff]", "\x00", true},
	} {
		require.Equal(t, tc.want, Match(tc.pattern, tc.s), "%q ~ %q", tc.pattern, tc.s)
	}
	require.False(t, Match(strings.Repeat("*", MaxPatternLen+1), "x"))
	require.True(t, Match(strings.Repeat("*", MaxPatternLen), "x"))
	// A pathological pattern ends quickly.
	require.False(t, Match(strings.Repeat("a*", 40)+"b", strings.Repeat("a", 200)))
}

func FuzzMatch(f *testing.F) {
	f.Add("a*b?[c-d]\\e", "axbycde")
	f.Fuzz(func(t *testing.T, p, s string) {
		Match(p, s) // never panics
		// Patterns past MaxPatternLen match nothing.
		if e := escape(s); len(e) <= MaxPatternLen {
			require.True(t, Match(e, s), "an escaped string matches itself")
		}
	})
}

// escape makes s a pattern matching only s.
func escape(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		b.WriteByte('\\')
		b.WriteByte(s[i])
	}
	return b.String()
}
