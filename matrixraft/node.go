package matrixraft

import (
	"bytes"
	"cmp"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"go.etcd.io/raft/v3"
	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// ReadMode selects the consistency of a Read.
type ReadMode int

const (
	// ReadLinearizable waits until this node has applied everything
	// committed before the call, confirmed through the leader (ReadIndex;
	// the leader's lease when Options.LeaseReads is set).
	ReadLinearizable ReadMode = iota
	// ReadStale returns at once: the local state may lag the cluster.
	ReadStale
	// ReadLease is ReadLinearizable served on the leader's lease when it
	// holds one: a majority of voters answered it within half an election
	// timeout (they elect no other leader before a full one passes, with
	// PreVote and CheckQuorum), and it has applied all it committed; no
	// round to a quorum then. Correct while clocks drift less than half an
	// election timeout; anywhere else it is ReadLinearizable.
	ReadLease
)

type result struct {
	val []byte
	err error
}

type readReq struct {
	done chan error
}

type readBatch struct {
	id     uint64
	reqs   []*readReq
	issued uint64 // tick count when sent
}

type appliedWait struct {
	index uint64
	reqs  []*readReq
}

// Node is one member of a raft group: it runs the Ready loop, persists to
// Storage, applies to the StateMachine and moves messages over the
// Transport.
type Node struct {
	opts    Options
	id      uint64
	rn      raft.Node
	storage *Storage
	sm      StateMachine
	tr      Transport

	propSem chan struct{}
	tickc   chan struct{}
	readc   chan *readReq
	stopc   chan struct{}
	donec   chan struct{}
	stopOne sync.Once

	nextReq atomic.Uint64
	wmu     sync.Mutex
	waiters map[uint64]chan result

	leader  atomic.Uint64
	term    atomic.Uint64
	applied atomic.Uint64
	removed atomic.Bool
	failure atomic.Pointer[error]

	lmu        sync.Mutex
	leaderWake chan struct{} // closed and replaced on every leader change

	// Membership changes go one at a time per node (confMu). raft's leader
	// silently replaces a conf change with an empty entry while an earlier
	// one may be unapplied, so a change is proposed only once raft has
	// been told of an applied index at confBarrier (this leader's first
	// entry, the last conf change appended; 0 when not leading); advanced
	// is that told index. confQueue (under wmu) holds, in order, the
	// requests of this node's conf changes raft has taken but not yet
	// appended, so a replaced one is answered ErrProposalDropped.
	confMu      sync.Mutex
	confBarrier atomic.Uint64
	advanced    atomic.Uint64
	confQueue   []uint64

	snapDone chan error // a background snapshot write finished
	sendMu   sync.Mutex // one Transport.Send at a time
	// snapReq carries a Host's requests for a snapshot before
	// SnapshotEntries: the group holds the shared log back.
	snapReq chan struct{}

	// AsyncStorageWrites only: the append goroutine's queue, its snapshot
	// restores for the loop, its failure, and its end.
	appendq    *appendQueue
	restorec   chan *restoreReq
	appendErr  chan error
	appendDone chan struct{}
	loopDone   chan struct{} // closed when the loop stops taking work

	// Owned by the loop goroutine.
	snapBusy  bool // a snapshot is being written in the background
	snapAsked bool // a Host asked for a snapshot: take one without waiting for SnapshotEntries
	rep       replicated
	confState *pb.ConfState
	snapIndex uint64
	isLeader  bool
	// termStart is the index of this leader's first entry of its term,
	// 0 when not leading: a linearizable read waits for it to be applied
	// (see afterApply).
	termStart uint64
	ticks     uint64
	pending   []*readReq
	inflight  *readBatch
	// rttMu guards hbSent, when each peer's outstanding heartbeat was
	// sent, rtt, each peer's last measured round trip, and heard, when a
	// message from each peer last arrived.
	rttMu  sync.Mutex
	hbSent map[uint64]time.Time
	rtt    map[uint64]time.Duration
	heard  map[uint64]uint64 // in ticks (tickCount)
	acked  map[uint64]uint64 // answers to this leader in its term, in ticks
	// tickCount is ticks, readable outside the loop.
	tickCount atomic.Uint64
	// commit is the commit index this node last saw; leaseUntil the tick
	// before which a leader's lease holds (0: none), set by the loop.
	commit     atomic.Uint64
	leaseUntil atomic.Uint64
	// failUpTo, set by observe on a leadership change, is the highest
	// proposal request ID to answer with ErrUnknownOutcome once the Ready
	// is applied (loop goroutine only).
	failUpTo    uint64
	waits       []appliedWait
	readSeq     uint64
	readSeqBase uint64

	metrics metrics
}

// StartNode opens the node's storage and starts it: it restarts from the
// stored snapshot and log when there are any, bootstraps a new cluster
// from Options.Peers otherwise, or, with neither, waits to be added.
func StartNode(opts Options) (*Node, error) {
	opts = opts.withDefaults()
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	st, err := OpenStorage(opts.Dir, opts.Storage)
	if err != nil {
		return nil, err
	}
	return startNode(opts, st)
}

// startNode starts a node on opened storage (its own or a Host group's);
// opts has its defaults and is valid. It closes st when it fails.
func startNode(opts Options, st *Storage) (*Node, error) {
	n := &Node{
		opts:       opts,
		id:         opts.ID,
		storage:    st,
		sm:         opts.StateMachine,
		tr:         opts.Transport,
		propSem:    make(chan struct{}, opts.MaxInflightProposals),
		tickc:      make(chan struct{}, 128),
		readc:      make(chan *readReq, 1024),
		stopc:      make(chan struct{}),
		donec:      make(chan struct{}),
		waiters:    map[uint64]chan result{},
		hbSent:     map[uint64]time.Time{},
		rtt:        map[uint64]time.Duration{},
		heard:      map[uint64]uint64{},
		acked:      map[uint64]uint64{},
		snapDone:   make(chan error, 1),
		snapReq:    make(chan struct{}, 1),
		restorec:   make(chan *restoreReq),
		appendErr:  make(chan error, 1),
		appendDone: make(chan struct{}),
		loopDone:   make(chan struct{}),
		leaderWake: make(chan struct{}),
		rep:        newReplicated(),
		confState:  &pb.ConfState{},
	}
	n.readSeqBase = uint64(time.Now().UnixNano()) << 8
	cfg := &raft.Config{
		ID:                        opts.ID,
		ElectionTick:              opts.ElectionTick,
		HeartbeatTick:             opts.HeartbeatTick,
		Storage:                   st,
		MaxSizePerMsg:             opts.MaxSizePerMsg,
		MaxInflightMsgs:           opts.MaxInflightMsgs,
		MaxUncommittedEntriesSize: opts.MaxUncommittedEntriesSize,
		PreVote:                   !opts.DisablePreVote,
		CheckQuorum:               !opts.DisableCheckQuorum,
		DisableProposalForwarding: true,
		StepDownOnRemoval:         true,
		Logger:                    discardLogger{},
	}
	if opts.LeaseReads {
		cfg.ReadOnlyOption = raft.ReadOnlyLeaseBased
	}
	if opts.AsyncStorageWrites {
		cfg.AsyncStorageWrites = true
		n.appendq = newAppendQueue()
	}
	hs, _, _ := st.InitialState()
	last, _ := st.LastIndex()
	restart := !raft.IsEmptyHardState(hs) || last > 0 || st.SnapshotIndex() > 0
	if opts.ForceNewCluster {
		if !restart {
			st.Close()
			return nil, fmt.Errorf("%w: ForceNewCluster needs a Dir holding state", ErrInvalidOptions)
		}
		removed, err := st.forceNewCluster(context.Background(), opts.ID)
		if err != nil {
			st.Close()
			return nil, fmt.Errorf("force new cluster: %w", err)
		}
		opts.Logger.Warn("matrixraft: forced a new single-voter cluster", "id", opts.ID, "removed", removed)
	}
	if restart {
		snap, err := st.Snapshot()
		if err != nil {
			st.Close()
			return nil, err
		}
		if !raft.IsEmptySnap(snap) {
			if err := n.restore(snap); err != nil {
				st.Close()
				return nil, err
			}
		}
		cfg.Applied = n.applied.Load()
	}
	switch {
	case restart:
		n.rn = raft.RestartNode(cfg)
	case len(opts.Peers) > 0:
		peers := make([]raft.Peer, len(opts.Peers))
		for i, p := range opts.Peers {
			peers[i] = raft.Peer{ID: p.ID, Context: []byte(p.Addr)}
		}
		n.rn = raft.StartNode(cfg, peers)
	default:
		n.rn = raft.RestartNode(cfg)
	}
	if err := n.startTransport(); err != nil {
		n.rn.Stop()
		st.Close()
		return nil, err
	}
	if n.appendq != nil {
		go n.appendLoop()
	}
	st.setSnapshotRequests(n.snapReq)
	go n.run()
	return n, nil
}

// startTransport starts the transport once raft exists, so every
// delivered message has a node to step.
func (n *Node) startTransport() error {
	if err := n.tr.Start(n); err != nil {
		return err
	}
	for _, p := range n.opts.Peers {
		if p.ID != n.id {
			n.tr.AddPeer(p.ID, p.Addr)
		}
	}
	for id, addr := range n.rep.addrs {
		if id != n.id {
			n.tr.AddPeer(id, addr)
		}
	}
	return nil
}

// ID returns this node's raft ID.
func (n *Node) ID() uint64 { return n.id }

// Tick advances raft's clock by one tick (with Options.ManualTick).
func (n *Node) Tick() {
	select {
	case n.tickc <- struct{}{}:
	case <-n.donec:
	}
}

// Stop stops the node gracefully: the loop finishes the Ready in hand, the
// transport is closed, and the storage is closed. Pending calls return
// ErrStopped. It is idempotent.
func (n *Node) Stop() {
	n.stopOne.Do(func() { close(n.stopc) })
	<-n.donec
}

// Done is closed once the node has stopped (after Stop, a storage failure
// or its own removal).
func (n *Node) Done() <-chan struct{} { return n.donec }

// Err returns why the node stopped on its own: ErrRemoved, a storage
// error, or nil.
func (n *Node) Err() error {
	if p := n.failure.Load(); p != nil {
		return *p
	}
	return nil
}

func (n *Node) fail(err error) {
	n.failure.CompareAndSwap(nil, &err)
}

// Term returns the raft term this node last saw; a leader leads in it.
func (n *Node) Term() uint64 { return n.term.Load() }

// Leader returns the leader's ID as this node knows it (0 when unknown).
func (n *Node) Leader() uint64 { return n.leader.Load() }

// Step implements Handler.
func (n *Node) Step(ctx context.Context, m *pb.Message) error {
	n.metrics.msgsRecv.Add(1)
	t := m.GetType()
	n.heardFrom(m.GetFrom(), t == pb.MsgHeartbeatResp, (t == pb.MsgHeartbeatResp || t == pb.MsgAppResp) && m.GetTerm() == n.term.Load())
	return n.rn.Step(ctx, m)
}

// heartbeatSent notes when a heartbeat went to peer, unless one is still
// unanswered (answers carry no ID: pairing each with the oldest
// outstanding heartbeat measures the full round trip). An unanswered one
// is given up after a second.
func (n *Node) heartbeatSent(peer uint64, now time.Time) {
	n.rttMu.Lock()
	defer n.rttMu.Unlock()
	if t, ok := n.hbSent[peer]; ok && now.Sub(t) < time.Second {
		return
	}
	n.hbSent[peer] = now
}

// heardFrom notes that a message from peer arrived, whether it answers
// this node's leadership in its term (a lease counts only those), and,
// when it answers a heartbeat, the round trip of peer's outstanding one.
func (n *Node) heardFrom(peer uint64, heartbeatResp, leaderAck bool) {
	tick := n.tickCount.Load()
	n.rttMu.Lock()
	defer n.rttMu.Unlock()
	n.heard[peer] = tick
	if leaderAck {
		n.acked[peer] = tick
	}
	if t, ok := n.hbSent[peer]; ok && heartbeatResp {
		n.rtt[peer] = time.Since(t)
		delete(n.hbSent, peer)
	}
}

// heardLately says a message from peer arrived within the last election
// timeout. Unlike raft's RecentActive, which CheckQuorum clears every
// election timeout, it does not blink false for a live peer.
func (n *Node) heardLately(peer uint64) bool {
	now := n.tickCount.Load()
	n.rttMu.Lock()
	defer n.rttMu.Unlock()
	t, ok := n.heard[peer]
	return ok && now-t <= uint64(n.opts.ElectionTick)
}

func (n *Node) peerRTT(peer uint64) time.Duration {
	n.rttMu.Lock()
	defer n.rttMu.Unlock()
	return n.rtt[peer]
}

// ReportUnreachable implements Handler.
func (n *Node) ReportUnreachable(id uint64) {
	n.metrics.unreachable.Add(1)
	n.rn.ReportUnreachable(id)
}

// ReportSnapshot implements Handler.
func (n *Node) ReportSnapshot(id uint64, status raft.SnapshotStatus) {
	if status == raft.SnapshotFailure {
		n.metrics.snapshotSendFailures.Add(1)
	}
	n.rn.ReportSnapshot(id, status)
}

func (n *Node) stoppedErr() error {
	if err := n.Err(); err != nil {
		return err
	}
	return ErrStopped
}

// Propose replicates data and returns the state machine's result for it
// once it has been applied on this node. It must be called on the leader;
// elsewhere it returns a *NotLeaderError naming the leader. When ctx ends
// first the outcome is unknown: the command may still be applied. Use
// ProposeSession to retry without applying twice.
func (n *Node) Propose(ctx context.Context, data []byte) ([]byte, error) {
	return n.propose(ctx, 0, 0, data)
}

// ProposeSession is Propose with exactly-once semantics for a client:
// commands of one client carry increasing sequence numbers, and a retry
// with the same (client, seq) — on any node, after any failure — is applied
// at most once and returns the first application's result. A sequence
// older than the client's last applied one returns ErrSessionExpired.
// client must be non-zero.
func (n *Node) ProposeSession(ctx context.Context, client, seq uint64, data []byte) ([]byte, error) {
	if client == 0 {
		return nil, fmt.Errorf("%w: session client 0", ErrInvalidOptions)
	}
	return n.propose(ctx, client, seq, data)
}

func (n *Node) propose(ctx context.Context, client, seq uint64, data []byte) ([]byte, error) {
	select {
	case <-n.donec:
		return nil, n.stoppedErr()
	default:
	}
	if lead := n.leader.Load(); lead != n.id {
		return nil, &NotLeaderError{Leader: lead}
	}
	select {
	case n.propSem <- struct{}{}:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-n.donec:
		return nil, n.stoppedErr()
	}
	defer func() { <-n.propSem }()
	n.metrics.proposalsPending.Add(1)
	defer n.metrics.proposalsPending.Add(-1)
	req := n.nextReq.Add(1)
	ch := n.register(req)
	defer n.unregister(req)
	env := encodeEnvelope(envelope{origin: n.id, req: req, client: client, seq: seq, data: data})
	if err := n.rn.Propose(ctx, env); err != nil {
		n.metrics.proposalsDropped.Add(1)
		if errors.Is(err, raft.ErrProposalDropped) {
			if lead := n.leader.Load(); lead != n.id {
				return nil, &NotLeaderError{Leader: lead}
			}
			return nil, ErrProposalDropped
		}
		if errors.Is(err, raft.ErrStopped) {
			return nil, n.stoppedErr()
		}
		return nil, err
	}
	select {
	case r := <-ch:
		if r.err != nil {
			n.metrics.proposalsFailed.Add(1)
		}
		return r.val, r.err
	case <-ctx.Done():
		n.metrics.proposalsFailed.Add(1)
		return nil, ctx.Err()
	case <-n.donec:
		if r, ok := delivered(ch); ok {
			return r.val, r.err
		}
		return nil, n.stoppedErr()
	}
}

// delivered returns a result already sent on ch. A result is delivered
// before the node stops (a node that applies its own removal answers the
// removal, then stops), and a select that finds both the result and the
// stop ready picks one at random: a waiter woken by the stop looks here
// first, so that it does not report a change that was applied as lost.
func delivered(ch chan result) (result, bool) {
	select {
	case r := <-ch:
		return r, true
	default:
		return result{}, false
	}
}

func (n *Node) register(req uint64) chan result {
	ch := make(chan result, 1)
	n.wmu.Lock()
	n.waiters[req] = ch
	n.wmu.Unlock()
	return ch
}

func (n *Node) unregister(req uint64) {
	n.wmu.Lock()
	delete(n.waiters, req)
	n.wmu.Unlock()
}

// failWaiters answers err to every proposal waiting whose request ID is at
// most upTo: those registered before a leadership change.
func (n *Node) failWaiters(upTo uint64, err error) {
	n.wmu.Lock()
	var chs []chan result
	for req, ch := range n.waiters {
		if req <= upTo {
			chs = append(chs, ch)
			delete(n.waiters, req)
		}
	}
	n.wmu.Unlock()
	for _, ch := range chs {
		ch <- result{err: err}
	}
}

func (n *Node) deliver(req uint64, r result) {
	n.wmu.Lock()
	ch := n.waiters[req]
	delete(n.waiters, req)
	n.wmu.Unlock()
	if ch != nil {
		ch <- r
	}
}

// Read waits until reading this node's state machine is consistent with
// mode: for ReadLinearizable, until it has applied every command committed
// before the call (batched ReadIndex, re-sent with a fresh ID on retry).
// It works on followers too.
func (n *Node) Read(ctx context.Context, mode ReadMode) error {
	switch mode {
	case ReadStale:
		return nil
	case ReadLease:
		// The lease and the applied index are read after the call began:
		// every write acknowledged before it is committed, so applied.
		if n.leader.Load() == n.id && n.tickCount.Load() < n.leaseUntil.Load() && n.applied.Load() >= n.commit.Load() {
			n.metrics.leaseReads.Add(1)
			return nil
		}
	}
	start := time.Now()
	r := &readReq{done: make(chan error, 1)}
	select {
	case n.readc <- r:
	case <-ctx.Done():
		return ctx.Err()
	case <-n.donec:
		return n.stoppedErr()
	}
	select {
	case err := <-r.done:
		if err == nil {
			n.metrics.readLatency.observe(time.Since(start))
		} else {
			n.metrics.readFailures.Add(1)
		}
		return err
	case <-ctx.Done():
		n.metrics.readFailures.Add(1)
		return ctx.Err()
	case <-n.donec:
		return n.stoppedErr()
	}
}

// Campaign makes this node campaign for leadership now.
func (n *Node) Campaign(ctx context.Context) error { return n.rn.Campaign(ctx) }

// TransferLeadership hands leadership to the voter to and waits until this
// node sees it lead, or ctx ends (ErrTransferFailed).
func (n *Node) TransferLeadership(ctx context.Context, to uint64) error {
	lead := n.leader.Load()
	if lead != n.id {
		return &NotLeaderError{Leader: lead}
	}
	for {
		wake := n.leaderWakeChan()
		if n.leader.Load() == to {
			return nil
		}
		n.rn.TransferLeadership(ctx, n.id, to)
		select {
		case <-wake:
		case <-ctx.Done():
			return fmt.Errorf("%w: %w", ErrTransferFailed, ctx.Err())
		case <-n.donec:
			return n.stoppedErr()
		}
	}
}

func (n *Node) leaderWakeChan() chan struct{} {
	n.lmu.Lock()
	defer n.lmu.Unlock()
	return n.leaderWake
}

// AddVoter adds a voter (ConfChangeV2) and returns once the change is
// applied here. A removed ID is refused with ErrIDReused.
func (n *Node) AddVoter(ctx context.Context, id uint64, addr string) error {
	return n.changeMembership(ctx, pb.ConfChangeAddNode, id, addr)
}

// AddLearner adds a non-voting member that receives the log.
func (n *Node) AddLearner(ctx context.Context, id uint64, addr string) error {
	return n.changeMembership(ctx, pb.ConfChangeAddLearnerNode, id, addr)
}

// PromoteLearner makes a learner a voter.
func (n *Node) PromoteLearner(ctx context.Context, id uint64) error {
	return n.changeMembership(ctx, pb.ConfChangeAddNode, id, "")
}

// RemoveMember removes a voter or learner. Its ID can never be added again.
// Removing the leader makes it step down.
func (n *Node) RemoveMember(ctx context.Context, id uint64) error {
	return n.changeMembership(ctx, pb.ConfChangeRemoveNode, id, "")
}

func (n *Node) changeMembership(ctx context.Context, typ pb.ConfChangeType, id uint64, addr string) error {
	if id == 0 {
		return fmt.Errorf("%w: node ID 0", ErrInvalidOptions)
	}
	if typ != pb.ConfChangeRemoveNode && n.isRemovedID(id) {
		return fmt.Errorf("%w: %d", ErrIDReused, id)
	}
	n.confMu.Lock()
	defer n.confMu.Unlock()
	if err := n.awaitConfTurn(ctx); err != nil {
		return err
	}
	// Everything before this leader's term is applied now, a removal
	// included.
	if typ != pb.ConfChangeRemoveNode && n.isRemovedID(id) {
		return fmt.Errorf("%w: %d", ErrIDReused, id)
	}
	req := n.nextReq.Add(1)
	ch := n.register(req)
	defer n.unregister(req)
	n.wmu.Lock()
	n.confQueue = append(n.confQueue, req)
	n.wmu.Unlock()
	cc := &pb.ConfChangeV2{
		Changes: []*pb.ConfChangeSingle{{Type: new(typ), NodeId: new(id)}},
		Context: encodeCCContext(n.id, req, addr),
	}
	if err := n.rn.ProposeConfChange(ctx, cc); err != nil {
		n.confTaken(req)
		if errors.Is(err, raft.ErrProposalDropped) {
			return ErrProposalDropped
		}
		return err
	}
	select {
	case r := <-ch:
		return r.err
	case <-ctx.Done():
		return ctx.Err()
	case <-n.donec:
		if r, ok := delivered(ch); ok {
			return r.err
		}
		return n.stoppedErr()
	}
}

// awaitConfTurn waits until raft's leader here would take a conf change
// rather than replace it: it has been told of an applied index at
// confBarrier. Conf changes are rare, so it polls.
func (n *Node) awaitConfTurn(ctx context.Context) error {
	t := time.NewTicker(time.Millisecond)
	defer t.Stop()
	for {
		if lead := n.leader.Load(); lead != n.id {
			return &NotLeaderError{Leader: lead}
		}
		if b := n.confBarrier.Load(); b != 0 && n.advanced.Load() >= b {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-n.donec:
			return n.stoppedErr()
		case <-t.C:
		}
	}
}

// confTaken removes req from confQueue: its entry was appended, or raft
// refused it outright.
func (n *Node) confTaken(req uint64) {
	n.wmu.Lock()
	defer n.wmu.Unlock()
	if i := slices.Index(n.confQueue, req); i >= 0 {
		n.confQueue = slices.Delete(n.confQueue, i, i+1)
	}
}

// confDropped answers the oldest queued conf change: raft appended an
// empty entry in its place.
func (n *Node) confDropped() {
	n.wmu.Lock()
	if len(n.confQueue) == 0 {
		n.wmu.Unlock()
		return
	}
	req := n.confQueue[0]
	n.confQueue = n.confQueue[1:]
	n.wmu.Unlock()
	n.deliver(req, result{err: ErrProposalDropped})
}

// observeOwnEntries tracks a leader's entries of its own term: its first
// one, its conf changes and the empty entries raft put in place of conf
// changes it refused.
func (n *Node) observeOwnEntries(ents []*pb.Entry) {
	term := n.term.Load()
	for _, e := range ents {
		if e.GetTerm() != term {
			continue
		}
		if n.termStart == 0 {
			n.termStart = e.GetIndex()
			n.raiseConfBarrier(e.GetIndex())
		}
		switch e.GetType() {
		case pb.EntryConfChange, pb.EntryConfChangeV2:
			n.raiseConfBarrier(e.GetIndex())
			if origin, req := confChangeOrigin(e); origin == n.id {
				n.confTaken(req)
			}
		case pb.EntryNormal:
			// Every proposal carries an envelope; raft's own empty entry
			// opens the term.
			if len(e.GetData()) == 0 && e.GetIndex() != n.termStart {
				n.confDropped()
			}
		}
	}
}

func (n *Node) raiseConfBarrier(index uint64) {
	if index > n.confBarrier.Load() {
		n.confBarrier.Store(index) // only the loop writes it
	}
}

// confChangeOrigin returns the node and request that proposed a conf
// change entry, zeros when it is not one of ours.
func confChangeOrigin(e *pb.Entry) (origin, req uint64) {
	cc, err := decodeConfChange(e)
	if err != nil {
		return 0, 0
	}
	origin, req, _ = decodeCCContext(cc.AsV2().GetContext())
	return origin, req
}

// decodeConfChange decodes a conf change entry of either version.
func decodeConfChange(e *pb.Entry) (pb.ConfChangeI, error) {
	if e.GetType() == pb.EntryConfChange {
		var v1 pb.ConfChange
		if err := proto.Unmarshal(e.GetData(), &v1); err != nil {
			return nil, fmt.Errorf("%w: conf change %d: %v", ErrCorrupt, e.GetIndex(), err)
		}
		return &v1, nil
	}
	var v2 pb.ConfChangeV2
	if err := proto.Unmarshal(e.GetData(), &v2); err != nil {
		return nil, fmt.Errorf("%w: conf change %d: %v", ErrCorrupt, e.GetIndex(), err)
	}
	return &v2, nil
}

// removedIDs is read outside the loop under a copy-on-write snapshot.
func (n *Node) isRemovedID(id uint64) bool {
	p := n.metrics.removedIDs.Load()
	return p != nil && slices.Contains(*p, id)
}

// run is the Ready loop.
func (n *Node) run() {
	defer close(n.donec)
	defer n.shutdown()
	var tick <-chan time.Time
	if !n.opts.ManualTick {
		t := time.NewTicker(n.opts.TickInterval)
		defer t.Stop()
		tick = t.C
	}
	for {
		select {
		case <-tick:
			n.onTick()
		case <-n.tickc:
			n.onTick()
		case r := <-n.readc:
			n.pending = append(n.pending, r)
			n.issueRead()
		case rd := <-n.rn.Ready():
			if n.opts.AsyncStorageWrites {
				if err := n.handleReadyAsync(rd); err != nil {
					n.fail(err)
					return
				}
			} else {
				if err := n.handleReady(rd); err != nil {
					n.fail(err)
					return
				}
				n.rn.Advance()
				n.advanced.Store(n.applied.Load())
			}
			if n.failUpTo != 0 {
				n.failWaiters(n.failUpTo, ErrUnknownOutcome)
				n.failUpTo = 0
			}
			if n.removed.Load() {
				n.fail(ErrRemoved)
				return
			}
		case req := <-n.restorec:
			if err := n.restoreDurable(req); err != nil {
				n.fail(err)
				return
			}
		case <-n.appendErr:
			return // the append goroutine failed; n.fail has the error
		case err := <-n.snapDone:
			if err := n.snapshotDone(err); err != nil {
				n.fail(err)
				return
			}
		case <-n.snapReq:
			// Between Readys the applied state is whole, as at the end
			// of one: the snapshot is taken as maybeSnapshot always does.
			n.snapAsked = true
			if err := n.maybeSnapshot(); err != nil {
				n.fail(err)
				return
			}
		case <-n.stopc:
			return
		}
	}
}

func (n *Node) shutdown() {
	close(n.loopDone)
	n.rn.Stop()
	if n.appendq != nil {
		n.appendq.close()
		<-n.appendDone
	}
	n.tr.Close()
	if n.snapBusy {
		if err := n.snapshotDone(<-n.snapDone); err != nil {
			n.fail(err)
		}
	}
	n.storage.setSnapshotRequests(nil)
	if n.Err() == nil {
		if err := n.storage.Flush(context.Background()); err != nil {
			n.opts.Logger.Error("matrixraft: flush on stop", "id", n.id, "err", err)
		}
	}
	n.storage.Close()
	err := n.stoppedErr()
	for _, r := range n.pending {
		r.done <- err
	}
	if n.inflight != nil {
		for _, r := range n.inflight.reqs {
			r.done <- err
		}
	}
	for _, w := range n.waits {
		for _, r := range w.reqs {
			r.done <- err
		}
	}
}

func (n *Node) onTick() {
	n.ticks++
	n.tickCount.Store(n.ticks)
	n.rn.Tick()
	n.renewLease()
	if b := n.inflight; b != nil && n.ticks-b.issued >= uint64(n.opts.ReadRetryTicks) {
		// Lost request or response: re-send under a fresh ID, so that an
		// old, delayed answer can never confirm this batch.
		n.pending = append(b.reqs, n.pending...)
		n.inflight = nil
		n.metrics.readRetries.Add(1)
		n.issueRead()
	}
}

// renewLease sets leaseUntil from when a majority of the voters last
// answered this leader, once its term's first entry is committed (so its
// commit index is the group's).
func (n *Node) renewLease() {
	if !n.isLeader || n.termStart == 0 || n.commit.Load() < n.termStart {
		n.leaseUntil.Store(0)
		return
	}
	voters := n.rn.Status().Config.Voters.IDs()
	heard := make([]uint64, 0, len(voters))
	n.rttMu.Lock()
	for id := range voters {
		if id == n.id {
			heard = append(heard, n.ticks)
		} else if t, ok := n.acked[id]; ok {
			heard = append(heard, t)
		}
	}
	n.rttMu.Unlock()
	quorum := len(voters)/2 + 1
	if len(heard) < quorum {
		n.leaseUntil.Store(0)
		return
	}
	slices.SortFunc(heard, func(a, b uint64) int { return cmp.Compare(b, a) })
	// The quorum-th most recent answer: a majority answered since.
	n.leaseUntil.Store(heard[quorum-1] + uint64(n.opts.ElectionTick/2))
}

func (n *Node) issueRead() {
	if n.inflight != nil || len(n.pending) == 0 {
		return
	}
	n.readSeq++
	b := &readBatch{id: n.readSeqBase + n.readSeq, reqs: n.pending, issued: n.ticks}
	n.pending = nil
	n.inflight = b
	ctx := binary.BigEndian.AppendUint64(nil, b.id)
	// raft's goroutine always accepts a step, even while a Ready is out;
	// a lost request is re-sent by onTick.
	_ = n.rn.ReadIndex(context.Background(), ctx)
}

// observe records a Ready's leadership and term.
func (n *Node) observe(rd raft.Ready) {
	if rd.SoftState != nil {
		n.isLeader = rd.RaftState == raft.StateLeader
		// failUpTo is fixed before isLeader is published: a caller that
		// sees the node lead proposes after it, so its proposal, which
		// the new term takes, is not among those answered
		// ErrUnknownOutcome.
		defer n.metrics.isLeader.Store(n.isLeader)
		if old := n.leader.Swap(rd.Lead); old != rd.Lead {
			n.metrics.leaderChanges.Add(1)
			// Proposals waiting now may be lost with the old leader's
			// term; they are answered once this Ready is applied.
			n.failUpTo = n.nextReq.Load()
			n.wmu.Lock()
			n.confQueue = nil
			n.wmu.Unlock()
			n.lmu.Lock()
			close(n.leaderWake)
			n.leaderWake = make(chan struct{})
			n.lmu.Unlock()
			if n.inflight != nil { // the old leader may never answer
				n.inflight.issued = 0
			}
			n.rttMu.Lock()
			clear(n.acked) // answers to an earlier leadership hold no lease
			n.rttMu.Unlock()
		}
	}
	if rd.HardState != nil {
		n.term.Store(rd.HardState.GetTerm())
		n.commit.Store(rd.HardState.GetCommit())
	}
	if !n.isLeader {
		n.termStart = 0
		n.confBarrier.Store(0)
		return
	}
	n.observeOwnEntries(rd.Entries)
}

// handleReady handles one Ready of the synchronous loop, in this order: a
// leader sends its appends and heartbeats first (they do not depend on its
// own disk); Storage.Save writes and fsyncs a received snapshot's file,
// then one log batch holding the snapshot record, the entries and the
// HardState; then the remaining messages go out (votes, append responses:
// never before what they promise is durable); then the snapshot is
// restored into the state machine and the committed entries are applied;
// read requests whose index is applied are released; and a snapshot is
// taken when SnapshotEntries have been applied since the last (its state
// captured here, the rest written beside the loop by maybeSnapshot).
func (n *Node) handleReady(rd raft.Ready) error {
	start := time.Now()
	n.observe(rd)
	// A leader may send appends and heartbeats while it writes its own log
	// (they do not depend on its disk); everything else waits for fsync.
	var later []*pb.Message
	if n.isLeader {
		var now []*pb.Message
		for _, m := range rd.Messages {
			switch m.GetType() {
			case pb.MsgApp, pb.MsgHeartbeat, pb.MsgSnap, pb.MsgTimeoutNow, pb.MsgReadIndexResp:
				now = append(now, m)
			default:
				later = append(later, m)
			}
		}
		n.send(now)
	} else {
		later = rd.Messages
	}
	if n.opts.beforeSave != nil {
		n.opts.beforeSave()
	}
	saveStart := time.Now()
	if err := n.storage.Save(context.Background(), rd.HardState, rd.Entries, rd.Snapshot, rd.MustSync); err != nil {
		return fmt.Errorf("persist ready: %w", err)
	}
	if len(rd.Entries) > 0 || rd.MustSync {
		n.metrics.saveLatency.observe(time.Since(saveStart))
	}
	n.send(later)
	if rd.Snapshot != nil && !raft.IsEmptySnap(rd.Snapshot) {
		t := time.Now()
		if err := n.restore(rd.Snapshot); err != nil {
			return err
		}
		n.metrics.snapshotApplyLatency.observe(time.Since(t))
		n.metrics.snapshotsInstalled.Add(1)
		for id, addr := range n.rep.addrs {
			if id != n.id {
				n.tr.AddPeer(id, addr)
			}
		}
	}
	if err := n.apply(rd.CommittedEntries); err != nil {
		return err
	}
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

// afterApply takes a Ready's read states and releases the reads that the
// applied index now allows.
func (n *Node) afterApply(rd raft.Ready) {
	for _, rs := range rd.ReadStates {
		if b := n.inflight; b != nil && len(rs.RequestCtx) == 8 && binary.BigEndian.Uint64(rs.RequestCtx) == b.id {
			// A sole voter's raft answers a read with its commit index
			// at once, before it has committed an entry of its own term,
			// so after a restart that index can precede entries the
			// last term applied and acknowledged. Waiting for the term's
			// first entry covers them, as a leader of several voters
			// does before it answers.
			n.waits = append(n.waits, appliedWait{index: max(rs.Index, n.termStart), reqs: b.reqs})
			n.inflight = nil
		}
	}
	n.serveReads()
	n.issueRead()
}

func (n *Node) send(msgs []*pb.Message) {
	if len(msgs) == 0 {
		return
	}
	k := 0
	for _, m := range msgs {
		if m.GetType() == pb.MsgSnap {
			m = n.freshSnapConf(m)
			if ss, ok := n.sm.(StateSender); ok {
				// Written and sent beside the loop: the whole state may
				// be large.
				go n.sendState(ss, m)
				continue
			}
		}
		msgs[k] = m
		k++
	}
	msgs = msgs[:k]
	if k == 0 {
		return
	}
	n.metrics.msgsSent.Add(uint64(len(msgs)))
	now := time.Now()
	for _, m := range msgs {
		if m.GetType() == pb.MsgHeartbeat {
			n.heartbeatSent(m.GetTo(), now)
		}
	}
	// With AsyncStorageWrites the append goroutine sends too; a Transport
	// sees one Send at a time.
	n.sendMu.Lock()
	n.tr.Send(msgs)
	n.sendMu.Unlock()
}

// sendState sends the snapshot message m with its state machine's part
// replaced by the whole state ss writes now; a failure is reported as a
// failed snapshot, so raft tries again later.
func (n *Node) sendState(ss StateSender, m *pb.Message) {
	rep, _, err := decodeSnapshotData(m.GetSnapshot().GetData())
	var data []byte
	if err == nil {
		var b bytes.Buffer
		if err = ss.SendState(&b); err == nil {
			data, err = snapshotState{rep: rep, sm: &b}.encode()
		}
	}
	if err != nil {
		n.opts.Logger.Warn("matrixraft: state for a snapshot not sent", "to", m.GetTo(), "err", err)
		n.ReportSnapshot(m.GetTo(), raft.SnapshotFailure)
		return
	}
	m.Snapshot = &pb.Snapshot{Data: data, Metadata: m.GetSnapshot().GetMetadata()}
	n.metrics.msgsSent.Add(1)
	n.sendMu.Lock()
	n.tr.Send([]*pb.Message{m})
	n.sendMu.Unlock()
}

// freshSnapConf returns m with its snapshot's ConfState replaced by the
// configuration applied now. A snapshot taken before a membership change
// names the old members; a member added since would refuse it (raft drops
// a snapshot whose ConfState lacks the recipient) and never catch up. The
// entries after the snapshot re-apply those changes, which is harmless.
// The snapshot is shared with storage, so it is replaced, not changed; its
// data is shared read-only.
func (n *Node) freshSnapConf(m *pb.Message) *pb.Message {
	snap := m.GetSnapshot()
	if snap == nil || n.confState == nil {
		return m
	}
	meta := snap.GetMetadata()
	m.Snapshot = &pb.Snapshot{
		Data: snap.GetData(),
		Metadata: &pb.SnapshotMetadata{
			Index:     new(meta.GetIndex()),
			Term:      new(meta.GetTerm()),
			ConfState: proto.CloneOf(n.confState),
		},
	}
	return m
}

func (n *Node) serveReads() {
	applied := n.applied.Load()
	k := 0
	for _, w := range n.waits {
		if w.index <= applied {
			for _, r := range w.reqs {
				r.done <- nil
			}
			continue
		}
		n.waits[k] = w
		k++
	}
	clear(n.waits[k:])
	n.waits = n.waits[:k]
}

// restore replaces the state machine and replicated state with a
// snapshot's.
func (n *Node) restore(snap *pb.Snapshot) error {
	rep, rest, err := decodeSnapshotData(snap.GetData())
	if err != nil {
		return err
	}
	if err := n.sm.Restore(bytes.NewReader(rest)); err != nil {
		return fmt.Errorf("state machine restore: %w", err)
	}
	n.rep = rep
	n.publishRemoved()
	n.confState = proto.Clone(snap.GetMetadata().GetConfState()).(*pb.ConfState)
	n.snapIndex = snap.GetMetadata().GetIndex()
	n.applied.Store(n.snapIndex)
	return nil
}

func (n *Node) publishRemoved() {
	ids := make([]uint64, 0, len(n.rep.removed))
	for id := range n.rep.removed {
		ids = append(ids, id)
	}
	n.metrics.removedIDs.Store(&ids)
}

func (n *Node) apply(ents []*pb.Entry) error {
	if len(ents) == 0 {
		return nil
	}
	var batch []Command
	var meta []envelope
	flush := func() {
		if len(batch) == 0 {
			return
		}
		res := n.sm.Apply(batch)
		for i, e := range meta {
			var v []byte
			if i < len(res) {
				v = res[i]
			}
			if e.client != 0 {
				n.rep.sessions[e.client] = &session{seq: e.seq, result: v, index: batch[i].Index}
			}
			if e.origin == n.id {
				n.deliver(e.req, result{val: v})
			}
		}
		n.evictSessions()
		n.metrics.proposalsCommitted.Add(uint64(len(batch)))
		batch, meta = batch[:0], meta[:0]
	}
	for _, e := range ents {
		switch e.GetType() {
		case pb.EntryNormal:
			if len(e.GetData()) == 0 {
				continue // a new leader's empty entry
			}
			env, err := decodeEnvelope(e.GetData())
			if err != nil {
				return fmt.Errorf("entry %d: %w", e.GetIndex(), err)
			}
			if env.client != 0 {
				if s, ok := n.rep.sessions[env.client]; ok && env.seq <= s.seq {
					// Already applied (a retry) or superseded: never twice.
					r := result{val: s.result}
					if env.seq < s.seq {
						r = result{err: ErrSessionExpired}
					}
					if env.origin == n.id {
						n.deliver(env.req, r)
					}
					continue
				}
				if slices.ContainsFunc(meta, func(m envelope) bool { return m.client == env.client && m.seq >= env.seq }) {
					flush() // a duplicate inside this batch: settle the first one
					s := n.rep.sessions[env.client]
					if env.origin == n.id {
						if env.seq == s.seq {
							n.deliver(env.req, result{val: s.result})
						} else {
							n.deliver(env.req, result{err: ErrSessionExpired})
						}
					}
					continue
				}
			}
			batch = append(batch, Command{Index: e.GetIndex(), Data: env.data})
			meta = append(meta, env)
		case pb.EntryConfChange, pb.EntryConfChangeV2:
			flush()
			if err := n.applyConfChange(e); err != nil {
				return err
			}
		}
	}
	flush()
	n.applied.Store(ents[len(ents)-1].GetIndex())
	return nil
}

func (n *Node) evictSessions() {
	for len(n.rep.sessions) > n.opts.MaxSessions {
		var victim, oldest uint64
		first := true
		for id, s := range n.rep.sessions {
			if first || s.index < oldest || (s.index == oldest && id < victim) {
				victim, oldest, first = id, s.index, false
			}
		}
		delete(n.rep.sessions, victim)
	}
}

func (n *Node) applyConfChange(e *pb.Entry) error {
	cc, err := decodeConfChange(e)
	if err != nil {
		return err
	}
	v2 := cc.AsV2()
	origin, req, addr := decodeCCContext(v2.GetContext())
	// Deterministic refusal: an ID once removed never comes back.
	for _, c := range v2.GetChanges() {
		if c.GetType() != pb.ConfChangeRemoveNode && n.rep.removed[c.GetNodeId()] {
			if origin == n.id {
				n.deliver(req, result{err: fmt.Errorf("%w: %w: %d", ErrConfChangeRejected, ErrIDReused, c.GetNodeId())})
			}
			return nil
		}
	}
	n.confState = n.rn.ApplyConfChange(cc)
	for _, c := range v2.GetChanges() {
		id := c.GetNodeId()
		switch c.GetType() {
		case pb.ConfChangeAddNode, pb.ConfChangeAddLearnerNode:
			if addr != "" {
				n.rep.addrs[id] = addr
			}
			if id != n.id {
				n.tr.AddPeer(id, n.rep.addrs[id])
			}
		case pb.ConfChangeRemoveNode:
			n.rep.removed[id] = true
			delete(n.rep.addrs, id)
			if id == n.id {
				n.removed.Store(true)
			} else {
				n.tr.RemovePeer(id)
			}
		}
	}
	n.publishRemoved()
	if origin == n.id {
		n.deliver(req, result{})
	}
	return nil
}

// maybeSnapshot snapshots the state machine once SnapshotEntries entries
// have been applied since the last snapshot, or sooner when a Host asked
// for one and anything has been applied since. The state is captured
// here, between applies, so it is exactly the state at the applied index;
// everything else runs beside the loop.
func (n *Node) maybeSnapshot() error {
	applied := n.applied.Load()
	due := applied-n.snapIndex >= n.opts.SnapshotEntries
	forced := !due && n.snapAsked && applied > n.snapIndex
	if !due && !forced {
		return nil
	}
	if n.snapBusy {
		return nil // the previous one is still being written
	}
	n.snapAsked = false
	t := time.Now()
	st, err := captureState(n.rep, n.sm)
	if err != nil {
		return err
	}
	cs := proto.CloneOf(n.confState)
	n.metrics.snapshotCaptureLatency.observe(time.Since(t))
	n.snapIndex = applied
	n.snapBusy = true
	// Serialising a captured state, writing the file, its fsync, the log
	// record and the compaction do not need the loop: they run beside it,
	// so Readys keep flowing meanwhile. The loop learns the outcome from
	// snapDone.
	go func() {
		data, err := st.encode()
		if err == nil {
			err = n.storage.CreateSnapshot(context.Background(), applied, cs, data, n.opts.CatchUpEntries)
		}
		if err == nil {
			n.metrics.snapshotsCreated.Add(1)
			if forced {
				n.metrics.snapshotsForced.Add(1)
			}
			n.metrics.snapshotSaveLatency.observe(time.Since(t))
		} else {
			err = fmt.Errorf("create snapshot: %w", err)
		}
		n.snapDone <- err
	}()
	return nil
}

// snapshotDone ends a background snapshot write.
func (n *Node) snapshotDone(err error) error {
	n.snapBusy = false
	return err
}

// discardLogger silences etcd raft's logging.
type discardLogger struct{}

func (discardLogger) Debug(...any)            {}
func (discardLogger) Debugf(string, ...any)   {}
func (discardLogger) Error(...any)            {}
func (discardLogger) Errorf(string, ...any)   {}
func (discardLogger) Info(...any)             {}
func (discardLogger) Infof(string, ...any)    {}
func (discardLogger) Warning(...any)          {}
func (discardLogger) Warningf(string, ...any) {}
func (discardLogger) Fatal(v ...any)          { panic(fmt.Sprint(v...)) }
func (discardLogger) Fatalf(f string, v ...any) {
	panic(fmt.Sprintf(f, v...))
}
func (discardLogger) Panic(v ...any)            { panic(fmt.Sprint(v...)) }
func (discardLogger) Panicf(f string, v ...any) { panic(fmt.Sprintf(f, v...)) }
