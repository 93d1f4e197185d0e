package enginebench

import (
	"context"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"

	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

type etcdPeer struct {
	e *embed.Etcd
	c *clientv3.Client
}

// startEtcd starts a one-member etcd in this process on loopback ports,
// with its data in dir, and a client to it.
func startEtcd(dir string) (*etcdPeer, error) {
	addrs, err := benchkit.FreeAddrs(2)
	if err != nil {
		return nil, err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	cfg := embed.NewConfig()
	cfg.Dir = dir
	// etcd logs errors while it shuts down; they go to a file in its data
	// directory, not into the report.
	cfg.LogLevel = "error"
	cfg.LogOutputs = []string{filepath.Join(dir, "etcd.log")}
	cu, _ := url.Parse("http://" + addrs[0])
	pu, _ := url.Parse("http://" + addrs[1])
	cfg.ListenClientUrls, cfg.AdvertiseClientUrls = []url.URL{*cu}, []url.URL{*cu}
	cfg.ListenPeerUrls, cfg.AdvertisePeerUrls = []url.URL{*pu}, []url.URL{*pu}
	cfg.InitialCluster = cfg.InitialClusterFromName(cfg.Name)
	e, err := embed.StartEtcd(cfg)
	if err != nil {
		return nil, err
	}
	select {
	case <-e.Server.ReadyNotify():
	case <-time.After(30 * time.Second):
		e.Close()
		return nil, fmt.Errorf("etcd did not become ready")
	}
	c, err := clientv3.New(clientv3.Config{Endpoints: []string{cu.String()}, DialTimeout: 5 * time.Second})
	if err != nil {
		e.Close()
		return nil, err
	}
	return &etcdPeer{e: e, c: c}, nil
}

func (p *etcdPeer) put(ctx context.Context, k, v []byte) error {
	_, err := p.c.Put(ctx, string(k), string(v))
	return err
}

func (p *etcdPeer) close() error {
	err := p.c.Close()
	p.e.Close()
	return err
}

// redisMemory starts a redis-server without persistence, loads n keys of
// value bytes, and returns used_memory's growth per key.
func redisMemory(ctx context.Context, dir string, n, value int) (float64, string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return 0, "", err
	}
	addr, stop, err := benchkit.StartRedis(ctx, dir, "--save", "", "--appendonly", "no")
	if err != nil {
		return 0, "", err
	}
	defer stop()
	c := redis.NewClient(&redis.Options{Addr: addr})
	defer c.Close()
	used := func() (int64, string, error) {
		info, err := c.Info(ctx, "memory").Result()
		if err != nil {
			return 0, "", err
		}
		var bytes int64
		var human string
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
				bytes, _ = strconv.ParseInt(v, 10, 64)
			}
			if v, ok := strings.CutPrefix(line, "used_memory_human:"); ok {
				human = v
			}
		}
		return bytes, human, nil
	}
	u0, _, err := used()
	if err != nil {
		return 0, "", err
	}
	rng := newRand(4)
	const batch = 1000
	for i := 0; i < n; i += batch {
		args := []any{}
		for j := i; j < min(i+batch, n); j++ {
			args = append(args, string(keyOf(j)), string(incompressible(rng, value)))
		}
		if err := c.MSet(ctx, args...).Err(); err != nil {
			return 0, "", err
		}
	}
	u1, human, err := used()
	if err != nil {
		return 0, "", err
	}
	return float64(u1-u0) / float64(n), human, nil
}
