package main

import (
	"context"
	"crypto/tls"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"os/signal"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"

	"github.com/temporalstore/temporalstore-go/examples/internal/cli"
	"github.com/temporalstore/temporalstore-go/examples/internal/ferricmount"
	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/commands"
	"github.com/temporalstore/temporalstore-go/ferricstore/ferricprom"
	"github.com/temporalstore/temporalstore-go/ferricstore/flowhttp"
	"github.com/temporalstore/temporalstore-go/ferricstore/pubsub"
	arkhttp "github.com/temporalstore/temporalstore-go/matrixark/httpapi"
	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/matrixcache/cacheprom"
	"github.com/temporalstore/temporalstore-go/matrixobject"
	"github.com/temporalstore/temporalstore-go/matrixobject/s3api"
	"github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/backup"
	"github.com/temporalstore/temporalstore-go/temporalstore/blob"
	"github.com/temporalstore/temporalstore-go/temporalstore/cluster"
	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/engineprom"
	"github.com/temporalstore/temporalstore-go/temporalstore/httpapi"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp"
	"github.com/temporalstore/temporalstore-go/temporalstore/resp/respprom"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/disk"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/largelog"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/sharedlog"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	switch {
	case errors.Is(err, flag.ErrHelp):
	case err != nil:
		fmt.Fprintln(os.Stderr, "server:", err)
		os.Exit(1)
	}
}

// config is the parsed flags.
type config struct {
	dataDir          string
	largeValues      int
	maxValue         int
	blobMaxSize      int64
	blobSweep        time.Duration
	respAddr         string
	httpAddr         string
	s3Addr           string
	tokens           []string
	readOnlyTokens   []string
	tenantTokens     []tenantToken
	s3Keys           map[string]string
	tlsCert          string
	tlsKey           string
	insecure         bool
	cacheBytes       int64
	collectionBytes  int64
	async            bool
	syncInterval     time.Duration
	shards           int
	log              cli.Log
	pprof            bool
	slowlogAfter     time.Duration
	slowlogMaxLen    int
	databases        int
	latencyMonitor   time.Duration
	notifyEvents     string
	contextTokens    map[string]arkhttp.TenantToken
	contextEventHits int
	contextRate      int
	clusterID        uint64
	clusterPeers     []cluster.Peer
	raftAddr         string
	leaseReads       bool
	clusterJoin      bool
	replicas         int
	backend          string
	sharedObject     string
	sharedObjectKey  [2]string
	sharedDir        string
	sharedLease      time.Duration
	backup           backupConfig
}

// flags are the program's flags, in --help's order.
var flags = []cli.Flag[config]{
	{Name: "data", Env: "TS_DATA", Default: "./data", Usage: "data directory: the engine's shards and the object store's buckets live here", Set: func(c *config, v string) error {
		c.dataDir = v
		return nil
	}},
	{Name: "resp", Env: "TS_RESP_ADDR", Default: "127.0.0.1:6379", Usage: "RESP (Redis protocol) listen address; empty turns it off", Set: func(c *config, v string) error {
		c.respAddr = v
		return nil
	}},
	{Name: "http", Env: "TS_HTTP_ADDR", Default: "127.0.0.1:17102", Usage: "HTTP listen address: the command surface (/execute, /batch_execute, /health, /ready, /metrics), tables and tenants' limits (/tables, /tenants), context (/context/*), mem0-compatible memories (/memories, /search) and, with --resp on, ferricstore's flows (/flows); empty turns it off", Set: func(c *config, v string) error {
		c.httpAddr = v
		return nil
	}},
	{Name: "s3", Env: "TS_S3_ADDR", Default: "127.0.0.1:9000", Usage: "S3-compatible object API listen address; empty turns it off", Set: func(c *config, v string) error {
		c.s3Addr = v
		return nil
	}},
	{Name: "token", Env: "TS_TOKEN", Default: "", Usage: "comma-separated read-write tokens: RESP AUTH passwords and HTTP bearer tokens; none means no auth", Set: func(c *config, v string) error {
		c.tokens = cli.List(v)
		return nil
	}},
	{Name: "readonly-token", Env: "TS_READONLY_TOKEN", Default: "", Usage: "comma-separated read-only tokens (RESP AUTH, HTTP bearer): reads only", Set: func(c *config, v string) error {
		c.readOnlyTokens = cli.List(v)
		return nil
	}},
	tenantTokenFlag,
	{Name: "context-token", Env: "TS_CONTEXT_TOKEN", Default: "", Usage: "comma-separated token=tenant pairs (token=tenant:admin may reset the tenant's memories) for the context and memory routes (/context/*, /memories, /search, /reset); without them those routes serve the tenant \"default\" to the read-write tokens (--token) and each read-write --tenant-token its tenant, refuse every request when only read-only tokens are set, and serve anyone when no token is set", Set: func(c *config, v string) error {
		c.contextTokens = map[string]arkhttp.TenantToken{}
		for _, p := range cli.List(v) {
			tok, grant, ok := strings.Cut(p, "=")
			tenant, admin := strings.CutSuffix(grant, ":admin")
			if !ok || tok == "" || tenant == "" {
				return fmt.Errorf("context token %q is not token=tenant or token=tenant:admin", p)
			}
			c.contextTokens[tok] = arkhttp.TenantToken{Tenant: tenant, Admin: admin}
		}
		return nil
	}},
	{Name: "context-requests-per-minute", Env: "TS_CONTEXT_REQUESTS_PER_MINUTE", Default: strconv.Itoa(arkhttp.DefaultRequestsPerMinute), Usage: "each tenant's budget of requests on the context and memory routes, refilled continuously and holding a minute's worth; past it a request gets 429 with Retry-After; -1 is no limit", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 || n < -1 {
			return fmt.Errorf("context requests per minute %q: a positive number, or -1 for no limit", v)
		}
		c.contextRate = n
		return nil
	}},
	{Name: "context-event-hits", Env: "TS_CONTEXT_EVENT_HITS", Default: "10", Usage: "how many of the event index's best matches a context retrieval adds as L2 blocks, beside the newest matching events of its best sessions; -1 adds none, as TemporalStore's Rust implementation", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err != nil || n == 0 || n < -1 || n > 1000 {
			return fmt.Errorf("context event hits %q: 1 to 1000, or -1 for none", v)
		}
		c.contextEventHits = n
		return nil
	}},
	{Name: "s3-credentials", Env: "TS_S3_CREDENTIALS", Default: "", Usage: "comma-separated access-key:secret pairs the S3 API accepts (Signature V4); none means unsigned requests are served", Set: func(c *config, v string) error {
		c.s3Keys = map[string]string{}
		for _, p := range cli.List(v) {
			k, s, ok := strings.Cut(p, ":")
			if !ok || k == "" || s == "" {
				return fmt.Errorf("S3 credential %q is not access-key:secret", p)
			}
			c.s3Keys[k] = s
		}
		return nil
	}},
	{Name: "tls-cert", Env: "TS_TLS_CERT", Default: "", Usage: "TLS certificate (PEM) for every listener; with --tls-key", Set: func(c *config, v string) error {
		c.tlsCert = v
		return nil
	}},
	{Name: "tls-key", Env: "TS_TLS_KEY", Default: "", Usage: "TLS private key (PEM) for every listener; with --tls-cert", Set: func(c *config, v string) error {
		c.tlsKey = v
		return nil
	}},
	{Name: "insecure", Env: "TS_INSECURE", Default: "false", Usage: "allow listening on a non-loopback address without a token", Set: func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.insecure = b
		return err
	}},
	{Name: "cache-bytes", Env: "TS_CACHE_BYTES", Default: strconv.FormatInt(temporalstore.SuggestedCacheBytes(temporalstore.AvailableMemory()), 10), Usage: "memory budget of the engine's record cache in bytes (a quarter more holds the newest records); -1 turns it off. The default follows the memory this process may use (the machine's, or its control group's limit): a sixteenth of it, at least 64 MiB and at most 4 GiB. A budget, not an allocation: it fills with the data read and written. Writes that replace values of a few hundred bytes run faster with more", Set: func(c *config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		c.cacheBytes = n
		return err
	}},
	{Name: "async", Env: "TS_ASYNC", Default: "false", Usage: "a new data directory's default table commits asynchronously (acknowledged once written to the OS, fsynced every --sync-interval) instead of durably (acknowledged after fsync); an existing table keeps its mode", Set: func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.async = b
		return err
	}},
	{Name: "sync-interval", Env: "TS_SYNC_INTERVAL", Default: temporalstore.DefaultSyncInterval.String(), Usage: "how often an asynchronous default table fsyncs what it acknowledged (a Go duration, up to 1m): the most a machine crash can lose, where a killed process loses nothing; Redis's appendfsync everysec is 1s. Applies to a new data directory's default table; an existing table keeps its interval", Set: func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && (d <= 0 || d > temporalstore.MaxSyncInterval) {
			err = fmt.Errorf("must be above 0 and at most %s, got %s", temporalstore.MaxSyncInterval, d)
		}
		c.syncInterval = d
		return err
	}},
	{Name: "shards", Env: "TS_SHARDS", Default: strconv.Itoa(temporalstore.SuggestedShards(runtime.GOMAXPROCS(0))), Usage: "shard count of a new data directory's default table; the default follows the processors: 1 below 4, 2 below 8, then 4. Each shard has its own log and lock: concurrent writes to one shard share its appends and fsyncs, so on few cores fewer shards write faster, and more shards spread the work over more cores. Which keys may share a MULTI or a two-key command does not depend on it: keys must share one of 4 groups (hash of the key or its {hash tag}), or of --shards groups when that is not a divisor of 4. An existing table keeps its count", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && (n < 1 || n > 1024) {
			err = fmt.Errorf("must be 1 to 1024, got %d", n)
		}
		c.shards = n
		return err
	}},
	{Name: "collection-bytes", Env: "TS_COLLECTION_BYTES", Default: strconv.Itoa(temporalstore.DefaultCollectionBytes), Usage: "memory budget of resident hashes, sets, sorted sets and lists in bytes; past it the least recently used are served from the log; -1: no limit", Set: func(c *config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		c.collectionBytes = n
		return err
	}},
	{Name: "slowlog-slower-than", Env: "TS_SLOWLOG_SLOWER_THAN", Default: resp.DefaultSlowlogThreshold.String(), Usage: "server time from which a RESP call goes in the slow log (SLOWLOG GET), as Redis's slowlog-log-slower-than, e.g. 10ms or 500us; -1 turns the slow log off", Set: func(c *config, v string) error {
		if v == "-1" {
			c.slowlogAfter = -1
			return nil
		}
		d, err := time.ParseDuration(v)
		if err == nil && d <= 0 {
			err = fmt.Errorf("must be above 0 (or -1 for off), got %s", v)
		}
		c.slowlogAfter = d
		return err
	}},
	{Name: "latency-monitor-threshold", Env: "TS_LATENCY_MONITOR_THRESHOLD", Default: "0", Usage: "server time from which a RESP call is a latency event (LATENCY LATEST, HISTORY), in whole milliseconds, as Redis's latency-monitor-threshold, e.g. 5ms; 0 leaves the monitor off. CONFIG SET latency-monitor-threshold changes it while running", Set: func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d < 0 {
			err = fmt.Errorf("must not be negative, got %s", v)
		}
		c.latencyMonitor = d
		return err
	}},
	{Name: "notify-keyspace-events", Env: "TS_NOTIFY_KEYSPACE_EVENTS", Default: "", Usage: "keyspace notifications published on the RESP port's pub/sub, as Redis's notify-keyspace-events: K (__keyspace@<db>__ channels) and/or E (__keyevent@<db>__) with the classes g (generic), $ (strings), l, s, h, z, t (streams), x (expired) or A (all), e.g. KEA; empty is off. CONFIG SET notify-keyspace-events changes it while running", Set: func(c *config, v string) error {
		c.notifyEvents = v
		return nil
	}},
	{Name: "slowlog-max-len", Env: "TS_SLOWLOG_MAX_LEN", Default: strconv.Itoa(resp.DefaultSlowlogMaxLen), Usage: "how many slow calls the slow log keeps, the newest", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && n < 1 {
			err = fmt.Errorf("must be at least 1, got %d", n)
		}
		c.slowlogMaxLen = n
		return err
	}},
	{Name: "databases", Env: "TS_DATABASES", Default: strconv.Itoa(resp.DefaultDatabases), Usage: "how many numbered RESP databases SELECT, MOVE, SWAPDB and COPY ... DB address (0 to n-1), as Redis's databases setting. Database 0 is the default table; database n is the table default@n, made with the default table's options at its first write (a database never written costs nothing). Lowering it later hides the databases past it, it does not delete them", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && (n < 1 || n > resp.MaxDatabases) {
			err = fmt.Errorf("must be between 1 and %d, got %d", resp.MaxDatabases, n)
		}
		c.databases = n
		return err
	}},
	{Name: "cluster-id", Env: "TS_CLUSTER_ID", Default: "0", Usage: "this node's id in a cluster (with --cluster-peers); 0 runs a single node. In a cluster every shard of the default table is a raft group with a replica on each member: a write is acknowledged once a majority of them has it, RESP serves Redis Cluster routing (CLUSTER SLOTS, SHARDS, NODES, MOVED, READONLY) so go-redis's ClusterClient and redis-py's RedisCluster reach each shard's leader, and the default table routes keys by hash slot. Every member takes the same --shards; a data directory made without a cluster cannot join one", Set: func(c *config, v string) error {
		n, err := strconv.ParseUint(v, 10, 64)
		c.clusterID = n
		return err
	}},
	{Name: "cluster-peers", Env: "TS_CLUSTER_PEERS", Default: "", Usage: "the cluster's members, this node among them, as id@raft-addr@resp-addr[@http-addr[@zone]], comma-separated, e.g. 1@10.0.0.1:17200@10.0.0.1:6379@10.0.0.1:17102@zone-a,2@...,3@...; every member gets the same list. The RESP addresses are what clients are redirected to (MOVED); an HTTP request whose keys another member's shard holds is forwarded to that member's HTTP address", Set: func(c *config, v string) error {
		ps, err := cluster.ParsePeers(v)
		c.clusterPeers = ps
		return err
	}},
	{Name: "cluster-replicas", Env: "TS_CLUSTER_REPLICAS", Default: "3", Usage: "in a cluster, how many members vote in each shard's group, chosen on a consistent-hash ring of the members, one zone after another (the zone is the fifth part of a --cluster-peers entry); the other members hold the shard as learners. Each shard's leader moves its voters there a step at a time, a new voter before a demoted one, and logs the moves left with an estimate of the time", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && (n < 1 || n > 9) {
			err = fmt.Errorf("must be 1 to 9, got %d", n)
		}
		c.replicas = n
		return err
	}},
	{Name: "cluster-join", Env: "TS_CLUSTER_JOIN", Default: "false", Usage: "start this member's shards empty, to be added to a running cluster: then, on any member, CLUSTER ADDMEMBER id raft-addr resp-addr [http-addr] (RESP) or POST /cluster/members (HTTP) makes it a learner of every shard, sent the shard's state, and a voter once caught up; CLUSTER FORGET id or DELETE /cluster/members/{id} takes a member out. --cluster-peers still names every member, this one included. Ignored once the data directory holds the member's state", Set: func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.clusterJoin = b
		return err
	}},
	{Name: "storage-backend", Env: "TS_STORAGE_BACKEND", Default: "auto", Usage: "where the shards' logs live: auto takes the first that works of an object store (--shared-object), a shared filesystem (--shared-dir), local disks replicated by Raft (a cluster), a local disk alone (single node), and logs why; object, shared-fs, raft or local ask for one, and the server refuses to start without it. With a shared store every member of the cluster (--cluster-id, --cluster-peers, whose raft addresses are then unused) keeps each shard's log in --shared-dir: one member writes a shard, its appends fenced and fsynced there, the others tail and replay it and take over when it goes silent (--shared-lease)", Set: func(c *config, v string) error {
		c.backend = v
		return nil
	}},
	{Name: "shared-object", Env: "TS_SHARED_OBJECT", Default: "", Usage: "an S3-compatible object store every member reaches, as endpoint/bucket (http://10.0.0.9:9000/temporalstore), for the object storage backend: each shard's log is appended to it the way S3 Express One Zone appends (PutObject with x-amz-write-offset-bytes), which matrixobject's S3 API (another server's --s3) serves; the bucket is created if missing", Set: func(c *config, v string) error {
		c.sharedObject = v
		return nil
	}},
	{Name: "shared-object-credentials", Env: "TS_SHARED_OBJECT_CREDENTIALS", Default: "", Usage: "access-key:secret signing the requests to --shared-object (Signature V4); empty sends them unsigned", Set: func(c *config, v string) error {
		if v == "" {
			c.sharedObjectKey = [2]string{}
			return nil
		}
		k, sec, ok := strings.Cut(v, ":")
		if !ok || k == "" || sec == "" {
			return errors.New("not access-key:secret")
		}
		c.sharedObjectKey = [2]string{k, sec}
		return nil
	}},
	{Name: "shared-dir", Env: "TS_SHARED_DIR", Default: "", Usage: "a directory every member mounts (NFS v4, CephFS, EFS; a local directory for members on one machine) for the shared-fs storage backend; it must honour advisory locks (flock) across the members", Set: func(c *config, v string) error {
		c.sharedDir = v
		return nil
	}},
	{Name: "shared-lease", Env: "TS_SHARED_LEASE", Default: "2s", Usage: "with a shared store, how long a shard's log may be silent before another member takes it over; its writer renews it every quarter of this when idle", Set: func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		if err != nil || d < 100*time.Millisecond {
			return fmt.Errorf("a duration of 100ms or more: %q", v)
		}
		c.sharedLease = d
		return nil
	}},
	{Name: "raft", Env: "TS_RAFT_ADDR", Default: "", Usage: "raft transport listen address in a cluster; empty listens on this node's raft address in --cluster-peers", Set: func(c *config, v string) error {
		c.raftAddr = v
		return nil
	}},
	{Name: "cluster-lease-reads", Env: "TS_CLUSTER_LEASE_READS", Default: "false", Usage: "in a cluster, a shard leader serves reads on its lease instead of confirming its leadership with a majority first (ReadIndex): faster, and linearizable while clocks drift less than an election timeout. READONLY connections read their node's replica either way", Set: func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.leaseReads = b
		return err
	}},
	cli.LogLevelFlag("TS_LOG_LEVEL", func(c *config) *cli.Log { return &c.log }),
	{Name: "max-value-bytes", Env: "TS_MAX_VALUE_BYTES", Default: strconv.Itoa(resp.DefaultMaxBulk), Usage: "the largest value a write takes: RESP's largest bulk string (Redis's proto-max-bulk-len), and HTTP's largest request body less 1 MiB (a value in MessagePack; JSON's base64 takes a third more). At least 1 MiB", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && n < 1<<20 {
			err = fmt.Errorf("must be at least 1 MiB (1048576), got %d", n)
		}
		c.maxValue = n
		return err
	}},
	{Name: "large-value-threshold", Env: "TS_LARGE_VALUE_THRESHOLD", Default: strconv.Itoa(largelog.DefaultThreshold), Usage: "a value of more bytes is kept in a file of its own beside its shard's log (named by its hash; fsynced before the log names it on a durable table, by the log's interval sync on an async one; sent by GET from the file; released once its record is reclaimed), so values up to 512 MiB are taken; a record of many values goes there only past the log's own record size. Single node only: a cluster's logs keep every record themselves", Set: func(c *config, v string) error {
		n, err := strconv.Atoi(v)
		if err == nil && n < 1 {
			err = fmt.Errorf("must be at least 1, got %d", n)
		}
		c.largeValues = n
		return err
	}},
	{Name: "blob-max-size", Env: "TS_BLOB_MAX_SIZE", Default: strconv.FormatInt(blob.DefaultMaxSize, 10), Usage: "the largest blob /blob stores, in bytes (put in one piece or committed from parts); 0 turns /blob off. Blobs live in <data>/blobs, each fsynced before it is renamed into place", Set: func(c *config, v string) error {
		n, err := strconv.ParseInt(v, 10, 64)
		if err == nil && n < 0 {
			err = fmt.Errorf("must be 0 or more, got %d", n)
		}
		c.blobMaxSize = n
		return err
	}},
	{Name: "blob-sweep", Env: "TS_BLOB_SWEEP", Default: "1h", Usage: "how often the blob store removes uploads left uncommitted for a day and content no blob points at (a Go duration); 0: only on POST /blob?sweep", Set: func(c *config, v string) error {
		d, err := time.ParseDuration(v)
		if err == nil && d < 0 {
			err = fmt.Errorf("must be 0 or more, got %s", d)
		}
		c.blobSweep = d
		return err
	}},
	{Name: "backup-dir", Env: "TS_BACKUP_DIR", Default: "", Usage: "where BGSAVE, SAVE and POST /backup write backups, each a directory named by its start time (or the name given): a consistent copy of every shard (checkpoint and log) with a manifest of checksums (XXH64), made while writes go on; restore one with tsctl restore; default <data>/backups", Set: func(c *config, v string) error {
		c.backup.dir = v
		return nil
	}},
	{Name: "backup-to", Env: "TS_BACKUP_TO", Default: "dir", Usage: "the default destination of BGSAVE and POST /backup: dir (--backup-dir) or s3 (--backup-s3-*)", Set: func(c *config, v string) error {
		if v != "dir" && v != "s3" {
			return fmt.Errorf("--backup-to %q is not dir or s3", v)
		}
		c.backup.to = v
		return nil
	}},
	{Name: "backup-s3-endpoint", Env: "TS_BACKUP_S3_ENDPOINT", Default: "", Usage: "S3 API base URL backups go to with --backup-to s3 or POST /backup {\"to\":\"s3\"} (path-style, SigV4: matrixobject's or any S3's), e.g. http://10.0.0.9:9000", Set: func(c *config, v string) error {
		c.backup.s3.Endpoint = v
		return nil
	}},
	{Name: "backup-s3-bucket", Env: "TS_BACKUP_S3_BUCKET", Default: "", Usage: "bucket of S3 backups (created if missing); each backup a prefix in it", Set: func(c *config, v string) error {
		c.backup.s3.Bucket = v
		return nil
	}},
	{Name: "backup-s3-key", Env: "TS_BACKUP_S3_KEY", Default: "", Usage: "access-key:secret-key signing S3 backup requests; empty sends them unsigned", Set: func(c *config, v string) error {
		if v == "" {
			return nil
		}
		k, s, ok := strings.Cut(v, ":")
		if !ok || k == "" || s == "" {
			return fmt.Errorf("--backup-s3-key is not access-key:secret-key")
		}
		c.backup.s3.AccessKey, c.backup.s3.SecretKey = k, s
		return nil
	}},
	{Name: "backup-s3-region", Env: "TS_BACKUP_S3_REGION", Default: "us-east-1", Usage: "region of the S3 backup signatures' scope", Set: func(c *config, v string) error {
		c.backup.s3.Region = v
		return nil
	}},
	{Name: "pprof", Env: "TS_PPROF", Default: "false", Usage: "serve Go's runtime profiles at /debug/pprof/ on the HTTP listener, to read-write tokens when tokens are set (go tool pprof http://ADDR/debug/pprof/profile); off by default", Set: func(c *config, v string) error {
		b, err := strconv.ParseBool(v)
		c.pprof = b
		return err
	}},
	cli.LogFormatFlag("TS_LOG_FORMAT", func(c *config) *cli.Log { return &c.log }),
}

func usage(w io.Writer) {
	fmt.Fprint(w, `Usage: server [flags]

Runs TemporalStore on a local data directory (single node): the engine over
RESP and the HTTP command surface, and the object store over the S3 API. Each flag also reads the
environment variable shown; a flag beats its variable, which beats the default.

Flags:
`)
	cli.PrintFlags(w, flags)
	fmt.Fprint(w, `
Example:
  go run ./examples/server
  redis-cli -p 6379 SET greeting hello
`)
}

// parse reads the flags, the environment and the defaults.
func parse(args []string, stdout io.Writer, getenv func(string) string) (config, error) {
	c, err := cli.Parse("server", flags, usage, args, stdout, getenv)
	if err != nil {
		return c, err
	}
	if (c.tlsCert == "") != (c.tlsKey == "") {
		return c, errors.New("--tls-cert and --tls-key go together")
	}
	if (c.clusterID == 0) != (len(c.clusterPeers) == 0) {
		return c, errors.New("--cluster-id and --cluster-peers go together")
	}
	if err := checkTenantTokens(c); err != nil {
		return c, err
	}
	return c, nil
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parse(args, stdout, os.Getenv)
	if err != nil {
		return err
	}
	log := c.log.Logger(stderr)
	if c.backup.to == "s3" && (c.backup.s3.Endpoint == "" || c.backup.s3.Bucket == "") {
		return errors.New("--backup-to s3 needs --backup-s3-endpoint and --backup-s3-bucket")
	}
	if c.respAddr != "" && !cli.Loopback(c.respAddr) && !c.anyToken() && !c.insecure {
		return fmt.Errorf("refusing to serve RESP on %s, which is not loopback, without a token (--token, or --insecure)", c.respAddr)
	}
	if c.httpAddr != "" && !cli.Loopback(c.httpAddr) && !c.anyToken() && !c.insecure {
		return fmt.Errorf("refusing to serve HTTP on %s, which is not loopback, without a token (--token, or --insecure)", c.httpAddr)
	}
	if c.s3Addr != "" && !cli.Loopback(c.s3Addr) && !c.s3Signed() && !c.insecure {
		return fmt.Errorf("refusing to serve S3 on %s, which is not loopback, without credentials (--s3-credentials, or --insecure)", c.s3Addr)
	}
	var tlsCfg *tls.Config
	if c.tlsCert != "" {
		cert, err := tls.LoadX509KeyPair(c.tlsCert, c.tlsKey)
		if err != nil {
			return fmt.Errorf("TLS: %w", err)
		}
		tlsCfg = &tls.Config{Certificates: []tls.Certificate{cert}, MinVersion: tls.VersionTLS12}
	}

	started := time.Now()
	// The composition: each shard's log a wal log in its directory, the
	// records cached in a matrixcache, and one registry for every part's
	// metrics.
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	eo := temporalstore.Options{
		Dir: filepath.Join(c.dataDir, "engine"), CacheBytes: c.cacheBytes,
		// Large values in files beside each shard's log; a value alone,
		// not a pipeline's record of small ones, goes past the threshold.
		OpenLog:         largelog.Wrap(disk.OpenLog, largelog.Options{Threshold: c.largeValues, MaxRecord: c.maxValue + 64<<10, Own: command.IsOne, Logger: log}),
		CollectionBytes: c.collectionBytes, Logger: log, DefaultTableOptions: defaultTable(c),
	}
	bo := cluster.BackendOptions{Want: c.backend, SharedDir: c.sharedDir, Cluster: c.clusterID != 0, Member: strconv.FormatUint(c.clusterID, 10)}
	if c.sharedObject != "" {
		obj, err := sharedObjectStore(ctx, c)
		if err != nil {
			log.Warn("the object store cannot be reached", "url", c.sharedObject, "err", err)
			bo.ObjectErr = err
		} else {
			defer obj.Close()
			bo.Object = obj
		}
	}
	backend, err := cluster.Resolve(ctx, bo)
	if err != nil {
		return err
	}
	log.Info("storage backend", "backend", backend.Name, "reason", backend.Reason)
	reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Name: "temporalstore_storage_backend_info", Help: "1, labelled with the storage backend the server resolved and why.",
		ConstLabels: prometheus.Labels{"backend": backend.Name, "reason": backend.Reason},
	}, func() float64 { return 1 }))
	var node *cluster.Node
	switch {
	case backend.Store != nil && c.clusterID == 0:
		return fmt.Errorf("the %s storage backend needs --cluster-id and --cluster-peers: the members' addresses, to route each shard to its writer", backend.Name)
	case backend.Name == cluster.BackendLocal && c.clusterID != 0:
		return errors.New("the local storage backend is for a single node: drop --cluster-id and --cluster-peers, or use raft or shared-fs")
	case c.clusterID != 0:
		node, err = cluster.Start(cluster.Options{Dir: filepath.Join(c.dataDir, "cluster"), ID: c.clusterID, Peers: c.clusterPeers,
			ListenAddr: c.raftAddr, Shards: c.shards, LeaseReads: c.leaseReads, Join: c.clusterJoin, AdminTokens: c.tokens, Replicas: c.replicas, Logger: log,
			Shared: backend.Store, SharedLease: c.sharedLease})
		if err != nil {
			return fmt.Errorf("cluster: %w", err)
		}
		defer node.Close()
		eo.OpenLog = node.OpenLog
		log.Info("cluster member", "id", c.clusterID, "members", len(c.clusterPeers), "shards", c.shards, "backend", backend.Name)
	}
	if c.cacheBytes != temporalstore.Disabled {
		cache, err := matrixcache.New(ctx, matrixcache.Options{DRAMCapacityBytes: c.cacheBytes})
		if err != nil {
			return fmt.Errorf("record cache: %w", err)
		}
		defer cache.Close()
		eo.RecordCache = disk.NewRecordCache(cache)
		reg.MustRegister(cacheprom.NewCollector(cache, cacheprom.Options{}))
	}
	e, err := temporalstore.Open(ctx, eo)
	if err != nil {
		return err
	}
	if node != nil {
		if o, err := e.TableOptions(temporalstore.DefaultNamespace, temporalstore.DefaultTable); err != nil || !o.SlotRouting || o.Shards != c.shards {
			e.Close()
			return fmt.Errorf("cluster: the data directory's default table (shards %d, slot routing %v) is not the cluster's (shards %d, slot routing): start members on empty data directories", o.Shards, o.SlotRouting, c.shards)
		}
		node.Attach(e)
		reg.MustRegister(node.Collector())
	}
	reg.MustRegister(engineprom.NewCollector(e))
	if c.backup.dir == "" {
		c.backup.dir = filepath.Join(c.dataDir, "backups")
	}
	// The streams join the backups once open (with the RESP listener).
	streamsBackup := &streamsComponent{dir: filepath.Join(c.dataDir, "streams")}
	comps := []backup.Component{backup.Engine(e), streamsBackup}
	if c.blobMaxSize > 0 && c.httpAddr != "" {
		comps = append(comps, blobsComponent{dir: filepath.Join(c.dataDir, "blobs")})
	}
	bk := &backups{m: backup.NewManager(log, comps...), cfg: c.backup, now: time.Now}
	log.Info("engine open", "dir", filepath.Join(c.dataDir, "engine"), "took", time.Since(started).Round(time.Millisecond))
	// The default table keeps the options it was created with, which
	// need not be this run's flags.
	if o, err := e.TableOptions(temporalstore.DefaultNamespace, temporalstore.DefaultTable); err == nil {
		log.Info("default table", "shards", o.Shards, "key_groups", o.KeyGroups, "async", o.Async, "sync_interval", o.SyncInterval)
	}
	// A running backup stops (leaving no manifest) once the listeners
	// have: the last closer.
	closers := []func() error{bk.m.Close}
	errc := make(chan error, 4)
	listen := func(addr string) (net.Listener, error) {
		l, err := net.Listen("tcp", addr)
		if err != nil {
			return nil, err
		}
		if tlsCfg != nil {
			l = tls.NewListener(l, tlsCfg)
		}
		return l, nil
	}
	shutdown := func() {
		for i := len(closers) - 1; i >= 0; i-- {
			if err := closers[i](); err != nil {
				log.Warn("shutdown", "err", err)
			}
		}
	}
	// flows are ferricstore's, opened with the streams: served on the
	// HTTP listener too (package flowhttp) when there is one.
	var flows *ferricstore.Flows
	if c.respAddr != "" {
		// Streams live in ferricstore, in a directory of their own, and
		// their verbs are mounted on the engine's RESP listener.
		streams, err := ferricstore.Open(ferricstore.Options{Dir: filepath.Join(c.dataDir, "streams"), Async: c.async, SyncInterval: c.syncInterval, Logger: log})
		if err != nil {
			e.Close()
			return fmt.Errorf("streams: %w", err)
		}
		closers = append(closers, streams.Close)
		streamsBackup.st = streams
		reg.MustRegister(ferricprom.NewCollector(streams))
		flows = streams.Flows()
		broker := pubsub.NewBroker()
		reg.MustRegister(ferricprom.NewPubSubCollector(broker))
		srv, err := resp.New(resp.Options{Engine: e, MaxBulk: c.maxValue, Tokens: c.tokens, ReadOnlyTokens: c.readOnlyTokens, TenantTokens: tenantGrants(c), Logger: log,
			SlowlogThreshold: c.slowlogAfter, SlowlogMaxLen: c.slowlogMaxLen, LatencyMonitorThreshold: c.latencyMonitor, Databases: databases(c),
			Keyspace: streamKeys{streams.Streams()}, NotifyKeyspaceEvents: c.notifyEvents, Publish: func(ch string, msg []byte) { broker.Publish(ch, msg) },
			Commands: ferricmount.Mount(slices.Concat(commands.Commands(streams), commands.FlowCommands(streams), commands.PubSubCommands(broker))), Cluster: respCluster(node),
			Saver: bk})
		if err != nil {
			shutdown()
			e.Close()
			return err
		}
		l, err := listen(c.respAddr)
		if err != nil {
			shutdown()
			e.Close()
			return fmt.Errorf("RESP: %w", err)
		}
		log.Info("listening", "surface", "resp", "addr", l.Addr().String(), "tls", tlsCfg != nil, "auth", c.anyToken())
		go func() {
			if err := srv.Serve(l); !errors.Is(err, resp.ErrClosed) {
				errc <- fmt.Errorf("RESP: %w", err)
			}
		}()
		closers = append(closers, srv.Close)
		reg.MustRegister(respprom.NewCollector(srv))
	}
	if c.httpAddr != "" {
		ho := httpapi.Options{Engine: e, MaxBodyBytes: int64(c.maxValue) + 1<<20, ReadWriteTokens: c.tokens, ReadOnlyTokens: c.readOnlyTokens, TenantTokens: tenantGrants(c), Logger: log, Profiling: c.pprof, Registry: reg, Backups: bk}
		if c.blobMaxSize > 0 {
			bs, closeBlobs, err := openBlobs(ctx, &c, log)
			if err != nil {
				shutdown()
				e.Close()
				return err
			}
			closers = append(closers, closeBlobs)
			ho.Blobs = bs
		}
		if node != nil {
			ho.Ready, ho.Cluster = node.Check, node.HTTP()
			if backend.Name == cluster.BackendRaft {
				// The member's routed table (the default) is raft's:
				// replication_mode "raft" is served on it.
				ho.Raft = func(ns, name string) bool {
					return ns == temporalstore.DefaultNamespace && name == temporalstore.DefaultTable
				}
			}
		}
		h, err := withContext(ctx, ho, c, node, log, reg)
		if err != nil {
			shutdown()
			e.Close()
			return err
		}
		if node != nil || flows != nil {
			// The membership and flow routes, beside the command surface.
			mux := http.NewServeMux()
			if node != nil {
				mux.Handle("/cluster/", node.AdminHandler())
			}
			if flows != nil {
				fh := flowhttp.New(flows, flowhttp.Options{ReadWriteTokens: c.tokens, ReadOnlyTokens: c.readOnlyTokens, Logger: log})
				mux.Handle("/flows", fh)
				mux.Handle("/flows/", fh)
			}
			mux.Handle("/", h)
			h = mux
		}
		l, err := listen(c.httpAddr)
		if err != nil {
			shutdown()
			e.Close()
			return fmt.Errorf("HTTP: %w", err)
		}
		hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
		log.Info("listening", "surface", "http", "addr", l.Addr().String(), "tls", tlsCfg != nil, "auth", c.anyToken())
		go func() {
			if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("HTTP: %w", err)
			}
		}()
		closers = append(closers, func() error {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return hs.Shutdown(sctx)
		})
	}
	if c.s3Addr != "" {
		store, err := matrixobject.Open(filepath.Join(c.dataDir, "objects"), matrixobject.Options{Logger: log})
		if err != nil {
			shutdown()
			e.Close()
			return fmt.Errorf("object store: %w", err)
		}
		creds, scopes := s3Credentials(c, log)
		h, err := s3api.New(store, s3api.Options{Credentials: creds, Scopes: scopes, AllowAnonymous: len(creds) == 0, Logger: log})
		if err != nil {
			shutdown()
			store.Close()
			e.Close()
			return err
		}
		l, err := listen(c.s3Addr)
		if err != nil {
			shutdown()
			store.Close()
			e.Close()
			return fmt.Errorf("S3: %w", err)
		}
		hs := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: 120 * time.Second}
		log.Info("listening", "surface", "s3", "addr", l.Addr().String(), "tls", tlsCfg != nil, "signed", len(creds) > 0)
		go func() {
			if err := hs.Serve(l); !errors.Is(err, http.ErrServerClosed) {
				errc <- fmt.Errorf("S3: %w", err)
			}
		}()
		closers = append(closers, store.Close, func() error {
			sctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			return hs.Shutdown(sctx)
		})
	}
	log.Info("ready", "data", c.dataDir)
	select {
	case <-ctx.Done():
		log.Info("shutting down")
	case err = <-errc:
		log.Error("listener failed", "err", err)
	}
	shutdown()
	// Every shard checkpointed, so the next start replays nothing.
	if cerr := e.Checkpoint(context.Background()); cerr != nil {
		log.Warn("checkpoint", "err", cerr)
	}
	if cerr := e.Close(); cerr != nil && err == nil {
		err = cerr
	}
	log.Info("stopped")
	return err
}

// sharedObjectStore connects to --shared-object, endpoint/bucket.
func sharedObjectStore(ctx context.Context, c config) (*sharedlog.S3Store, error) {
	u, err := url.Parse(c.sharedObject)
	if err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https") {
		return nil, fmt.Errorf("--shared-object %q is not http(s)://host:port/bucket", c.sharedObject)
	}
	bucket := strings.Trim(u.Path, "/")
	if bucket == "" || strings.Contains(bucket, "/") {
		return nil, fmt.Errorf("--shared-object %q names no bucket (http(s)://host:port/bucket)", c.sharedObject)
	}
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	return sharedlog.NewS3Store(cctx, sharedlog.S3Options{Endpoint: u.Scheme + "://" + u.Host, Bucket: bucket, AccessKey: c.sharedObjectKey[0], SecretKey: c.sharedObjectKey[1]})
}

// defaultTable is the options of a new data directory's default table: its
// key groups keep which keys a transaction may take the same on every
// machine, whatever shard count the machine's processors chose.
func defaultTable(c config) temporalstore.TableOptions {
	if c.clusterID != 0 {
		// Redis Cluster's rule instead: a multi-key command's keys share
		// a hash slot.
		return temporalstore.TableOptions{Async: c.async, SyncInterval: c.syncInterval, Shards: c.shards, SlotRouting: true}
	}
	return temporalstore.TableOptions{Async: c.async, SyncInterval: c.syncInterval, Shards: c.shards, KeyGroups: temporalstore.PortableKeyGroups(c.shards)}
}

// databases is the RESP databases served: one in a cluster, as Redis
// Cluster's, whose other tables would have no replicas on the other
// members.
func databases(c config) int {
	if c.clusterID != 0 {
		return 1
	}
	return c.databases
}

// respCluster is node as the RESP server's cluster, nil (no interface
// holding a nil pointer) for a single node.
func respCluster(node *cluster.Node) resp.Cluster {
	if node == nil {
		return nil
	}
	return node
}
