package cluster

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixraft"
	"github.com/temporalstore/temporalstore-go/temporalstore/cluster/liveness"
)

// Errors of the membership changes, matched with errors.Is.
var (
	// ErrMembership is a membership change refused or not completed; its
	// text says which shard and why.
	ErrMembership = errors.New("cluster: membership change")
)

// Timeouts of a membership change, per shard.
const (
	// catchUpTimeout bounds the wait for a new member's replica of one
	// shard to catch up before it is promoted to voter.
	catchUpTimeout = 2 * time.Minute
	// shardOpTimeout bounds one shard's change once caught up, a move of
	// its leadership included.
	shardOpTimeout = 20 * time.Second
	// settleTimeout bounds the wait for a leader to hear from its voters
	// before it judges them down: one elected moments ago (a removal
	// moves leaderships first) has not yet replicated to anyone.
	settleTimeout = 2 * time.Second
)

// shardOp is one shard's part of a membership change, run on the shard's
// leader: add (as a learner, then a voter once caught up) or remove.
type shardOp struct {
	Shard int    `json:"shard"`
	Op    string `json:"op"` // "add" or "remove"
	Peer  Peer   `json:"peer"`
}

// AddMember adds p to every shard's group: as a learner, which receives
// the shard's state, then, once caught up, as a voter. p's process must
// run already, started with Options.Join and every member's addresses.
// Each shard's change runs on its leader: this member forwards it over
// HTTP to the leaders it is not.
func (n *Node) AddMember(ctx context.Context, p Peer) error {
	if n.shared != nil {
		return ErrSharedMode
	}
	if p.ID == 0 || p.RaftAddr == "" || p.RESPAddr == "" {
		return fmt.Errorf("%w: a member needs an id, a raft and a RESP address", ErrInvalidOptions)
	}
	n.book.learn(p)
	return n.eachShard(ctx, func(sh int) shardOp { return shardOp{Shard: sh, Op: "add", Peer: p} })
}

// RemoveMember takes member id out of every shard's group, after moving
// away the leaderships it holds. It is refused when a shard would be left
// without a live voter or below a quorum of live voters
// (liveness.CheckRemoval). The member's process is then of no use: stop it.
func (n *Node) RemoveMember(ctx context.Context, id uint64) error {
	if n.shared != nil {
		return ErrSharedMode
	}
	if err := n.checkRemoval(ctx, id); err != nil {
		return err
	}
	return n.eachShard(ctx, func(sh int) shardOp { return shardOp{Shard: sh, Op: "remove", Peer: Peer{ID: id}} })
}

// checkRemoval refuses a removal that would orphan a shard or leave it
// below quorum, counting as down the voters this member's view of each
// shard's leader reports not replicating.
func (n *Node) checkRemoval(ctx context.Context, id uint64) error {
	deadline := time.Now().Add(settleTimeout)
	for {
		err := n.checkRemovalOnce(id)
		if err == nil || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(50 * time.Millisecond):
		}
	}
}

func (n *Node) checkRemovalOnce(id uint64) error {
	placement := map[string][]string{}
	down := map[string]bool{}
	for sh := range n.opts.Shards {
		g := n.group(sh)
		if g == nil {
			continue
		}
		st := g.Status()
		name := strconv.Itoa(sh)
		for _, v := range st.Voters {
			placement[name] = append(placement[name], strconv.FormatUint(v, 10))
			if st.IsLeader && v != n.opts.ID && !n.live(st, v) {
				down[strconv.FormatUint(v, 10)] = true
			}
		}
	}
	if err := liveness.CheckRemoval(placement, down, strconv.FormatUint(id, 10)); err != nil {
		return fmt.Errorf("%w: removing member %d: %w", ErrMembership, id, err)
	}
	return nil
}

// eachShard runs every shard's part of a change, in shard order, each on
// its leader, retrying while leaderships move.
func (n *Node) eachShard(ctx context.Context, op func(sh int) shardOp) error {
	for sh := range n.opts.Shards {
		if err := n.runShardOp(ctx, op(sh)); err != nil {
			return err
		}
	}
	return nil
}

// runShardOp runs o here when this member leads its shard, else on the
// leader, retrying for a while when there is none or it moved.
func (n *Node) runShardOp(ctx context.Context, o shardOp) error {
	deadline := time.Now().Add(shardOpTimeout + catchUpTimeout)
	for {
		err := n.tryShardOp(ctx, o)
		if err == nil || !retryable(err) || time.Now().After(deadline) {
			return err
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// errMoved says a shard's leadership was not where the change went.
var errMoved = errors.New("cluster: the shard's leader moved")

func retryable(err error) bool {
	return errors.Is(err, errMoved) || errors.Is(err, matrixraft.ErrNotLeader) || errors.Is(err, matrixraft.ErrProposalDropped)
}

func (n *Node) tryShardOp(ctx context.Context, o shardOp) error {
	g := n.group(o.Shard)
	if g == nil {
		return fmt.Errorf("%w: shard %d is not open here", ErrMembership, o.Shard)
	}
	switch leader := g.Leader(); {
	case leader == 0:
		return errMoved
	case leader == n.opts.ID:
		return n.applyShardOp(ctx, g, o)
	default:
		return n.forwardShardOp(ctx, leader, o)
	}
}

// applyShardOp runs o on the shard's group, which this member leads.
func (n *Node) applyShardOp(ctx context.Context, g *matrixraft.Node, o shardOp) error {
	id := o.Peer.ID
	st := g.Status()
	if o.Op == "remove" {
		st = settled(ctx, g, id)
	}
	switch o.Op {
	case "add":
		if slices.Contains(st.Voters, id) {
			return nil
		}
		if !slices.Contains(st.Learners, id) {
			if err := g.AddLearner(ctx, id, joinAddr(o.Peer)); err != nil {
				return fmt.Errorf("%w: shard %d: adding member %d as a learner: %w", ErrMembership, o.Shard, id, err)
			}
		}
		if err := n.awaitCaughtUp(ctx, g, id); err != nil {
			return fmt.Errorf("%w: shard %d: member %d: %w", ErrMembership, o.Shard, id, err)
		}
		// It votes where placement wants it; elsewhere it stays a
		// learner, which holds the shard too.
		if want, err := n.desired(o.Shard, append(holders(g.Status()), id)); err == nil && !slices.Contains(want, id) {
			n.opts.Logger.Info("cluster: member added as a learner", "shard", o.Shard, "member", id)
			return nil
		}
		if err := g.PromoteLearner(ctx, id); err != nil {
			return fmt.Errorf("%w: shard %d: promoting member %d: %w", ErrMembership, o.Shard, id, err)
		}
		n.opts.Logger.Info("cluster: member added", "shard", o.Shard, "member", id)
		return nil
	case "remove":
		if !slices.Contains(st.Voters, id) && !slices.Contains(st.Learners, id) {
			return nil
		}
		if id == n.opts.ID {
			// The leader leaves last: it hands the shard on first.
			var to uint64
			for _, v := range st.Voters {
				if ps, ok := st.Peers[v]; v != id && ok && ps.State == "StateReplicate" && (to == 0 || ps.Lag < st.Peers[to].Lag) {
					to = v
				}
			}
			if to == 0 {
				return fmt.Errorf("%w: shard %d: no other voter to hand it to", ErrMembership, o.Shard)
			}
			tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			err := g.TransferLeadership(tctx, to)
			cancel()
			if err != nil {
				return fmt.Errorf("%w: %w", errMoved, err)
			}
			return errMoved // the new leader removes this member
		}
		// The leader's own view is the one that counts for its shard.
		var left, up int
		for _, v := range st.Voters {
			if v != id {
				left++
				if v == n.opts.ID || n.live(st, v) {
					up++
				}
			}
		}
		if left == 0 || up < left/2+1 {
			return fmt.Errorf("%w: shard %d: removing member %d would leave %d voters, %d of them live: %w", ErrMembership, o.Shard, id, left, up, liveness.ErrBelowQuorum)
		}
		if err := g.RemoveMember(ctx, id); err != nil {
			return fmt.Errorf("%w: shard %d: removing member %d: %w", ErrMembership, o.Shard, id, err)
		}
		n.opts.Logger.Info("cluster: member removed", "shard", o.Shard, "member", id)
		return nil
	}
	return fmt.Errorf("%w: unknown operation %q", ErrMembership, o.Op)
}

// awaitCaughtUp waits until learner id's replica is within balanceLag
// entries of the leader's log and replicating.
func (n *Node) awaitCaughtUp(ctx context.Context, g *matrixraft.Node, id uint64) error {
	deadline := time.Now().Add(catchUpTimeout)
	for {
		st := g.Status()
		if !st.IsLeader {
			return errMoved
		}
		if caughtUp(st, id) {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("not caught up in %v", catchUpTimeout)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// forwardShardOp runs o on member leader, over its HTTP surface.
func (n *Node) forwardShardOp(ctx context.Context, leader uint64, o shardOp) error {
	addr := n.book.get(leader).HTTPAddr
	if addr == "" {
		return fmt.Errorf("%w: shard %d is led by member %d, whose HTTP address is not known (--cluster-peers id@raft@resp@http)", ErrMembership, o.Shard, leader)
	}
	body, _ := json.Marshal(o)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://"+addr+adminShardOp, bytes.NewReader(body))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	if len(n.opts.AdminTokens) > 0 {
		req.Header.Set("Authorization", "Bearer "+n.opts.AdminTokens[0])
	}
	resp, err := n.client.Do(req)
	if err != nil {
		return fmt.Errorf("%w: member %d: %w", errMoved, leader, err)
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
	switch resp.StatusCode {
	case http.StatusOK:
		return nil
	case http.StatusConflict:
		return fmt.Errorf("%w: %s", errMoved, bytes.TrimSpace(msg))
	default:
		return fmt.Errorf("%w: shard %d on member %d: %s", ErrMembership, o.Shard, leader, bytes.TrimSpace(msg))
	}
}

// settled returns the status of g, led here, once every voter other than
// except replicates, or as it is after settleTimeout.
func settled(ctx context.Context, g *matrixraft.Node, except uint64) matrixraft.Status {
	deadline := time.Now().Add(settleTimeout)
	for {
		st := g.Status()
		all := true
		for _, v := range st.Voters {
			if ps, ok := st.Peers[v]; v != except && v != g.ID() && (!ok || ps.State != "StateReplicate") {
				all = false
			}
		}
		if all || !st.IsLeader || time.Now().After(deadline) {
			return st
		}
		select {
		case <-ctx.Done():
			return st
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// caughtUp says the leader whose status st replicates to member id, which
// is within balanceLag entries of its log.
func caughtUp(st matrixraft.Status, id uint64) bool {
	ps, ok := st.Peers[id]
	return ok && ps.State == "StateReplicate" && ps.Lag <= balanceLag
}

// live says the leader whose status st heard from voter v lately and
// replicates to it, and the members' jury does not hold v down.
func (n *Node) live(st matrixraft.Status, v uint64) bool {
	ps, ok := st.Peers[v]
	return ok && ps.Active && ps.State == "StateReplicate" && !n.Convicted(v)
}
