package main

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
)

// rawConn speaks RESP over a TCP connection and returns each reply's
// bytes whole.
type rawConn struct {
	c net.Conn
	r *bufio.Reader
}

func dialRaw(t *testing.T, addr string) *rawConn {
	c, err := net.DialTimeout("tcp", addr, 5*time.Second)
	require.NoError(t, err)
	t.Cleanup(func() { c.Close() })
	return &rawConn{c: c, r: bufio.NewReader(c)}
}

func (rc *rawConn) do(t *testing.T, args ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "*%d\r\n", len(args))
	for _, a := range args {
		fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
	}
	require.NoError(t, rc.c.SetDeadline(time.Now().Add(10*time.Second)))
	_, err := rc.c.Write([]byte(b.String()))
	require.NoError(t, err)
	var out strings.Builder
	require.NoError(t, readReply(rc.r, &out))
	return out.String()
}

// readReply copies one RESP2/RESP3 reply from r to out.
func readReply(r *bufio.Reader, out *strings.Builder) error {
	line, err := r.ReadString('\n')
	if err != nil {
		return err
	}
	out.WriteString(line)
	body := strings.TrimRight(line[1:], "\r\n")
	switch line[0] {
	case '$', '=', '!':
		n, _ := strconv.Atoi(body)
		if n < 0 {
			return nil
		}
		buf := make([]byte, n+2)
		if _, err := ioReadFull(r, buf); err != nil {
			return err
		}
		out.Write(buf)
	case '*', '~', '>', '%', '|':
		n, _ := strconv.Atoi(body)
		if line[0] == '%' || line[0] == '|' {
			n *= 2
		}
		for range max(n, 0) {
			if err := readReply(r, out); err != nil {
				return err
			}
		}
	}
	return nil
}

func ioReadFull(r *bufio.Reader, buf []byte) (int, error) {
	n := 0
	for n < len(buf) {
		m, err := r.Read(buf[n:])
		n += m
		if err != nil {
			return n, err
		}
	}
	return n, nil
}

var integers = regexp.MustCompile(`(?m)^:\d+\r$`)

// startRedis runs redis-server 7 on a free port (`make test` installs it).
func startRedis(t *testing.T) string {
	bin, err := exec.LookPath("redis-server")
	require.NoError(t, err, "redis-server is not installed (make deps)")
	addr := servertest.FreeAddr(t)
	_, port, _ := net.SplitHostPort(addr)
	cmd := exec.Command(bin, "--port", port, "--bind", "127.0.0.1", "--save", "", "--appendonly", "no")
	require.NoError(t, cmd.Start())
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
	})
	for range 100 {
		if c, err := net.Dial("tcp", addr); err == nil {
			c.Close()
			return addr
		}
		time.Sleep(20 * time.Millisecond)
	}
	t.Fatal("redis-server did not start")
	return ""
}

// serveStreams builds and starts the server with RESP alone, and returns
// its address; the server stops with the test.
func serveStreams(t *testing.T) string {
	bin := buildServer(t)
	respAddr := servertest.FreeAddr(t)
	srv := servertest.Start(t, bin, "--data", t.TempDir(), "--resp", respAddr, "--http", "", "--s3", "", "--shards", "2")
	t.Cleanup(func() { srv.Stop() })
	return respAddr
}

// buildServer builds this package's binary once per test.
func buildServer(t *testing.T) string {
	bin := filepath.Join(t.TempDir(), "server")
	require.NoError(t, servertest.Build(bin))
	return bin
}

// streamCases are command sequences whose replies must be the bytes
// redis-server 7 writes, in RESP2 and RESP3. A line starting with "~"
// compares with integers masked (idle times); one starting with "!" runs
// without comparing (a field of Redis 7.2 that 7.0 lacks).
var streamCases = [][]string{
	// Stream keys are keys to the key commands.
	{"XADD s 1 f v", "SET other x", "TYPE s", "TYPE other", "TYPE nokey", "EXISTS s other nokey s", "TOUCH s", "TTL s", "PTTL s",
		"PERSIST s", "DEL s nokey other", "EXISTS s", "TYPE s", "XLEN s", "XGROUP CREATE s g $ MKSTREAM", "TYPE s", "UNLINK s", "XLEN s"},
	{"XADD s 1-1 a 1", "XADD s 1-2 b 2 c 3", "XADD s 1-* d 4", "XADD s 2 e 5", "XLEN s", "XRANGE s - +", "XREVRANGE s + - COUNT 2",
		"XRANGE s (1-1 (2-0", "XRANGE s 1 1", "XRANGE s - + COUNT 0", "XRANGE nokey - +", "XLEN nokey"},
	{"XADD s 5-5 f v", "XADD s 5-5 f v", "XADD s 5-4 f v", "XADD s 0-0 f v", "XADD s 4-* f v", "XADD s abc f v", "XADD s * f",
		"XADD s NOMKSTREAM 9 f v", "XADD other NOMKSTREAM * f v", "XADD s MAXLEN 1 LIMIT 5 6 f v", "XADD s MAXLEN 1 MINID 1 7 f v",
		"XADD s MAXLEN -1 8 f v", "XADD s MAXLEN ~ 1 LIMIT -1 9 f v", "XADD s MAXLEN x 9 f v"},
	{"XADD s 1 a 1", "XADD s 2 a 2", "XADD s 3 a 3", "XADD s 4 a 4", "XDEL s 2 9 2", "XLEN s", "XTRIM s MAXLEN 2", "XRANGE s - +",
		"XTRIM s MINID 4", "XTRIM s", "XTRIM s MAXLEN ~ 0", "XLEN s", "XINFO STREAM s", "XADD s 3 f v",
		"XSETID s 1", "XSETID s 10 ENTRIESADDED 1", "XSETID s 10 ENTRIESADDED 100 MAXDELETEDID 9", "XINFO STREAM s", "XSETID nokey 1"},
	{"XGROUP CREATE s g $", "XGROUP CREATE s g $ MKSTREAM", "XGROUP CREATE s g $ MKSTREAM", "XADD s 1 f 1", "XADD s 2 f 2",
		"XADD s 3 f 3", "XADD s 4 f 4", "XGROUP CREATE s g2 0", "XINFO GROUPS s", "XREADGROUP GROUP g alice STREAMS s >",
		"XREADGROUP GROUP g2 bob COUNT 2 STREAMS s >", "XREADGROUP GROUP g2 bob STREAMS s 0", "XREADGROUP GROUP g2 bob STREAMS s 1",
		"XINFO GROUPS s", "XACK s g2 1 9", "XPENDING s g2", "XPENDING s g", "XDEL s 2", "XREADGROUP GROUP g2 bob STREAMS s 0",
		"XINFO GROUPS s", "XREADGROUP GROUP g2 carol NOACK STREAMS s >", "XPENDING s g2", "~XPENDING s g2 - + 10",
		"~XPENDING s g2 - + 10 bob", "~XPENDING s g2 IDLE 0 - + 1", "XPENDING s g2 - + 10 nobody", "XPENDING s nogroup",
		"XREADGROUP GROUP nogroup c STREAMS s >", "XREADGROUP GROUP g c STREAMS s $", "XREAD STREAMS s >",
		"XREADGROUP GROUP g c STREAMS s", "XREAD COUNT 2 STREAMS s 0", "XREAD STREAMS s nokey 0 0", "XREAD STREAMS s $",
		"XREAD BLOCK -1 STREAMS s 0", "XREAD BLOCK x STREAMS s 0"},
	{"XGROUP CREATE s g 0 MKSTREAM", "XADD s 1 f 1", "XADD s 2 f 2", "XADD s 3 f 3", "XREADGROUP GROUP g alice STREAMS s >",
		"XCLAIM s g bob 0 1 2 JUSTID", "XCLAIM s g bob 0 3 FORCE", "XCLAIM s g bob 0 1 RETRYCOUNT 9 JUSTID", "XCLAIM s g bob x 1",
		"XCLAIM s g bob 0 1 BOGUS", "XCLAIM s nogroup bob 0 1", "XDEL s 2", "XCLAIM s g bob 0 2", "XAUTOCLAIM s g dave 0 0 COUNT 1",
		"XAUTOCLAIM s g dave 0 0 COUNT 10 JUSTID", "XAUTOCLAIM s g dave 0 0 COUNT 0", "XAUTOCLAIM s nogroup dave 0 0",
		"XPENDING s g", "XGROUP CREATECONSUMER s g erin", "XGROUP CREATECONSUMER s g erin", "XGROUP DELCONSUMER s g dave",
		"XGROUP DELCONSUMER s g nobody", "XGROUP SETID s g 0", "XGROUP SETID s g $ ENTRIESREAD 3", "XINFO GROUPS s",
		"XGROUP SETID s nogroup 0", "XGROUP DESTROY s g", "XGROUP DESTROY s g", "XGROUP DESTROY nokey g", "XGROUP FOO s g",
		"XGROUP CREATE s g2 0 ENTRIESREAD -5", "XGROUP CREATE s g2 x", "!XINFO CONSUMERS s g", "XINFO CONSUMERS s nogroup", "XINFO STREAM nokey", "XINFO FOO s"},
}

func TestStreamsRepliesMatchRedis(t *testing.T) {
	redisAddr := startRedis(t)
	respAddr := serveStreams(t)
	for _, proto := range []string{"2", "3"} {
		for i, seq := range streamCases {
			t.Run(fmt.Sprintf("resp%s/case%d", proto, i), func(t *testing.T) {
				ours, theirs := dialRaw(t, respAddr), dialRaw(t, redisAddr)
				if proto == "3" {
					ours.do(t, "HELLO", "3")
					theirs.do(t, "HELLO", "3")
				}
				prefix := fmt.Sprintf("{c%s%d}", proto, i)
				for _, line := range seq {
					mode := line[0]
					if mode == '~' || mode == '!' {
						line = line[1:]
					}
					args := strings.Fields(line)
					// Keys get a prefix of their own per case, so that
					// cases do not meet.
					for j, a := range args {
						if a == "s" || a == "other" || a == "nokey" {
							args[j] = prefix + a
						}
					}
					want, got := theirs.do(t, args...), ours.do(t, args...)
					switch mode {
					case '!':
						continue
					case '~':
						want, got = integers.ReplaceAllString(want, ":N\r"), integers.ReplaceAllString(got, ":N\r")
					}
					require.Equal(t, want, got, "%s", line)
				}
			})
		}
	}
}

// go-redis drives the consumer-group flow over RESP2 and RESP3, with a
// blocking read woken by another client's XADD.
func TestStreamsWithGoRedis(t *testing.T) {
	respAddr := serveStreams(t)
	for _, proto := range []int{2, 3} {
		t.Run(fmt.Sprint("resp", proto), func(t *testing.T) {
			ctx := t.Context()
			rc := redis.NewClient(&redis.Options{Addr: respAddr, Protocol: proto})
			defer rc.Close()
			key := fmt.Sprintf("jobs%d", proto)
			require.NoError(t, rc.XGroupCreateMkStream(ctx, key, "workers", "$").Err())
			got := make(chan []redis.XStream, 1)
			go func() {
				res, err := rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "workers", Consumer: "w1", Streams: []string{key, ">"}, Block: 5 * time.Second}).Result()
				if err != nil {
					res = nil
				}
				got <- res
			}()
			time.Sleep(100 * time.Millisecond)
			other := redis.NewClient(&redis.Options{Addr: respAddr, Protocol: proto})
			defer other.Close()
			id, err := other.XAdd(ctx, &redis.XAddArgs{Stream: key, Values: []string{"job", "1"}}).Result()
			require.NoError(t, err)
			select {
			case res := <-got:
				require.Len(t, res, 1)
				require.Equal(t, id, res[0].Messages[0].ID)
				require.Equal(t, "1", res[0].Messages[0].Values["job"])
			case <-time.After(10 * time.Second):
				t.Fatal("the blocked XREADGROUP was not woken by XADD")
			}
			pending, err := rc.XPending(ctx, key, "workers").Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), pending.Count)
			require.Equal(t, int64(1), pending.Consumers["w1"])
			claimed, err := rc.XClaim(ctx, &redis.XClaimArgs{Stream: key, Group: "workers", Consumer: "w2", Messages: []string{id}}).Result()
			require.NoError(t, err)
			require.Len(t, claimed, 1)
			msgs, start, err := rc.XAutoClaim(ctx, &redis.XAutoClaimArgs{Stream: key, Group: "workers", Consumer: "w3", Start: "0"}).Result()
			require.NoError(t, err)
			require.Len(t, msgs, 1)
			require.Equal(t, "0-0", start)
			n, err := rc.XAck(ctx, key, "workers", id).Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), n)
			// A blocked read times out with a nil reply.
			_, err = rc.XRead(ctx, &redis.XReadArgs{Streams: []string{key, "$"}, Block: 200 * time.Millisecond}).Result()
			require.ErrorIs(t, err, redis.Nil)
			groups, err := rc.XInfoGroups(ctx, key).Result()
			require.NoError(t, err)
			require.Equal(t, int64(0), groups[0].Lag)
			info, err := rc.XInfoStream(ctx, key).Result()
			require.NoError(t, err)
			require.Equal(t, int64(1), info.Length)
		})
	}
}

// A killed server keeps every acknowledged XADD and XACK: after a
// restart the entries are there in rising ID order and the acked ones
// are not pending.
func TestStreamsSurviveSIGKILL(t *testing.T) {
	bin := buildServer(t)
	data := t.TempDir()
	respAddr := servertest.FreeAddr(t)
	args := []string{"--data", data, "--resp", respAddr, "--http", "", "--s3", "", "--shards", "2"}
	srv := servertest.Start(t, bin, args...)
	ctx := context.Background()
	rc := redis.NewClient(&redis.Options{Addr: respAddr, Protocol: 2, MaxRetries: -1})
	require.NoError(t, rc.XGroupCreateMkStream(ctx, "{k}s", "g", "0").Err())
	var mu sync.Mutex
	added := map[string]bool{}
	acked := map[string]bool{}
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for w := range 4 {
		wg.Go(func() {
			for i := 0; ; i++ {
				select {
				case <-stop:
					return
				default:
				}
				id, err := rc.XAdd(ctx, &redis.XAddArgs{Stream: "{k}s", Values: []string{"w", fmt.Sprint(w), "i", fmt.Sprint(i)}}).Result()
				if err != nil {
					return
				}
				mu.Lock()
				added[id] = true
				mu.Unlock()
				if i%3 == 0 {
					res, err := rc.XReadGroup(ctx, &redis.XReadGroupArgs{Group: "g", Consumer: fmt.Sprint("c", w), Streams: []string{"{k}s", ">"}, Count: 1}).Result()
					if err != nil || len(res) == 0 || len(res[0].Messages) == 0 {
						continue
					}
					mid := res[0].Messages[0].ID
					if n, err := rc.XAck(ctx, "{k}s", "g", mid).Result(); err == nil && n == 1 {
						mu.Lock()
						acked[mid] = true
						mu.Unlock()
					}
				}
			}
		})
	}
	time.Sleep(1500 * time.Millisecond)
	srv.Kill()
	close(stop)
	wg.Wait()
	rc.Close()

	srv = servertest.Start(t, bin, args...)
	defer srv.Stop()
	rc = redis.NewClient(&redis.Options{Addr: respAddr, Protocol: 2})
	defer rc.Close()
	msgs, err := rc.XRange(ctx, "{k}s", "-", "+").Result()
	require.NoError(t, err)
	have := map[string]bool{}
	for i, m := range msgs {
		have[m.ID] = true
		if i > 0 {
			require.Less(t, idKey(msgs[i-1].ID), idKey(m.ID))
		}
	}
	mu.Lock()
	defer mu.Unlock()
	require.NotEmpty(t, added)
	for id := range added {
		require.True(t, have[id], "acknowledged XADD %s lost", id)
	}
	pending, err := rc.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: "{k}s", Group: "g", Start: "-", End: "+", Count: 1 << 20}).Result()
	require.NoError(t, err)
	for _, p := range pending {
		require.False(t, acked[p.ID], "acknowledged XACK of %s lost", p.ID)
	}
	// New IDs keep rising past the recovered ones.
	id, err := rc.XAdd(ctx, &redis.XAddArgs{Stream: "{k}s", Values: []string{"after", "restart"}}).Result()
	require.NoError(t, err)
	require.Less(t, idKey(msgs[len(msgs)-1].ID), idKey(id))
}

// idKey orders stream IDs as text ("ms-seq", both zero-padded).
func idKey(id string) string {
	ms, seq, _ := strings.Cut(id, "-")
	return fmt.Sprintf("%020s-%020s", ms, seq)
}

// KEYS, SCAN, DBSIZE and FLUSHALL see stream keys; EXPIRE refuses them.
func TestStreamKeysInKeyCommands(t *testing.T) {
	respAddr := serveStreams(t)
	ctx := t.Context()
	rc := redis.NewClient(&redis.Options{Addr: respAddr})
	defer rc.Close()
	require.NoError(t, rc.XAdd(ctx, &redis.XAddArgs{Stream: "events", Values: []string{"f", "v"}}).Err())
	require.NoError(t, rc.XGroupCreateMkStream(ctx, "jobs", "g", "$").Err())
	require.NoError(t, rc.Set(ctx, "plain", "x", 0).Err())

	keys, err := rc.Keys(ctx, "*").Result()
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"events", "jobs", "plain"}, keys)
	keys, err = rc.Keys(ctx, "j*").Result()
	require.NoError(t, err)
	require.Equal(t, []string{"jobs"}, keys)
	var scanned []string
	iter := rc.ScanType(ctx, 0, "*", 10, "stream").Iterator()
	for iter.Next(ctx) {
		scanned = append(scanned, iter.Val())
	}
	require.NoError(t, iter.Err())
	require.ElementsMatch(t, []string{"events", "jobs"}, scanned)
	n, err := rc.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Equal(t, int64(3), n)

	err = rc.Expire(ctx, "events", time.Minute).Err()
	require.ErrorContains(t, err, "cannot expire")
	ttl, err := rc.TTL(ctx, "events").Result()
	require.NoError(t, err)
	require.Equal(t, time.Duration(-1), ttl, "a stream key has no TTL")

	// Another database holds no stream keys.
	other := redis.NewClient(&redis.Options{Addr: respAddr, DB: 1})
	defer other.Close()
	n, err = other.Exists(ctx, "events").Result()
	require.NoError(t, err)
	require.Zero(t, n)

	require.NoError(t, rc.FlushAll(ctx).Err())
	n, err = rc.DBSize(ctx).Result()
	require.NoError(t, err)
	require.Zero(t, n)
	n, err = rc.XLen(ctx, "events").Result()
	require.NoError(t, err)
	require.Zero(t, n)
}

// Blocked XREADGROUP readers of one group are served in the order they
// blocked, one entry each here, as redis-server serves them; the one
// left over times out.
func TestBlockedGroupReadersServedInOrder(t *testing.T) {
	redisAddr := startRedis(t)
	respAddr := serveStreams(t)
	replies := func(addr string) []string {
		admin := dialRaw(t, addr)
		require.Equal(t, "+OK\r\n", admin.do(t, "XGROUP", "CREATE", "fifo", "g", "$", "MKSTREAM"))
		var readers []*rawConn
		for _, name := range []string{"c1", "c2", "c3"} {
			r := dialRaw(t, addr)
			r.send(t, "XREADGROUP", "GROUP", "g", name, "COUNT", "1", "BLOCK", "1500", "STREAMS", "fifo", ">")
			readers = append(readers, r)
			time.Sleep(150 * time.Millisecond)
		}
		admin.do(t, "XADD", "fifo", "1-1", "n", "1")
		admin.do(t, "XADD", "fifo", "1-2", "n", "2")
		var out []string
		for _, r := range readers {
			out = append(out, r.next(t))
		}
		return append(out, admin.do(t, "XPENDING", "fifo", "g", "-", "+", "10"))
	}
	want, got := replies(redisAddr), replies(respAddr)
	require.Equal(t, want[:3], got[:3])
	require.Equal(t, integers.ReplaceAllString(want[3], ":N\r"), integers.ReplaceAllString(got[3], ":N\r"))
}

// A pipeline of XADDs gets redis-server's replies, errors in their
// places, and shares batches: far fewer fsyncs than XADDs.
func TestPipelinedXAdds(t *testing.T) {
	redisAddr := startRedis(t)
	respAddr, httpAddr := servertest.FreeAddr(t), servertest.FreeAddr(t)
	srv := servertest.Start(t, buildServer(t), "--data", t.TempDir(), "--resp", respAddr, "--http", httpAddr, "--s3", "")
	t.Cleanup(func() { srv.Stop() })
	var pipeline []string
	for i := range 1000 {
		switch i % 100 {
		case 7:
			pipeline = append(pipeline, "XADD pipe 1-1 f v") // smaller than the top
		case 8:
			pipeline = append(pipeline, "XADD pipe MAXLEN x * f v")
		case 9:
			pipeline = append(pipeline, "XADD missing NOMKSTREAM * f v")
		case 10:
			pipeline = append(pipeline, "XLEN pipe")
		default:
			pipeline = append(pipeline, fmt.Sprintf("XADD pipe %d-1 f v%d", 1000+i, i))
		}
	}
	run := func(addr string) []string {
		c := dialRaw(t, addr)
		var b strings.Builder
		for _, line := range pipeline {
			args := strings.Fields(line)
			fmt.Fprintf(&b, "*%d\r\n", len(args))
			for _, a := range args {
				fmt.Fprintf(&b, "$%d\r\n%s\r\n", len(a), a)
			}
		}
		_, err := c.c.Write([]byte(b.String()))
		require.NoError(t, err)
		out := make([]string, len(pipeline))
		for i := range out {
			out[i] = c.next(t)
		}
		return out
	}
	want, got := run(redisAddr), run(respAddr)
	for i := range want {
		require.Equal(t, want[i], got[i], "%d: %s", i, pipeline[i])
	}
	res, err := http.Get("http://" + httpAddr + "/metrics")
	require.NoError(t, err)
	body, _ := io.ReadAll(res.Body)
	res.Body.Close()
	metric := func(name string) float64 {
		m := regexp.MustCompile(`(?m)^` + name + `(?:\{[^}]*\})? (\S+)$`).FindStringSubmatch(string(body))
		require.NotNil(t, m, name)
		v, err := strconv.ParseFloat(m[1], 64)
		require.NoError(t, err)
		return v
	}
	records, fsyncs := metric("ferricstore_log_records_total"), metric("ferricstore_log_fsyncs_total")
	require.GreaterOrEqual(t, records, 960.0)
	require.Less(t, fsyncs, records/10, "pipelined XADDs share fsyncs")
}
