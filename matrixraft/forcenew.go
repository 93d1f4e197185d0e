package matrixraft

import (
	"context"
	"fmt"
	"maps"
	"math"
	"slices"

	pb "go.etcd.io/raft/v3/raftpb"
	"google.golang.org/protobuf/proto"
)

// forceNewCluster rewrites the stored log so that the node restarts as the
// only voter of its group: entries after the commit index are discarded,
// and one committed membership change per other member (voter or learner)
// removes it, appended at commit+1 under the stored term. The rewrite is
// one durable log write; raft applies the removals on restart like any
// other committed entry, so the removed IDs are recorded and never reused.
// It returns the removed IDs; with no other member it writes nothing.
func (s *Storage) forceNewCluster(ctx context.Context, self uint64) ([]uint64, error) {
	snap, err := s.mem.Snapshot()
	if err != nil {
		return nil, err
	}
	s.mu.Lock()
	hs := s.hs
	s.mu.Unlock()
	snapIdx := snap.GetMetadata().GetIndex()
	commit := max(hs.commit, snapIdx)
	if hs.term == 0 {
		return nil, fmt.Errorf("%w: ForceNewCluster needs a stored term", ErrInvalidOptions)
	}

	// The members as of the commit index: the snapshot's configuration,
	// then every committed membership change after it.
	members := map[uint64]bool{}
	cs := snap.GetMetadata().GetConfState()
	for _, ids := range [][]uint64{cs.GetVoters(), cs.GetLearners(), cs.GetVotersOutgoing(), cs.GetLearnersNext()} {
		for _, id := range ids {
			members[id] = true
		}
	}
	if commit > snapIdx {
		ents, err := s.mem.Entries(snapIdx+1, commit+1, math.MaxUint64)
		if err != nil {
			return nil, fmt.Errorf("read committed entries: %w", err)
		}
		for _, e := range ents {
			if err := replayMembership(members, e); err != nil {
				return nil, err
			}
		}
	}
	var others []uint64
	for _, id := range slices.Sorted(maps.Keys(members)) {
		if id != self {
			others = append(others, id)
		}
	}
	if len(others) == 0 && members[self] {
		return nil, nil
	}

	var ents []*pb.Entry
	next := commit + 1
	add := func(typ pb.ConfChangeType, id uint64) error {
		cc := &pb.ConfChangeV2{
			Changes: []*pb.ConfChangeSingle{{Type: new(typ), NodeId: new(id)}},
			Context: encodeCCContext(0, 0, ""),
		}
		data, err := proto.Marshal(cc)
		if err != nil {
			return err
		}
		ents = append(ents, &pb.Entry{Type: new(pb.EntryConfChangeV2), Term: new(hs.term), Index: new(next), Data: data})
		next++
		return nil
	}
	if !members[self] {
		if err := add(pb.ConfChangeAddNode, self); err != nil {
			return nil, err
		}
	}
	for _, id := range others {
		if err := add(pb.ConfChangeRemoveNode, id); err != nil {
			return nil, err
		}
	}
	hs.commit = next - 1
	// Entries at commit+1 replace whatever uncommitted suffix the log held,
	// in memory and on recovery alike.
	if err := s.Save(ctx, hs.proto(), ents, nil, true); err != nil {
		return nil, fmt.Errorf("persist the new configuration: %w", err)
	}
	return others, nil
}

// replayMembership applies a committed membership change entry to a member
// set; other entries leave it as it is.
func replayMembership(members map[uint64]bool, e *pb.Entry) error {
	var cc pb.ConfChangeI
	switch e.GetType() {
	case pb.EntryConfChange:
		var v1 pb.ConfChange
		if err := proto.Unmarshal(e.GetData(), &v1); err != nil {
			return fmt.Errorf("%w: conf change %d: %v", ErrCorrupt, e.GetIndex(), err)
		}
		cc = &v1
	case pb.EntryConfChangeV2:
		var v2 pb.ConfChangeV2
		if err := proto.Unmarshal(e.GetData(), &v2); err != nil {
			return fmt.Errorf("%w: conf change %d: %v", ErrCorrupt, e.GetIndex(), err)
		}
		cc = &v2
	default:
		return nil
	}
	for _, c := range cc.AsV2().GetChanges() {
		switch c.GetType() {
		case pb.ConfChangeAddNode, pb.ConfChangeAddLearnerNode:
			members[c.GetNodeId()] = true
		case pb.ConfChangeRemoveNode:
			delete(members, c.GetNodeId())
		}
	}
	return nil
}
