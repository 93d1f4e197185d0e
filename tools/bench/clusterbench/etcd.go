package clusterbench

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"

	"github.com/temporalstore/temporalstore-go/tools/bench/raftbench"
)

// etcdCluster is raftbench's three etcd member processes (etcd-procs),
// written through the leader with clientv3 as that benchmark writes them.
type etcdCluster struct {
	*raftbench.EtcdProcs
	dead []bool
}

func startEtcd(ctx context.Context, dir string, concurrency int) (*etcdCluster, error) {
	p, err := raftbench.StartEtcdProcs(ctx, dir, concurrency)
	if err != nil {
		return nil, err
	}
	return &etcdCluster{EtcdProcs: p, dead: make([]bool, len(p.Endpoints()))}, nil
}

// dialEtcdClient opens a clientv3 client to endpoints.
func dialEtcdClient(endpoints ...string) (*clientv3.Client, error) {
	return clientv3.New(clientv3.Config{Endpoints: endpoints, DialTimeout: 5 * time.Second, Logger: zap.NewNop()})
}

// PIDs returns the member processes still running.
func (e *etcdCluster) PIDs() []int {
	var out []int
	for i, pid := range e.EtcdProcs.PIDs() {
		if !e.dead[i] {
			out = append(out, pid)
		}
	}
	return out
}

// Kill kills member i.
func (e *etcdCluster) Kill(i int) error {
	e.dead[i] = true
	return e.EtcdProcs.Kill(i)
}

// leader asks each member still running for its status and returns the
// index and member ID of the one that leads.
func (e *etcdCluster) leader(ctx context.Context) (int, uint64, error) {
	eps := e.Endpoints()
	for i, ep := range eps {
		if e.dead[i] {
			continue
		}
		cl, err := dialEtcdClient(ep)
		if err != nil {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, time.Second)
		st, err := cl.Status(sctx, ep)
		cancel()
		cl.Close()
		if err == nil && st.Leader != 0 && st.Leader == st.Header.MemberId {
			return i, st.Leader, nil
		}
	}
	return -1, 0, errors.New("no etcd member leads")
}

// newLeader reports whether a running member other than old leads,
// asking through cl (a client of every endpoint).
func (e *etcdCluster) newLeader(ctx context.Context, cl *clientv3.Client, old uint64) bool {
	for i, ep := range e.Endpoints() {
		if e.dead[i] {
			continue
		}
		sctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		st, err := cl.Status(sctx, ep)
		cancel()
		if err == nil && st.Leader != 0 && st.Leader != old {
			return true
		}
	}
	return false
}

// etcdGetOp returns a read of key i of keys through cl, serializable (the
// member's own state) or linearizable, checking the value.
func etcdGetOp(cl *clientv3.Client, keys []string, value []byte, serializable bool) func(ctx context.Context, client int) error {
	var opts []clientv3.OpOption
	if serializable {
		opts = append(opts, clientv3.WithSerializable())
	}
	var next atomic.Uint64
	return func(ctx context.Context, _ int) error {
		k := keys[(next.Add(1)-1)%uint64(len(keys))]
		res, err := cl.Get(ctx, k, opts...)
		if err != nil {
			return err
		}
		if len(res.Kvs) != 1 || len(res.Kvs[0].Value) != len(value) {
			return errMiss
		}
		return nil
	}
}

// waitEtcdKeys waits until cl (serializable) sees every key of keys.
func waitEtcdKeys(ctx context.Context, cl *clientv3.Client, keys []string) error {
	deadline := time.Now().Add(10 * time.Second)
	for _, k := range keys {
		for {
			res, err := cl.Get(ctx, k, clientv3.WithSerializable())
			if err == nil && len(res.Kvs) == 1 {
				break
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if time.Now().After(deadline) {
				return fmt.Errorf("etcd follower lacks %s 10s after it was written: %v", k, err)
			}
			time.Sleep(5 * time.Millisecond)
		}
	}
	return nil
}
