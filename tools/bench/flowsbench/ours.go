package flowsbench

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

func init() {
	// Only the first run of a process is profiled.
	profiled := &atomic.Bool{}
	register(SystemOurs, func(cfg Config, log *slog.Logger) system { return &oursQueue{cfg: cfg, log: log, profiled: profiled} })
}

// profile writes 10 s (or the run's remainder) of the server's CPU
// profile, read from its HTTP listener at addr, to path.
func (q *oursQueue) profile(addr, path string) {
	resp, err := http.Get("http://" + addr + "/debug/pprof/profile?seconds=10")
	if err != nil {
		q.log.Warn("CPU profile not read", "err", err)
		return
	}
	defer resp.Body.Close()
	f, err := os.Create(path)
	if err == nil {
		_, err = io.Copy(f, resp.Body)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		q.log.Warn("CPU profile not written", "err", err)
		return
	}
	q.log.Info("CPU profile of our server written", "path", path)
}

// oursType is the flow type every run uses.
const oursType = "bench"

// oursQueue is examples/server, built from this checkout, serving its
// flows over RESP on loopback, durable (every write fsynced before its
// reply); the harness talks to it with go-redis, as a user would.
type oursQueue struct {
	cfg      Config
	profiled *atomic.Bool
	log      *slog.Logger
	cmd      *exec.Cmd
	rc       *redis.Client
}

func (q *oursQueue) Name() string { return SystemOurs }

// Describe goes into the report's conditions.
func (q *oursQueue) Describe() string {
	return "examples/server built from the checkout (--async=false: a write is acknowledged once its log append is fdatasynced), one process on loopback; go-redis v9 over RESP3, one connection per producer and worker: FLOW.CREATE_MANY INDEPENDENT true, FLOW.CLAIM_DUE ... LIMIT n RETURN lease (no BLOCK, the harness's polling; each flow's id, payload, tokens and attempts), FLOW.COMPLETE_MANY INDEPENDENT true with each flow's lease token and fencing token"
}

func (q *oursQueue) Start(ctx context.Context, dir string) error {
	bin, err := benchkit.BuildExample(dir, "./examples/server", "ts-server")
	if err != nil {
		return fmt.Errorf("build examples/server: %w", err)
	}
	addrs, err := benchkit.FreeAddrs(2)
	if err != nil {
		return err
	}
	args := []string{"--data", filepath.Join(dir, "data"), "--resp", addrs[0], "--http", "", "--s3", "", "--async=false", "--log-level", "warn"}
	profile := q.cfg.OursCPUProfile
	if profile != "" && !q.profiled.Swap(true) {
		args = append(args, "--http", addrs[1], "--pprof")
	} else {
		profile = ""
	}
	q.cmd = exec.Command(bin, args...)
	q.cmd.Stdout, q.cmd.Stderr = os.Stderr, os.Stderr
	if err := q.cmd.Start(); err != nil {
		return err
	}
	q.rc = redis.NewClient(&redis.Options{Addr: addrs[0], Protocol: 3, PoolSize: q.cfg.Producers + q.cfg.Workers + 2,
		ReadTimeout: time.Minute, WriteTimeout: time.Minute})
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := q.rc.Ping(ctx).Err(); err == nil {
			if profile != "" {
				go q.profile(addrs[1], profile)
			}
			return nil
		} else if time.Now().After(deadline) {
			return fmt.Errorf("examples/server not serving at %s: %w", addrs[0], err)
		}
		if _, err := net.DialTimeout("tcp", addrs[0], 100*time.Millisecond); err != nil {
			time.Sleep(50 * time.Millisecond)
		}
	}
}

func (q *oursQueue) CreateMany(ctx context.Context, items []item) error {
	args := make([]any, 0, 3+6*len(items))
	args = append(args, "FLOW.CREATE_MANY", "INDEPENDENT", "true")
	for _, it := range items {
		args = append(args, "ITEM", it.ID, "TYPE", oursType, "PAYLOAD", it.Payload)
	}
	res, err := q.rc.Do(ctx, args...).Slice()
	if err != nil {
		return err
	}
	for i, r := range res {
		if e, ok := r.(error); ok {
			return fmt.Errorf("create %s: %w", items[i].ID, e)
		}
	}
	return nil
}

func (q *oursQueue) Claim(ctx context.Context, worker string, limit int) ([]claimed, error) {
	res, err := q.rc.Do(ctx, "FLOW.CLAIM_DUE", oursType, "STATE", "queued", "WORKER", worker,
		"LEASE_MS", strconv.FormatInt(q.cfg.Lease.Milliseconds(), 10), "LIMIT", strconv.Itoa(limit), "RETURN", "lease").Slice()
	if err != nil {
		return nil, err
	}
	out := make([]claimed, 0, len(res))
	for _, r := range res {
		m, ok := r.(map[any]any)
		if !ok {
			return nil, fmt.Errorf("claim: a record is %T", r)
		}
		id, _ := m["id"].(string)
		payload, _ := m["payload"].(string)
		token, _ := m["lease_token"].(string)
		fencing, _ := m["fencing_token"].(int64)
		out = append(out, claimed{ID: id, Payload: []byte(payload), Token: token + " " + strconv.FormatInt(fencing, 10)})
	}
	return out, nil
}

func (q *oursQueue) CompleteMany(ctx context.Context, cs []claimed) error {
	args := make([]any, 0, 3+5*len(cs))
	args = append(args, "FLOW.COMPLETE_MANY", "INDEPENDENT", "true")
	for _, c := range cs {
		token, fencing, _ := strings.Cut(c.Token, " ")
		args = append(args, "ITEM", c.ID, token, "FENCING", fencing)
	}
	res, err := q.rc.Do(ctx, args...).Slice()
	if err != nil {
		return err
	}
	for i, r := range res {
		if e, ok := r.(error); ok {
			return fmt.Errorf("complete %s: %w", cs[i].ID, e)
		}
	}
	return nil
}

// Verify reads every flow's history, 1,000 a pipeline, and counts those
// with exactly one completion.
func (q *oursQueue) Verify(ctx context.Context, n int) (int, error) {
	once := 0
	var bad []string
	for start := 0; start < n; start += 1000 {
		p := q.rc.Pipeline()
		var cmds []*redis.Cmd
		for i := start; i < min(n, start+1000); i++ {
			cmds = append(cmds, p.Do(ctx, "FLOW.HISTORY", flowID(i)))
		}
		if _, err := p.Exec(ctx); err != nil && !errors.Is(err, redis.Nil) {
			return once, err
		}
		for k, c := range cmds {
			evs, err := c.Slice()
			if err != nil {
				bad = append(bad, fmt.Sprintf("%s: %v", flowID(start+k), err))
				continue
			}
			completed := 0
			for _, e := range evs {
				if m, ok := e.(map[any]any); ok && m["event"] == "completed" {
					completed++
				}
			}
			if completed == 1 {
				once++
			} else {
				bad = append(bad, fmt.Sprintf("%s completed %d times", flowID(start+k), completed))
			}
		}
	}
	if len(bad) > 0 {
		return once, fmt.Errorf("%d flows not completed exactly once, first: %s", len(bad), bad[0])
	}
	return once, nil
}

func (q *oursQueue) Close() error {
	if q.rc != nil {
		q.rc.Close()
	}
	if q.cmd != nil && q.cmd.Process != nil {
		q.cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { q.cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			q.cmd.Process.Kill()
			<-done
		}
	}
	return nil
}
