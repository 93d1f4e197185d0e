package memory

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/pack"
	"github.com/temporalstore/temporalstore-go/matrixark/plan"
)

// The Engine's lexical node score: micros per plan point, and the points
// that count.
const (
	lexicalMicros = 500
	lexicalCap    = 1000
)

// Score is a memory's lexical search score for query plan p: the Engine's
// lexical node score of text, min(plan score, 1000) × 500 micros, as
// clamp(micros / 10^6, 0, 1). It tops out at 0.5. A memory whose node was
// scored by its vectors scores the cosine instead (the Engine's node score
// of cosine × 10^6, as the same fraction).
func Score(p *plan.Plan, text string) float64 {
	micros := int64(min(p.Score(text), lexicalCap)) * lexicalMicros
	return min(max(float64(micros)/1e6, 0), 1)
}

// Search returns the memories r.Filter selects that the Engine retrieves
// for r.Query, best first, each with its Score; those scoring below
// r.Threshold are left out. r.Filter must name at least one id.
func (m *Memories) Search(ctx context.Context, t string, r SearchRequest) ([]Item, error) {
	if err := checkTenant(t); err != nil {
		return nil, err
	}
	mt, err := compile(r.Filter)
	if err != nil {
		return nil, err
	}
	n, err := limit(r.Limit, DefaultSearchLimit)
	if err != nil {
		return nil, err
	}
	if len(r.Query) > matrixark.MaxTextBytes {
		return nil, invalid("query longer than %d bytes", matrixark.MaxTextBytes)
	}
	nowMs := m.o.Now().UnixMilli()

	// Nodes of memories the filter leaves out, and of other sources, take
	// places too, so ask for more nodes than wanted, and for more again
	// while the nodes run out before the memories do.
	var hits []*record
	var cosines map[string]*float64
	for want := min(2*n+8, matrixark.MaxLimit); ; want = min(4*want, matrixark.MaxLimit) {
		blocks, err := m.e.Retrieve(ctx, t, matrixark.Query{Text: r.Query, User: mt.scope.UserID,
			Session: mt.scope.RunID, Agent: mt.scope.AgentID, MaxSummaryNodes: want, MaxEvents: 1, MaxEventNodes: 1})
		if err != nil {
			return nil, err
		}
		ids, nodeOf, cosineOf, nodes := memoryRefs(blocks)
		cosines = cosineOf
		recs, err := m.loadMany(ctx, t, ids)
		if err != nil {
			return nil, err
		}
		hits = hits[:0]
		for _, rec := range recs {
			// The block must come from the memory's own node: another
			// source may name itself mem:{uuid}.
			if rec != nil && rec.Node == nodeOf[rec.ID] && mt.match(rec, nowMs) {
				hits = append(hits, rec)
			}
		}
		if len(hits) >= n || nodes < want || want == matrixark.MaxLimit {
			break
		}
	}

	p := plan.New(r.Query)
	type scored struct {
		rec   *record
		score float64
	}
	all := make([]scored, 0, len(hits))
	for _, rec := range hits {
		s := Score(p, rec.Memory)
		if c := cosines[rec.ID]; c != nil {
			s = min(max(*c, 0), 1)
		}
		if s >= r.Threshold {
			all = append(all, scored{rec, s})
		}
	}
	// Stable: equal scores keep the Engine's order.
	slices.SortStableFunc(all, func(a, b scored) int { return cmp.Compare(b.score, a.score) })
	out := make([]Item, 0, min(n, len(all)))
	for _, s := range all[:min(n, len(all))] {
		it := s.rec.Item
		it.Score = &s.score
		out = append(out, it)
	}
	return out, nil
}

// memoryRefs are the memory ids the blocks name, in block order, the node
// each was named by, and how many nodes the blocks came from.
func memoryRefs(blocks []pack.Block) (ids []string, nodeOf map[string]uint64, cosineOf map[string]*float64, nodes int) {
	nodeOf, cosineOf = map[string]uint64{}, map[string]*float64{}
	seenNode := map[uint64]bool{}
	for _, b := range blocks {
		if !seenNode[b.NodeHash] {
			seenNode[b.NodeHash] = true
			nodes++
		}
		ref, ok := strings.CutPrefix(b.SourceRef, sourcePrefix)
		if !ok {
			continue
		}
		id, ok := parseID(ref)
		if !ok {
			continue
		}
		if _, dup := nodeOf[id]; !dup {
			ids = append(ids, id)
			nodeOf[id], cosineOf[id] = b.NodeHash, b.Cosine
		}
	}
	return ids, nodeOf, cosineOf, nodes
}

// sortRecords orders memories newest first, then by id.
func sortRecords(recs []*record) {
	slices.SortFunc(recs, func(a, b *record) int {
		if c := strings.Compare(b.CreatedAt, a.CreatedAt); c != 0 {
			return c
		}
		return strings.Compare(a.ID, b.ID)
	})
}
