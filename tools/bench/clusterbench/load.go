package clusterbench

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// errMiss is what a read returns when the key is not there (or holds
// something else): counted apart from errors, its time not sampled.
var errMiss = errors.New("miss")

// opTimeout bounds one operation of a load.
const opTimeout = 10 * time.Second

// loadResult is one measured load: C clients running an operation in a
// loop for the warm-up, then for the measured duration.
type loadResult struct {
	Clients int     `json:"clients"`
	Ops     int     `json:"ops"`
	PerSec  float64 `json:"per_s"`
	P50Us   float64 `json:"p50_us"`
	P95Us   float64 `json:"p95_us"`
	P99Us   float64 `json:"p99_us"`
	// Errors are failed operations over the warm-up and the measured
	// window; FirstError is the first one's text.
	Errors     int    `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
	// Misses are reads that found no value (or not the one written).
	Misses int `json:"misses,omitempty"`
	// ServerCPUUsPerOp is the CPU time (user and system) of the system's
	// three member processes per measured operation, µs (0 where /proc has
	// no per-process times). On a small machine it tells what the
	// throughput can be: CPUs / (server + client CPU per operation).
	ServerCPUUsPerOp float64 `json:"server_cpu_us_per_op"`
}

// latencies returns the p50, p95 and p99 of ds in microseconds; it sorts
// ds.
func latencies(ds []time.Duration) (p50, p95, p99 float64) {
	if len(ds) == 0 {
		return math.NaN(), math.NaN(), math.NaN()
	}
	ps := benchkit.DurationPercentiles(ds, 50, 95, 99)
	us := func(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
	return us(ps[0]), us(ps[1]), us(ps[2])
}

// cpuOf sums the CPU time of processes pids; ok is false when one cannot
// be read.
func cpuOf(pids []int) (time.Duration, bool) {
	var total time.Duration
	for _, pid := range pids {
		d, err := benchkit.ProcessCPU(pid)
		if err != nil {
			return 0, false
		}
		total += d
	}
	return total, true
}

// runLoad runs op from clients goroutines (op's client is 0..clients-1)
// for warmup, then for duration, and measures the operations that
// completed within duration. pids are the processes whose CPU time is
// charged to the operations. It fails only when no operation succeeded in
// the measured window, or ctx ended.
func runLoad(ctx context.Context, clients int, warmup, duration time.Duration, pids []int, op func(ctx context.Context, client int) error) (loadResult, error) {
	var (
		measuring, stop  atomic.Bool
		errs, misses     atomic.Int64
		firstErr         atomic.Pointer[error]
		wg               sync.WaitGroup
		lats             = make([][]time.Duration, clients)
		rctx, cancelLoad = context.WithCancel(ctx)
	)
	defer cancelLoad()
	for c := range clients {
		wg.Go(func() {
			for !stop.Load() {
				start := time.Now()
				octx, cancel := context.WithTimeout(rctx, opTimeout)
				err := op(octx, c)
				cancel()
				switch {
				case err == nil:
					if measuring.Load() {
						lats[c] = append(lats[c], time.Since(start))
					}
				case rctx.Err() != nil:
					return
				case errors.Is(err, errMiss):
					if measuring.Load() {
						misses.Add(1)
					}
				default:
					errs.Add(1)
					firstErr.CompareAndSwap(nil, &err)
					// No spinning on a refusing system.
					time.Sleep(time.Millisecond)
				}
			}
		})
	}
	finish := func() {
		stop.Store(true)
		cancelLoad()
		wg.Wait()
	}
	sleep(ctx, warmup)
	cpu0, cpuOK0 := cpuOf(pids)
	measuring.Store(true)
	t0 := time.Now()
	sleep(ctx, duration)
	measuring.Store(false)
	elapsed := time.Since(t0)
	cpu1, cpuOK1 := cpuOf(pids)
	finish()
	if err := ctx.Err(); err != nil {
		return loadResult{}, err
	}
	var all []time.Duration
	for _, l := range lats {
		all = append(all, l...)
	}
	res := loadResult{Clients: clients, Ops: len(all), PerSec: float64(len(all)) / elapsed.Seconds(),
		Errors: int(errs.Load()), Misses: int(misses.Load())}
	if p := firstErr.Load(); p != nil {
		res.FirstError = (*p).Error()
	}
	if len(all) == 0 {
		if res.FirstError != "" {
			return res, fmt.Errorf("no operation succeeded in the measured window (%d errors, %d misses): %s", res.Errors, res.Misses, res.FirstError)
		}
		return res, fmt.Errorf("no operation succeeded in the measured window (%d misses)", res.Misses)
	}
	res.P50Us, res.P95Us, res.P99Us = latencies(all)
	if cpuOK0 && cpuOK1 {
		res.ServerCPUUsPerOp = float64((cpu1 - cpu0).Microseconds()) / float64(len(all))
	}
	return res, nil
}

// parallel runs f(i) for i in [0, n) from workers goroutines and returns
// the first error.
func parallel(ctx context.Context, n, workers int, f func(ctx context.Context, i int) error) error {
	var (
		next   atomic.Int64
		failed atomic.Bool
		wg     sync.WaitGroup
		mu     sync.Mutex
		err    error
	)
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= n || ctx.Err() != nil || failed.Load() {
					return
				}
				if e := f(ctx, i); e != nil {
					mu.Lock()
					if err == nil {
						err = e
					}
					mu.Unlock()
					failed.Store(true)
					return
				}
			}
		})
	}
	wg.Wait()
	if err == nil {
		err = ctx.Err()
	}
	return err
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
