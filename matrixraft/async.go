package matrixraft

import (
	"context"
	"sync"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
)

// With Options.AsyncStorageWrites, raft hands local storage work to the
// node as messages (see raft's doc.go): MsgStorageAppend to persist
// entries, the HardState and a snapshot, and MsgStorageApply to apply
// committed entries, each carrying the responses to deliver once done.
// Appends run on their own goroutine, in order, so the loop keeps taking
// Readys — and proposals keep batching — while an fsync is in flight.
// Applies stay on the loop, which owns the state machine, the membership
// and the reads. A received snapshot is persisted by the append goroutine
// and then restored by the loop before raft hears that it is durable, so
// no later entry is applied before it.

// appendQueue is the append goroutine's unbounded FIFO: the loop never
// blocks on it.
type appendQueue struct {
	mu     sync.Mutex
	msgs   []*pb.Message
	closed bool
	wake   chan struct{} // capacity 1
}

func newAppendQueue() *appendQueue { return &appendQueue{wake: make(chan struct{}, 1)} }

func (q *appendQueue) push(m *pb.Message) {
	q.mu.Lock()
	q.msgs = append(q.msgs, m)
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// popAll waits for messages and returns every queued one, or nil once the
// queue is closed.
func (q *appendQueue) popAll() []*pb.Message {
	for {
		q.mu.Lock()
		if len(q.msgs) > 0 {
			out := q.msgs
			q.msgs = nil
			q.mu.Unlock()
			return out
		}
		if q.closed {
			q.mu.Unlock()
			return nil
		}
		q.mu.Unlock()
		<-q.wake
	}
}

func (q *appendQueue) close() {
	q.mu.Lock()
	q.closed = true
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// restoreReq asks the loop to restore a snapshot the append goroutine made
// durable.
type restoreReq struct {
	snap *pb.Snapshot
	done chan error
}

// appendLoop persists MsgStorageAppend messages in order and then delivers
// their responses: to this node's raft, or over the transport.
func (n *Node) appendLoop() {
	defer close(n.appendDone)
	for {
		msgs := n.appendq.popAll()
		if msgs == nil {
			return
		}
		// Runs of appends without a snapshot are written together: one
		// log write and one fsync for every Ready queued meanwhile.
		for len(msgs) > 0 {
			k := 0
			for k < len(msgs) && (msgs[k].GetSnapshot() == nil || raft.IsEmptySnap(msgs[k].GetSnapshot())) {
				k++
			}
			var err error
			if k == 0 {
				err, k = n.persistAppend(msgs[0]), 1
			} else {
				err = n.persistAppends(msgs[:k])
			}
			if err != nil {
				n.fail(err)
				select {
				case n.appendErr <- err:
				default:
				}
				return
			}
			msgs = msgs[k:]
		}
	}
}

// appendHardState is the HardState an append message carries, or nil.
func appendHardState(m *pb.Message) *pb.HardState {
	if m.Term == nil && m.Vote == nil && m.Commit == nil {
		return nil
	}
	return &pb.HardState{Term: new(m.GetTerm()), Vote: new(m.GetVote()), Commit: new(m.GetCommit())}
}

// persistAppends persists appends without snapshots in one log write, then
// delivers their responses in order.
func (n *Node) persistAppends(msgs []*pb.Message) error {
	if len(msgs) == 1 {
		return n.persistAppend(msgs[0])
	}
	reqs := make([]saveReq, len(msgs))
	for i, m := range msgs {
		reqs[i] = saveReq{hs: appendHardState(m), ents: m.GetEntries()}
	}
	if n.opts.beforeSave != nil {
		n.opts.beforeSave()
	}
	start := time.Now()
	if err := n.storage.saveBatch(context.Background(), reqs); err != nil {
		return err
	}
	n.metrics.saveLatency.observe(time.Since(start))
	for _, m := range msgs {
		n.deliverResponses(m)
	}
	return nil
}

func (n *Node) persistAppend(m *pb.Message) error {
	hs := appendHardState(m)
	snap := m.GetSnapshot()
	hasSnap := snap != nil && !raft.IsEmptySnap(snap)
	mustSync := len(m.GetEntries()) > 0 || hasSnap || n.storage.termOrVoteChanged(hs)
	if n.opts.beforeSave != nil {
		n.opts.beforeSave()
	}
	start := time.Now()
	if err := n.storage.Save(context.Background(), hs, m.GetEntries(), snap, mustSync); err != nil {
		return err
	}
	if len(m.GetEntries()) > 0 || mustSync {
		n.metrics.saveLatency.observe(time.Since(start))
	}
	if hasSnap {
		req := &restoreReq{snap: snap, done: make(chan error, 1)}
		select {
		case n.restorec <- req:
		case <-n.loopDone:
			return nil
		}
		select {
		case err := <-req.done:
			if err != nil {
				return err
			}
		case <-n.loopDone:
			return nil
		}
	}
	n.deliverResponses(m)
	return nil
}

// deliverResponses hands an append's responses on, once it is durable.
func (n *Node) deliverResponses(m *pb.Message) {
	var remote []*pb.Message
	for _, r := range m.GetResponses() {
		if r.GetTo() == n.id {
			// Local responses (MsgStorageAppendResp, the leader's own
			// MsgAppResp) go straight to raft; after Stop this fails
			// harmlessly.
			_ = n.rn.Step(context.Background(), r)
			continue
		}
		remote = append(remote, r)
	}
	n.send(remote)
}

// handleReadyAsync is handleReady for AsyncStorageWrites: network messages
// go out at once (raft holds back those that wait for the disk as
// responses), appends are queued, applies done here.
func (n *Node) handleReadyAsync(rd raft.Ready) error {
	start := time.Now()
	n.observe(rd)
	var out, applies []*pb.Message
	for _, m := range rd.Messages {
		switch m.GetTo() {
		case raft.LocalAppendThread:
			n.appendq.push(m)
		case raft.LocalApplyThread:
			applies = append(applies, m)
		default:
			out = append(out, m)
		}
	}
	n.send(out)
	for _, m := range applies {
		if err := n.apply(m.GetEntries()); err != nil {
			return err
		}
		for _, r := range m.GetResponses() {
			_ = n.rn.Step(context.Background(), r)
		}
	}
	// raft takes the step on its own goroutine, so a conf change may
	// still race it; a replaced one is answered ErrProposalDropped.
	n.advanced.Store(n.applied.Load())
	n.afterApply(rd)
	if err := n.maybeSnapshot(); err != nil {
		return err
	}
	n.metrics.readyEntries.Add(uint64(len(rd.Entries)))
	if len(rd.Entries) > 0 {
		n.metrics.readySizes.observe(uint64(len(rd.Entries)))
	}
	n.metrics.readies.Add(1)
	n.metrics.readyLatency.observe(time.Since(start))
	return nil
}

// restoreDurable restores a snapshot the append goroutine made durable.
func (n *Node) restoreDurable(req *restoreReq) error {
	t := time.Now()
	err := n.restore(req.snap)
	if err == nil {
		n.metrics.snapshotApplyLatency.observe(time.Since(t))
		n.metrics.snapshotsInstalled.Add(1)
		for id, addr := range n.rep.addrs {
			if id != n.id {
				n.tr.AddPeer(id, addr)
			}
		}
		n.serveReads()
	}
	req.done <- err
	return err
}
