package raftbench

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.etcd.io/etcd/server/v3/embed"
	"go.uber.org/zap"
)

// clientsPerConn is how many clients share one gRPC connection to etcd.
const clientsPerConn = 16

// etcdClients are the benchmark's clientv3 connections to one member,
// client i writing through connection i/clientsPerConn.
type etcdClients []*clientv3.Client

// dialEtcd opens the connections concurrency clients share at endpoint.
func dialEtcd(endpoint string, concurrency int) (etcdClients, error) {
	var cs etcdClients
	for range (concurrency + clientsPerConn - 1) / clientsPerConn {
		cl, err := clientv3.New(clientv3.Config{Endpoints: []string{endpoint}, DialTimeout: 10 * time.Second, Logger: zap.NewNop()})
		if err != nil {
			cs.close()
			return nil, err
		}
		cs = append(cs, cl)
	}
	return cs, nil
}

func (cs etcdClients) Put(ctx context.Context, client int, key, value []byte) error {
	_, err := cs[client/clientsPerConn].Put(ctx, string(key), string(value))
	return err
}

func (cs etcdClients) close() {
	for _, cl := range cs {
		cl.Close()
	}
}

// etcdCluster is three embedded etcd members on loopback TCP.
type etcdCluster struct {
	members []*embed.Etcd
	etcdClients
}

func freeURLs(n int) ([]url.URL, error) {
	addrs, err := benchkit.FreeAddrs(n)
	if err != nil {
		return nil, err
	}
	out := make([]url.URL, n)
	for i, a := range addrs {
		out[i] = url.URL{Scheme: "http", Host: a}
	}
	return out, nil
}

func startEtcd(ctx context.Context, dir string, concurrency int) (*etcdCluster, error) {
	urls, err := freeURLs(6)
	if err != nil {
		return nil, err
	}
	names := []string{"m1", "m2", "m3"}
	var initial []string
	for i, n := range names {
		initial = append(initial, n+"="+urls[i].String())
	}
	c := &etcdCluster{}
	token := fmt.Sprintf("bench-%d", time.Now().UnixNano())
	for i, n := range names {
		cfg := embed.NewConfig()
		cfg.Name = n
		cfg.Dir = filepath.Join(dir, n)
		cfg.ListenPeerUrls = []url.URL{urls[i]}
		cfg.AdvertisePeerUrls = []url.URL{urls[i]}
		cfg.ListenClientUrls = []url.URL{urls[3+i]}
		cfg.AdvertiseClientUrls = []url.URL{urls[3+i]}
		cfg.InitialCluster = strings.Join(initial, ",")
		cfg.InitialClusterToken = token
		cfg.ClusterState = embed.ClusterStateFlagNew
		cfg.LogLevel = "error"
		cfg.ZapLoggerBuilder = embed.NewZapLoggerBuilder(zap.NewNop())
		e, err := embed.StartEtcd(cfg)
		if err != nil {
			c.Close()
			return nil, fmt.Errorf("start etcd member %s: %w", n, err)
		}
		c.members = append(c.members, e)
	}
	for _, e := range c.members {
		select {
		case <-e.Server.ReadyNotify():
		case <-time.After(60 * time.Second):
			c.Close()
			return nil, errors.New("etcd member not ready within 60s")
		case <-ctx.Done():
			c.Close()
			return nil, ctx.Err()
		}
	}
	var lead *embed.Etcd
	deadline := time.Now().Add(30 * time.Second)
	for lead == nil {
		for _, e := range c.members {
			if e.Server.Leader() == e.Server.MemberID() {
				lead = e
			}
		}
		if lead == nil {
			if time.Now().After(deadline) {
				c.Close()
				return nil, errors.New("etcd elected no leader within 30s")
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	if c.etcdClients, err = dialEtcd(lead.Clients[0].Addr().String(), concurrency); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Fsyncs reads etcd's WAL fsync histogram. Its metrics are registered on
// Prometheus' default registry, shared by the members of this process, so
// the count is the three members' total.
func (c *etcdCluster) Fsyncs() (uint64, error) {
	mfs, err := prometheus.DefaultGatherer.Gather()
	if err != nil {
		return 0, err
	}
	for _, mf := range mfs {
		if mf.GetName() == "etcd_disk_wal_fsync_duration_seconds" {
			var n uint64
			for _, m := range mf.GetMetric() {
				n += m.GetHistogram().GetSampleCount()
			}
			return n, nil
		}
	}
	return 0, errors.New("etcd_disk_wal_fsync_duration_seconds not registered")
}

func (c *etcdCluster) Close() error {
	c.etcdClients.close()
	for _, e := range c.members {
		e.Close()
	}
	return nil
}
