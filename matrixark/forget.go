package matrixark

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
)

// maxForgetBatch bounds the deletes of one Apply of Forget.
const maxForgetBatch = 1000

// NodeHash is the hash of tenant t's node of a source: what Ingest
// returns for it.
func NodeHash(t string, kind Kind, sourceID string) uint64 {
	return hashOf(t + ":" + strconv.Itoa(int(kind)-1) + ":" + sourceID)
}

// Forget deletes tenant t's node of a source with everything ingested into
// it (events, entities, the marks of what was ingested), so that nothing
// of it is retrieved or packed again; ingesting the source afterwards
// starts a new node. It reports whether the node existed. A node with more
// than 1,000 records is deleted in several batches, the node record last,
// so a Forget cut short leaves the node findable and can be run again.
func (e *Engine) Forget(ctx context.Context, t string, kind Kind, sourceID string) (bool, error) {
	if err := checkName("tenant", t, true); err != nil {
		return false, err
	}
	if _, ok := kindNames[kind]; !ok {
		return false, fmt.Errorf("%w: kind %d", ErrInvalid, kind)
	}
	st, err := e.state(ctx, t)
	if err != nil {
		return false, err
	}
	node := NodeHash(t, kind, sourceID)
	got, err := e.store.Get(ctx, [][]byte{nodeKey(t, node)}, ReadOpts{})
	if err != nil || got[0] == nil {
		return false, err
	}
	var dels []Mutation
	var events []uint64
	flush := func() error {
		if len(dels) == 0 {
			return nil
		}
		err := e.store.Apply(ctx, dels, WriteOpts{Durable: true})
		dels = dels[:0]
		return err
	}
	for i, prefix := range [][]byte{eventPrefix(t, node), entityPrefix(t, node), sourcePrefix(t, node)} {
		isEvents := i == 0
		var ferr error
		err := e.store.Scan(ctx, PrefixRange(prefix), ReadOpts{NoFill: true}, func(k, v []byte) bool {
			if isEvents {
				var ev Event
				if json.Unmarshal(v, &ev) == nil {
					events = append(events, ev.ID)
				}
			}
			dels = append(dels, Mutation{Key: append([]byte(nil), k...), Delete: true})
			if len(dels) >= maxForgetBatch {
				ferr = flush()
			}
			return ferr == nil
		})
		if err == nil {
			err = ferr
		}
		if err == nil {
			err = flush()
		}
		if err != nil {
			return false, err
		}
	}
	dels = append(dels, Mutation{Key: nodeKey(t, node), Delete: true})
	if err := flush(); err != nil {
		return false, err
	}
	st.mu.Lock()
	st.removeNode(node, events)
	st.mu.Unlock()
	return true, nil
}

func (st *tenant) removeNode(node uint64, events []uint64) {
	if n := st.nodes[node]; n != nil && st.userVecs[n.User] != nil {
		gone := make(map[uint64]bool, len(events))
		for _, id := range events {
			gone[id] = true
		}
		st.userVecs[n.User].remove(gone)
		delete(st.userVecs[n.User].nodes, node)
	}
	delete(st.nodes, node)
	delete(st.texts, node)
	st.nodeIdx.Remove(node)
	if st.vecL0 != nil {
		st.vecL0.Remove(node)
	}
	if st.vecL1 != nil {
		st.vecL1.Remove(node)
	}
	for _, id := range events {
		if st.events[id].node == node {
			st.eventIdx.Remove(id)
			delete(st.events, id)
		}
	}
}
