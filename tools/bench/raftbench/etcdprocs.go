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
	c := &etcdProcs{}
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
