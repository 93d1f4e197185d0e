package cluster

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixcache/topology"
	"github.com/temporalstore/temporalstore-go/matrixraft"
)

// DefaultReplicas is how many members vote in each shard's group
// (Options.Replicas); the other members hold the shard as learners.
const DefaultReplicas = 3

// desired is the members that should vote in shard sh: the owners of the
// shard's name on matrixcache's topology ring of members, one failure
// domain (Peer.Zone) after another, then the others, leaving out the
// members the jury convicted. Every member computes the same from the
// same members and convictions.
func (n *Node) desired(sh int, members []uint64) ([]uint64, error) {
	nodes := make([]topology.Node, 0, len(members))
	for _, id := range members {
		// A member the jury convicted owns nothing: its shards' voters
		// move to live members, as a dead member's replacement.
		state := topology.Live
		if n.Convicted(id) {
			state = topology.Down
		}
		nodes = append(nodes, topology.Node{ID: topology.NodeID(strconv.FormatUint(id, 10)), Weight: 1, Domain: n.book.get(id).Zone, State: state})
	}
	r, err := topology.New(topology.Options{}, nodes...)
	if err != nil {
		return nil, err
	}
	owners, err := r.Owners(fmt.Appendf(nil, "%s/%s/%d", n.opts.Namespace, n.opts.Table, sh), min(n.opts.Replicas, len(members)))
	if err != nil {
		return nil, err
	}
	out := make([]uint64, 0, len(owners))
	for _, o := range owners {
		id, _ := strconv.ParseUint(string(o), 10, 64)
		out = append(out, id)
	}
	slices.Sort(out)
	return out, nil
}

// holders is every voter and learner of a shard, sorted.
func holders(st matrixraft.Status) []uint64 {
	out := append(slices.Clone(st.Voters), st.Learners...)
	slices.Sort(out)
	return slices.Compact(out)
}

// place moves one step towards shard sh's desired voters, on its leader:
// a wanted learner that has caught up is promoted first; once every
// wanted member votes, an unwanted voter becomes a learner. One change a
// round, and a demotion only past the wanted count, so the shard never
// has fewer voters than it should. It reports the moves left.
func (n *Node) place(ctx context.Context, sh int, g *matrixraft.Node) int {
	st := g.Status()
	want, err := n.desired(sh, holders(st))
	if err != nil {
		n.opts.Logger.Warn("cluster: placement", "shard", sh, "err", err)
		return 0
	}
	var promote, demote []uint64
	for _, id := range want {
		if !slices.Contains(st.Voters, id) {
			promote = append(promote, id)
		}
	}
	for _, v := range st.Voters {
		if !slices.Contains(want, v) {
			demote = append(demote, v)
		}
	}
	left := len(promote) + len(demote)
	cctx, cancel := context.WithTimeout(ctx, shardOpTimeout)
	defer cancel()
	for _, id := range promote {
		if caughtUp(st, id) && st.Peers[id].Learner {
			if err := g.PromoteLearner(cctx, id); err != nil {
				n.opts.Logger.Debug("cluster: placement: promotion did not complete", "shard", sh, "member", id, "err", err)
				return left
			}
			n.placeMoves.Add(1)
			n.opts.Logger.Info("cluster: placement: member now votes", "shard", sh, "member", id, "moves_left_here", left-1)
			return left - 1
		}
	}
	if len(promote) > 0 || len(demote) == 0 {
		return left // wanted members still catching up, or nothing to do
	}
	if len(want) < min(n.opts.Replicas, len(holders(st))) {
		// Fewer live members than voters wanted: a convicted voter has no
		// replacement, and taking its vote away would only shrink the
		// quorum. It keeps it.
		return left
	}
	if len(demote) == 1 && demote[0] == n.opts.ID {
		// The leader itself is to step back: it hands the shard to a
		// wanted voter first, which then demotes it.
		for _, to := range want {
			if n.live(st, to) && caughtUp(st, to) {
				if err := g.TransferLeadership(cctx, to); err != nil {
					n.opts.Logger.Debug("cluster: placement: leadership transfer did not complete", "shard", sh, "to", to, "err", err)
				}
				return left
			}
		}
		return left
	}
	for _, v := range demote {
		if v == n.opts.ID {
			continue // demoted by the next leader, once another is demoted
		}
		if err := g.AddLearner(cctx, v, joinAddr(n.book.get(v))); err != nil {
			n.opts.Logger.Debug("cluster: placement: demotion did not complete", "shard", sh, "member", v, "err", err)
			return left
		}
		n.placeMoves.Add(1)
		n.opts.Logger.Info("cluster: placement: member now a learner", "shard", sh, "member", v, "moves_left_here", left-1)
		return left - 1
	}
	return left
}

// placeAll runs place on every shard this member leads and logs the
// moves left across them, with an estimate of the time they take at the
// pace so far.
func (n *Node) placeAll(ctx context.Context) {
	left := 0
	for sh := range n.opts.Shards {
		if g := n.group(sh); g != nil && g.Leader() == n.opts.ID {
			left += n.place(ctx, sh, g)
		}
	}
	n.placeMu.Lock()
	defer n.placeMu.Unlock()
	switch {
	case left == 0:
		if n.placeStart != (time.Time{}) {
			n.opts.Logger.Info("cluster: placement done here", "moves", n.placeMoves.Load()-n.placeFrom, "took", time.Since(n.placeStart).Round(time.Millisecond))
		}
		n.placeStart = time.Time{}
	case n.placeStart == (time.Time{}):
		n.placeStart, n.placeFrom = time.Now(), n.placeMoves.Load()
		n.opts.Logger.Info("cluster: placement moves to make here", "moves", left)
	default:
		done := n.placeMoves.Load() - n.placeFrom
		eta := "unknown"
		if done > 0 {
			eta = (time.Since(n.placeStart) / time.Duration(done) * time.Duration(left)).Round(time.Second).String()
		}
		n.opts.Logger.Info("cluster: placement in progress here", "done", done, "left", left, "eta", eta)
	}
	n.placeLeft.Store(int64(left))
}
