package cluster

import (
	"context"
	"slices"
	"time"
)

// DefaultBalanceInterval is how often a member looks at the shards it
// leads (Options.BalanceInterval).
const DefaultBalanceInterval = 2 * time.Second

// balanceLag bounds how far behind the leader a member may be and still
// be handed the leadership: one that must catch up first would stall the
// shard's writes.
const balanceLag = 64

// preferred is the member that should lead shard sh among its voters:
// the voters in ID order, one shard after another, so that each leads its
// share.
func preferred(sh int, voters []uint64) uint64 {
	ids := slices.Sorted(slices.Values(voters))
	return ids[sh%len(ids)]
}

// balance hands each shard this member leads, and should not, to the
// member that should, when that one is up to date. Every member does the
// same for its own shards, so leadership spreads evenly and stays; a
// shard whose preferred member is down stays where it is.
func (n *Node) balance(ctx context.Context) {
	for sh := range n.opts.Shards {
		g := n.group(sh)
		if g == nil || g.Leader() != n.opts.ID {
			continue
		}
		st := g.Status()
		voters := st.Voters
		if want, err := n.desired(sh, holders(st)); err == nil && len(want) > 0 {
			voters = want // lead where placement puts the voters, not on one leaving
		}
		if len(voters) == 0 {
			continue
		}
		to := preferred(sh, voters)
		if to == n.opts.ID {
			continue
		}
		if !caughtUp(st, to) || st.Peers[to].Learner {
			continue
		}
		tctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		err := g.TransferLeadership(tctx, to)
		cancel()
		if err == nil {
			n.transfers.Add(1)
			n.opts.Logger.Info("cluster: leadership handed over", "shard", sh, "to", to)
		} else {
			n.opts.Logger.Debug("cluster: leadership transfer did not complete", "shard", sh, "to", to, "err", err)
		}
	}
}

// balanceLoop runs balance every interval until ctx ends.
func (n *Node) balanceLoop(ctx context.Context, every time.Duration) {
	defer close(n.balanceDone)
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			n.placeAll(ctx)
			n.balance(ctx)
		}
	}
}
