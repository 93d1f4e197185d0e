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
