package resp

import (
	"errors"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// Replies where a Redis client's own tests met ours differing from
// redis-server 7's; each step's reply, or error, is Redis's.
func TestDropInReplies(t *testing.T) {
	addr, _ := start(t, Options{})
	c := client(t, addr, 2)
	ctx := t.Context()
	steps := []step{
		ok(int64(3), "RPUSH", "dropin:l", "a", "b", "c"),
		bad("ERR value is out of range, value must between -9223372036854775807 and 9223372036854775807",
			"LPOS", "dropin:l", "c", "RANK", "-9223372036854775808"),
		ok(nil, "LPOS", "dropin:l", "c", "RANK", "-9223372036854775807"),
		ok(int64(2), "LPOS", "dropin:l", "c", "RANK", "-1"),
		bad("ERR wrong number of arguments for 'lpop' command", "LPOP", "dropin:l", "1", "2"),
		bad("ERR wrong number of arguments for 'rpop' command", "RPOP", "dropin:l", "1", "2"),
		bad("ERR syntax error", "SPOP", "dropin:s", "1", "2"),
		ok("OK", "SET", "dropin:k", "abc"),
		bad("ERR string exceeds maximum allowed size (proto-max-bulk-len)", "SETRANGE", "dropin:k", "9223372036854775807", "A"),
		bad("ERR string exceeds maximum allowed size (proto-max-bulk-len)", "SETRANGE", "dropin:k", "5368709120", "x"),
		ok(int64(3), "SETRANGE", "dropin:k", "9223372036854775807", ""),
		ok("abc", "GET", "dropin:k"),
	}
	for _, st := range steps {
		r, err := c.Do(ctx, st.args...).Result()
		if errors.Is(err, redis.Nil) {
			r, err = nil, nil
		}
		if st.err != "" {
			require.Error(t, err, "%v", st.args)
			require.Equal(t, st.err, err.Error(), "%v", st.args)
			continue
		}
		require.NoError(t, err, "%v", st.args)
		require.Equal(t, st.want, r, "%v", st.args)
	}
}
