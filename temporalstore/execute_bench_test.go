package temporalstore

import (
	"context"
	"fmt"
	"log/slog"
	"runtime"
	"strconv"
	"sync/atomic"
	"testing"
	"time"
)

// BenchmarkExecuteGet is a GET of a string written by a pipelined batch,
// through Execute and through AppendGet (RESP's path) on an async table:
// the engine's own cost per read, with its allocations, over keys that
// stay in the processor's caches and over keys that do not.
func BenchmarkExecuteGet(b *testing.B) {
	for _, keys := range []int{1024, 100_000} {
		for _, appendGet := range []bool{false, true} {
			b.Run(fmt.Sprint("keys=", keys, "/append=", appendGet), func(b *testing.B) { benchExecuteGet(b, keys, appendGet) })
		}
	}
}

// benchEngine opens an engine with an async table n/t, closed with b.
func benchEngine(b *testing.B) *Engine {
	e, err := testOpen(b.Context(), Options{Dir: b.TempDir(), Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	if err := e.CreateTable(b.Context(), "n", "t", TableOptions{Async: true}); err != nil {
		b.Fatal(err)
	}
	return e
}

func benchExecuteGet(b *testing.B, keys int, appendGet bool) {
	ctx := b.Context()
	e := benchEngine(b)
	setBenchKeys(b, e, keys)
	var err error
	b.ReportAllocs()
	i := 0
	var dst []byte
	for b.Loop() {
		if appendGet {
			var found bool
			dst, found, err = e.AppendGet(ctx, "", "n", "t", batchKey((i*7919)%keys), dst[:0])
			if err != nil || !found || len(dst) != 16 {
				b.Fatalf("GET: %v, %d bytes", err, len(dst))
			}
			i++
			continue
		}
		r, err := e.Execute(ctx, Command{Kind: KindGet, Namespace: "n", Table: "t", Key: batchKey((i * 7919) % keys)})
		if err != nil || len(r.Value) != 16 {
			b.Fatalf("GET: %v, %d bytes", err, len(r.Value))
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i), "ns/get")
}

// setBenchKeys sets the first n of benchKeys to a 16-byte value in the
// table n/t, 16 SETs a batch as a pipeline writes them.
func setBenchKeys(b *testing.B, e *Engine, n int) {
	var batch []Command
	for i := range n {
		batch = append(batch, Command{Kind: KindSet, Namespace: "n", Table: "t", Key: batchKey(i), Value: []byte("0123456789abcdef")})
		if len(batch) == 16 || i == n-1 {
			if _, errs := e.ExecuteBatch(b.Context(), batch); errs[0] != nil {
				b.Fatal(errs[0])
			}
			batch = batch[:0]
		}
	}
}

var benchKeys = func() [][]byte {
	k := make([][]byte, 100_000)
	for i := range k {
		k[i] = fmt.Appendf(nil, "k%d", i)
	}
	return k
}()

func batchKey(i int) []byte { return benchKeys[i] }

// BenchmarkExecuteCounter is HSETANDGETOPT as a rate limiter sends it: add
// one event now and sum the last hour, in minute buckets with an hour's
// sliding TTL, over 64 entities of an async table; from one goroutine, and
// from 32 at once, as many connections' calls are combined into shared
// log appends.
func BenchmarkExecuteCounter(b *testing.B) {
	b.Run("goroutines=1", func(b *testing.B) {
		e := benchEngine(b)
		b.ReportAllocs()
		i := 0
		for b.Loop() {
			benchCounterCall(b, e, i)
			i++
		}
	})
	b.Run("goroutines=32", func(b *testing.B) {
		e := benchEngine(b)
		b.ReportAllocs()
		b.SetParallelism(32 / max(1, runtime.GOMAXPROCS(0)))
		var next atomic.Int64
		b.RunParallel(func(pb *testing.PB) {
			i := int(next.Add(1))
			for pb.Next() {
				benchCounterCall(b, e, i)
				i++
			}
		})
	})
}

func benchCounterCall(b *testing.B, e *Engine, i int) {
	now := time.Now().UnixMilli()
	r, err := e.Execute(b.Context(), Command{
		Kind: KindCSetAndGet, Family: "h", Namespace: "n", Table: "t", Key: benchKeys[i%64],
		At: now, Delta: 1, Start: now - 3_599_999, End: now, Aggregator: "sum",
		PrecisionMs: 60_000, TTL: time.Hour,
	})
	if err != nil || r.Int < 1 {
		b.Errorf("HSETANDGETOPT: %v, sum %d", err, r.Int)
	}
}

// BenchmarkExecuteSet is a plain SET of a 16-byte value over 100,000 keys
// of an async table from one goroutine: the write path's own cost (record,
// log append, apply) with its allocations.
func BenchmarkExecuteSet(b *testing.B) {
	b.Run("plain", func(b *testing.B) { benchmarkExecuteSet(b, false) })
	// A write hook that does nothing, as a server with keyspace
	// notifications off has: its cost on every write.
	b.Run("hooked", func(b *testing.B) { benchmarkExecuteSet(b, true) })
}

func benchmarkExecuteSet(b *testing.B, hooked bool) {
	ctx := b.Context()
	e := benchEngine(b)
	if hooked {
		defer e.OnWrite(func(context.Context, *Command, Response, WriteView) {})()
	}
	value := []byte("0123456789abcdef")
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		if _, err := e.Execute(ctx, Command{Kind: KindSet, Namespace: "n", Table: "t", Key: benchKeys[(i*7919)%len(benchKeys)], Value: value}); err != nil {
			b.Fatal(err)
		}
		i++
	}
}

// BenchmarkExecuteMGet is an MGET of 20 random keys of 100,000 strings
// written by pipelined batches, through Execute: each shard's keys are read
// together (shard.AppendStrings).
func BenchmarkExecuteMGet(b *testing.B) {
	ctx := b.Context()
	e := benchEngine(b)
	const keys = 100_000
	setBenchKeys(b, e, keys)
	cmd := Command{Kind: KindMGet, Namespace: "n", Table: "t", Keys: make([][]byte, 20)}
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		for j := range cmd.Keys {
			cmd.Keys[j] = batchKey((i*7919 + j*104729) % keys)
		}
		r, err := e.Execute(ctx, cmd)
		if err != nil || len(r.Values) != 20 || len(r.Values[0]) != 16 {
			b.Fatalf("MGET: %v, %d values", err, len(r.Values))
		}
		i++
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(i*len(cmd.Keys)), "ns/key")
}

// BenchmarkExecuteFQuery reads windows of 100 points of a 10,000-point
// series through Execute, into fresh memory or into one reused
// PointBuffer (Command.Into), as the RESP server does.
func BenchmarkExecuteFQuery(b *testing.B) {
	for _, into := range []bool{false, true} {
		b.Run(fmt.Sprint("into=", into), func(b *testing.B) {
			ctx := b.Context()
			e := benchEngine(b)
			points := make([]Point, 10_000)
			for i := range points {
				points[i] = Point{TS: int64(i), Value: []byte(strconv.Itoa(i*7919%100_000 + 1))}
			}
			if _, err := e.Execute(ctx, Command{Kind: KindFAppend, Namespace: "n", Table: "t", Key: []byte("f"), Points: points}); err != nil {
				b.Fatal(err)
			}
			var buf PointBuffer
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				c := Command{Kind: KindFQuery, Namespace: "n", Table: "t", Key: []byte("f"), Start: int64(i % 9_900), End: 99_999_999, Count: 100, HasCount: true}
				if into {
					c.Into = &buf
				}
				r, err := e.Execute(ctx, c)
				if err != nil || len(r.Points) != 100 {
					b.Fatalf("FQUERY: %v, %d points", err, len(r.Points))
				}
				i += 37
			}
		})
	}
}
