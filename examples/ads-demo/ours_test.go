package main

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParsePoints(t *testing.T) {
	type point struct {
		at    int64
		value string
	}
	cases := []struct {
		name    string
		raw     string
		want    []point
		wantErr error
	}{
		{"none", "*0\r\n", nil, nil},
		{"two", "*2\r\n*2\r\n:5\r\n$4\r\n1:20\r\n*2\r\n:1767225600000\r\n$0\r\n\r\n",
			[]point{{5, "1:20"}, {1767225600000, ""}}, nil},
		{"a value holding CRLF", "*1\r\n*2\r\n:7\r\n$4\r\na\r\nb\r\n", []point{{7, "a\r\nb"}}, nil},
		{"a server error", "-WRONGTYPE Operation against a key holding the wrong kind of value\r\n", nil, ErrServer},
		{"not points", ":1\r\n", nil, ErrReply},
		{"a triple", "*1\r\n*3\r\n:5\r\n$1\r\nx\r\n$1\r\ny\r\n", nil, ErrReply},
		{"cut short", "*1\r\n*2\r\n:5\r\n$9\r\nabc\r\n", nil, ErrReply},
		{"empty", "", nil, ErrReply},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var got []point
			err := parsePoints([]byte(c.raw), func(at int64, v []byte) error {
				got = append(got, point{at, string(v)})
				return nil
			})
			if c.wantErr != nil {
				require.ErrorIs(t, err, c.wantErr)
				return
			}
			require.NoError(t, err)
			require.Equal(t, c.want, got)
		})
	}
}

func TestParseImp(t *testing.T) {
	cases := []struct {
		in   string
		want Imp
		ok   bool
	}{
		{"12:345", Imp{Campaign: 12, Charge: 345}, true},
		{"12:345:1767225600000", Imp{Campaign: 12, Charge: 345}, true}, // a sorted-set member
		{"0:1", Imp{Campaign: 0, Charge: 1}, true},
		{"12", Imp{}, false},
		{":5", Imp{}, false},
		{"1a:2", Imp{}, false},
		{"-1:2", Imp{}, false},
		{"", Imp{}, false},
	}
	for _, c := range cases {
		got, err := parseImp(c.in)
		if !c.ok {
			require.ErrorIs(t, err, ErrReply, c.in)
			continue
		}
		require.NoError(t, err, c.in)
		require.Equal(t, c.want, got, c.in)
		fromBytes, err := parseImp([]byte(c.in))
		require.NoError(t, err)
		require.Equal(t, got, fromBytes)
		require.Equal(t, c.in[:len(impValue(got))], impValue(got), "impValue writes what parseImp reads")
	}
}
