package raftbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/temporalstore/temporalstore-go/examples/raft-kv/kvwire"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// SystemOursProcs is ours as three processes of examples/raft-kv over
// tcptransport on loopback, written through their binary protocol
// (kvwire), one connection per clientsPerConn clients as etcd's clients
// share gRPC connections. SystemOursProcsHTTP is the same processes
// written through their HTTP API, one request per write. They run only
// when asked for (Systems).
const (
	SystemOursProcs     = "ours-procs"
	SystemOursProcsHTTP = "ours-procs-http"
)

// procsBinary builds examples/raft-kv once per run.
var procsBinary = struct {
	once sync.Once
	path string
	err  error
}{}

func raftKVBinary(dir string) (string, error) {
	procsBinary.once.Do(func() {
		procsBinary.path, procsBinary.err = benchkit.BuildExample(dir, "./examples/raft-kv", "raftbench-raft-kv")
	})
	return procsBinary.path, procsBinary.err
}

// procsCluster is three raft-kv processes.
type procsCluster struct {
	cmds   []*exec.Cmd
	http   []string
	kv     []string
	client *http.Client
	mu     sync.Mutex
	lead   int
	// wire holds the kvwire connections to the leader (nil: write over
	// HTTP), client i using wire[i/clientsPerConn].
	wire []*kvwire.Client
}

func startProcs(ctx context.Context, dir string, concurrency int, overHTTP bool) (*procsCluster, error) {
	bin, err := raftKVBinary(filepath.Dir(dir))
	if err != nil {
		return nil, err
	}
	// One call, so no port is handed out twice.
	addrs, err := benchkit.FreeAddrs(9)
	if err != nil {
		return nil, err
	}
	raftAddrs, httpAddrs, kvAddrs := addrs[:3], addrs[3:6], addrs[6:]
	var peers, httpPeers []string
	for i := range 3 {
		peers = append(peers, fmt.Sprintf("%d=%s", i+1, raftAddrs[i]))
		httpPeers = append(httpPeers, fmt.Sprintf("%d=%s", i+1, httpAddrs[i]))
	}
	c := &procsCluster{http: httpAddrs, kv: kvAddrs, client: &http.Client{
		Transport: &http.Transport{MaxIdleConns: concurrency + 8, MaxIdleConnsPerHost: concurrency + 8},
		// A write sent to a follower is redirected: follow it.
		Timeout: 30 * time.Second,
	}}
	for i := range 3 {
		cmd := exec.Command(bin, "--id", fmt.Sprint(i+1), "--peers", strings.Join(peers, ","),
			"--http", httpAddrs[i], "--http-peers", strings.Join(httpPeers, ","), "--kv", kvAddrs[i],
			"--data", filepath.Join(dir, fmt.Sprint(i+1)), "--log-level", "warn")
		cmd.Stdout, cmd.Stderr = io.Discard, io.Discard
		if err := cmd.Start(); err != nil {
			c.Close()
			return nil, err
		}
		c.cmds = append(c.cmds, cmd)
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		if l, err := c.findLeader(ctx); err == nil {
			c.lead = l
			if !overHTTP {
				if err := c.dialWire(ctx, l, (concurrency+clientsPerConn-1)/clientsPerConn); err != nil {
					c.Close()
					return nil, err
				}
			}
			return c, nil
		}
		if time.Now().After(deadline) {
			c.Close()
			return nil, errors.New("raft-kv processes elected no leader within 30s")
		}
		time.Sleep(20 * time.Millisecond)
	}
}

type procStatus struct {
	Node struct {
		IsLeader bool
		Fsyncs   uint64
	}
}

func (c *procsCluster) status(ctx context.Context, i int) (procStatus, error) {
	var st procStatus
	req, _ := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+c.http[i]+"/status", nil)
	res, err := c.client.Do(req)
	if err != nil {
		return st, err
	}
	defer res.Body.Close()
	return st, json.NewDecoder(res.Body).Decode(&st)
}

func (c *procsCluster) findLeader(ctx context.Context) (int, error) {
	for i := range c.http {
		if st, err := c.status(ctx, i); err == nil && st.Node.IsLeader {
			return i, nil
		}
	}
	return 0, errors.New("no leader")
}

// dialWire replaces the kvwire connections with n to member lead.
func (c *procsCluster) dialWire(ctx context.Context, lead, n int) error {
	wire := make([]*kvwire.Client, n)
	for i := range wire {
		kc, err := kvwire.Dial(ctx, c.kv[lead])
		if err != nil {
			for _, kc := range wire[:i] {
				kc.Close()
			}
			return err
		}
		wire[i] = kc
	}
	c.mu.Lock()
	old := c.wire
	c.wire = wire
	c.mu.Unlock()
	for _, kc := range old {
		kc.Close()
	}
	return nil
}

// Put writes through the leader: over kvwire (an answer once applied on
// the leader), or its HTTP API (PUT /kv/{key}, 204 once applied).
func (c *procsCluster) Put(ctx context.Context, client int, key, value []byte) error {
	c.mu.Lock()
	lead, wire := c.lead, c.wire
	c.mu.Unlock()
	if wire != nil {
		err := wire[client/clientsPerConn].Put(ctx, string(key), value)
		if err != nil && ctx.Err() == nil {
			if l, lerr := c.findLeader(ctx); lerr == nil && l != lead {
				c.mu.Lock()
				c.lead = l
				c.mu.Unlock()
				_ = c.dialWire(ctx, l, len(wire))
			}
		}
		return err
	}
	u := "http://" + c.http[lead] + "/kv/" + url.PathEscape(string(key))
	req, err := http.NewRequestWithContext(ctx, http.MethodPut, u, bytes.NewReader(value))
	if err != nil {
		return err
	}
	res, err := c.client.Do(req)
	if err != nil {
		return err
	}
	io.Copy(io.Discard, res.Body)
	res.Body.Close()
	if res.StatusCode != http.StatusNoContent {
		if l, err := c.findLeader(ctx); err == nil {
			c.mu.Lock()
			c.lead = l
			c.mu.Unlock()
		}
		return fmt.Errorf("raft-kv PUT: %s", res.Status)
	}
	return nil
}

// Fsyncs sums the three processes' log fsyncs.
func (c *procsCluster) Fsyncs() (uint64, error) {
	var n uint64
	for i := range c.http {
		st, err := c.status(context.Background(), i)
		if err != nil {
			return 0, err
		}
		n += st.Node.Fsyncs
	}
	return n, nil
}

// Close stops the processes with SIGTERM (a graceful stop) and waits.
func (c *procsCluster) Close() error {
	for _, cmd := range c.cmds {
		_ = cmd.Process.Signal(syscall.SIGTERM)
	}
	var err error
	for _, cmd := range c.cmds {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case <-done:
		case <-time.After(10 * time.Second):
			_ = cmd.Process.Kill()
			err = errors.Join(err, fmt.Errorf("raft-kv %d did not stop on SIGTERM", cmd.Process.Pid))
			<-done
		}
	}
	c.mu.Lock()
	for _, kc := range c.wire {
		kc.Close()
	}
	c.mu.Unlock()
	c.client.CloseIdleConnections()
	return err
}
