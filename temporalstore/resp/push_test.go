package resp

import (
	"bufio"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// listeners are the connections that asked for pushes (LISTEN), for a
// FLOOD command that pushes to all of them, as a pub/sub broker would.
type listeners struct {
	mu    sync.Mutex
	pushs []func([]byte, any) bool
}

func (l *listeners) commands() []Command {
	return []Command{
		{Name: "listen", Arity: 1, Connection: true, Run: func(r *Request) {
			p := r.Pusher()
			l.mu.Lock()
			l.pushs = append(l.pushs, p)
			l.mu.Unlock()
			r.SetSubscriptions(1)
			r.Push([]byte("*2\r\n$6\r\nlisten\r\n:1\r\n"))
		}},
		{Name: "flood", Arity: 3, Run: func(r *Request) {
			var n, size int
			fmt.Sscan(string(r.Args[1]), &n)
			fmt.Sscan(string(r.Args[2]), &size)
			frame := fmt.Appendf(nil, "*2\r\n$7\r\nmessage\r\n$%d\r\n%s\r\n", size, strings.Repeat("x", size))
			l.mu.Lock()
			pushs := append([]func([]byte, any) bool(nil), l.pushs...)
			l.mu.Unlock()
			ok := 0
			for range n {
				for _, p := range pushs {
					if p(frame, r) {
						ok++
					}
				}
			}
			r.Reply().Int(int64(ok))
		}},
	}
}

// A subscriber that does not read is closed once its queue passes the
// hard limit; the publisher never waits for it, and a subscriber that
// reads gets every frame. In RESP2 a subscribed connection runs only the
// pub/sub verbs, PING (a pong frame) and RESET.
func TestPushLimitsAndSubscribedMode(t *testing.T) {
	l := &listeners{}
	s, addr := startServer(t, Options{Commands: l.commands(), PushLimits: PushLimits{Hard: 4 << 20}})
	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer slow.Close()
	// A small receive buffer, so the kernel soaks up little.
	slow.(*net.TCPConn).SetReadBuffer(4 << 10)
	_, err = slow.Write([]byte("*1\r\n$6\r\nlisten\r\n"))
	require.NoError(t, err)
	fast, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer fast.Close()
	fr := bufio.NewReader(fast)
	_, err = fast.Write([]byte("*1\r\n$6\r\nlisten\r\n"))
	require.NoError(t, err)
	line, err := fr.ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "*2\r\n", line)
	for range 3 {
		fr.ReadString('\n')
	}
	// Subscribed mode (RESP2): GET is refused, PING is a pong frame.
	_, err = fast.Write([]byte("*2\r\n$3\r\nget\r\n$1\r\nk\r\n*1\r\n$4\r\nping\r\n"))
	require.NoError(t, err)
	line, _ = fr.ReadString('\n')
	require.Equal(t, "-ERR Can't execute 'get': only (P|S)SUBSCRIBE / (P|S)UNSUBSCRIBE / PING / QUIT / RESET are allowed in this context\r\n", line)
	var pong strings.Builder
	for range 5 {
		l, _ := fr.ReadString('\n')
		pong.WriteString(l)
	}
	require.Equal(t, "*2\r\n$4\r\npong\r\n$0\r\n\r\n", pong.String())

	// The fast subscriber reads everything while the slow one's queue
	// passes 1 MiB.
	var read sync.WaitGroup
	var received atomic.Int64
	read.Go(func() {
		for {
			fast.SetReadDeadline(time.Now().Add(5 * time.Second))
			line, err := fr.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "$7") && received.Add(1) == 200 {
				return
			}
		}
	})
	pub := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2})
	defer pub.Close()
	// Bursts of 20 frames of 100 KiB: the fast subscriber keeps up with
	// each, the slow one's queue passes 4 MiB.
	for burst := range 10 {
		began := time.Now()
		n, err := pub.Do(t.Context(), "flood", "20", 100<<10).Int()
		require.NoError(t, err)
		require.Less(t, time.Since(began), 3*time.Second, "the publisher waited for a slow subscriber")
		require.GreaterOrEqual(t, n, 20, "a frame to the fast subscriber was refused")
		require.Eventually(t, func() bool { return received.Load() >= int64(20*(burst+1)) }, 5*time.Second, time.Millisecond)
	}
	read.Wait()
	require.Equal(t, int64(200), received.Load())
	require.Eventually(t, func() bool { return s.Stats().PushDisconnections == 1 }, 5*time.Second, 10*time.Millisecond)
	info, err := pub.Info(t.Context(), "stats").Result()
	require.NoError(t, err)
	require.Contains(t, info, "client_output_buffer_limit_disconnections:1")
	// The server closed the slow one's connection (CLIENT LIST lists the
	// fast subscriber and the publisher).
	require.Eventually(t, func() bool {
		list, err := pub.ClientList(t.Context()).Result()
		return err == nil && !strings.Contains(list, "id=1 ") && strings.Contains(list, "id=2 ")
	}, 5*time.Second, 10*time.Millisecond)

	// RESET leaves subscribed mode.
	_, err = fast.Write([]byte("*1\r\n$5\r\nreset\r\n*2\r\n$4\r\necho\r\n$2\r\nok\r\n"))
	require.NoError(t, err)
	fast.SetReadDeadline(time.Now().Add(5 * time.Second))
	var got []string
	for len(got) == 0 || got[len(got)-1] != "ok\r\n" {
		line, err := fr.ReadString('\n')
		require.NoError(t, err)
		got = append(got, line)
	}
	require.Contains(t, got, "+RESET\r\n")
}

// Frames a pipeline of calls queues for other connections go out when
// the run of calls of that verb ends: at the pipeline's end, and before
// a call of another verb, which may block (here a BLPOP that waits).
func TestPushesOfAPipelineGoOutAtItsEnd(t *testing.T) {
	l := &listeners{}
	_, addr := startServer(t, Options{Commands: l.commands()})
	sub, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer sub.Close()
	sr := bufio.NewReader(sub)
	_, err = sub.Write([]byte("*1\r\n$6\r\nlisten\r\n"))
	require.NoError(t, err)
	for range 4 {
		_, err = sr.ReadString('\n')
		require.NoError(t, err)
	}
	pub, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer pub.Close()
	flood := "*3\r\n$5\r\nflood\r\n$1\r\n1\r\n$1\r\n3\r\n"
	_, err = pub.Write([]byte(flood + flood + "*3\r\n$5\r\nblpop\r\n$6\r\nnolist\r\n$1\r\n5\r\n"))
	require.NoError(t, err)
	began := time.Now()
	var got strings.Builder
	for range 2 * 5 {
		require.NoError(t, sub.SetReadDeadline(time.Now().Add(4*time.Second)))
		line, err := sr.ReadString('\n')
		require.NoError(t, err)
		got.WriteString(line)
	}
	require.Less(t, time.Since(began), 4*time.Second, "the frames waited for the BLPOP")
	require.Equal(t, strings.Repeat("*2\r\n$7\r\nmessage\r\n$3\r\nxxx\r\n", 2), got.String())
}
