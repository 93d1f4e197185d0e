package matrixraft

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"
)

// benchGroups is a set of 3-voter groups, durable (fdatasync on), either
// on three Hosts (one shared log per "machine") or with a log per node.
type benchGroups struct {
	nodes  [][]*Node // [group][replica]
	hosts  []*Host
	shared bool
}

func startBenchGroups(b *testing.B, groups int, shared bool) *benchGroups {
	bg := &benchGroups{shared: shared}
	peers := []Peer{{ID: 1, Addr: "n1"}, {ID: 2, Addr: "n2"}, {ID: 3, Addr: "n3"}}
	if shared {
		for range 3 {
			h, err := OpenHost(b.TempDir(), HostOptions{})
			if err != nil {
				b.Fatal(err)
			}
			bg.hosts = append(bg.hosts, h)
		}
	}
	for g := range groups {
		nw := NewMemNetwork(uint64(g + 1))
		var ns []*Node
		for i := range 3 {
			id := uint64(i + 1)
			o := Options{
				ID: id, Peers: peers, StateMachine: newKV(), Transport: nw.Transport(id),
				TickInterval: 10 * time.Millisecond, Storage: StorageOptions{Group: uint64(g + 1)},
			}
			var n *Node
			var err error
			if shared {
				n, err = bg.hosts[i].StartNode(o)
			} else {
				o.Dir = b.TempDir()
				n, err = StartNode(o)
			}
			if err != nil {
				b.Fatal(err)
			}
			ns = append(ns, n)
		}
		bg.nodes = append(bg.nodes, ns)
	}
	return bg
}

func (bg *benchGroups) leader(g int) *Node {
	for _, n := range bg.nodes[g] {
		if n.Leader() == n.ID() {
			return n
		}
	}
	return nil
}

// fsyncs returns the fdatasyncs of every log.
func (bg *benchGroups) fsyncs() uint64 {
	var total uint64
	if bg.shared {
		for _, h := range bg.hosts {
			total += h.Stats().Fsyncs
		}
		return total
	}
	for _, ns := range bg.nodes {
		for _, n := range ns {
			total += n.Status().WAL.Fsyncs
		}
	}
	return total
}

func (bg *benchGroups) stop() {
	for _, ns := range bg.nodes {
		for _, n := range ns {
			n.Stop()
		}
	}
	for _, h := range bg.hosts {
		h.Close()
	}
}

// BenchmarkHostGroupCommit writes 16-byte commands to 16 groups at once,
// 8 writers per group, with every group's logs on three shared Host logs
// against a log of its own per node. An op is one command applied on its
// leader; fsyncs/op counts every fdatasync of every log.
func BenchmarkHostGroupCommit(b *testing.B) {
	const groups, writers = 16, 8
	for _, shared := range []bool{true, false} {
		name := map[bool]string{true: "shared", false: "separate"}[shared]
		b.Run(fmt.Sprintf("%s/groups=%d/writers=%d", name, groups, writers), func(b *testing.B) {
			bg := startBenchGroups(b, groups, shared)
			defer bg.stop()
			deadline := time.Now().Add(30 * time.Second)
			for g := range groups {
				for bg.leader(g) == nil {
					if time.Now().After(deadline) {
						b.Fatalf("group %d elected no leader", g)
					}
					time.Sleep(time.Millisecond)
				}
			}
			ctx := context.Background()
			work := make(chan struct{})
			var wg sync.WaitGroup
			var failed sync.Once
			for g := range groups {
				for range writers {
					wg.Go(func() {
						cmd := kvCmd('p', "k", "0123456789abcdef")
						for range work {
							lead := bg.leader(g)
							if lead == nil {
								continue
							}
							// A proposal lost in a leader change never
							// completes: give up on it after a while.
							pctx, cancel := context.WithTimeout(ctx, 5*time.Second)
							_, err := lead.Propose(pctx, cmd)
							cancel()
							if err != nil && !errors.Is(err, ErrNotLeader) && !errors.Is(err, ErrProposalDropped) && !errors.Is(err, context.DeadlineExceeded) {
								failed.Do(func() { b.Error(err) })
							}
						}
					})
				}
			}
			before := bg.fsyncs()
			start := time.Now()
			var ops int
			for b.Loop() {
				work <- struct{}{}
				ops++
			}
			close(work)
			wg.Wait()
			elapsed := time.Since(start)
			fsyncs := bg.fsyncs() - before
			b.ReportMetric(float64(ops)/elapsed.Seconds(), "writes/s")
			b.ReportMetric(float64(fsyncs)/float64(ops), "fsyncs/op")
		})
	}
}
