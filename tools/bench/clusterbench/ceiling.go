package clusterbench

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"syscall"
)

// runSharedCeiling measures what this disk allows the shared-storage
// cell's shape without the engine: W closed-loop writers, each write a
// value-sized frame handed to one of shards appenders (one file each,
// like one shard's segment), which write everything queued with one
// pwrite, fdatasync, and answer the writes. It is the ceiling of a log
// whose writes are acknowledged after the fdatasync of the append
// holding them.
func runSharedCeiling(ctx context.Context, cfg Config, dir string, writers int) (loadResult, error) {
	type req struct{ done chan error }
	qs := make([]chan req, cfg.Shards)
	stop := make(chan struct{})
	defer close(stop)
	frame := make([]byte, cfg.ValueBytes+48) // a record's bytes and its framing
	for i := range qs {
		qs[i] = make(chan req, 1024)
		f, err := os.Create(filepath.Join(dir, fmt.Sprint("ceiling-", i)))
		if err != nil {
			return loadResult{}, err
		}
		defer f.Close()
		go func(q chan req) {
			var off int64
			var batch []req
			var buf []byte
			for {
				select {
				case r := <-q:
					batch = append(batch[:0], r)
				case <-stop:
					return
				}
			gather:
				for {
					select {
					case r := <-q:
						batch = append(batch, r)
					default:
						break gather
					}
				}
				buf = buf[:0]
				for range batch {
					buf = append(buf, frame...)
				}
				_, err := f.WriteAt(buf, off)
				off += int64(len(buf))
				if err == nil {
					err = syscall.Fdatasync(int(f.Fd()))
				}
				for _, r := range batch {
					r.done <- err
				}
			}
		}(qs[i])
	}
	rngs := make([]*rand.Rand, writers)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 99))
	}
	return runLoad(ctx, writers, cfg.Warmup, cfg.Duration, nil, func(ctx context.Context, client int) error {
		r := req{done: make(chan error, 1)}
		qs[rngs[client].IntN(len(qs))] <- r
		return <-r.done
	})
}
