package streamsbench

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strconv"
	"sync"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// randomSource is incompressible bytes a client takes its values from, a
// window at a random offset per request.
type randomSource struct {
	buf []byte
	rng *rand.Rand
}

func newRandomSource(seed, stream uint64, size int) *randomSource {
	rng := rand.New(rand.NewPCG(seed, stream))
	buf := make([]byte, 4096+size)
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	return &randomSource{buf: buf, rng: rng}
}

// next returns size random bytes, valid until the source is dropped.
func (r *randomSource) next(size int) []byte {
	off := r.rng.IntN(len(r.buf) - size)
	return r.buf[off : off+size]
}

// streamKey is client c's stream: one of n, each with its own hash tag.
func streamKey(c, n int) string {
	return "stream:{" + strconv.Itoa(c%n) + "}"
}

// xaddClient is one connection sending XADD <key> * f <value> at
// pipeline 1.
type xaddClient struct {
	c         *conn
	key       []byte
	values    *randomSource
	size      int
	depth     int // XADDs written before their replies are read (0: 1)
	latencies []time.Duration
}

func (x *xaddClient) xadd() error {
	n := max(x.depth, 1)
	for range n {
		x.c.writeArray(5)
		x.c.writeBulkString("XADD")
		x.c.writeBulk(x.key)
		x.c.writeBulkString("*")
		x.c.writeBulkString("f")
		x.c.writeBulk(x.values.next(x.size))
	}
	if err := x.c.flush(); err != nil {
		return err
	}
	for range n {
		if err := x.c.skip(); err != nil {
			return err
		}
	}
	return nil
}

// runXAdd is the xadd workload against a RESP server at addr: cfg.Clients
// connections, each XADDing to its stream, unmeasured for cfg.Warmup and
// then measured for cfg.Duration. pid is the server's process, for its
// CPU time.
func runXAdd(ctx context.Context, cfg Config, addr string, pid int) (result, error) {
	return runXAddDepth(ctx, cfg, addr, pid, cfg.Clients, 1)
}

// runXAddDepth is runXAdd with clients connections each writing depth
// XADDs before reading their replies; latencies are a round's.
func runXAddDepth(ctx context.Context, cfg Config, addr string, pid, nclients, depth int) (result, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute+2*(cfg.Warmup+cfg.Duration))
	defer cancel()
	cs, err := dialAll(ctx, addr, nclients)
	if err != nil {
		return result{}, err
	}
	defer closeAll(cs)
	clients := make([]*xaddClient, len(cs))
	for i, c := range cs {
		clients[i] = &xaddClient{c: c, key: []byte(streamKey(i, cfg.Streams)), values: newRandomSource(cfg.Seed, uint64(i), cfg.EntryBytes), size: cfg.EntryBytes, depth: depth}
	}
	t0 := time.Now().Add(cfg.Warmup)
	t1 := t0.Add(cfg.Duration)
	cpu := startCPUWindow(pid, t0, t1)
	errs := make([]error, len(clients))
	var wg sync.WaitGroup
	for i, x := range clients {
		wg.Go(func() {
			x.latencies, errs[i] = measureWindow(t0, t1, x.xadd)
			if errs[i] != nil {
				errs[i] = fmt.Errorf("client %d: %w", i, errs[i])
			}
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return result{}, err
	}
	var lat []time.Duration
	for _, x := range clients {
		lat = append(lat, x.latencies...)
	}
	res := latencyResult(lat, cfg.Duration.Seconds())
	res.Rate *= float64(depth)
	res.Count *= depth
	res.ServerCPUUs = cpu.perOp(len(lat) * depth)
	return res, nil
}

// measureWindow calls op until t0 unmeasured, then until an op completes
// at or after t1, and returns the latencies of the ops that completed in
// [t0, t1): the rate over the window is their count over t1-t0.
func measureWindow(t0, t1 time.Time, op func() error) ([]time.Duration, error) {
	for time.Now().Before(t0) {
		if err := op(); err != nil {
			return nil, err
		}
	}
	var lat []time.Duration
	for {
		began := time.Now()
		if err := op(); err != nil {
			return nil, err
		}
		done := time.Now()
		if !done.Before(t1) {
			return lat, nil
		}
		lat = append(lat, done.Sub(began))
	}
}

// latencyResult is count ops over seconds, with their p50 and p99.
func latencyResult(lat []time.Duration, seconds float64) result {
	ps := benchkit.DurationPercentiles(lat, 50, 99)
	return result{Rate: float64(len(lat)) / seconds, P50Us: micros(ps[0]), P99Us: micros(ps[1]), Count: len(lat), Seconds: seconds}
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }

// cpuWindow samples a process's CPU time at two moments.
type cpuWindow struct {
	done       chan struct{}
	start, end time.Duration
	err        error
}

// startCPUWindow samples pid's CPU time at t0 and t1 in the background.
func startCPUWindow(pid int, t0, t1 time.Time) *cpuWindow {
	w := &cpuWindow{done: make(chan struct{})}
	go func() {
		defer close(w.done)
		time.Sleep(time.Until(t0))
		var err0, err1 error
		w.start, err0 = benchkit.ProcessCPU(pid)
		time.Sleep(time.Until(t1))
		w.end, err1 = benchkit.ProcessCPU(pid)
		w.err = errors.Join(err0, err1)
	}()
	return w
}

// perOp waits for the window's end and returns the CPU time per op, µs
// (0 where the times cannot be read).
func (w *cpuWindow) perOp(ops int) float64 {
	<-w.done
	if w.err != nil || ops == 0 {
		return 0
	}
	return micros(w.end-w.start) / float64(ops)
}

// cpuSince is the CPU time pid used since start per op, µs (0 where the
// times cannot be read).
func cpuSince(pid int, start time.Duration, startErr error, ops int) float64 {
	end, err := benchkit.ProcessCPU(pid)
	if err != nil || startErr != nil || ops == 0 {
		return 0
	}
	return micros(end-start) / float64(ops)
}
