package resp

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

// TestWatchSeesEveryWriteOfAnotherClient: a watched key another client
// writes and undoes (created and deleted again, set back to its value)
// fails EXEC, as Redis's does; one left alone, or written before the
// WATCH, does not. Replies are compared with redis-server's.
func TestWatchSeesEveryWriteOfAnotherClient(t *testing.T) {
	addr, _ := start(t, Options{})
	ref := testredis.Start(t)
	cases := []struct {
		name  string
		setup [][]string // by the watcher, before WATCH
		other [][]string // by the other client, between WATCH and MULTI
	}{
		{"absent, created and deleted", nil, [][]string{{"SET", "{w}k", "v"}, {"DEL", "{w}k"}}},
		{"absent, left alone", nil, nil},
		{"absent, another key written", nil, [][]string{{"SET", "{w}other", "v"}}},
		{"string set back to its value", [][]string{{"SET", "{w}k", "v"}}, [][]string{{"SET", "{w}k", "x"}, {"SET", "{w}k", "v"}}},
		{"hash field added and removed", [][]string{{"HSET", "{w}k", "f", "1"}}, [][]string{{"HSET", "{w}k", "g", "2"}, {"HDEL", "{w}k", "g"}}},
		{"list pushed and popped", [][]string{{"RPUSH", "{w}k", "a"}}, [][]string{{"RPUSH", "{w}k", "b"}, {"RPOP", "{w}k"}}},
		{"written before the watch", [][]string{{"SET", "{w}k", "v"}, {"DEL", "{w}k"}}, nil},
		{"renamed onto and away", nil, [][]string{{"RPUSH", "{w}src", "a"}, {"RENAME", "{w}src", "{w}k"}, {"RENAME", "{w}k", "{w}src"}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got [2][]string
			for i, a := range []string{addr, ref.Options().Addr} {
				me, other := dialRaw(t, a), dialRaw(t, a)
				for _, k := range []string{"{w}k", "{w}other", "{w}src"} {
					me.do(t, "DEL", k)
				}
				for _, c := range tc.setup {
					me.do(t, c...)
				}
				got[i] = append(got[i], me.do(t, "WATCH", "{w}k"))
				for _, c := range tc.other {
					got[i] = append(got[i], other.do(t, c...))
				}
				got[i] = append(got[i], me.do(t, "MULTI"), me.do(t, "SET", "{w}mine", "1"), me.do(t, "EXEC"))
			}
			require.Equal(t, got[1], got[0], "ours, then redis-server's")
		})
	}
}
