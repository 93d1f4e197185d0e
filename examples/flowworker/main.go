package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/examples/internal/flowresp"
	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
	"github.com/temporalstore/temporalstore-go/ferricstore/flowworker"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "flowworker:", err)
		os.Exit(1)
	}
}

type config struct {
	addr, typ, name    string
	concurrency, batch int
	lease, work        time.Duration
	enqueue            int
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("flowworker", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.addr, "addr", "127.0.0.1:6379", "the server's RESP address")
	fs.StringVar(&c.typ, "type", "job", "the flow type to work (or to enqueue)")
	fs.StringVar(&c.name, "name", "", "this worker's name in leases and histories (default worker-<pid>)")
	fs.IntVar(&c.concurrency, "concurrency", 4, "jobs run at once")
	fs.IntVar(&c.batch, "batch", 0, "most flows one claim takes (default --concurrency)")
	fs.DurationVar(&c.lease, "lease", 30*time.Second, "each claim's lease; extended every third of it while a job runs")
	fs.DurationVar(&c.work, "work", 10*time.Millisecond, "how long each job takes")
	fs.IntVar(&c.enqueue, "enqueue", 0, "instead of working, enqueue this many flows (<type>-0, <type>-1, ...) and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: flowworker [flags]\n\nWorks (or enqueues) durable flows of a server over RESP.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.name == "" {
		c.name = fmt.Sprintf("worker-%d", os.Getpid())
	}
	if c.concurrency < 1 || c.lease <= 0 || c.work < 0 || c.enqueue < 0 {
		return c, errors.New("--concurrency and --lease must be positive, --work and --enqueue not negative")
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parse(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	// No read timeout: a blocked claim holds its connection until a flow
	// comes or its wait ends.
	rc := redis.NewClient(&redis.Options{Addr: c.addr, Protocol: 3, ReadTimeout: -1, PoolSize: c.concurrency + 2})
	defer rc.Close()
	fl := flowresp.New(rc)
	if c.enqueue > 0 {
		return enqueue(ctx, fl, c, stdout)
	}
	done, runs := "flowworker:"+c.typ+":done", "flowworker:"+c.typ+":runs:"
	w := flowworker.Worker{Client: fl, Type: c.typ, Name: c.name, Concurrency: c.concurrency, BatchSize: c.batch,
		Lease: c.lease, ClaimWait: 2 * time.Second, Logger: log,
		Handler: func(ctx context.Context, r flow.Record) error {
			if err := rc.Incr(ctx, runs+r.ID).Err(); err != nil {
				return err
			}
			time.Sleep(c.work)
			return rc.SAdd(ctx, done, r.ID).Err()
		}}
	log.Info("working", "type", c.typ, "name", c.name, "concurrency", c.concurrency, "lease", c.lease)
	return w.Run(ctx)
}

// enqueue creates c.enqueue flows in batches of 100.
func enqueue(ctx context.Context, fl *flowresp.Client, c config, stdout io.Writer) error {
	q := flowworker.Queue{Client: fl, Type: c.typ}
	for start := 0; start < c.enqueue; start += 100 {
		var cs []flow.Create
		for i := start; i < min(c.enqueue, start+100); i++ {
			cs = append(cs, flow.Create{ID: fmt.Sprint(c.typ, "-", i)})
		}
		items, err := q.EnqueueMany(ctx, cs)
		if err != nil {
			return err
		}
		for _, it := range items {
			if it.Err != nil && !errors.Is(it.Err, flow.ErrExists) {
				return it.Err
			}
		}
	}
	fmt.Fprintf(stdout, "enqueued %d flows of type %s\n", c.enqueue, c.typ)
	return nil
}
