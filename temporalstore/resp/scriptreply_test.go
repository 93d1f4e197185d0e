package resp

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseReply(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want reply
		err  bool
	}{
		{in: "+OK\r\n", want: reply{kind: '+', str: []byte("OK")}},
		{in: "-ERR x\r\n", want: reply{kind: '-', str: []byte("ERR x")}},
		{in: ":-12\r\n", want: reply{kind: ':', n: -12}},
		{in: "$3\r\nabc\r\n", want: reply{kind: '$', str: []byte("abc")}},
		{in: "$0\r\n\r\n", want: reply{kind: '$', str: []byte{}}},
		{in: "$-1\r\n", want: reply{kind: '$', null: true}},
		{in: "*-1\r\n", want: reply{kind: '*', null: true}},
		{in: "*2\r\n:1\r\n$1\r\nx\r\n", want: reply{kind: '*', elems: []reply{{kind: ':', n: 1}, {kind: '$', str: []byte("x")}}}},
		{in: "%1\r\n+a\r\n,1.5\r\n", want: reply{kind: '%', elems: []reply{{kind: '+', str: []byte("a")}, {kind: ',', f: 1.5}}}},
		{in: "_\r\n", want: reply{kind: '_', null: true}},
		{in: "#t\r\n", want: reply{kind: '#', n: 1}},
		{in: "#f\r\n", want: reply{kind: '#'}},
		{in: "$5\r\nabc\r\n", err: true},
		{in: "*3\r\n:1\r\n", err: true},
		{in: "?\r\n", err: true},
		{in: ":x\r\n", err: true},
		{in: "", err: true},
		{in: "#x\r\n", err: true},
	} {
		got, rest, err := parseReply([]byte(tc.in))
		if tc.err {
			require.Error(t, err, tc.in)
			continue
		}
		require.NoError(t, err, tc.in)
		require.Empty(t, rest, tc.in)
		require.Equal(t, tc.want, got, tc.in)
	}
}

func FuzzParseReply(f *testing.F) {
	for _, s := range []string{"+OK\r\n", "*2\r\n:1\r\n$1\r\nx\r\n", "%1\r\n+a\r\n,1.5\r\n", "$-1\r\n", "*1\r\n*1\r\n*1\r\n_\r\n"} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		r, rest, err := parseReply(b)
		if err != nil {
			return
		}
		require.LessOrEqual(t, len(rest), len(b))
		_ = r
	})
}
