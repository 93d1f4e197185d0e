package resp

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"
)

// syncBuffer is a log sink the connections write concurrently.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// Panics injected in the parser (every 41st request read), in a command
// (ECHO boom) and in the reply writer (a write holding "boom-reply"),
// while other connections increment counters: each panic answers its
// client with an error (a connection whose reply stream it broke is
// closed), is logged with its stack and counted; no other connection
// notices beyond its own injected faults, and every increment that was
// acknowledged is there, once.
func TestPanicsAreContainedPerRequest(t *testing.T) {
	var reads atomic.Int64
	logs := &syncBuffer{}
	opts := Options{Logger: slog.New(slog.NewTextHandler(logs, nil))}
	opts.faults.parse = func() {
		if reads.Add(1)%41 == 0 {
			panic("injected: parser")
		}
	}
	opts.faults.command = func(args [][]byte) {
		if len(args) == 2 && string(args[1]) == "boom" {
			panic(fmt.Sprintf("injected: command %s", args[0]))
		}
	}
	opts.faults.write = func(p []byte) {
		if bytes.Contains(p, []byte("boom-reply")) {
			panic("injected: reply writer")
		}
	}
	srv, addr := startServer(t, opts)
	ctx := t.Context()
	rc := redis.NewClient(&redis.Options{Addr: addr, Protocol: 2, MaxRetries: -1, PoolSize: 16})
	t.Cleanup(func() { rc.Close() })

	const workers, each = 6, 150
	var acked [workers]atomic.Int64
	var injected atomic.Int64
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			key := fmt.Sprintf("panic:n%d", w)
			for i := range each {
				n, err := rc.Incr(ctx, key).Result()
				if err == nil {
					acked[w].Add(1)
					require.Equal(t, acked[w].Load(), n, "an increment was lost or applied twice")
				} else {
					// The parser's fault on this request, or on an
					// earlier one of a pooled connection it closed.
					require.True(t, strings.Contains(err.Error(), "internal error") || errors.Is(err, io.EOF) ||
						strings.Contains(err.Error(), "connection reset"), err.Error())
					injected.Add(1)
				}
				switch i % 10 {
				case 3:
					err := rc.Echo(ctx, "boom").Err()
					require.Error(t, err)
				case 7:
					// The panic comes as the reply is written: the error
					// may arrive, or the connection close first.
					_, err := rc.Echo(ctx, "boom-reply").Result()
					require.Error(t, err)
				}
			}
		})
	}
	wg.Wait()
	require.Positive(t, injected.Load(), "the parser's faults reached the increments")
	for w := range workers {
		// A parser fault may meet a read (and the read after it, on
		// another pooled connection it closed): read until one gets through.
		var n int64
		var err error
		for range 20 {
			n, err = rc.Get(ctx, fmt.Sprintf("panic:n%d", w)).Int64()
			if errors.Is(err, redis.Nil) {
				n, err = 0, nil
			}
			if err == nil {
				break
			}
		}
		require.NoError(t, err)
		require.Equal(t, acked[w].Load(), n)
	}
	st := srv.Stats()
	require.GreaterOrEqual(t, st.Panics, int64(workers*each/10))
	out := logs.String()
	for _, layer := range []string{"injected: parser", "injected: command echo", "injected: reply writer"} {
		require.True(t, strings.Contains(out, layer), "no log of %q", layer)
	}
	require.True(t, strings.Contains(out, "panic_test.go"), "the stack is logged")
	info, err := rc.Info(ctx, "stats").Result()
	if err != nil { // a parser fault
		info, err = rc.Info(ctx, "stats").Result()
	}
	require.NoError(t, err)
	require.Contains(t, info, "contained_panics:")
	require.False(t, strings.Contains(info, "contained_panics:0\r"))
}
