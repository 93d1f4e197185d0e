package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// binary is the server built once for the package's tests (TestMain).
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "ferricstore-bin")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "ferricstore")
	if err := servertest.Build(binary); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	os.RemoveAll(dir)
	os.Exit(code)
}

// Flags, environment and defaults: a flag beats its variable, which beats
// the default; bad values name their source.
func TestParse(t *testing.T) {
	cases := []struct {
		name string
		args []string
		env  map[string]string
		want func(t *testing.T, c config)
		err  string
	}{
		{name: "defaults", want: func(t *testing.T, c config) {
			require.Equal(t, "127.0.0.1:6380", c.respAddr)
			require.Equal(t, "./ferricstore-data", c.dataDir)
			require.Equal(t, "127.0.0.1:17103", c.metricsAddr)
			require.Equal(t, 1, c.shards)
			require.Equal(t, 10*time.Millisecond, c.syncInterval)
			require.False(t, c.async)
			require.Empty(t, c.tokens)
		}},
		{name: "env", env: map[string]string{"FS_RESP_ADDR": "127.0.0.1:7000", "FS_SHARDS": "2", "FS_ASYNC": "true", "FS_TOKEN": "a, b", "FS_METRICS_ADDR": " "},
			want: func(t *testing.T, c config) {
				require.Equal(t, "127.0.0.1:7000", c.respAddr)
				require.Equal(t, 2, c.shards)
				require.True(t, c.async)
				require.Equal(t, []string{"a", "b"}, c.tokens)
				require.Equal(t, "127.0.0.1:17103", c.metricsAddr, "a blank variable is no value")
			}},
		{name: "flag beats env", args: []string{"--shards", "8", "--async=false", "--metrics-addr", "", "--data-dir", "/d"},
			env: map[string]string{"FS_SHARDS": "2", "FS_ASYNC": "true"}, want: func(t *testing.T, c config) {
				require.Equal(t, 8, c.shards)
				require.False(t, c.async)
				require.Empty(t, c.metricsAddr)
				require.Equal(t, "/d", c.dataDir)
			}},
		{name: "shards", args: []string{"--shards", "0"}, err: "shards (from --shards): must be 1 to 1024, got 0"},
		{name: "shards env", env: map[string]string{"FS_SHARDS": "x"}, err: "shards (from FS_SHARDS)"},
		{name: "sync interval", args: []string{"--sync-interval", "2m"}, err: "must be above 0 and at most 1m0s"},
		{name: "resp", args: []string{"--resp-addr", ""}, err: "must not be empty"},
		{name: "log format", args: []string{"--log-format", "xml"}, err: `log format "xml"`},
		{name: "extra", args: []string{"more"}, err: "unexpected arguments"},
		{name: "unknown", args: []string{"--nope"}, err: "flag provided but not defined"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			c, err := parse(tc.args, io.Discard, func(k string) string { return tc.env[k] })
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				return
			}
			require.NoError(t, err)
			tc.want(t, c)
		})
	}
	// --help lists every flag with its variable and default.
	var out bytes.Buffer
	_, err := parse([]string{"--help"}, &out, func(string) string { return "" })
	require.ErrorIs(t, err, flag.ErrHelp)
	for _, f := range flags {
		require.Contains(t, out.String(), fmt.Sprintf("--%s  [%s, default %q]", f.Name, f.Env, f.Default))
	}
}

// Without --insecure a non-loopback RESP address needs a token, and a
// non-loopback metrics address is refused (it has no auth).
func TestRefusesNonLoopback(t *testing.T) {
	cases := []struct {
		args []string
		err  string
	}{
		{[]string{"--resp-addr", "0.0.0.0:0"}, "without a token"},
		{[]string{"--resp-addr", "127.0.0.1:0", "--metrics-addr", "0.0.0.0:0"}, "has no auth"},
	}
	for _, tc := range cases {
		err := run(t.Context(), append(tc.args, "--data-dir", t.TempDir()), io.Discard, io.Discard, func(string) string { return "" })
		require.ErrorContains(t, err, tc.err)
	}
}

// The binary serves streams and pub/sub through go-redis, in RESP2 and
// RESP3; GET and SET are unknown commands; CONFIG, INFO and /metrics
// work; SIGTERM stops it cleanly.
func TestServeStreamsAndPubSub(t *testing.T) {
	respAddr, metricsAddr := servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, binary, "--resp-addr", respAddr, "--data-dir", t.TempDir(), "--metrics-addr", metricsAddr, "--shards", "2")
	require.Contains(t, srv.Log(), "surface=resp addr="+respAddr)
	require.Contains(t, srv.Log(), "surface=metrics addr="+metricsAddr)
	ctx := t.Context()
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			rc := redis.NewClient(&redis.Options{Addr: respAddr, Protocol: proto})
			defer rc.Close()
			require.NoError(t, rc.Ping(ctx).Err())
			for _, verb := range [][]any{{"get", "k"}, {"set", "k", "v"}} {
				err := rc.Do(ctx, verb...).Err()
				require.Error(t, err)
				want := fmt.Sprintf("ERR unknown command '%s', with args beginning with: ", verb[0])
				for _, a := range verb[1:] {
					want += fmt.Sprintf("'%s' ", a)
				}
				require.Equal(t, want, err.Error())
			}
			key := fmt.Sprint("jobs", proto)
			var ids []string
			for i := range 3 {
				id, err := rc.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"n", fmt.Sprint(i)}}).Result()
				require.NoError(t, err)
				ids = append(ids, id)
			}
			require.NoError(t, rc.XGroupCreate(ctx, key, "workers", "0").Err())
			res, err := rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w1", Streams: []string{key, ">"}, Count: 2}).Result()
			require.NoError(t, err)
			require.Len(t, res[0].Messages, 2)
			require.Equal(t, ids[0], res[0].Messages[0].ID)
			n, err := rc.XAck(ctx, key, "workers", ids[0]).Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
			pending, err := rc.XPending(ctx, key, "workers").Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), pending.Count)

			// Pub/sub: a subscriber hears a publisher.
			ch := fmt.Sprint("news", proto)
			sub := rc.Subscribe(ctx, ch)
			defer sub.Close()
			_, err = sub.Receive(ctx) // the confirmation
			require.NoError(t, err)
			pub := redis.NewClient(&redis.Options{Addr: respAddr, Protocol: proto})
			defer pub.Close()
			got, err := pub.Publish(ctx, ch, "hello").Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), got)
			msg, err := sub.ReceiveMessage(ctx)
			require.NoError(t, err)
			require.Equal(t, "hello", msg.Payload)

			// MULTI/EXEC queues and runs the verbs.
			cmds, err := pub.TxPipelined(ctx, func(p redis.Pipeliner) error {
				p.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"n", "tx"}})
				p.XLen(ctx, key)
				return nil
			})
			require.NoError(t, err)
			require.Equal(t, int64(4), cmds[1].(*redis.IntCmd).Val())
		})
	}
	rc := redis.NewClient(&redis.Options{Addr: respAddr})
	defer rc.Close()
	cfg, err := rc.ConfigGet(ctx, "client-output-buffer-limit").Result()
	require.NoError(t, err)
	require.Equal(t, "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60", cfg["client-output-buffer-limit"])
	require.NoError(t, rc.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 1mb 256kb 10").Err())
	info, err := rc.Info(ctx).Result()
	require.NoError(t, err)
	require.Contains(t, info, "redis_version:")
	require.NotContains(t, info, "engine_")

	res, err := http.Get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	for _, want := range []string{"ferricstore_pubsub_publishes_total 2", "ferricstore_pubsub_deliveries_total 2",
		"ferricstore_pubsub_publish_fanout_seconds_bucket", `ferricstore_stream_entries{shard="0"}`, `ferricstore_stream_pending_entries{shard=`,
		`temporalstore_resp_command_duration_seconds_count{command="xadd"} 8`, "go_goroutines"} {
		require.Contains(t, string(body), want)
	}
	require.NoError(t, srv.Stop(), srv.Log())
	require.Contains(t, srv.Log(), "msg=stopped")
}

// A killed server keeps every acknowledged XADD and XACK and the group's
// pending entries with their consumers and delivery counts; a restart
// with another --shards keeps the directory's count.
func TestSIGKILLKeepsAcknowledgedEntriesAndPEL(t *testing.T) {
	data := t.TempDir()
	respAddr := servertest.FreeAddr(t)
	args := []string{"--resp-addr", respAddr, "--data-dir", data, "--metrics-addr", "", "--shards", "2"}
	srv := servertest.Start(t, binary, args...)
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: respAddr, MaxRetries: -1})
	const key = "{k}s"
	require.NoError(t, rc.XGroupCreateMkStream(ctx, key, "g", "0").Err())
	// A known state: 30 entries, 20 delivered to c1, 5 of those acked.
	for i := range 30 {
		require.NoError(t, rc.XAdd(ctx, &redis.XAddArgs{Stream: key, ID: fmt.Sprintf("1-%d", i+1), Values: []string{"i", fmt.Sprint(i)}}).Err())
	}
	res, err := rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c1", Streams: []string{key, ">"}, Count: 20}).Result()
	require.NoError(t, err)
	require.Len(t, res[0].Messages, 20)
	for i := range 5 {
		require.NoError(t, rc.XAck(ctx, key, "g", fmt.Sprintf("1-%d", i+1)).Err())
	}
	// Then writers at full speed while the kill lands: what was
	// acknowledged must be there after it.
	var mu sync.Mutex
	added, acked := map[string]bool{}, map[string]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 3 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id, err := rc.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"w", fmt.Sprint(w), "i", fmt.Sprint(i)}}).Result()
				if err != nil {
					return
				}
				mu.Lock()
				added[id] = true
				mu.Unlock()
				if i%2 == 0 {
					res, err := rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: fmt.Sprint("w", w), Streams: []string{key, ">"}, Count: 1}).Result()
					if err != nil || len(res) == 0 || len(res[0].Messages) == 0 {
						continue
					}
					mid := res[0].Messages[0].ID
					if n, err := rc.XAck(ctx, key, "g", mid).Result(); err == nil && n == 1 {
						mu.Lock()
						acked[mid] = true
						mu.Unlock()
					}
				}
			}
		})
	}
	time.Sleep(time.Second)
	srv.Kill()
	close(stop)
	wg.Wait()
	rc.Close()

	srv = servertest.Start(t, binary, append(args[:len(args)-2], "--shards", "3")...)
	defer srv.Stop()
	require.Contains(t, srv.Log(), "the data directory keeps its shard count")
	require.Contains(t, srv.Log(), "shards=2")
	rc = redis.NewClient(&redis.Options{Addr: respAddr})
	defer rc.Close()
	msgs, err := rc.XRange(ctx, key, "-", "+").Result()
	require.NoError(t, err)
	have := map[string]bool{}
	for _, m := range msgs {
		have[m.ID] = true
	}
	for i := range 30 {
		require.True(t, have[fmt.Sprintf("1-%d", i+1)])
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, added)
	for id := range added {
		require.True(t, have[id], "acknowledged XADD %s lost", id)
	}
	pending, err := rc.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: "g", Start: "-", End: "+", Count: 1 << 20}).Result()
	require.NoError(t, err)
	byID := map[string]redis.XPendingExt{}
	for _, p := range pending {
		byID[p.ID] = p
		require.False(t, acked[p.ID], "acknowledged XACK of %s lost", p.ID)
	}
	// The known state's PEL: entries 6 to 20 pending for c1, delivered
	// once; 1 to 5 acked.
	for i := range 20 {
		p, ok := byID[fmt.Sprintf("1-%d", i+1)]
		if i < 5 {
			require.False(t, ok, "1-%d was acked", i+1)
			continue
		}
		require.True(t, ok, "1-%d is pending", i+1)
		require.Equal(t, "c1", p.Consumer)
		require.Equal(t, int64(1), p.RetryCount)
	}
	// The entries never delivered are still there for the group.
	res, err = rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: "c2", Streams: []string{key, ">"}, Count: 1 << 20}).Result()
	require.NoError(t, err)
	for _, m := range res[0].Messages {
		_, wasPending := byID[m.ID]
		require.False(t, wasPending)
	}
}

// A subscriber that does not read is closed past a limit lowered with
// CONFIG SET; the broker counts it dropped once, and the publisher and a
// subscriber that reads carry on.
func TestSlowSubscriberDropped(t *testing.T) {
	respAddr, metricsAddr := servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, binary, "--resp-addr", respAddr, "--data-dir", t.TempDir(), "--metrics-addr", metricsAddr)
	defer srv.Stop()
	ctx := t.Context()
	pub := redis.NewClient(&redis.Options{Addr: respAddr})
	defer pub.Close()
	require.NoError(t, pub.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 256kb 64kb 60").Err())
	slow, err := net.Dial("tcp", respAddr)
	require.NoError(t, err)
	defer slow.Close()
	require.NoError(t, slow.(*net.TCPConn).SetReadBuffer(4<<10))
	_, err = slow.Write([]byte("*2\r\n$9\r\nSUBSCRIBE\r\n$2\r\nch\r\n"))
	require.NoError(t, err)
	fast := pub.Subscribe(ctx, "ch")
	defer fast.Close()
	_, err = fast.Receive(ctx)
	require.NoError(t, err)
	require.Eventually(t, func() bool { return pub.PubSubNumSub(ctx, "ch").Val()["ch"] == 2 }, 5*time.Second, 10*time.Millisecond)
	payload := strings.Repeat("x", 16<<10)
	msgs := fast.Channel()
	// 8 MiB in all: past the kernel's buffers and the 256 KiB limit.
	for range 512 {
		require.NoError(t, pub.Publish(ctx, "ch", payload).Err())
		select {
		case m := <-msgs:
			require.Len(t, m.Payload, len(payload))
		case <-time.After(10 * time.Second):
			t.Fatal("the reading subscriber fell behind")
		}
	}
	require.Eventually(t, func() bool { return pub.PubSubNumSub(ctx, "ch").Val()["ch"] == 1 }, 5*time.Second, 10*time.Millisecond)
	res, err := http.Get("http://" + metricsAddr + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	require.Contains(t, string(body), "ferricstore_pubsub_dropped_subscribers_total 1\n")
	require.Contains(t, string(body), "temporalstore_resp_push_disconnections_total 1\n")
	require.Contains(t, string(body), "ferricstore_pubsub_subscribers 1\n")
}

// --notify-keyspace-events publishes the stream verbs' events.
func TestStreamKeyspaceNotifications(t *testing.T) {
	respAddr := servertest.FreeAddr(t)
	srv := servertest.Start(t, binary, "--resp-addr", respAddr, "--data-dir", t.TempDir(), "--metrics-addr", "", "--notify-keyspace-events", "Et")
	defer srv.Stop()
	ctx := t.Context()
	rc := redis.NewClient(&redis.Options{Addr: respAddr})
	defer rc.Close()
	sub := rc.PSubscribe(ctx, "__keyevent@0__:*")
	defer sub.Close()
	_, err := sub.Receive(ctx)
	require.NoError(t, err)
	require.NoError(t, rc.XAdd(ctx, &redis.XAddArgs{Stream: "orders", Values: []string{"f", "v"}}).Err())
	require.NoError(t, rc.XGroupCreate(ctx, "orders", "billing", "0").Err())
	for _, want := range []string{"__keyevent@0__:xadd orders", "__keyevent@0__:xgroup-create orders"} {
		msg, err := sub.ReceiveMessage(ctx)
		require.NoError(t, err)
		require.Equal(t, want, msg.Channel+" "+msg.Payload)
	}
	cfg, err := rc.ConfigGet(ctx, "notify-keyspace-events").Result()
	require.NoError(t, err)
	require.Equal(t, "tE", cfg["notify-keyspace-events"])
}
