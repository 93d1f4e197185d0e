package main

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/tools/bench/backupbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/blobbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/cachebench"
	"github.com/temporalstore/temporalstore-go/tools/bench/clusterbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/contextbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/enginebench"
	"github.com/temporalstore/temporalstore-go/tools/bench/feastbare"
	"github.com/temporalstore/temporalstore-go/tools/bench/flowsbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/objectbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/raftbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/respbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/scriptbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/seriesbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/soakbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/streamsbench"
	"github.com/temporalstore/temporalstore-go/tools/bench/walbench"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

func main() {
	// A process the raft or cluster benchmark started as an etcd member
	// serves as one and does not return.
	raftbench.MaybeRunEtcdMember()
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 {
		usage(stderr)
		return 2
	}
	switch args[0] {
	case "-h", "-help", "--help", "help":
		usage(stdout)
		return 0
	case "wal":
		return runWAL(args[1:], stdout, stderr)
	case "cache":
		return cachebench.Command(args[1:], stdout, stderr)
	case "backup":
		return backupbench.Command(args[1:], stdout, stderr)
	case "blob":
		return blobbench.Command(args[1:], stdout, stderr)
	case "object":
		return objectbench.Command(args[1:], stdout, stderr)
	case "engine":
		return enginebench.Command(args[1:], stdout, stderr)
	case "resp":
		return respbench.Command(args[1:], stdout, stderr)
	case "raft":
		return raftbench.Command(args[1:], stdout, stderr)
	case "cluster":
		return clusterbench.Command(args[1:], stdout, stderr)
	case "series":
		return seriesbench.Command(args[1:], stdout, stderr)
	case "script":
		return scriptbench.Command(args[1:], stdout, stderr)
	case "streams":
		return streamsbench.Command(args[1:], stdout, stderr)
	case "context":
		return contextbench.Command(args[1:], stdout, stderr)
	case "flows":
		return flowsbench.Command(args[1:], stdout, stderr)
	case "feastbare":
		return feastbare.Command(args[1:], stdout, stderr)
	case "soak":
		return soakbench.Command(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "bench: unknown benchmark %q\n\n", args[0])
	usage(stderr)
	return 2
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: bench <name> [flags]

Runs a benchmark comparing ours with its peers in one process, alternating
them over repeats. Writes bench-results/<name>.json at the repository root
(the directory holding go.work), prints a table and, as the last line of
stdout, "<name>: key=value ...". Progress lines go to stderr. Figures never
make the command fail; only errors (a failed write, a bad flag) do.

Benchmarks:
  wal   matrixraft/wal vs etcd's WAL (go.etcd.io/etcd/server/v3/storage/wal)
        and bbolt: append throughput, p50/p99 latency and records per fsync
        over payload size x goroutines x sync policy (always = durable group
        commit, interval = fdatasync every 10ms), plus the bytes-per-record
        envelope fit (fixed + slope x payload).
  cache matrixcache vs otter v2, ristretto v2 and an LRU: hit ratios at
        equal capacity on the OLTP, Glimpse, loop and Zipf traces (or your
        own: TRACE=path FORMAT=arc|lirs CAPACITY=n); Get and 75/25 Get/Set
        throughput at 2 and 8 goroutines; memory per entry at 1M entries;
        and DRAM-only vs DRAM+SSD hit ratios of the Cache (SECTIONS=...).
  object matrixobject vs the disk itself: durable PUT and GET throughput of
        4 KiB, 1 MiB and 64 MiB objects against writing the same bytes to a
        file with one fsync and reading it back (page cache dropped).
  engine temporalstore's engine (Go API): index bytes per key, write
        amplification of durable SETs, durable SET throughput at 64 writers
        against an embedded one-node etcd, memory per key against redis-server.
  resp   the RESP server against redis-server with the same redis-benchmark:
        SET and GET, 50 clients, 16 B and 256 B, pipeline 1 and 16; async
        (redis appendfsync everysec) and durable (appendfsync always).
  raft  matrixraft vs an embedded etcd cluster, 3 durable members each in
        this process: writes/s, p50/p99 and proposals per fsync of 16 B and
        256 B values at 1, 64 and 256 concurrent clients.
  cluster three server processes as one Redis Cluster (each shard a raft
        group over the three) vs three etcd member processes, durable, on
        this machine: SET/Put writes/s and p50/p95/p99 at 1 and 16 clients,
        follower reads (READONLY GET; etcd serializable Get) and leader
        reads, and the failover time after SIGKILL of a key's leader.
  series the temporal models against redis-server over go-redis: window reads
        (FQUERY vs ZRANGEBYSCORE), "count in the last hour" (HSETANDGETOPT vs
        per-minute INCR/EXPIRE keys summed over MGET), durable appends, and
        the rollup ladder against a scan over 10,000 points.
  script "EVALSHA token bucket, 50 clients": the RESP server's scripting
        against redis-server with the same redis-benchmark EVALSHA of a
        token-bucket script over 5,000 keys (async, appendfsync everysec).
  streams Redis streams and pub/sub on the RESP server (ferricstore) vs
        redis-server 7 and NATS JetStream (tools/natsbench, its own module):
        durable and async XADD at 50 clients over 12 streams (vs redis
        appendfsync always/everysec and JetStream sync always/default;
        a null server's rate as the ceiling), durable XADD at pipeline 64
        from 4 connections, consuming a 1M-entry stream with 4 XREADGROUP+XACK consumers, and
        PUBLISH to 8 subscribers at pipeline 1 and 64 (deliveries/s,
        delivery latency, every message checked in order).
  context matrixark's retrieve+pack (Engine over memstore) vs plain BM25
        and newest-first replay on a seeded synthetic conversation history
        with known evidence, at 10k and 30k nodes (100k by flag): latency
        p50/p95/p99 at a 1,200-token budget (retrieve and pack split),
        recall@1/5/10, MRR, tokens packed and evidence retention in the pack.
  flows durable work queues end to end: 100,000 flows created, claimed and
        completed with producers and workers running at once, ours vs a
        SKIP LOCKED queue on PostgreSQL and River (on PostgreSQL):
        end-to-end flows/s, due-to-claim p50/p95/p99, every flow checked
        completed exactly once.
  soak  stability, not speed: examples/server (durable commits, maintenance
        on) under a steady mixed load at a fixed rate for 30 minutes (10 with
        SOAK_QUICK=1): RESP KV, feature series, counters and quotas, HTTP
        batches and S3 objects over bounded key spaces. Samples RSS, p99 per
        class and requests/s every 10 s; fails (exit 1) when RSS after
        warm-up passes 1.2x its end-of-warm-up value, a class's p99 passes
        1.5x its first window's, or any request fails. Writes
        bench-results/soak-<time>.json and .png.
  backup online backup and restore of a ~1 GiB data directory by
        temporalstore/backup (XXH64 manifest, fsynced) vs cp -a + sync of
        the same directory: MB/s of the data directory's bytes, alternating.
  blob  large values: 64 MiB blobs PUT and GET through the server's /blob
        routes vs the same durable write (fsync, rename, directory fsync)
        and read straight to the disk, and SET/GET of 64 MiB values over
        RESP vs redis-server (async vs appendfsync everysec): MB/s.

Servers other benchmarks start:
  feastbare --addr HOST:PORT  the Feast benchmark's ceiling (make bench-feast):
        /batch_execute over rows in a Go map, no engine; runs until killed.

Flags of "bench wal" (each also read from the environment variable shown;
a flag beats its variable, the variable beats the default):
`)
	printWALFlags(w)
	fmt.Fprint(w, `
Examples:
  cd tools && go run ./bench wal
  BENCH_QUICK=1 go run ./bench wal
  go run ./bench wal --payloads 1024 --concurrency 8,32 --sync always --dir /mnt/nvme/tmp

`)
	cachebench.PrintUsage(w)
	fmt.Fprintln(w)
	objectbench.PrintUsage(w)
	fmt.Fprintln(w)
	enginebench.PrintUsage(w)
	fmt.Fprintln(w)
	respbench.PrintUsage(w)
	raftbench.PrintUsage(w)
	fmt.Fprintln(w)
	clusterbench.PrintUsage(w)
	fmt.Fprintln(w)
	seriesbench.PrintUsage(w)
	fmt.Fprintln(w)
	scriptbench.PrintUsage(w)
	fmt.Fprintln(w)
	streamsbench.PrintUsage(w)
	fmt.Fprintln(w)
	contextbench.PrintUsage(w)
	fmt.Fprintln(w)
	flowsbench.PrintUsage(w)
	fmt.Fprintln(w)
	soakbench.PrintUsage(w)
	fmt.Fprintln(w)
	backupbench.PrintUsage(w)
	fmt.Fprintln(w)
	blobbench.PrintUsage(w)
}

// walOption is one setting of `bench wal`, settable by flag and env var.
type walOption = benchkit.Option[walbench.Config]

var walOpt = benchkit.NewOption[walbench.Config]

var walOptions = []walOption{
	walOpt("quick", "BENCH_QUICK", "bool", "reduced matrix: payloads 0,256,4096 B, concurrency 1,64, 150ms runs after 50ms warm-up, 2 repeats (well under a minute)", nil),
	walOpt("duration", "BENCH_DURATION", "duration", "measured time of each run (default 1s; quick 150ms)", func(c *walbench.Config, v string) error {
		return setDuration(&c.Duration, v)
	}),
	walOpt("warmup", "BENCH_WARMUP", "duration", "unmeasured load before each run, same log (default 150ms; quick 50ms)", func(c *walbench.Config, v string) error {
		return setDuration(&c.Warmup, v)
	}),
	walOpt("repeats", "BENCH_REPEATS", "n", "repeats of every system per cell, alternating ours, etcd, bbolt (default 3; quick 2)", func(c *walbench.Config, v string) error {
		n, err := strconv.Atoi(v)
		c.Repeats = n
		return err
	}),
	walOpt("dir", "BENCH_DIR", "path", "base directory for the fresh per-run temporary directories; put it on the disk you care about (default $TMPDIR or /tmp)", func(c *walbench.Config, v string) error {
		c.Dir = v
		return nil
	}),
	walOpt("out", "BENCH_OUT", "path", "JSON report path (default <repo root>/bench-results/wal.json)", func(c *walbench.Config, v string) error {
		c.Out = v
		return nil
	}),
	walOpt("payloads", "BENCH_PAYLOADS", "list", "payload sizes in bytes, incompressible (default 0,64,256,4096)", func(c *walbench.Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.Payloads = xs
		return err
	}),
	walOpt("concurrency", "BENCH_CONCURRENCY", "list", "appending goroutines (default 1,16,64)", func(c *walbench.Config, v string) error {
		xs, err := benchkit.IntList(v)
		c.Concurrency = xs
		return err
	}),
	walOpt("sync", "BENCH_SYNC", "list", "sync policies: always (return after fdatasync), interval (return after write, fdatasync every --sync-interval) (default always,interval)", func(c *walbench.Config, v string) error {
		c.Syncs = nil
		for _, s := range benchkit.SplitList(v) {
			m, err := walbench.ParseSyncMode(s)
			if err != nil {
				return err
			}
			c.Syncs = append(c.Syncs, m)
		}
		return nil
	}),
	walOpt("systems", "BENCH_SYSTEMS", "list", "systems to run, in alternation order: ours,etcd,bbolt (default all; ratios need ours)", func(c *walbench.Config, v string) error {
		c.Systems = benchkit.SplitList(v)
		return nil
	}),
	walOpt("sync-interval", "BENCH_SYNC_INTERVAL", "duration", "background fdatasync period of the interval policy, for every system (default 10ms)", func(c *walbench.Config, v string) error {
		return setDuration(&c.SyncInterval, v)
	}),
	walOpt("bbolt-delay", "BENCH_BBOLT_DELAY", "duration", "fix bbolt's MaxBatchDelay instead of calibrating it (default: calibrate 10ms, 1ms, 100µs at the lowest and highest concurrency under each sync policy, keep the best geometric mean)", func(c *walbench.Config, v string) error {
		return setDuration(&c.BboltDelay, v)
	}),
	walOpt("envelope-records", "BENCH_ENVELOPE_RECORDS", "n", "records written per payload size for the envelope fit (default 2000)", func(c *walbench.Config, v string) error {
		n, err := strconv.Atoi(v)
		c.EnvelopeRecords = n
		return err
	}),
	walOpt("seed", "BENCH_SEED", "n", "seed of the random payload bytes (default 1)", func(c *walbench.Config, v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		c.Seed = n
		return err
	}),
}

func printWALFlags(w io.Writer) { benchkit.PrintOptions(w, walOptions) }

func runWAL(args []string, stdout, stderr io.Writer) int {
	return benchkit.Command(benchkit.Benchmark[walbench.Config]{
		Name: "wal", Options: walOptions, Defaults: walbench.DefaultConfig, Usage: usage, Run: walbench.Run,
	}, args, stdout, stderr)
}

func setDuration(d *time.Duration, v string) error {
	x, err := time.ParseDuration(strings.TrimSpace(v))
	if err != nil {
		return err
	}
	*d = x
	return nil
}
