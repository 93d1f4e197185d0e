package soakbench

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"strconv"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/smithy-go/logging"
	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/temporalstore/wire"
)

// The bounded key spaces and sizes of the load.
const (
	kvKeys       = 20_000
	kvValueBytes = 256
	featureKeys  = 1_000
	counterKeys  = 1_000
	quotaKeys    = 200
	controlKeys  = 200
	httpKeys     = 5_000
	objectKeys   = 256
	objectBytes  = 16 << 10
	bucket       = "soak"
	// seriesMaxAgeMs is how much of each series FAPPEND MAXAGE (and
	// fappend's max_age_ms) keeps.
	seriesMaxAgeMs = 60_000
	// quotaTTL is how long a quota key lives from its first take.
	quotaTTL = time.Minute
	// opTimeout bounds one request: a server that stops answering shows
	// as errors, not as a run that hangs.
	opTimeout = 10 * time.Second
)

// class is one kind of traffic: its name, its share of the offered rate,
// what it does, and one request of it.
type class struct {
	Name  string  `json:"name"`
	Share float64 `json:"share"`
	Does  string  `json:"does"`
	op    func(ctx context.Context, w *worker) error
}

// classes are the load's classes, in the order they are reported.
func (l *load) classes() []class {
	return []class{
		{"kv", 0.40, "RESP: 50% GET, 20% SET, 15% SET PX 5-60s, 15% DEL over 20,000 keys, 256 B values", l.kv},
		{"features", 0.25, "RESP: 60% FAPPEND ... MAXAGE 60000, 25% FQUERY of the last 10 s (count 100), 15% FAGG sum of the last minute, over 1,000 series", l.features},
		{"counters", 0.20, "RESP: 40% INCRBY over 1,000 keys, 40% QUOTATAKE limit 100 per 1 s with EXPIRE 60 NX over 200 keys, 20% HSETANDGETOPT (per-minute buckets, TTL 2 min, sum of the last hour) over 200 keys", l.counters},
		{"http", 0.10, "HTTP POST /batch_execute of 5 commands: set (ttl_ms 60000), get, incr_by, fappend (max_age_ms 60000), fagg sum, over 5,000 keys", l.http},
		{"objects", 0.05, "S3: 50% PutObject, 50% GetObject of 16 KiB objects over 256 keys", l.objects},
	}
}

// load holds the clients every worker shares: they are safe for
// concurrent use.
type load struct {
	redis   *redis.Client
	httpc   *http.Client
	httpURL string
	s3      *s3.Client
	value   []byte
}

// worker is one pacing goroutine's state.
type worker struct {
	rng *rand.Rand
	obj []byte // its PUT body, changed before each PUT
}

func newWorker(rng *rand.Rand) *worker {
	w := &worker{rng: rng, obj: make([]byte, objectBytes)}
	for i := 0; i+8 <= len(w.obj); i += 8 {
		binary.LittleEndian.PutUint64(w.obj[i:], rng.Uint64())
	}
	return w
}

func newLoad(ctx context.Context, srv *server, conns int) (*load, error) {
	cfg, err := config.LoadDefaultConfig(ctx,
		config.WithRegion("us-east-1"),
		config.WithCredentialsProvider(credentials.NewStaticCredentialsProvider(s3AccessKey, s3Secret, "")),
	)
	if err != nil {
		return nil, err
	}
	l := &load{
		// No retries anywhere: a failure is an error of the run, not
		// something a retry hides.
		redis: redis.NewClient(&redis.Options{Addr: srv.respAddr, PoolSize: conns, MaxRetries: -1,
			ReadTimeout: opTimeout, WriteTimeout: opTimeout}),
		httpc:   &http.Client{Timeout: opTimeout, Transport: &http.Transport{MaxIdleConnsPerHost: conns}},
		httpURL: "http://" + srv.httpAddr + "/batch_execute",
		s3: s3.NewFromConfig(cfg, func(o *s3.Options) {
			o.BaseEndpoint = aws.String("http://" + srv.s3Addr)
			o.UsePathStyle = true
			o.RetryMaxAttempts = 1
			o.Logger = logging.Nop{} // quiet "Response has no supported checksum"
		}),
		value: bytes.Repeat([]byte("soak-value-"), kvValueBytes/11+1)[:kvValueBytes],
	}
	return l, nil
}

func (l *load) close() {
	l.redis.Close()
	l.httpc.CloseIdleConnections()
}

// prepare creates the bucket and every object, so that GETs always find
// one.
func (l *load) prepare(ctx context.Context) error {
	if _, err := l.s3.CreateBucket(ctx, &s3.CreateBucketInput{Bucket: aws.String(bucket)}); err != nil {
		return fmt.Errorf("create bucket: %w", err)
	}
	w := newWorker(rand.New(rand.NewPCG(0, 0)))
	for k := range objectKeys {
		if err := l.put(ctx, w, k); err != nil {
			return fmt.Errorf("put object %d: %w", k, err)
		}
	}
	return nil
}

// pace runs c's requests at rate per second until ctx ends, recording
// each in rec. A request starts on its schedule; when the worker falls
// more than a second behind (the server is slower than the offered rate)
// it skips ahead rather than sending a burst, and says so in rec.
func pace(ctx context.Context, c class, w *worker, rate float64, rec *recorder) {
	interval := time.Duration(float64(time.Second) / rate)
	next := time.Now().Add(time.Duration(w.rng.Int64N(int64(interval) + 1))) // spread the workers
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		if d := time.Until(next); d > 0 {
			timer.Reset(d)
			select {
			case <-ctx.Done():
				return
			case <-timer.C:
			}
		}
		if ctx.Err() != nil {
			return
		}
		opCtx, cancel := context.WithTimeout(ctx, opTimeout)
		t0 := time.Now()
		err := c.op(opCtx, w)
		d := time.Since(t0)
		cancel()
		if ctx.Err() != nil {
			return // cut short by the end of the run: not the server's doing
		}
		rec.observe(d, err)
		next = next.Add(interval)
		if time.Since(next) > time.Second {
			next = time.Now()
			rec.behind()
		}
	}
}

// runWorkers starts workers goroutines per class, sharing rate by the
// classes' shares, and returns a function that waits for them (after ctx
// ends).
func runWorkers(ctx context.Context, classes []class, recs []*recorder, rate float64, workers int, seed uint64) func() {
	var wg sync.WaitGroup
	for ci, c := range classes {
		per := rate * c.Share / float64(workers)
		for i := range workers {
			w := newWorker(rand.New(rand.NewPCG(seed, uint64(ci*1000+i))))
			wg.Go(func() { pace(ctx, c, w, per, recs[ci]) })
		}
	}
	return wg.Wait
}

func key(prefix string, n int) string { return prefix + strconv.Itoa(n) }

func (l *load) kv(ctx context.Context, w *worker) error {
	k := key("soak:kv:", w.rng.IntN(kvKeys))
	switch r := w.rng.IntN(100); {
	case r < 50:
		err := l.redis.Get(ctx, k).Err()
		if errors.Is(err, redis.Nil) { // deleted or expired: a fine answer
			return nil
		}
		return err
	case r < 70:
		return l.redis.Set(ctx, k, l.value, 0).Err()
	case r < 85:
		return l.redis.Set(ctx, k, l.value, time.Duration(5_000+w.rng.IntN(55_000))*time.Millisecond).Err()
	default:
		return l.redis.Del(ctx, k).Err()
	}
}

func (l *load) features(ctx context.Context, w *worker) error {
	k := key("soak:f:", w.rng.IntN(featureKeys))
	now := time.Now().UnixMilli()
	switch r := w.rng.IntN(100); {
	case r < 60:
		cmd := redis.NewStatusCmd(ctx, "FAPPEND", k, now, w.rng.IntN(1000), "MAXAGE", seriesMaxAgeMs)
		_ = l.redis.Process(ctx, cmd)
		return cmd.Err()
	case r < 85:
		cmd := redis.NewKeyValueSliceCmd(ctx, "FQUERY", k, now-10_000, now, 100)
		_ = l.redis.Process(ctx, cmd)
		return cmd.Err()
	default:
		cmd := redis.NewIntCmd(ctx, "FAGG", k, now-seriesMaxAgeMs, now, "sum")
		_ = l.redis.Process(ctx, cmd)
		return cmd.Err()
	}
}

func (l *load) counters(ctx context.Context, w *worker) error {
	switch r := w.rng.IntN(100); {
	case r < 40:
		return l.redis.IncrBy(ctx, key("soak:c:", w.rng.IntN(counterKeys)), int64(1+w.rng.IntN(10))).Err()
	case r < 80:
		// A quota keeps a bucket per millisecond it was taken in and
		// trims none, so each key gets a TTL (NX: set once, not pushed
		// back by every take) and starts afresh when it expires.
		k := key("soak:q:", w.rng.IntN(quotaKeys))
		pipe := l.redis.Pipeline()
		take := redis.NewIntSliceCmd(ctx, "QUOTATAKE", k, 100, 1000)
		_ = pipe.Process(ctx, take)
		pipe.ExpireNX(ctx, k, quotaTTL)
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		// A refusal (quota spent) is an answer, not an error.
		if v := take.Val(); len(v) != 3 {
			return fmt.Errorf("QUOTATAKE answered %v", v)
		}
		return nil
	default:
		now := time.Now().UnixMilli()
		cmd := redis.NewIntCmd(ctx, "HSETANDGETOPT", key("soak:h:", w.rng.IntN(controlKeys)), now, 1, now-3_599_999, now, "sum", 60_000, 120_000, "")
		_ = l.redis.Process(ctx, cmd)
		if n, err := cmd.Result(); err != nil || n < 1 {
			return errors.Join(err, fmt.Errorf("HSETANDGETOPT counted %d", n))
		}
		return nil
	}
}

func (l *load) http(ctx context.Context, w *worker) error {
	now := time.Now().UnixMilli()
	ttl, start := int64(seriesMaxAgeMs), now-seriesMaxAgeMs
	series := wire.Text(key("soak:hf:", w.rng.IntN(httpKeys)))
	req := wire.BatchRequest{Commands: []wire.Command{
		{Kind: "set", Key: wire.Text(key("soak:hs:", w.rng.IntN(httpKeys))), Value: wire.Bytes(l.value), TTLMs: &ttl},
		{Kind: "get", Key: wire.Text(key("soak:hs:", w.rng.IntN(httpKeys)))},
		{Kind: "incr_by", Key: wire.Text(key("soak:hc:", w.rng.IntN(httpKeys))), Delta: 1},
		{Kind: "fappend", Key: series, Points: []wire.Point{{TimestampMs: now, Value: wire.Bytes(strconv.Itoa(w.rng.IntN(1000)))}}, MaxAgeMs: seriesMaxAgeMs},
		{Kind: "fagg", Key: series, Start: start, End: now, Aggregator: "sum"},
	}}
	body, err := json.Marshal(req)
	if err != nil {
		return err
	}
	hreq, err := http.NewRequestWithContext(ctx, http.MethodPost, l.httpURL, bytes.NewReader(body))
	if err != nil {
		return err
	}
	hreq.Header.Set("Content-Type", "application/json")
	res, err := l.httpc.Do(hreq)
	if err != nil {
		return err
	}
	defer res.Body.Close()
	b, err := io.ReadAll(res.Body)
	if err != nil {
		return err
	}
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("/batch_execute: %s: %.200s", res.Status, b)
	}
	var out wire.BatchResponse
	if err := json.Unmarshal(b, &out); err != nil {
		return fmt.Errorf("/batch_execute reply: %w", err)
	}
	if err := out.Status.Err(); err != nil {
		return err
	}
	if len(out.Responses) != len(req.Commands) {
		return fmt.Errorf("/batch_execute answered %d of %d commands", len(out.Responses), len(req.Commands))
	}
	for i, r := range out.Responses {
		if err := r.Status.Err(); err != nil {
			return fmt.Errorf("/batch_execute %s: %w", req.Commands[i].Kind, err)
		}
	}
	return nil
}

func (l *load) objects(ctx context.Context, w *worker) error {
	k := w.rng.IntN(objectKeys)
	if w.rng.IntN(2) == 0 {
		return l.put(ctx, w, k)
	}
	out, err := l.s3.GetObject(ctx, &s3.GetObjectInput{Bucket: aws.String(bucket), Key: aws.String(key("obj-", k))})
	if err != nil {
		return err
	}
	defer out.Body.Close()
	n, err := io.Copy(io.Discard, out.Body)
	if err == nil && n != objectBytes {
		err = fmt.Errorf("GetObject read %d bytes of %d", n, objectBytes)
	}
	return err
}

// put writes object k with a body that differs from the last one.
func (l *load) put(ctx context.Context, w *worker, k int) error {
	binary.LittleEndian.PutUint64(w.obj, w.rng.Uint64())
	_, err := l.s3.PutObject(ctx, &s3.PutObjectInput{Bucket: aws.String(bucket), Key: aws.String(key("obj-", k)), Body: bytes.NewReader(w.obj)})
	return err
}
