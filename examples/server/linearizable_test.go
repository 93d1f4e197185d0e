package main

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/anishathalye/porcupine"
	"github.com/redis/go-redis/v9"
	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/examples/internal/faultproxy"
	"github.com/temporalstore/temporalstore-go/examples/internal/servertest"
	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// regInput is a register operation: a GET, or a SET of a value no other
// SET writes. unknown marks a SET whose outcome the client never learnt.
type regInput struct {
	key, value string
	set        bool
	unknown    bool
}

// registerModel is porcupine's register per key. A SET of unknown outcome
// has Return = MaxInt64: it may take effect at any point after its call.
var registerModel = porcupine.Model{
	Partition: func(h []porcupine.Operation) [][]porcupine.Operation {
		by := map[string][]porcupine.Operation{}
		var keys []string
		for _, op := range h {
			k := op.Input.(regInput).key
			if _, ok := by[k]; !ok {
				keys = append(keys, k)
			}
			by[k] = append(by[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(keys))
		for _, k := range keys {
			out = append(out, by[k])
		}
		return out
	},
	Init: func() any { return "" },
	Step: func(state, input, output any) (bool, any) {
		in := input.(regInput)
		if in.set {
			return true, in.value
		}
		return output.(string) == state.(string), state
	},
	Equal: func(a, b any) bool { return a.(string) == b.(string) },
	DescribeOperation: func(input, output any) string {
		in := input.(regInput)
		if in.set {
			return fmt.Sprintf("set(%s,%q) unknown=%v", in.key, in.value, in.unknown)
		}
		return fmt.Sprintf("get(%s) -> %q", in.key, output)
	},
}

// router sends each command to the member its slot's leader is, as a
// Redis Cluster client does, but never retries what may have run: a
// redirect (MOVED, CLUSTERDOWN, TRYAGAIN: nothing was written) is retried,
// a lost connection or UNKNOWNOUTCOME is reported as unknown.
type router struct {
	mu      sync.Mutex
	clients map[string]*redis.Client
	leaders map[int]string // slot → RESP address, as last learnt
	addrs   []string
}

func newRouter(addrs []string) *router {
	r := &router{clients: map[string]*redis.Client{}, leaders: map[int]string{}, addrs: addrs}
	for _, a := range addrs {
		r.clients[a] = redis.NewClient(&redis.Options{Addr: a, MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
			ReadTimeout: 2 * time.Second, WriteTimeout: 2 * time.Second, PoolSize: 8})
	}
	return r
}

func (r *router) close() {
	for _, c := range r.clients {
		c.Close()
	}
}

// errUnknown marks a write that may or may not have been applied.
var errUnknown = errors.New("outcome unknown")

// do runs cmd on key's leader; errUnknown when the write may have run,
// another error when nothing ran (or, for a read, when it failed).
func (r *router) do(ctx context.Context, key string, write bool, args ...any) (*redis.Cmd, error) {
	slot := temporalstore.KeySlot([]byte(key))
	rng := rand.New(rand.NewPCG(uint64(time.Now().UnixNano()), 7))
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) && ctx.Err() == nil {
		r.mu.Lock()
		addr := r.leaders[slot]
		if addr == "" {
			addr = r.addrs[rng.IntN(len(r.addrs))]
		}
		c := r.clients[addr]
		r.mu.Unlock()
		cmd := c.Do(ctx, args...)
		err := cmd.Err()
		if err == nil || errors.Is(err, redis.Nil) {
			return cmd, nil
		}
		msg := err.Error()
		switch {
		case strings.HasPrefix(msg, "MOVED "):
			f := strings.Fields(msg)
			r.mu.Lock()
			r.leaders[slot] = f[2]
			r.mu.Unlock()
			continue
		case strings.HasPrefix(msg, "CLUSTERDOWN"), strings.HasPrefix(msg, "TRYAGAIN"):
			time.Sleep(20 * time.Millisecond)
			continue
		case strings.HasPrefix(msg, "UNKNOWNOUTCOME"):
			return nil, errUnknown
		}
		// A connection error: the member may have died with the write
		// done or not. Another member is tried for the next attempt.
		r.mu.Lock()
		delete(r.leaders, slot)
		r.mu.Unlock()
		if write && !strings.Contains(msg, "connection refused") {
			return nil, errUnknown
		}
		time.Sleep(10 * time.Millisecond)
	}
	if write {
		return nil, errUnknown
	}
	return nil, errors.New("no answer")
}

// history records one history's operations on one clock.
type history struct {
	mu   sync.Mutex
	base time.Time
	ops  []porcupine.Operation
	ids  atomic.Int64
}

func (h *history) now() int64 { return int64(time.Since(h.base)) }

func (h *history) add(op porcupine.Operation) {
	h.mu.Lock()
	h.ops = append(h.ops, op)
	h.mu.Unlock()
}

// runClient runs register operations on keys until stop closes.
func runClient(ctx context.Context, r *router, h *history, id int, keys []string, stop <-chan struct{}) {
	rng := rand.New(rand.NewPCG(uint64(id), uint64(time.Now().UnixNano())))
	for i := 0; ; i++ {
		select {
		case <-stop:
			return
		default:
		}
		key := keys[rng.IntN(len(keys))]
		call := h.now()
		if rng.IntN(2) == 0 {
			cmd, err := r.do(ctx, key, false, "get", key)
			if err != nil {
				continue // a failed read constrains nothing
			}
			v, _ := cmd.Text()
			h.add(porcupine.Operation{ClientId: id, Input: regInput{key: key}, Output: v, Call: call, Return: h.now()})
			continue
		}
		v := fmt.Sprintf("c%d.%d", id, i)
		_, err := r.do(ctx, key, true, "set", key, v)
		if err != nil {
			// It may take effect any time after its call; a client ID of
			// its own keeps it from ordering this client's later calls.
			h.add(porcupine.Operation{ClientId: 1_000_000 + int(h.ids.Add(1)), Input: regInput{key: key, value: v, set: true, unknown: true}, Call: call, Return: math.MaxInt64})
			continue
		}
		h.add(porcupine.Operation{ClientId: id, Input: regInput{key: key, value: v, set: true}, Output: "", Call: call, Return: h.now()})
	}
}

// leaderIndex is the index of the member that leads key's slot.
func (c *testCluster) leaderIndex(ctx context.Context, key string) int {
	c.t.Helper()
	slot := int64(temporalstore.KeySlot([]byte(key)))
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		for _, m := range c.ms {
			cl := redis.NewClient(&redis.Options{Addr: m.resp, MaxRetries: -1})
			shards, err := cl.ClusterShards(ctx).Result()
			cl.Close()
			if err != nil {
				continue
			}
			for _, sh := range shards {
				for _, r := range sh.Slots {
					if r.Start > slot || slot > r.End {
						continue
					}
					for _, n := range sh.Nodes {
						for i, mm := range c.ms {
							if n.Role == "master" && mm.resp == fmt.Sprintf("%s:%d", n.IP, n.Port) {
								return i
							}
						}
					}
				}
			}
		}
	}
	c.t.Fatalf("no leader for %s", key)
	return -1
}

// proxiedCluster is three members whose raft traffic goes through a
// fault proxy in front of each member's raft listener.
type proxiedCluster struct {
	*testCluster
	proxies []*faultproxy.Proxy
	raft    []string // each member's own raft listen address
	shards  int
}

func startProxiedCluster(t *testing.T, shards int) *proxiedCluster {
	c := &proxiedCluster{testCluster: &testCluster{t: t, bin: buildServer(t)}, shards: shards}
	var peers []string
	for i := range 3 {
		m := &member{id: uint64(i + 1), data: t.TempDir(), resp: servertest.FreeAddr(t)}
		raft := servertest.FreeAddr(t)
		p, err := faultproxy.Start(raft)
		require.NoError(t, err)
		t.Cleanup(func() { p.Close() })
		c.proxies = append(c.proxies, p)
		c.raft = append(c.raft, raft)
		peers = append(peers, fmt.Sprintf("%d@%s@%s", m.id, p.Addr(), m.resp))
		c.ms = append(c.ms, m)
	}
	c.peers = strings.Join(peers, ",")
	for i := range c.ms {
		c.startMember(i)
	}
	return c
}

func (c *proxiedCluster) startMember(i int) {
	m := c.ms[i]
	m.srv = servertest.Start(c.t, c.bin, "--data", m.data, "--resp", m.resp, "--http", "", "--s3", "", "--raft", c.raft[i],
		"--shards", fmt.Sprint(c.shards), "--cluster-id", fmt.Sprint(m.id), "--cluster-peers", c.peers)
}

// Histories of concurrent GETs and SETs through the members, under
// SIGKILLs of shard leaders, partitions of one member's raft traffic and
// restarts of one member (a rolling restart's steps),
// are linearizable per key (porcupine); a last read of every key, in the
// history, finds its last acknowledged SET (or a later one of unknown
// outcome), so no acknowledged write is lost.
func TestClusterHistoriesAreLinearizable(t *testing.T) {
	if testing.Short() {
		t.Skip("three processes under faults")
	}
	c := startProxiedCluster(t, 2)
	checkHistories(t, c.testCluster, historiesPerRun(20), func(ctx context.Context, n int, keys []string, r *router) (string, int, time.Duration) {
		fault := []string{"kill", "partition", "restart"}[n%3]
		victim := n % 3
		var failover time.Duration
		switch fault {
		case "kill":
			victim = c.leaderIndex(ctx, keys[0]) // so the probe times a failover
			failover = killAndProbe(t, ctx, c.testCluster, victim, keys[0], r)
			time.Sleep(700 * time.Millisecond)
			c.startMember(victim)
		case "restart":
			// A rolling restart's step: SIGTERM, and back.
			require.NoError(t, c.ms[victim].srv.Stop())
			c.startMember(victim)
		case "partition":
			// The member's inbound raft traffic is swallowed: its leaders
			// lose their quorum and step down, the others elect anew.
			c.proxies[victim].SetBlackhole(true)
			time.Sleep(1500 * time.Millisecond)
			c.proxies[victim].SetBlackhole(false)
			c.proxies[victim].DropAll()
		}
		return fault, victim, failover
	})
}

// historiesPerRun is n, or TS_LINEARIZABILITY_HISTORIES.
func historiesPerRun(n int) int {
	if s := os.Getenv("TS_LINEARIZABILITY_HISTORIES"); s != "" {
		fmt.Sscan(s, &n)
	}
	return n
}

// killAndProbe SIGKILLs member victim and returns how long until a write
// of key's slot succeeds again.
func killAndProbe(t *testing.T, ctx context.Context, c *testCluster, victim int, key string, r *router) time.Duration {
	c.ms[victim].srv.Kill()
	killed := time.Now()
	for {
		if _, err := r.do(ctx, key, true, "set", key+":probe", "x"); err == nil {
			return time.Since(killed)
		}
		require.Less(t, time.Since(killed), 20*time.Second, "no write after the kill")
	}
}

// checkHistories records histories of concurrent GETs and SETs of four
// keys through c's members while fault (n, the keys) strikes, and checks
// each is linearizable per key (porcupine), a last read of every key
// finding its last acknowledged SET or a later one of unknown outcome.
func checkHistories(t *testing.T, c *testCluster, histories int, fault func(ctx context.Context, n int, keys []string, r *router) (string, int, time.Duration)) {
	for _, m := range c.ms {
		waitServed(t, m.resp)
	}
	ctx := t.Context()
	r := newRouter(c.addrs())
	defer r.close()
	violations, unknown, total := 0, 0, 0
	var failovers []time.Duration
	for n := range histories {
		h := &history{base: time.Now()}
		// Keys in both shards.
		keys := []string{fmt.Sprintf("h%d:{a}", n), fmt.Sprintf("h%d:{b}", n), fmt.Sprintf("h%d:{c}", n), fmt.Sprintf("h%d:{d}", n)}
		stop := make(chan struct{})
		var wg sync.WaitGroup
		for id := range 4 {
			wg.Go(func() { runClient(ctx, r, h, id, keys, stop) })
		}
		time.Sleep(300 * time.Millisecond)
		name, victim, failover := fault(ctx, n, keys, r)
		if failover > 0 {
			failovers = append(failovers, failover)
		}
		time.Sleep(500 * time.Millisecond)
		close(stop)
		wg.Wait()
		// A last read of every key: what it finds must be the last SET
		// acknowledged, or one of unknown outcome, never an older value.
		for _, k := range keys {
			call := h.now()
			cmd, err := r.do(ctx, k, false, "get", k)
			require.NoError(t, err, "final read of %s", k)
			v, _ := cmd.Text()
			h.add(porcupine.Operation{ClientId: 999, Input: regInput{key: k}, Output: v, Call: call, Return: h.now()})
		}
		h.mu.Lock()
		ops := h.ops
		h.mu.Unlock()
		for _, op := range ops {
			if op.Return == math.MaxInt64 {
				unknown++
			}
		}
		total += len(ops)
		res, info := porcupine.CheckOperationsVerbose(registerModel, ops, 30*time.Second)
		if res != porcupine.Ok {
			violations++
			path := filepath.Join(t.TempDir(), fmt.Sprintf("history-%d.html", n))
			_ = porcupine.VisualizePath(registerModel, info, path)
			t.Errorf("history %d (%s of member %d): %v, %d operations; visualization %s", n, name, victim+1, res, len(ops), path)
		}
		// Every member back before the next history.
		for _, m := range c.ms {
			waitServed(t, m.resp)
		}
	}
	t.Logf("%d histories, %d operations (%d writes of unknown outcome), %d violations; failover after SIGKILL: %v", histories, total, unknown, violations, failovers)
	require.Zero(t, violations)
}
