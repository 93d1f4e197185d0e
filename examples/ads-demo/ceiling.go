package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Ceiling is a server's transport ceiling: decisions a second when every
// store command of a decision is a PING, in the same round trips (two
// commands, two, then one) from the same clients: what the network path
// alone allows, whatever the commands cost.
type Ceiling struct {
	Backend     string  `json:"backend"`
	Repeat      int     `json:"repeat"`
	PerSecond   float64 `json:"decisions_per_s"`
	ServerCPUus float64 `json:"server_cpu_us_per_decision,omitempty"`
	ClientCPUus float64 `json:"client_cpu_us_per_decision"`
}

// roundTrips are the commands of a decision's round trips: History's two,
// Take's two (ours; redis sends one script) and Record's one.
var roundTrips = []int{2, 2, 1}

// measureCeiling runs n PING decisions on addr from clients clients.
func measureCeiling(ctx context.Context, name, addr string, n, clients, serverPID int) (Ceiling, error) {
	c := Ceiling{Backend: name}
	rc := newClient(addr, clients)
	defer rc.Close()
	var next atomic.Int64
	var wg sync.WaitGroup
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	server0, _ := processCPU(serverPID)
	client0, start := selfCPU(), time.Now()
	for range clients {
		wg.Go(func() {
			for next.Add(1) <= int64(n) && ctx.Err() == nil {
				for _, k := range roundTrips {
					_, err := rc.Pipelined(ctx, func(p redis.Pipeliner) error {
						for range k {
							p.Ping(ctx)
						}
						return nil
					})
					if err != nil {
						cancel(fmt.Errorf("%s ceiling: %w", name, err))
						return
					}
				}
			}
		})
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := context.Cause(ctx); err != nil {
		return c, err
	}
	c.PerSecond = float64(n) / elapsed.Seconds()
	c.ClientCPUus = float64((selfCPU() - client0).Microseconds()) / float64(n)
	if server1, err := processCPU(serverPID); err == nil && serverPID != 0 {
		c.ServerCPUus = float64((server1 - server0).Microseconds()) / float64(n)
	}
	return c, nil
}
