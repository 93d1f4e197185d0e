package main

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/examples/internal/freeport"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if err != nil && !errors.Is(err, flag.ErrHelp) {
		fmt.Fprintln(os.Stderr, "cluster:", err)
		os.Exit(1)
	}
}

type config struct {
	server string
	dir    string
	shards int
	keys   int
	keep   bool
}

func parse(args []string, stderr io.Writer) (config, error) {
	var c config
	fs := flag.NewFlagSet("cluster", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&c.server, "server", "", "the server binary; empty builds ./examples/server with the go command")
	fs.StringVar(&c.dir, "dir", "", "where the members' data directories go; empty: a temporary directory, removed at the end")
	fs.IntVar(&c.shards, "shards", 3, "shards of the default table, each a raft group over the three members")
	fs.IntVar(&c.keys, "keys", 1000, "keys written before the leader is killed")
	fs.BoolVar(&c.keep, "keep", false, "keep the cluster running after the demonstration, until interrupted")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "Usage: cluster [flags]\n\nStarts three server processes as a cluster on loopback, kills a shard leader, and shows the recovery.\n\nFlags:\n")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return c, err
	}
	if c.shards < 1 || c.keys < 1 {
		return c, errors.New("--shards and --keys must be at least 1")
	}
	return c, nil
}

// member is one server process.
type member struct {
	id          int
	data, resp  string
	cmd         *exec.Cmd
	ready, done chan struct{}
}

func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	c, err := parse(args, stderr)
	if err != nil {
		return err
	}
	log := slog.New(slog.NewTextHandler(stderr, nil))
	if c.dir == "" {
		if c.dir, err = os.MkdirTemp("", "ts-cluster-"); err != nil {
			return err
		}
		defer os.RemoveAll(c.dir)
	}
	if c.server == "" {
		c.server = filepath.Join(c.dir, "server")
		log.Info("building the server", "to", c.server)
		out, err := exec.CommandContext(ctx, "go", "build", "-o", c.server, "github.com/temporalstore/temporalstore-go/examples/server").CombinedOutput()
		if err != nil {
			return fmt.Errorf("go build: %w\n%s", err, out)
		}
	}
	var ms []*member
	var peers []string
	for i := 1; i <= 3; i++ {
		raft, err := freeport.Addr()
		if err != nil {
			return err
		}
		respAddr, err := freeport.Addr()
		if err != nil {
			return err
		}
		ms = append(ms, &member{id: i, data: filepath.Join(c.dir, fmt.Sprint("member-", i)), resp: respAddr})
		peers = append(peers, fmt.Sprintf("%d@%s@%s", i, raft, respAddr))
	}
	start := func(m *member) error {
		m.cmd = exec.Command(c.server, "--data", m.data, "--resp", m.resp, "--http", "", "--s3", "",
			"--shards", fmt.Sprint(c.shards), "--cluster-id", fmt.Sprint(m.id), "--cluster-peers", strings.Join(peers, ","))
		m.ready, m.done = make(chan struct{}), make(chan struct{})
		pipe, err := m.cmd.StderrPipe()
		if err != nil {
			return err
		}
		if err := m.cmd.Start(); err != nil {
			return err
		}
		logf, err := os.Create(filepath.Join(c.dir, fmt.Sprintf("member-%d.log", m.id)))
		if err != nil {
			return err
		}
		go func() {
			defer close(m.done)
			defer logf.Close()
			sc := bufio.NewScanner(pipe)
			once := false
			for sc.Scan() {
				fmt.Fprintln(logf, sc.Text())
				if !once && strings.Contains(sc.Text(), "msg=ready") {
					once = true
					close(m.ready)
				}
			}
		}()
		select {
		case <-m.ready:
			log.Info("member ready", "id", m.id, "resp", m.resp, "pid", m.cmd.Process.Pid, "log", filepath.Join(c.dir, fmt.Sprintf("member-%d.log", m.id)))
			return nil
		case <-m.done:
			return fmt.Errorf("member %d exited; see %s", m.id, filepath.Join(c.dir, fmt.Sprintf("member-%d.log", m.id)))
		case <-time.After(30 * time.Second):
			return fmt.Errorf("member %d not ready in 30s", m.id)
		}
	}
	stopAll := func() {
		for _, m := range ms {
			if m.cmd != nil && m.cmd.ProcessState == nil {
				_ = m.cmd.Process.Signal(syscall.SIGTERM)
				<-m.done
				_ = m.cmd.Wait()
			}
		}
	}
	defer stopAll()
	for _, m := range ms {
		if err := start(m); err != nil {
			return err
		}
	}
	var addrs []string
	for _, m := range ms {
		addrs = append(addrs, m.resp)
	}
	// go-redis learns a dead leader's successor when it reloads the
	// slots: on MOVED, and every ClusterStateReloadInterval (60 s by
	// default, too slow to show a failover).
	rc := redis.NewClusterClient(&redis.ClusterOptions{Addrs: addrs, ClusterStateReloadInterval: 250 * time.Millisecond, MaxRedirects: 8})
	defer rc.Close()
	if err := waitServed(ctx, rc); err != nil {
		return err
	}
	if err := printShards(ctx, stdout, rc, ms); err != nil {
		return err
	}
	began := time.Now()
	acked := make(map[string]string, c.keys)
	for i := range c.keys {
		k, v := fmt.Sprintf("demo:%d", i), fmt.Sprintf("value-%d", i)
		if err := rc.Set(ctx, k, v, 0).Err(); err != nil {
			return fmt.Errorf("SET %s: %w", k, err)
		}
		acked[k] = v
	}
	took := time.Since(began)
	fmt.Fprintf(stdout, "wrote %d keys through ClusterClient in %v (%.0f SET/s, one at a time, each acknowledged by a majority)\n", c.keys, took.Round(time.Millisecond), float64(c.keys)/took.Seconds())

	victim, slot, err := leaderOf(ctx, rc, ms, "demo:0")
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "SIGKILL member %d (pid %d), leader of slot %d, which holds demo:0\n", victim.id, victim.cmd.Process.Pid, slot)
	_ = victim.cmd.Process.Kill()
	<-victim.done
	_ = victim.cmd.Wait()
	killed := time.Now()
	for {
		err := rc.Set(ctx, "demo:0", "after-failover", 0).Err()
		if err == nil {
			break
		}
		if time.Since(killed) > 30*time.Second {
			return fmt.Errorf("demo:0 not writable 30s after the kill: %w", err)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		time.Sleep(10 * time.Millisecond)
	}
	failover := time.Since(killed)
	acked["demo:0"] = "after-failover"
	fmt.Fprintf(stdout, "demo:0 writable again after %v, on a new leader\n", failover.Round(time.Millisecond))
	if err := printShards(ctx, stdout, rc, ms); err != nil {
		return err
	}
	for k, v := range acked {
		got, err := rc.Get(ctx, k).Result()
		if err != nil || got != v {
			return fmt.Errorf("acknowledged %s=%q reads %q, %v", k, v, got, err)
		}
	}
	fmt.Fprintf(stdout, "all %d acknowledged writes read back\n", len(acked))

	if err := start(victim); err != nil {
		return err
	}
	replica := redis.NewClient(&redis.Options{Addr: victim.resp})
	defer replica.Close()
	if err := replica.Do(ctx, "READONLY").Err(); err != nil {
		return err
	}
	restarted := time.Now()
	for k, v := range acked {
		for {
			got, err := replica.Get(ctx, k).Result()
			if err == nil && got == v {
				break
			}
			if time.Since(restarted) > 30*time.Second {
				return fmt.Errorf("member %d's replica has %s=%q (%v), not %q, 30s after restart", victim.id, k, got, err, v)
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	fmt.Fprintf(stdout, "member %d restarted and caught up in %v: its replica (READONLY) holds every write\n", victim.id, time.Since(restarted).Round(time.Millisecond))
	fmt.Fprintf(stdout, "cluster: keys=%d failover_ms=%d catch_up_ms=%d\n", c.keys, failover.Milliseconds(), time.Since(restarted).Milliseconds())
	if c.keep {
		fmt.Fprintf(stdout, "running; try: redis-cli -c -p %s  (Ctrl-C stops the members)\n", ms[0].resp[strings.LastIndex(ms[0].resp, ":")+1:])
		<-ctx.Done()
	}
	return nil
}

// waitServed waits until every slot has a leader.
func waitServed(ctx context.Context, rc *redis.ClusterClient) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		shards, err := rc.ClusterShards(ctx).Result()
		n := 0
		for _, sh := range shards {
			if leaderNode(sh) != nil {
				for _, r := range sh.Slots {
					n += int(r.End - r.Start + 1)
				}
			}
		}
		if err == nil && n == 16384 {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("slots not all served in 30s (%d served): %v", n, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// leaderNode is the shard's leader (its master), or nil.
func leaderNode(sh redis.ClusterShard) *redis.Node {
	for i := range sh.Nodes {
		if sh.Nodes[i].Role == "master" {
			return &sh.Nodes[i]
		}
	}
	return nil
}

func memberAt(ms []*member, addr string) *member {
	for _, m := range ms {
		if m.resp == addr {
			return m
		}
	}
	return nil
}

// printShards prints each shard's slots and its leader.
func printShards(ctx context.Context, w io.Writer, rc *redis.ClusterClient, ms []*member) error {
	shards, err := rc.ClusterShards(ctx).Result()
	if err != nil {
		return err
	}
	for i, sh := range shards {
		leader := "none"
		if n := leaderNode(sh); n != nil {
			if m := memberAt(ms, fmt.Sprintf("%s:%d", n.IP, n.Port)); m != nil {
				leader = fmt.Sprint("member ", m.id)
			}
		}
		fmt.Fprintf(w, "shard %d: slots %v, leader %s, %d replicas\n", i, sh.Slots, leader, len(sh.Nodes))
	}
	return nil
}

// leaderOf returns the member leading key's slot, and the slot.
func leaderOf(ctx context.Context, rc *redis.ClusterClient, ms []*member, key string) (*member, int64, error) {
	slot, err := rc.ClusterKeySlot(ctx, key).Result()
	if err != nil {
		return nil, 0, err
	}
	shards, err := rc.ClusterShards(ctx).Result()
	if err != nil {
		return nil, 0, err
	}
	for _, sh := range shards {
		for _, r := range sh.Slots {
			if r.Start <= slot && slot <= r.End {
				if n := leaderNode(sh); n != nil {
					if m := memberAt(ms, fmt.Sprintf("%s:%d", n.IP, n.Port)); m != nil {
						return m, slot, nil
					}
				}
			}
		}
	}
	return nil, 0, fmt.Errorf("no leader for slot %d", slot)
}
