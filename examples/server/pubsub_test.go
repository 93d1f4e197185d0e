package main

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// next reads one more reply (a pushed frame) from the connection.
func (rc *rawConn) next(t *testing.T) string {
	require.NoError(t, rc.c.SetDeadline(time.Now().Add(5*time.Second)))
	var out strings.Builder
	require.NoError(t, readReply(rc.r, &out))
	return out.String()
}

// A subscriber's frames and a publisher's replies are redis-server 7's,
// byte for byte, in RESP2 and RESP3: subscribe confirmations, message
// then pmessage, counts, PUBSUB introspection, subscribed mode's limits
// (RESP2), shard channels apart, and RESET.
func TestPubSubMatchesRedis(t *testing.T) {
	redisAddr := startRedis(t)
	respAddr := serveStreams(t)
	for _, proto := range []string{"2", "3"} {
		t.Run("resp"+proto, func(t *testing.T) {
			type side struct{ sub, pub *rawConn }
			sides := []side{{dialRaw(t, redisAddr), dialRaw(t, redisAddr)}, {dialRaw(t, respAddr), dialRaw(t, respAddr)}}
			ch := "news" + proto
			// steps: "s" runs on the subscriber, "p" on the publisher, "r"
			// reads one pushed frame from the subscriber.
			steps := [][]string{
				{"s", "SUBSCRIBE", ch, "other" + proto},
				{"r"},
				{"s", "PSUBSCRIBE", "news" + proto + "*"},
				{"s", "SUBSCRIBE", ch},
				{"p", "PUBLISH", ch, "hello"},
				{"r"}, {"r"},
				{"p", "PUBLISH", "nobody" + proto, "x"},
				{"p", "PUBSUB", "NUMSUB", ch, "other" + proto, "none"},
				{"p", "PUBSUB", "NUMPAT"},
				{"p", "PUBSUB", "CHANNELS", "news" + proto + "*"},
				{"s", "PING"},
				{"s", "PING", "hi"},
				{"s", "GET", "k"},
				{"s", "UNSUBSCRIBE", ch},
				{"s", "PUNSUBSCRIBE", "news" + proto + "*"},
				{"s", "UNSUBSCRIBE", "other" + proto},
				{"s", "UNSUBSCRIBE"},
				{"s", "SSUBSCRIBE", "{s}" + ch},
				{"p", "SPUBLISH", "{s}" + ch, "shard"},
				{"r"},
				{"p", "PUBLISH", "{s}" + ch, "not to shard subscribers"},
				{"p", "PUBSUB", "SHARDNUMSUB", "{s}" + ch},
				{"s", "SUNSUBSCRIBE", "{s}" + ch},
				{"s", "RESET"},
				{"s", "PING"},
			}
			if proto == "3" {
				for _, sd := range sides {
					sd.sub.do(t, "HELLO", "3")
					sd.pub.do(t, "HELLO", "3")
				}
			}
			for _, st := range steps {
				var got [2]string
				for i, sd := range sides {
					switch st[0] {
					case "s":
						got[i] = sd.sub.do(t, st[1:]...)
					case "p":
						got[i] = sd.pub.do(t, st[1:]...)
					case "r":
						got[i] = sd.sub.next(t)
					}
				}
				require.Equal(t, got[0], got[1], "%v", st)
			}
		})
	}
}

// go-redis's PubSub receives messages, pattern messages and shard
// messages in RESP2 and RESP3.
func TestPubSubWithGoRedis(t *testing.T) {
	respAddr := serveStreams(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx := t.Context()
			rc := redis.NewClient(&redis.Options{Addr: respAddr, Protocol: proto})
			defer rc.Close()
			ps := rc.Subscribe(ctx, "events")
			defer ps.Close()
			_, err := ps.Receive(ctx) // the subscription's confirmation
			require.NoError(t, err)
			require.NoError(t, ps.PSubscribe(ctx, "ev*"))
			msgs := ps.Channel()
			// PUBLISH reaches the exact subscription and the pattern.
			require.Eventually(t, func() bool {
				n, err := rc.Publish(ctx, "events", "payload").Result()
				return err == nil && n == 2
			}, 5*time.Second, 20*time.Millisecond)
			// Until both kinds came (a publish before the pattern was
			// registered reached the channel alone).
			got := map[string]bool{}
			timeout := time.After(5 * time.Second)
			for !got["events|"] || !got["events|ev*"] {
				select {
				case m := <-msgs:
					if m.Payload == "payload" {
						got[m.Channel+"|"+m.Pattern] = true
					}
				case <-timeout:
					t.Fatalf("got %v", got)
				}
			}
			n, err := rc.PubSubNumSub(ctx, "events").Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), n["events"])
		})
	}
}

// A RESP3 subscriber blocked in XREAD or BLPOP still gets its messages,
// as redis-server's does; a consumer that disconnects while blocked in
// XREADGROUP takes nothing from the stream.
func TestBlockedConnections(t *testing.T) {
	respAddr := serveStreams(t)
	for _, blocking := range [][]string{{"XREAD", "BLOCK", "3000", "STREAMS", "quiet", "$"}, {"BLPOP", "quietlist", "3"}} {
		t.Run(blocking[0], func(t *testing.T) {
			sub, pub := dialRaw(t, respAddr), dialRaw(t, respAddr)
			sub.do(t, "HELLO", "3")
			require.Equal(t, ">3\r\n$9\r\nsubscribe\r\n$4\r\nnews\r\n:1\r\n", sub.do(t, "SUBSCRIBE", "news"))
			began := time.Now()
			sub.send(t, blocking...)
			time.Sleep(100 * time.Millisecond)
			require.Equal(t, ":1\r\n", pub.do(t, "PUBLISH", "news", "while blocked"))
			require.Equal(t, ">3\r\n$7\r\nmessage\r\n$4\r\nnews\r\n$13\r\nwhile blocked\r\n", sub.next(t))
			require.Less(t, time.Since(began), 2*time.Second, "the message waited for the blocking call")
			require.Equal(t, "_\r\n", sub.next(t), "then the call times out")
		})
	}
	t.Run("XREADGROUP", func(t *testing.T) {
		c := dialRaw(t, respAddr)
		require.Equal(t, "+OK\r\n", c.do(t, "XGROUP", "CREATE", "jobs", "g", "$", "MKSTREAM"))
		gone := dialRaw(t, respAddr)
		gone.send(t, "XREADGROUP", "GROUP", "g", "ghost", "BLOCK", "0", "STREAMS", "jobs", ">")
		time.Sleep(100 * time.Millisecond)
		require.NoError(t, gone.c.Close())
		time.Sleep(200 * time.Millisecond)
		c.do(t, "XADD", "jobs", "1-1", "f", "v")
		time.Sleep(100 * time.Millisecond)
		require.True(t, strings.HasPrefix(c.do(t, "XPENDING", "jobs", "g"), "*4\r\n:0\r\n"), "the entry went to no consumer")
	})
}

// send writes a request without reading its reply.
func (rc *rawConn) send(t *testing.T, args ...string) {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	_, err := rc.c.Write([]byte(b.String()))
	require.NoError(t, err)
}
