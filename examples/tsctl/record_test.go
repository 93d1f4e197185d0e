package main

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

func strp(s string) *string { return &s }

// A record survives marshal and unmarshal byte for byte; a line is text
// unless one of its byte strings is not UTF-8, and then all are base64.
func TestRecordRoundTrip(t *testing.T) {
	cases := []struct {
		name     string
		rec      record
		encoding string
	}{
		{"text string", record{Key: "k", Type: "string", Value: strp("héllo\x00")}, ""},
		{"empty string", record{Key: "k", Type: "string", Value: strp("")}, ""},
		{"binary key", record{Key: "\xff", Type: "string", Value: strp("v")}, "base64"},
		{"binary value", record{Key: "k", Type: "string", Value: strp("\xc3\x28"), TTLMillis: 5}, "base64"},
		{"hash", record{Key: "h", Type: "hash", Fields: map[string]string{"\xfe": "a", "b": "\x00"}}, "base64"},
		{"set", record{Key: "s", Type: "set", Members: []string{"a", "b"}}, ""},
		{"zset", record{Key: "z", Type: "zset", Scores: []scored{{"a", score(math.Inf(1))}, {"b", score(math.Inf(-1))}, {"c", 0.30000000000000004}}}, ""},
		{"list", record{Key: "l", Type: "list", Items: []string{"x", "\xed\xa0\x80"}}, "base64"},
		{"series", record{Key: "f", Type: "series", Points: []point{{1, "a"}, {2, "\xff"}}}, "base64"},
		{"stream", record{Key: "x", Type: "stream", Entries: []streamEntry{{"1-1", []string{"f", "v\xff"}}}}, "base64"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			orig := c.rec.clone()
			line, err := c.rec.marshal()
			require.NoError(t, err)
			require.True(t, json.Valid(line), "%s", line)
			var got record
			require.NoError(t, got.unmarshal(line))
			require.Equal(t, c.encoding, got.Encoding)
			got.Encoding, orig.Encoding = "", ""
			require.Equal(t, *orig, got)
			require.Equal(t, *orig, c.rec, "marshal leaves the record alone")
		})
	}
}

func TestRecordRefusesUnknownEncoding(t *testing.T) {
	var r record
	require.Error(t, r.unmarshal([]byte(`{"key":"k","type":"string","encoding":"hex","value":"00"}`)))
	require.Error(t, r.unmarshal([]byte(`{"key":"!!","type":"string","encoding":"base64","value":"00"}`)))
	require.Error(t, r.unmarshal([]byte(`{"key":"k","type":"zset","scores":[{"member":"a","score":"lots"}]}`)))
}
