package raftbench

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// SystemEtcdProcs is etcd as three processes on loopback, each one
// embedded member, written with clientv3 from the benchmark's process: the
// like-for-like peer of ours-procs. It runs only when asked for (Systems).
const SystemEtcdProcs = "etcd-procs"

// etcdMemberEnv carries a member's configuration to a process started as
// one (MaybeRunEtcdMember).
const etcdMemberEnv = "RAFTBENCH_ETCD_MEMBER"

// etcdMember is one member's configuration.
type etcdMember struct {
	Name, Dir, Peer, Client, InitialCluster, Token string
}

// MaybeRunEtcdMember runs this process as one etcd member when it was
// started as one (by SystemEtcdProcs): it serves until killed, and never
// returns. Otherwise it returns at once. The bench command and the tests
// call it first.
func MaybeRunEtcdMember() {
	v := os.Getenv(etcdMemberEnv)
	if v == "" {
		return
	}
	var m etcdMember
	if err := json.Unmarshal([]byte(v), &m); err != nil {
		fmt.Fprintln(os.Stderr, "etcd member:", err)
		os.Exit(2)
	}
	peer, err1 := url.Parse(m.Peer)
	client, err2 := url.Parse(m.Client)
	if err := errors.Join(err1, err2); err != nil {
		fmt.Fprintln(os.Stderr, "etcd member:", err)
		os.Exit(2)
	}
	cfg := embed.NewConfig()
	cfg.Name, cfg.Dir = m.Name, m.Dir
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*peer}, []url.URL{*peer}
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*client}, []url.URL{*client}
	cfg.InitialCluster, cfg.InitialClusterToken = m.InitialCluster, m.Token
	cfg.ClusterState = embed.ClusterStateFlagNew
	cfg.LogLevel = "error"
	cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, "etcd member:", err)
		os.Exit(2)
	}
	<-e.Server.ReadyNotify()
	fmt.Println("ready")
	select {}
}

// etcdProcs is three etcd member processes.
type etcdProcs struct {
	cmds []*exec.Cmd
	etcdClients
	metrics []string
	// endpoints are the members' client addresses (host:port), lead the
	// index of the one that led when they started.
	endpoints []string
	lead      int
}

func startEtcdProcs(ctx context.Context, dir string, concurrency int) (*etcdProcs, error) {
	urls, err := freeURLs(6)
	if err != nil {
		return nil, err
	}
	names := []string{"m1", "m2", "m3"}
	var initial []string
	for i, n := range names {
		initial = append(initial, n+"="+urls[i].String())
	}
	token := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	c := &etcdProcs{lead: -1}
	var endpoints []string
	for i, n := range names {
		b, _ := json.Marshal(etcdMember{Name: n, Dir: filepath.Join(dir, n), Peer: urls[i].String(),
			Client: urls[3+i].String(), InitialCluster: strings.Join(initial, ","), Token: token})
		cmd := exec.Command(os.Args[0], "-test.run=^$")
		cmd.Env = append(os.Environ(), etcdMemberEnv+"="+string(b))
		out, err := cmd.StdoutPipe()
		if err != nil {
			c.Close()
			return nil, err
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			c.Close()
			return nil, fmt.Errorf("start etcd member %s: %w", n, err)
		}
		c.cmds = append(c.cmds, cmd)
		go func() {
			// Drain the member's stdout so that it never blocks.
			sc := bufio.NewScanner(out)
			for sc.Scan() {
			}
		}()
		endpoints = append(endpoints, urls[3+i].Host)
		c.metrics = append(c.metrics, urls[3+i].String()+"/metrics")
	}
	c.endpoints = endpoints
	// The leader, once every member answers.
	var lead string
	deadline := time.Now().Add(60 * time.Second)
	for lead == "" {
		if err := ctx.Err(); err != nil {
			c.Close()
			return nil, err
		}
		if time.Now().After(deadline) {
			c.Close()
			return nil, errors.New("etcd processes elected no leader within 60s")
		}
		for _, ep := range endpoints {
			cl, err := clientv3.New(clientv3.Config{Endpoints: []string{ep}, DialTimeout: time.Second, Logger: zap.NewNop()})
			if err != nil {
				continue
			}
			sctx, cancel := context.WithTimeout(ctx, time.Second)
			st, err := cl.Status(sctx, ep)
			cancel()
			cl.Close()
			if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
				lead = ep
				c.lead = slices.Index(endpoints, ep)
			}
		}
		if lead == "" {
			time.Sleep(20 * time.Millisecond)
		}
	}
	if c.etcdClients, err = dialEtcd(lead, concurrency); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Fsyncs sums the members' WAL fsync counts, scraped from their /metrics.
func (c *etcdProcs) Fsyncs() (uint64, error) {
	var total uint64
	for _, u := range c.metrics {
		resp, err := http.Get(u)
		if err != nil {
			return 0, err
		}
		found := false
		sc := bufio.NewScanner(resp.Body)
		for sc.Scan() {
			line := sc.Text()
			if v, ok := strings.CutPrefix(line, "etcd_disk_wal_fsync_duration_seconds_count "); ok {
				n, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err == nil {
					total += uint64(n)
					found = true
				}
			}
		}
		resp.Body.Close()
		if !found {
			return 0, fmt.Errorf("%s: no etcd_disk_wal_fsync_duration_seconds_count", u)
		}
	}
	return total, nil
}

func (c *etcdProcs) Close() error {
	c.etcdClients.close()
	for _, cmd := range c.cmds {
		_ = cmd.Process.Kill()
		_ = cmd.Wait()
	}
	return nil
}

// EtcdProcs is etcd-procs' cluster for other benchmarks: three etcd member
// processes on loopback (fdatasync on, their default settings), written
// through the leader. The binary that starts them must call
// MaybeRunEtcdMember first thing in main (or TestMain): each member is that
// binary started again.
type EtcdProcs struct{ c *etcdProcs }

// StartEtcdProcs starts three members with their data under dir, waits
// for a leader and dials it with a gRPC connection per 16 of concurrency
// clients.
func StartEtcdProcs(ctx context.Context, dir string, concurrency int) (*EtcdProcs, error) {
	c, err := startEtcdProcs(ctx, dir, concurrency)
	if err != nil {
		return nil, err
	}
	return &EtcdProcs{c}, nil
}

// Put writes key through the leader the cluster started with, on client's
// connection (client < the concurrency it was started for).
func (e *EtcdProcs) Put(ctx context.Context, client int, key, value []byte) error {
	return e.c.Put(ctx, client, key, value)
}

// Endpoints returns the members' client addresses (host:port), member i
// at index i.
func (e *EtcdProcs) Endpoints() []string { return slices.Clone(e.c.endpoints) }

// Leader returns the index of the member that led when the cluster
// started.
func (e *EtcdProcs) Leader() int { return e.c.lead }

// PIDs returns the members' process IDs, member i at index i.
func (e *EtcdProcs) PIDs() []int {
	out := make([]int, len(e.c.cmds))
	for i, cmd := range e.c.cmds {
		out[i] = cmd.Process.Pid
	}
	return out
}

// Kill sends member i SIGKILL and waits for it to exit.
func (e *EtcdProcs) Kill(i int) error {
	cmd := e.c.cmds[i]
	if err := cmd.Process.Kill(); err != nil {
		return err
	}
	_ = cmd.Wait()
	return nil
}

// Close closes the connections and kills the members still running.
func (e *EtcdProcs) Close() error { return e.c.Close() }
