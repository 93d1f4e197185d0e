package temporalstore

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// Kinds that panic, for TestEnginePanicsAreContained: one in its runner,
// one in the write function it hands its shard (which the shard's combiner
// may run for another caller's batch).
const (
	kindPanicInRunner Kind = "test_panic_runner"
	kindPanicInShard  Kind = "test_panic_shard"
)

func withPanickingKinds(t *testing.T) {
	kindInfos[kindPanicInRunner] = kindInfo{run: func(context.Context, *Engine, *shard.Shard, *Command) (Response, error) {
		var b []byte
		_ = b[len(b)+1] // index out of range
		return Response{}, nil
	}}
	kindInfos[kindPanicInShard] = kindInfo{run: func(ctx context.Context, _ *Engine, s *shard.Shard, c *Command) (Response, error) {
		err := s.Update(ctx, c.Key, func(old []byte, exp time.Time, _ bool) ([]byte, time.Time, shard.Action, error) {
			_ = old[len(old)+int(c.Start)]
			return nil, exp, shard.Write, nil
		})
		return Response{}, err
	}}
	t.Cleanup(func() {
		delete(kindInfos, kindPanicInRunner)
		delete(kindInfos, kindPanicInShard)
	})
}

// Commands that panic, in their runner or inside their shard's combined
// write, under concurrent increments of the same keys: each gets
// ErrInternal and changes nothing, the process and every other command go
// on, Panics counts them, and a reopen replays to the same state.
func TestEnginePanicsAreContained(t *testing.T) {
	withPanickingKinds(t)
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	logs := &lockedBuffer{}
	opts := Options{Dir: dir, Now: clk.Now, Logger: slog.New(slog.NewTextHandler(logs, nil))}
	e, err := testOpen(t.Context(), opts)
	require.NoError(t, err)
	ctx := t.Context()
	const workers, each, keys = 8, 60, 3
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := range each {
				key := fmt.Appendf(nil, "n%d", (w+i)%keys)
				_, err := e.Execute(ctx, Command{Kind: KindIncrBy, Key: key, Delta: 1})
				require.NoError(t, err)
				kind := kindPanicInShard
				if i%2 == 0 {
					kind = kindPanicInRunner
				}
				_, err = e.Execute(ctx, Command{Kind: kind, Key: key, Start: 5})
				require.ErrorIs(t, err, ErrInternal)
			}
		})
	}
	wg.Wait()
	require.Equal(t, int64(workers*each), e.Panics())
	out := logs.String()
	require.True(t, strings.Contains(out, "panicked in its shard") && strings.Contains(out, "panic_test.go"), "the stacks are logged")
	state := func(e *Engine) map[string]string {
		out := map[string]string{}
		total := 0
		for k := range keys {
			v, ok := get(t, e, Command{Key: fmt.Appendf(nil, "n%d", k)})
			require.True(t, ok)
			out[fmt.Sprint(k)] = v
			n, err := strconv.Atoi(v)
			require.NoError(t, err)
			total += n
		}
		require.Equal(t, workers*each, total)
		return out
	}
	before := state(e)
	require.NoError(t, e.Close())
	e, err = testOpen(t.Context(), opts)
	require.NoError(t, err)
	defer e.Close()
	require.Equal(t, before, state(e))
}

// lockedBuffer is a log sink written from many goroutines.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
