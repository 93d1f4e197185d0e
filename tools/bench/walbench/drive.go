package walbench

import (
	"context"
	"encoding/binary"
	"errors"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// payloadSource hands out incompressible payloads: slices of one buffer of
// seeded random bytes, each appender walking it with its own offset so that
// consecutive records differ. The buffer is never written after creation.
type payloadSource struct {
	buf []byte
}

const poolBytes = 8 << 20

func newPayloadSource(seed uint64) *payloadSource {
	r := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	buf := make([]byte, poolBytes+maxPayload)
	for i := 0; i+8 <= len(buf); i += 8 {
		binary.LittleEndian.PutUint64(buf[i:], r.Uint64())
	}
	return &payloadSource{buf: buf}
}

// cursor returns a walker for appender number worker.
func (p *payloadSource) cursor(worker, size int) *payloadCursor {
	return &payloadCursor{buf: p.buf, size: size, off: (worker * 1_048_573) % poolBytes}
}

type payloadCursor struct {
	buf  []byte
	size int
	off  int
}

func (c *payloadCursor) next() []byte {
	b := c.buf[c.off : c.off+c.size : c.off+c.size]
	c.off = (c.off + 4099) % poolBytes
	return b
}

// runResult is one measured run of one system in one cell.
type runResult struct {
	Repeat          int     `json:"repeat"`
	Records         uint64  `json:"records"`
	Seconds         float64 `json:"seconds"`
	RecordsPerSec   float64 `json:"records_per_sec"`
	PayloadMBPerSec float64 `json:"payload_mb_per_sec"`
	P50Micros       float64 `json:"p50_us"`
	P99Micros       float64 `json:"p99_us"`
	Fsyncs          uint64  `json:"fsyncs"`
	RecordsPerFsync float64 `json:"records_per_fsync"`
}

type workerOut struct {
	lat     []time.Duration
	lastEnd time.Time
	err     error
}

// drive runs conc goroutines appending size-byte payloads to a: warmup
// unmeasured, then measure. Only appends that start inside the measured
// window count; the window ends when the last of them returns. Each
// goroutine times its own calls; the latencies are merged.
func drive(ctx context.Context, a appender, src *payloadSource, size, conc int, warmup, measure time.Duration) (runResult, error) {
	const (
		phaseWarm = iota
		phaseMeasure
		phaseStop
	)
	var phase atomic.Int32
	outs := make([]workerOut, conc)
	var wg sync.WaitGroup
	for w := range conc {
		wg.Go(func() {
			out := &outs[w]
			cur := src.cursor(w, size)
			out.lat = make([]time.Duration, 0, 4096)
			for {
				ph := phase.Load()
				if ph == phaseStop {
					return
				}
				data := cur.next()
				t0 := time.Now()
				err := a.Append(ctx, data)
				t1 := time.Now()
				if err != nil {
					out.err = err
					phase.Store(phaseStop)
					return
				}
				if ph == phaseMeasure {
					out.lat = append(out.lat, t1.Sub(t0))
					out.lastEnd = t1
				}
			}
		})
	}
	sleep(ctx, warmup)
	f0 := a.fsyncs()
	start := time.Now()
	phase.CompareAndSwap(phaseWarm, phaseMeasure)
	sleep(ctx, measure)
	phase.Store(phaseStop)
	wg.Wait()
	f1 := a.fsyncs()

	var errs []error
	var all []time.Duration
	end := start
	for i := range outs {
		errs = append(errs, outs[i].err)
		all = append(all, outs[i].lat...)
		if outs[i].lastEnd.After(end) {
			end = outs[i].lastEnd
		}
	}
	if err := errors.Join(append(errs, ctx.Err())...); err != nil {
		return runResult{}, err
	}
	r := runResult{Records: uint64(len(all)), Fsyncs: f1 - f0}
	r.Seconds = end.Sub(start).Seconds()
	if r.Seconds > 0 {
		r.RecordsPerSec = float64(r.Records) / r.Seconds
		r.PayloadMBPerSec = r.RecordsPerSec * float64(size) / 1e6
	}
	ps := benchkit.DurationPercentiles(all, 50, 99)
	r.P50Micros = float64(ps[0]) / 1e3
	r.P99Micros = float64(ps[1]) / 1e3
	if r.Fsyncs > 0 {
		r.RecordsPerFsync = float64(r.Records) / float64(r.Fsyncs)
	}
	return r, nil
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
