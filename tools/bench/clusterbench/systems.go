package clusterbench

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"math/rand/v2"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// systemRun is one run of one system: a fresh cluster in a fresh
// directory, loaded with every write cell, then read, then its leader
// killed.
type systemRun struct {
	Repeat int `json:"repeat"`
	// Writes holds one load per Config.Concurrency, in its order.
	Writes []loadResult `json:"writes"`
	// SharedWrites holds, for shared, one load per Config.SharedWriters
	// through the server processes; SharedEngines the same through three
	// engines in the bench's process, and SharedConvergeMs how long their
	// replicas took to apply all of each.
	SharedWrites     []loadResult `json:"shared_writes,omitempty"`
	SharedEngines    []loadResult `json:"shared_engines,omitempty"`
	SharedConvergeMs []float64    `json:"shared_converge_ms,omitempty"`
	// SharedCeiling is the bare append+fdatasync ceiling of each
	// Config.SharedWriters (runSharedCeiling).
	SharedCeiling []loadResult `json:"shared_ceiling,omitempty"`
	// FollowerRead is, for ours, GET after READONLY on a member that does
	// not lead the keys' slots; for etcd, a serializable Get on a
	// follower. LeaderRead is a linearizable read on the leader(s): ours
	// through ClusterClient, etcd a Get on its leader.
	FollowerRead *loadResult `json:"follower_read,omitempty"`
	LeaderRead   *loadResult `json:"leader_read,omitempty"`
	// ReadSetup says where the follower reads went.
	ReadSetup string `json:"read_setup,omitempty"`
	// Leaders are, for ours, the slots each member led after the start.
	Leaders map[string]int `json:"leaders_at_start,omitempty"`
	// Failover is the leader's kill, when it ran.
	Failover *failoverResult `json:"failover,omitempty"`
	// ErrorReplies are ours' failed commands as the cluster client's
	// connections to each member saw them during the writes and reads
	// (MOVED, the redirects it followed, included; not the connections'
	// CLIENT set-up), by kind, and each kind's first.
	ErrorReplies       map[string]int    `json:"error_replies,omitempty"`
	ErrorReplyExamples map[string]string `json:"error_reply_examples,omitempty"`
	// Unhealthy are, for ours, the nodes each member's CLUSTER SHARDS
	// called anything but online once every slot was led, by
	// "member i sees member j" and the health it gave.
	Unhealthy           map[string]string `json:"unhealthy_at_start,omitempty"`
	UnhealthyBeforeKill map[string]string `json:"unhealthy_before_kill,omitempty"`
	// ServerLog counts ours' WARN and ERROR log lines by member and
	// message, before the kill and in all.
	ServerLogBeforeKill map[string]int `json:"server_log_before_kill,omitempty"`
	ServerLog           map[string]int `json:"server_log,omitempty"`
	// StopError says when a member did not stop on SIGTERM.
	StopError string `json:"stop_error,omitempty"`
}

// writeKey is the 16-byte key number n of the write keyspace.
func writeKey(n int) string { return fmt.Sprintf("key:%012d", n) }

// readKeys are the n 16-byte keys the read loops cycle over.
func readKeys(n int) []string {
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("read:%011d", i)
	}
	return out
}

// failoverKey is the key the failover writer writes in repeat r, and
// probeKey the key of its probes: a hash tag puts both in one slot.
func failoverKey(r int) string { return fmt.Sprintf("{failover:%d}:w", r) }

func probeKey(r int) string { return fmt.Sprintf("{failover:%d}:p", r) }

// randomValue is n incompressible bytes.
func randomValue(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 17))
	v := make([]byte, n)
	for i := range v {
		v[i] = byte(r.Uint32())
	}
	return v
}

// writeOp returns a write of a random key of the keyspace through put,
// each client with a random source of its own.
func writeOp(clients, keyspace int, seed uint64, put func(ctx context.Context, client int, key string) error) func(ctx context.Context, client int) error {
	rngs := make([]*rand.Rand, clients)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(seed, uint64(i)))
	}
	return func(ctx context.Context, client int) error {
		return put(ctx, client, writeKey(rngs[client].IntN(keyspace)))
	}
}

// replyCounter is a go-redis hook counting failed commands by kind.
type replyCounter struct {
	mu sync.Mutex
	n  map[string]int
	// first is each kind's first error and the command that got it.
	first map[string]string
}

func newReplyCounter() *replyCounter {
	return &replyCounter{n: map[string]int{}, first: map[string]string{}}
}

func (r *replyCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (r *replyCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		// CLIENT commands are go-redis's connection set-up (CLIENT
		// MAINT_NOTIFICATIONS, which it drops when refused).
		if err != nil && !errors.Is(err, redis.Nil) && cmd.Name() != "client" {
			k := errKind(err)
			r.mu.Lock()
			r.n[k]++
			if _, ok := r.first[k]; !ok {
				r.first[k] = truncate(fmt.Sprintf("%v: %v", cmd.Args(), err), 200)
			}
			r.mu.Unlock()
		}
		return err
	}
}

func (r *replyCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// counts returns the failures by kind, and each kind's first.
func (r *replyCounter) counts() (map[string]int, map[string]string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.n) == 0 {
		return nil, nil
	}
	return maps.Clone(r.n), maps.Clone(r.first)
}

func truncate(s string, n int) string {
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// runOurs is one run of ours: three server processes of bin in dir.
func runOurs(ctx context.Context, cfg Config, bin, dir string, repeat int, log *slog.Logger) (run systemRun, err error) {
	c, err := startOurs(ctx, bin, dir, cfg.Shards)
	if err != nil {
		return run, err
	}
	defer func() {
		if serr := c.Close(); serr != nil {
			run.StopError = serr.Error()
			log.Warn("ours did not stop cleanly", "err", serr)
		}
	}()
	if run.Leaders, err = c.leaders(ctx); err != nil {
		return run, err
	}
	run.Unhealthy = c.unhealthy(ctx)
	counter := newReplyCounter()
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaxRedirects: 8, PoolSize: max(slices.Max(cfg.Concurrency)+2, 10)})
	rc.OnNewNode(func(n *redis.Client) { n.AddHook(counter) })
	defer rc.Close()
	value := randomValue(cfg.ValueBytes, uint64(repeat))

	for _, n := range cfg.Concurrency {
		op := writeOp(n, cfg.Keyspace, uint64(repeat), func(ctx context.Context, _ int, key string) error {
			return rc.Set(ctx, key, value, 0).Err()
		})
		res, err := runLoad(ctx, n, cfg.Warmup, cfg.Duration, c.PIDs(), op)
		if err != nil {
			return run, fmt.Errorf("writes at c=%d: %w", n, err)
		}
		run.Writes = append(run.Writes, res)
		logLoad(log, SystemOurs, repeat, fmt.Sprintf("write c=%d", n), res)
	}

	// Reads: the keys written, then read from a member that leads none of
	// their slots (the one leading fewest), and from their leaders.
	keys := readKeys(cfg.ReadKeys)
	if err := parallel(ctx, len(keys), 16, func(ctx context.Context, i int) error {
		return rc.Set(ctx, keys[i], value, 0).Err()
	}); err != nil {
		return run, fmt.Errorf("writing the read keys: %w", err)
	}
	shards, err := c.members[0].shards(ctx)
	if err != nil {
		return run, err
	}
	led, _ := ledSlots(shards)
	reader := c.members[0]
	for _, m := range c.members[1:] {
		if led[m.resp] < led[reader.resp] {
			reader = m
		}
	}
	var fkeys []string
	for _, k := range keys {
		if slotLeader(shards, keySlot(k)) != reader.resp {
			fkeys = append(fkeys, k)
		}
	}
	if len(fkeys) == 0 {
		return run, fmt.Errorf("member %d leads every read key's slot", reader.id)
	}
	run.ReadSetup = fmt.Sprintf("member %d (leads %d slots), %d of the %d keys in slots it does not lead", reader.id, led[reader.resp], len(fkeys), len(keys))
	direct := redis.NewClient(&redis.Options{Addr: reader.resp, PoolSize: 1,
		OnConnect: func(ctx context.Context, cn *redis.Conn) error { return cn.ReadOnly(ctx).Err() }})
	defer direct.Close()
	deadline := time.Now().Add(10 * time.Second)
	for _, k := range fkeys {
		for {
			v, err := direct.Get(ctx, k).Bytes()
			if err == nil && len(v) == len(value) {
				break
			}
			if ctx.Err() != nil {
				return run, ctx.Err()
			}
			if time.Now().After(deadline) {
				return run, fmt.Errorf("member %d's replica lacks %s 10s after it was written: %v", reader.id, k, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	get := func(g func(ctx context.Context, key string) *redis.StringCmd, keys []string) func(ctx context.Context, _ int) error {
		var next atomic.Uint64
		return func(ctx context.Context, _ int) error {
			v, err := g(ctx, keys[(next.Add(1)-1)%uint64(len(keys))]).Bytes()
			if err == nil && len(v) != len(value) {
				return errMiss
			}
			if errors.Is(err, redis.Nil) {
				return errMiss
			}
			return err
		}
	}
	fr, err := runLoad(ctx, 1, cfg.Warmup, cfg.Duration, c.PIDs(), get(direct.Get, fkeys))
	if err != nil {
		return run, fmt.Errorf("follower reads: %w", err)
	}
	run.FollowerRead = &fr
	logLoad(log, SystemOurs, repeat, "follower read (READONLY)", fr)
	lr, err := runLoad(ctx, 1, cfg.Warmup, cfg.Duration, c.PIDs(), get(rc.Get, keys))
	if err != nil {
		return run, fmt.Errorf("leader reads: %w", err)
	}
	run.LeaderRead = &lr
	logLoad(log, SystemOurs, repeat, "leader read", lr)
	run.ErrorReplies, run.ErrorReplyExamples = counter.counts()
	run.ServerLogBeforeKill = c.LogCounts()
	run.UnhealthyBeforeKill = c.unhealthy(ctx)

	f := oursFailover(ctx, cfg, c, repeat)
	run.Failover = &f
	logFailover(log, SystemOurs, repeat, f)
	run.ServerLog = c.LogCounts()
	return run, nil
}

// oursFailover kills the member leading a key's slot while a ClusterClient
// writes the key in a loop.
func oursFailover(ctx context.Context, cfg Config, c *oursCluster, repeat int) failoverResult {
	key := failoverKey(repeat)
	// go-redis learns a dead leader's successor when it reloads the slots:
	// on MOVED, and every ClusterStateReloadInterval.
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaxRedirects: 8, ClusterStateReloadInterval: 100 * time.Millisecond})
	defer rc.Close()
	fail := func(format string, args ...any) failoverResult {
		return failoverResult{Ms: nan, WritableMs: nan, NewLeaderMs: nan, Error: fmt.Sprintf(format, args...)}
	}
	slot64, err := rc.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return fail("CLUSTER KEYSLOT: %v", err)
	}
	slot := int(slot64)
	if slot != keySlot(key) {
		return fail("CLUSTER KEYSLOT %s = %d, Redis Cluster's slot is %d", key, slot, keySlot(key))
	}
	w := startWriter(ctx, func(ctx context.Context, v int64) error {
		return rc.Set(ctx, key, strconv.FormatInt(v, 10), 0).Err()
	})
	stopped := false
	defer func() {
		if !stopped {
			w.Stop()
		}
	}()
	sleep(ctx, max(cfg.Warmup, 300*time.Millisecond))
	victim, err := c.slotLeader(ctx, slot)
	if err != nil {
		return fail("%v", err)
	}
	// The survivors, asked every 5 ms who leads the slot.
	var survivors []*redis.Client
	for _, m := range c.members {
		if m != victim && !m.dead() {
			s := redis.NewClient(&redis.Options{Addr: m.resp, PoolSize: 1, MaxRetries: -1,
				DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
			defer s.Close()
			survivors = append(survivors, s)
		}
	}
	// The probes have a client of their own: their redirects do not
	// refresh the writer's slots.
	pc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: c.Addrs(), MaxRedirects: 8, ClusterStateReloadInterval: 100 * time.Millisecond})
	defer pc.Close()
	if err := pc.Set(ctx, probeKey(repeat), "0", 0).Err(); err != nil {
		return fail("probe: %v", err)
	}
	probe := func(ctx context.Context, v int64) error {
		return pc.Set(ctx, probeKey(repeat), strconv.FormatInt(v, 10), 0).Err()
	}
	res := measureFailover(ctx, w, func() error { victim.Kill(); return nil }, probe, func(ctx context.Context) bool {
		for _, s := range survivors {
			shards, err := s.ClusterShards(ctx).Result()
			if err != nil {
				continue
			}
			if l := slotLeader(shards, slot); l != "" && l != victim.resp {
				return true
			}
		}
		return false
	})
	res.Victim, res.Slot = fmt.Sprintf("member %d (%s)", victim.id, victim.resp), slot
	sleep(ctx, 100*time.Millisecond)
	w.Stop()
	stopped = true
	res.LastAcked = w.lastAcked.Load()
	got, err := rc.Get(ctx, key).Result()
	if err != nil {
		got = "error: " + err.Error()
	}
	res.ReadBack = got
	if n, err := strconv.ParseInt(got, 10, 64); err != nil || n < res.LastAcked {
		res.Error = joinErr(res.Error, fmt.Sprintf("%s reads %q after the failover, below the last acknowledged write %d", key, got, res.LastAcked))
	}
	return res
}

// slotLeader returns the member leading slot: as member asked names it,
// and as it names itself.
func (c *oursCluster) slotLeader(ctx context.Context, slot int) (*member, error) {
	deadline := time.Now().Add(5 * time.Second)
	var last error
	for time.Now().Before(deadline) && ctx.Err() == nil {
		for _, asked := range c.members {
			if asked.dead() {
				continue
			}
			shards, err := asked.shards(ctx)
			if err != nil {
				last = err
				continue
			}
			lead := c.memberAt(slotLeader(shards, slot))
			if lead == nil || lead.dead() {
				last = fmt.Errorf("member %d names no live leader of slot %d", asked.id, slot)
				continue
			}
			own, err := lead.shards(ctx)
			if err == nil && slotLeader(own, slot) == lead.resp {
				return lead, nil
			}
			last = fmt.Errorf("member %d names member %d leader of slot %d, which does not (%v)", asked.id, lead.id, slot, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil, fmt.Errorf("no leader of slot %d: %v", slot, last)
}

func joinErr(a, b string) string {
	if a == "" {
		return b
	}
	return a + "; " + b
}

// runEtcd is one run of etcd: three member processes in dir.
func runEtcd(ctx context.Context, cfg Config, dir string, repeat int, log *slog.Logger) (run systemRun, err error) {
	e, err := startEtcd(ctx, dir, max(slices.Max(cfg.Concurrency), 16))
	if err != nil {
		return run, err
	}
	defer e.Close()
	value := randomValue(cfg.ValueBytes, uint64(repeat))
	for _, n := range cfg.Concurrency {
		op := writeOp(n, cfg.Keyspace, uint64(repeat), func(ctx context.Context, client int, key string) error {
			return e.Put(ctx, client, []byte(key), value)
		})
		res, err := runLoad(ctx, n, cfg.Warmup, cfg.Duration, e.PIDs(), op)
		if err != nil {
			return run, fmt.Errorf("writes at c=%d: %w", n, err)
		}
		run.Writes = append(run.Writes, res)
		logLoad(log, SystemEtcd, repeat, fmt.Sprintf("write c=%d", n), res)
	}

	keys := readKeys(cfg.ReadKeys)
	if err := parallel(ctx, len(keys), 16, func(ctx context.Context, i int) error {
		return e.Put(ctx, i%16, []byte(keys[i]), value)
	}); err != nil {
		return run, fmt.Errorf("writing the read keys: %w", err)
	}
	eps := e.Endpoints()
	lead := e.Leader()
	follower := (lead + 1) % len(eps)
	run.ReadSetup = fmt.Sprintf("member %d (%s), the leader member %d", follower+1, eps[follower], lead+1)
	fc, err := dialEtcdClient(eps[follower])
	if err != nil {
		return run, err
	}
	defer fc.Close()
	lc, err := dialEtcdClient(eps[lead])
	if err != nil {
		return run, err
	}
	defer lc.Close()
	if err := waitEtcdKeys(ctx, fc, keys); err != nil {
		return run, err
	}
	fr, err := runLoad(ctx, 1, cfg.Warmup, cfg.Duration, e.PIDs(), etcdGetOp(fc, keys, value, true))
	if err != nil {
		return run, fmt.Errorf("follower reads: %w", err)
	}
	run.FollowerRead = &fr
	logLoad(log, SystemEtcd, repeat, "follower read (serializable)", fr)
	lr, err := runLoad(ctx, 1, cfg.Warmup, cfg.Duration, e.PIDs(), etcdGetOp(lc, keys, value, false))
	if err != nil {
		return run, fmt.Errorf("leader reads: %w", err)
	}
	run.LeaderRead = &lr
	logLoad(log, SystemEtcd, repeat, "leader read", lr)

	if cfg.EtcdFailover {
		f := etcdFailover(ctx, cfg, e, repeat)
		run.Failover = &f
		logFailover(log, SystemEtcd, repeat, f)
	}
	return run, nil
}

// etcdFailover kills etcd's leader while a client of all three members
// puts one key in a loop.
func etcdFailover(ctx context.Context, cfg Config, e *etcdCluster, repeat int) failoverResult {
	fail := func(format string, args ...any) failoverResult {
		return failoverResult{Ms: nan, WritableMs: nan, NewLeaderMs: nan, Error: fmt.Sprintf(format, args...)}
	}
	key := failoverKey(repeat)
	cl, err := dialEtcdClient(e.Endpoints()...)
	if err != nil {
		return fail("%v", err)
	}
	defer cl.Close()
	w := startWriter(ctx, func(ctx context.Context, v int64) error {
		_, err := cl.Put(ctx, key, strconv.FormatInt(v, 10))
		return err
	})
	stopped := false
	defer func() {
		if !stopped {
			w.Stop()
		}
	}()
	sleep(ctx, max(cfg.Warmup, 300*time.Millisecond))
	lead, id, err := e.leader(ctx)
	if err != nil {
		return fail("%v", err)
	}
	pc, err := dialEtcdClient(e.Endpoints()...)
	if err != nil {
		return fail("%v", err)
	}
	defer pc.Close()
	probe := func(ctx context.Context, v int64) error {
		_, err := pc.Put(ctx, probeKey(repeat), strconv.FormatInt(v, 10))
		return err
	}
	res := measureFailover(ctx, w, func() error { return e.Kill(lead) }, probe, func(ctx context.Context) bool {
		return e.newLeader(ctx, cl, id)
	})
	res.Victim = fmt.Sprintf("member %d (%s)", lead+1, e.Endpoints()[lead])
	sleep(ctx, 100*time.Millisecond)
	w.Stop()
	stopped = true
	res.LastAcked = w.lastAcked.Load()
	gctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	got, err := cl.Get(gctx, key)
	cancel()
	switch {
	case err != nil:
		res.ReadBack = "error: " + err.Error()
	case len(got.Kvs) == 1:
		res.ReadBack = string(got.Kvs[0].Value)
	}
	if n, err := strconv.ParseInt(res.ReadBack, 10, 64); err != nil || n < res.LastAcked {
		res.Error = joinErr(res.Error, fmt.Sprintf("%s reads %q after the failover, below the last acknowledged write %d", key, res.ReadBack, res.LastAcked))
	}
	return res
}

func logLoad(log *slog.Logger, system string, repeat int, what string, r loadResult) {
	log.Info("run", "system", system, "repeat", repeat+1, "load", what, "per_s", round(r.PerSec, 0),
		"p50_us", round(r.P50Us, 0), "p95_us", round(r.P95Us, 0), "p99_us", round(r.P99Us, 0),
		"server_cpu_us", round(r.ServerCPUUsPerOp, 0), "errors", r.Errors, "misses", r.Misses)
}

func logFailover(log *slog.Logger, system string, repeat int, f failoverResult) {
	attrs := []any{"system", system, "repeat", repeat + 1, "victim", f.Victim, "failover_ms", round(float64(f.Ms), 0),
		"new_leader_ms", round(float64(f.NewLeaderMs), 0), "errors", f.Errors, "kinds", f.ErrorKinds}
	if f.Error != "" {
		log.Warn("failover", append(attrs, "err", f.Error)...)
		return
	}
	log.Info("failover", attrs...)
}

// unhealthy asks every member for CLUSTER SHARDS and returns the nodes it
// calls anything but online, by "member i sees member j".
func (c *oursCluster) unhealthy(ctx context.Context) map[string]string {
	out := map[string]string{}
	for _, asker := range c.members {
		shards, err := asker.shards(ctx)
		if err != nil {
			out[fmt.Sprintf("member %d", asker.id)] = "CLUSTER SHARDS: " + err.Error()
			continue
		}
		for _, sh := range shards {
			for _, n := range sh.Nodes {
				if n.Health == "online" {
					continue
				}
				name := nodeAddr(n)
				if m := c.memberAt(name); m != nil {
					name = fmt.Sprint("member ", m.id)
				}
				out[fmt.Sprintf("member %d sees %s", asker.id, name)] = n.Health
			}
		}
	}
	if len(out) == 0 {
		return nil
	}
	return out
}
