package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/nats-io/nats-server/v2/server"
	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/jetstream"
)

// The sync policies of --sync.
const (
	syncAlways  = "always"
	syncDefault = "default"
)

// streamName is the one stream the publishers publish to, over subjects
// s.0, s.1, ...
const streamName = "bench"

// config is one run, from the flags.
type config struct {
	dir        string
	sync       string
	publishers int
	subjects   int
	payload    int
	warmup     time.Duration
	duration   time.Duration
	count      int
	seed       uint64
}

// result is the JSON object printed on stdout.
type result struct {
	System        string  `json:"system"`
	Sync          string  `json:"sync"`
	ServerVersion string  `json:"server_version"`
	Publishers    int     `json:"publishers"`
	Subjects      int     `json:"subjects"`
	PayloadBytes  int     `json:"payload_bytes"`
	Count         int     `json:"count"`
	Seconds       float64 `json:"seconds"`
	OpsPerSec     float64 `json:"ops_per_s"`
	P50Us         float64 `json:"p50_us"`
	P99Us         float64 `json:"p99_us"`
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	cfg, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "natsbench:", err)
		return 2
	}
	res, err := bench(context.Background(), cfg)
	if err != nil {
		fmt.Fprintln(stderr, "natsbench:", err)
		return 1
	}
	if err := json.NewEncoder(stdout).Encode(res); err != nil {
		fmt.Fprintln(stderr, "natsbench:", err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("natsbench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.dir, "dir", "", "JetStream store directory (required; should be empty)")
	fs.StringVar(&c.sync, "sync", syncAlways, "always: sync every write before its ack (SyncAlways); default: the server's default (sync every 2 minutes)")
	fs.IntVar(&c.publishers, "publishers", 50, "publishing goroutines, each with its own connection")
	fs.IntVar(&c.subjects, "subjects", 12, "subjects s.0 .. s.<n-1> of the stream; publisher i publishes to s.<i mod n>")
	fs.IntVar(&c.payload, "payload", 128, "message size in bytes (random)")
	fs.DurationVar(&c.warmup, "warmup", 500*time.Millisecond, "unmeasured load before the measurement")
	fs.DurationVar(&c.duration, "duration", 3*time.Second, "measured time (unless --count)")
	fs.IntVar(&c.count, "count", 0, "measure this many publishes in all instead of --duration (0: use --duration)")
	fs.Uint64Var(&c.seed, "seed", 1, "seed of the random payloads")
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	switch {
	case fs.NArg() > 0:
		return c, fmt.Errorf("unexpected arguments %q", fs.Args())
	case c.dir == "":
		return c, errors.New("--dir is required")
	case c.sync != syncAlways && c.sync != syncDefault:
		return c, fmt.Errorf("--sync %q: want %s or %s", c.sync, syncAlways, syncDefault)
	case c.publishers <= 0 || c.subjects <= 0 || c.payload <= 0:
		return c, errors.New("--publishers, --subjects and --payload must be positive")
	case c.count < 0 || c.duration <= 0 || c.warmup < 0:
		return c, errors.New("--count, --warmup must not be negative and --duration must be positive")
	}
	return c, nil
}

// startServer runs an embedded nats-server with JetStream storing in dir,
// on a random loopback port, its logging and signal handling off.
func startServer(dir, policy string) (*server.Server, error) {
	opts := &server.Options{
		Host:      "127.0.0.1",
		Port:      server.RANDOM_PORT,
		JetStream: true,
		StoreDir:  dir,
		NoLog:     true,
		NoSigs:    true,
		// No HTTP monitoring, no cluster: only the client port.
		HTTPPort: 0,
	}
	if policy == syncAlways {
		// What the server config's `jetstream { sync_interval: always }`
		// sets (server.Options.SyncAlways, read into every file store's
		// config): each write is synced before it is acknowledged.
		opts.SyncAlways = true
	}
	s, err := server.NewServer(opts)
	if err != nil {
		return nil, fmt.Errorf("nats-server: %w", err)
	}
	go s.Start()
	if !s.ReadyForConnections(10 * time.Second) {
		s.Shutdown()
		return nil, errors.New("nats-server did not get ready in 10s")
	}
	return s, nil
}

// createStream makes the file-backed stream the publishers publish to.
func createStream(ctx context.Context, url string) error {
	nc, err := nats.Connect(url)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer nc.Close()
	js, err := jetstream.New(nc)
	if err != nil {
		return err
	}
	_, err = js.CreateStream(ctx, jetstream.StreamConfig{
		Name: streamName, Subjects: []string{"s.*"}, Storage: jetstream.FileStorage, Replicas: 1,
	})
	if err != nil {
		return fmt.Errorf("create stream: %w", err)
	}
	return nil
}

// bench starts the server, creates the stream and runs the publishers.
func bench(ctx context.Context, cfg config) (result, error) {
	s, err := startServer(cfg.dir, cfg.sync)
	if err != nil {
		return result{}, err
	}
	defer func() {
		s.Shutdown()
		s.WaitForShutdown()
	}()
	if err := createStream(ctx, s.ClientURL()); err != nil {
		return result{}, err
	}
	pubs := make([]*publisher, cfg.publishers)
	for i := range pubs {
		p, err := newPublisher(s.ClientURL(), i, cfg)
		if err != nil {
			closeAll(pubs)
			return result{}, fmt.Errorf("publisher %d: %w", i, err)
		}
		pubs[i] = p
	}
	defer closeAll(pubs)
	seconds, err := runPublishers(ctx, pubs, cfg)
	if err != nil {
		return result{}, err
	}
	var lat []time.Duration
	for _, p := range pubs {
		lat = append(lat, p.latencies...)
	}
	ps := percentiles(lat, 50, 99)
	return result{
		System: "jetstream", Sync: cfg.sync, ServerVersion: server.VERSION,
		Publishers: cfg.publishers, Subjects: cfg.subjects, PayloadBytes: cfg.payload,
		Count: len(lat), Seconds: seconds, OpsPerSec: float64(len(lat)) / seconds,
		P50Us: micros(ps[0]), P99Us: micros(ps[1]),
	}, nil
}

// publisher is one connection publishing to one subject.
type publisher struct {
	nc      *nats.Conn
	js      jetstream.JetStream
	subject string
	// random holds incompressible bytes; each message is a window of it.
	random    []byte
	rng       *rand.Rand
	size      int
	latencies []time.Duration
	finished  time.Time
}

func newPublisher(url string, i int, cfg config) (*publisher, error) {
	nc, err := nats.Connect(url)
	if err != nil {
		return nil, err
	}
	js, err := jetstream.New(nc)
	if err != nil {
		nc.Close()
		return nil, err
	}
	rng := rand.New(rand.NewPCG(cfg.seed, uint64(i)))
	random := make([]byte, 4096+cfg.payload)
	for j := range random {
		random[j] = byte(rng.Uint32())
	}
	return &publisher{nc: nc, js: js, subject: "s." + strconv.Itoa(i%cfg.subjects), random: random, rng: rng, size: cfg.payload}, nil
}

func closeAll(pubs []*publisher) {
	for _, p := range pubs {
		if p != nil {
			p.nc.Close()
		}
	}
}

// publish publishes one message and waits for its PubAck.
func (p *publisher) publish(ctx context.Context) error {
	off := p.rng.IntN(len(p.random) - p.size)
	_, err := p.js.Publish(ctx, p.subject, p.random[off:off+p.size])
	return err
}

// runPublishers runs every publisher through the warm-up and then the
// measurement: until the window [t0, t0+duration) closes, or until each
// has completed its share of cfg.count. It returns the measured seconds.
func runPublishers(ctx context.Context, pubs []*publisher, cfg config) (float64, error) {
	t0 := time.Now().Add(cfg.warmup)
	t1 := t0.Add(cfg.duration)
	errs := make([]error, len(pubs))
	var wg sync.WaitGroup
	for i, p := range pubs {
		share := 0
		if cfg.count > 0 {
			share = cfg.count / len(pubs)
			if i < cfg.count%len(pubs) {
				share++
			}
		}
		wg.Go(func() { errs[i] = p.loop(ctx, t0, t1, share) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return 0, err
	}
	if cfg.count == 0 {
		return cfg.duration.Seconds(), nil
	}
	last := t0
	for _, p := range pubs {
		if p.finished.After(last) {
			last = p.finished
		}
	}
	return last.Sub(t0).Seconds(), nil
}

// loop publishes unmeasured until t0, then either share measured
// publishes (share > 0) or until t1, recording the latency of each
// publish that completes in [t0, t1).
func (p *publisher) loop(ctx context.Context, t0, t1 time.Time, share int) error {
	for time.Now().Before(t0) {
		if err := p.publish(ctx); err != nil {
			return err
		}
	}
	for i := 0; share == 0 || i < share; i++ {
		began := time.Now()
		if err := p.publish(ctx); err != nil {
			return err
		}
		done := time.Now()
		if share == 0 && !done.Before(t1) {
			break
		}
		p.latencies = append(p.latencies, done.Sub(began))
	}
	p.finished = time.Now()
	return nil
}

// percentiles sorts ds and returns the requested percentiles, linearly
// interpolated between the closest ranks (zeros for no data).
func percentiles(ds []time.Duration, ps ...float64) []time.Duration {
	out := make([]time.Duration, len(ps))
	if len(ds) == 0 {
		return out
	}
	slices.Sort(ds)
	for i, p := range ps {
		pos := p / 100 * float64(len(ds)-1)
		lo, hi := int(math.Floor(pos)), int(math.Ceil(pos))
		out[i] = ds[lo] + time.Duration(float64(ds[hi]-ds[lo])*(pos-float64(lo)))
	}
	return out
}

func micros(d time.Duration) float64 { return float64(d) / float64(time.Microsecond) }
