package resp

import (
	"bufio"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testredis"
)

// CONFIG SET client-output-buffer-limit takes, refuses and reports values
// as redis-server 7 does, step by step on both; a refused call changes
// nothing, not even its other pairs.
func TestClientOutputBufferLimitConfig(t *testing.T) {
	s, addr := startServer(t, Options{})
	ours, ref := client(t, addr, 2), testredis.Start(t)
	ctx := t.Context()
	const def = "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"
	get := func(c *redis.Client) string {
		v, err := c.ConfigGet(ctx, "client-output-buffer-limit").Result()
		require.NoError(t, err)
		return v["client-output-buffer-limit"]
	}
	require.Equal(t, def, get(ours))
	require.Equal(t, DefaultPushLimits, s.pushLimits())
	cases := []struct {
		args []any  // after CONFIG SET
		err  string // the error reply, "" for OK
		want string // the value after the call
	}{
		{args: []any{"pubsub 1mb 256kb 10"}, want: "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 262144 10"},
		{args: []any{"PUBSUB 2MB 1MB 5 normal 1k 2kb 3"}, want: "normal 1000 2048 3 slave 268435456 67108864 60 pubsub 2097152 1048576 5"},
		{args: []any{"replica 1g 1gb 0 pubsub 1 2 3 pubsub 4b 5 6"}, want: "normal 1000 2048 3 slave 1000000000 1073741824 0 pubsub 4 5 6"},
		{args: []any{""}, want: "normal 1000 2048 3 slave 1000000000 1073741824 0 pubsub 4 5 6"},
		{args: []any{"pubsub 1 2"}, err: "Wrong number of arguments in buffer limit configuration."},
		{args: []any{"pubsub  1 2 3"}, err: "Wrong number of arguments in buffer limit configuration."},
		{args: []any{" pubsub 1 2 3"}, err: "Wrong number of arguments in buffer limit configuration."},
		{args: []any{"master 1 2 3"}, err: "Invalid client class specified in buffer limit configuration."},
		{args: []any{"pubsub 1 2 3 foo 1 2 3"}, err: "Invalid client class specified in buffer limit configuration."},
		{args: []any{"pubsub 1.5mb 1 1"}, err: "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{args: []any{"pubsub 1 10mbs 1"}, err: "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{args: []any{"pubsub -1 2 3"}, err: "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{args: []any{"pubsub 1 2 -1"}, err: "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{args: []any{"pubsub 1 2 3x"}, err: "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{args: []any{"pubsub 1 2 2147483648"}, err: "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		{args: []any{"pubsub 1 2 x normal 1 2 3"}, err: "Error in hard, soft or soft_seconds setting in buffer limit configuration."},
		// C's parsing, kept: no digits read as 0, a sign, an int's wrap,
		// a saturated count, a wrapped product.
		{args: []any{"pubsub kb 2 +5"}, want: "normal 1000 2048 3 slave 1000000000 1073741824 0 pubsub 0 2 5"},
		{args: []any{"pubsub 1 2 "}, want: "normal 1000 2048 3 slave 1000000000 1073741824 0 pubsub 1 2 0"},
		{args: []any{"pubsub 1 2 4294967297"}, want: "normal 1000 2048 3 slave 1000000000 1073741824 0 pubsub 1 2 1"},
		{args: []any{"pubsub 18446744073709551616 20000000000gb -0"}, want: "normal 1000 2048 3 slave 1000000000 1073741824 0 pubsub 18446744073709551615 3028092406290448384 0"},
		// All or nothing, with other settings in the same call.
		{args: []any{"pubsub 7 8 9", "maxmemory-policy", "bad"}, err: "argument(s) must be one of the following"},
		{args: []any{"pubsub 7 8 9", "nosuch", "1"}, err: "Unknown option or number of arguments for CONFIG SET - 'nosuch'"},
		{args: []any{"pubsub 7 8 9", "client-output-buffer-limit", "pubsub 1 2 3"}, err: "duplicate parameter"},
		{args: []any{"pubsub 7 8 9", "slowlog-max-len", "5"}, want: "normal 1000 2048 3 slave 1000000000 1073741824 0 pubsub 7 8 9"},
		{args: []any{"normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60"}, want: def},
	}
	want := def
	for _, tc := range cases {
		call := append([]any{"config", "set", "client-output-buffer-limit"}, tc.args...)
		errOurs, errRef := ours.Do(ctx, call...).Err(), ref.Do(ctx, call...).Err()
		if tc.err != "" {
			require.Error(t, errRef, "%q", tc.args)
			require.ErrorContains(t, errOurs, tc.err, "%q", tc.args)
			require.Equal(t, errRef.Error(), errOurs.Error(), "%q", tc.args)
		} else {
			require.NoError(t, errRef, "%q", tc.args)
			require.NoError(t, errOurs, "%q", tc.args)
			want = tc.want
		}
		require.Equal(t, want, get(ref), "%q", tc.args)
		require.Equal(t, want, get(ours), "%q", tc.args)
	}
	// A refused call left slowlog-max-len alone; the accepted one set it.
	v, err := ours.ConfigGet(ctx, "slowlog-max-len").Result()
	require.NoError(t, err)
	require.Equal(t, "5", v["slowlog-max-len"])
	// The pubsub class is the push limits in force; a glob finds it.
	require.NoError(t, ours.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 1mb 256kb 10").Err())
	require.Equal(t, PushLimits{Hard: 1 << 20, Soft: 256 << 10, SoftFor: 10 * time.Second}, s.pushLimits())
	v, err = ours.ConfigGet(ctx, "client-output-*").Result()
	require.NoError(t, err)
	require.Equal(t, map[string]string{"client-output-buffer-limit": "normal 0 0 0 slave 268435456 67108864 60 pubsub 1048576 262144 10"}, v)
	// Past what an int64 holds, the pubsub bound is as good as none.
	require.NoError(t, ours.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 18446744073709551615 0 0").Err())
	require.Equal(t, PushLimits{Hard: 1<<63 - 1}, s.pushLimits())
}

// Options.PushLimits is the pubsub class CONFIG GET reports at start.
func TestClientOutputBufferLimitFromOptions(t *testing.T) {
	cases := []struct {
		limits PushLimits
		want   string
	}{
		{PushLimits{}, "pubsub 33554432 8388608 60"},
		{PushLimits{Hard: -1}, "pubsub 0 0 0"},
		{PushLimits{Hard: 4 << 20}, "pubsub 4194304 0 0"},
		{PushLimits{Soft: 1 << 10, SoftFor: 1500 * time.Millisecond}, "pubsub 0 1024 1"},
	}
	for _, tc := range cases {
		s, err := New(Options{Engine: nil, PushLimits: tc.limits})
		require.NoError(t, err)
		require.Equal(t, "normal 0 0 0 slave 268435456 67108864 60 "+tc.want, s.buffers.Load().String())
	}
	_, err := New(Options{PushLimits: PushLimits{Soft: 1, SoftFor: -time.Second}})
	require.ErrorIs(t, err, ErrInvalidOptions)
}

// The limits are checked as Redis checks them: the hard one at or past
// it, the soft one once past it for more than its time at a later check,
// the clock starting again whenever a check finds the bytes under it.
func TestPushOverLimits(t *testing.T) {
	lim := PushLimits{Hard: 1000, Soft: 100, SoftFor: 2 * time.Second}
	t0 := time.Unix(1_000_000, 0)
	type check struct {
		unsent int64
		at     time.Duration // after t0
		over   bool
	}
	cases := []struct {
		name   string
		checks []check
	}{
		{"under", []check{{99, 0, false}, {99, time.Hour, false}}},
		{"hard at once", []check{{1000, 0, true}}},
		{"hard past", []check{{5000, 0, true}}},
		{"soft not yet", []check{{100, 0, false}, {150, time.Second, false}, {150, 2 * time.Second, false}}},
		{"soft past its time", []check{{100, 0, false}, {150, 2*time.Second + time.Millisecond, true}}},
		{"soft broken", []check{{100, 0, false}, {99, time.Second, false}, {150, 2*time.Second + time.Millisecond, false},
			{150, 4 * time.Second, false}, {150, 4*time.Second + 2*time.Millisecond, true}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var p pushState
			for i, ch := range tc.checks {
				p.unsent = ch.unsent
				require.Equal(t, ch.over, p.overLimits(lim, func() time.Time { return t0.Add(ch.at) }), "check %d", i)
			}
		})
	}
	// No bound at all.
	p := pushState{unsent: 1 << 40}
	require.False(t, p.overLimits(PushLimits{}, time.Now))
}

// slowListener connects a subscriber (LISTEN) that never reads, with a
// small receive buffer so that the kernel soaks up little.
func slowListener(t *testing.T, addr string) net.Conn {
	slow, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	t.Cleanup(func() { slow.Close() })
	require.NoError(t, slow.(*net.TCPConn).SetReadBuffer(4<<10))
	_, err = slow.Write([]byte("*1\r\n$6\r\nlisten\r\n"))
	require.NoError(t, err)
	return slow
}

// A CONFIG SET that lowers the pubsub limits applies to connections open
// already: a slow subscriber the old limits let be is closed, while a
// fast one gets every frame and the publisher never waits.
func TestPushLimitsLoweredAtRuntime(t *testing.T) {
	l := &listeners{}
	s, addr := startServer(t, Options{Commands: l.commands()})
	slowListener(t, addr)
	fast, err := net.Dial("tcp", addr)
	require.NoError(t, err)
	defer fast.Close()
	fr := bufio.NewReader(fast)
	_, err = fast.Write([]byte("*1\r\n$6\r\nlisten\r\n"))
	require.NoError(t, err)
	const bursts, perBurst = 16, 30
	var received atomic.Int64
	var read sync.WaitGroup
	read.Go(func() {
		for {
			fast.SetReadDeadline(time.Now().Add(10 * time.Second))
			line, err := fr.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(line, "$7") && received.Add(1) == bursts*perBurst {
				return
			}
		}
	})
	pub := client(t, addr, 2)
	ctx := t.Context()
	require.Eventually(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.pushs) == 2 }, 5*time.Second, time.Millisecond)
	// Bursts of 30 frames of 20 KiB, 600 KiB a burst, which the fast
	// subscriber reads each time: the slow one's queue stays under the
	// default 32 MiB...
	burst := func(i int) {
		began := time.Now()
		n, err := pub.Do(ctx, "flood", perBurst, 20<<10).Int()
		require.NoError(t, err)
		require.Less(t, time.Since(began), 3*time.Second, "the publisher waited for a slow subscriber")
		require.GreaterOrEqual(t, n, perBurst, "a frame to the fast subscriber was refused")
		require.Eventually(t, func() bool { return received.Load() >= int64(perBurst*(i+1)) }, 10*time.Second, time.Millisecond)
	}
	burst(0)
	require.Equal(t, int64(0), s.Stats().PushDisconnections)
	// ... and passes a lowered 1 MiB (and what the kernel soaks up).
	require.NoError(t, pub.ConfigSet(ctx, "client-output-buffer-limit", "pubsub 1mb 256kb 10").Err())
	for i := 1; i < bursts; i++ {
		burst(i)
	}
	read.Wait()
	require.Equal(t, int64(bursts*perBurst), received.Load())
	require.Eventually(t, func() bool { return s.Stats().PushDisconnections == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return s.Clients() == 2 }, 5*time.Second, 10*time.Millisecond)
	require.NoError(t, pub.Ping(ctx).Err())
}

// A subscriber that stays past the soft limit with nothing more queued
// is closed by the periodic check once its time is up, as Redis's
// clientsCron closes it; not before.
func TestPushSoftLimitWithoutNewOutput(t *testing.T) {
	l := &listeners{}
	s, addr := startServer(t, Options{Commands: l.commands(), PushLimits: PushLimits{Soft: 1 << 20, SoftFor: time.Second}})
	slowListener(t, addr)
	pub := client(t, addr, 2)
	ctx := t.Context()
	require.Eventually(t, func() bool { l.mu.Lock(); defer l.mu.Unlock(); return len(l.pushs) == 1 }, 5*time.Second, time.Millisecond)
	// 8 MiB at once: more than the kernel's buffers soak up, so the
	// bytes not yet written stay past 1 MiB.
	began := time.Now()
	n, err := pub.Do(ctx, "flood", "80", 100<<10).Int()
	require.NoError(t, err)
	require.Equal(t, 80, n)
	if time.Since(began) < 900*time.Millisecond {
		require.Equal(t, int64(0), s.Stats().PushDisconnections, "closed before its soft time was up")
	}
	require.Eventually(t, func() bool { return s.Stats().PushDisconnections == 1 }, 5*time.Second, 10*time.Millisecond)
	require.Eventually(t, func() bool { return s.Clients() == 1 }, 5*time.Second, 10*time.Millisecond)
}

// Whatever client-output-buffer-limit value parses is written back by
// CONFIG GET in a form that parses to the same limits; nothing panics.
func FuzzParseBufferLimits(f *testing.F) {
	for _, s := range []string{"", "pubsub 1mb 256kb 10", "normal 0 0 0 slave 268435456 67108864 60 pubsub 33554432 8388608 60",
		"replica 1gb 1gb 1", "pubsub  1 1 1", "master 1 1 1", "pubsub 1x 1 1", "PUBSUB 18446744073709551615 0 -1"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, v string) {
		changes, err := parseBufferLimits(v)
		if err != nil {
			return
		}
		b := newBufferLimits(DefaultPushLimits)
		for class, l := range changes {
			b.class[class] = l
		}
		again, err := parseBufferLimits(b.String())
		require.NoError(t, err, b.String())
		for class, l := range again {
			require.Equal(t, b.class[class], l, b.String())
		}
	})
}
