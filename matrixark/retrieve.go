package matrixark

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixark/embed"
	"github.com/temporalstore/temporalstore-go/matrixark/pack"
	"github.com/temporalstore/temporalstore-go/matrixark/plan"
	"github.com/temporalstore/temporalstore-go/matrixark/vindex"
)

// Query is a retrieval: a text, a scope and a time window, with the
// original's bounds.
type Query struct {
	Text string `json:"query"`
	// Scope: only nodes of this user, session and agent (empty: any).
	User    string `json:"user_id,omitempty"`
	Session string `json:"session_id,omitempty"`
	Agent   string `json:"agent_id,omitempty"`
	// NodeHashes, when given, are the candidates instead of the indexes'.
	NodeHashes []uint64 `json:"node_hashes,omitempty"`
	// MaxEvents bounds the L2 blocks (default 16, 1..1000).
	MaxEvents int `json:"max_events,omitempty"`
	// MaxSummaryNodes bounds the nodes whose L0/L1 are returned (default 32).
	MaxSummaryNodes int `json:"max_summary_nodes,omitempty"`
	// MaxEventNodes bounds the nodes whose events are expanded (default 4).
	MaxEventNodes int `json:"max_event_nodes,omitempty"`
	// The window of event times, in ms; 0 leaves a side open.
	StartMs int64 `json:"start_ms,omitempty"`
	EndMs   int64 `json:"end_ms,omitempty"`
	// Events below these are left out.
	MinConfidence float64 `json:"min_confidence,omitempty"`
	MinImportance float64 `json:"min_importance,omitempty"`
	// PreferCurrentAgent favours nodes whose source names the agent scope.
	PreferCurrentAgent bool `json:"prefer_current_agent,omitempty"`
}

func (q *Query) defaults() error {
	if len(q.Text) > MaxTextBytes {
		return fmt.Errorf("%w: query longer than %d bytes", ErrInvalid, MaxTextBytes)
	}
	for _, c := range []struct{ what, v string }{{"user", q.User}, {"session", q.Session}, {"agent", q.Agent}} {
		if err := checkName(c.what, c.v, false); err != nil {
			return err
		}
	}
	if q.MaxEvents == 0 {
		q.MaxEvents = 16
	}
	q.MaxEvents = min(max(q.MaxEvents, 1), MaxLimit)
	if q.MaxSummaryNodes <= 0 {
		q.MaxSummaryNodes = 32
	}
	if q.MaxEventNodes <= 0 {
		q.MaxEventNodes = 4
	}
	if len(q.NodeHashes) > MaxLimit {
		return fmt.Errorf("%w: more than %d node hashes", ErrInvalid, MaxLimit)
	}
	return nil
}

// ranked is a candidate node and its scores.
type ranked struct {
	n           *Node
	score       int64
	cosine      *float64 // when the node was scored by its vectors
	refs        int
	summaryPlan uint32
	summary     plan.Text
}

// Retrieve ranks tenant t's nodes for q and expands the best into blocks:
// L0/L1 of the selected nodes, the newest matching L2 events of the top
// ones, and their entities, in the final order, deduplicated.
func (e *Engine) Retrieve(ctx context.Context, t string, q Query) ([]pack.Block, error) {
	if err := checkName("tenant", t, true); err != nil {
		return nil, err
	}
	if err := q.defaults(); err != nil {
		return nil, err
	}
	st, err := e.state(ctx, t)
	if err != nil {
		return nil, err
	}
	p := plan.New(q.Text)
	qv := e.queryVector(ctx, t, q.Text)

	st.mu.RLock()
	cands, hits := e.candidates(st, p, qv, &q)
	rs := make([]ranked, 0, len(cands))
	for _, n := range cands {
		rs = append(rs, e.scoreNode(n, st.texts[n.Hash], p, qv))
	}
	st.mu.RUnlock()
	if len(rs) == 0 {
		return nil, nil
	}

	// Selection: the best S nodes, reranked by their summaries' plan score.
	slices.SortFunc(rs, func(a, b ranked) int {
		return cmpDesc(a.score, b.score, a.refs, b.refs, a.n.Hash, b.n.Hash)
	})
	s := min(max(q.MaxSummaryNodes, 1), len(rs))
	rs = rs[:s]
	for i := range rs {
		r := &rs[i]
		r.summaryPlan, _ = p.ScoreText(r.summary)
		r.score += int64(r.summaryPlan) * 1000
		if q.PreferCurrentAgent && strings.Contains(r.n.SourceRef, agentScopeKey) {
			r.score += 125_000
		}
	}
	slices.SortFunc(rs, func(a, b ranked) int {
		if c := cmpDesc(a.score, b.score, a.refs, b.refs, 0, 0); c != 0 {
			return c
		}
		if a.summaryPlan != b.summaryPlan {
			return cmpInt(b.summaryPlan, a.summaryPlan)
		}
		if a.n.LastEventMs != b.n.LastEventMs {
			return cmpInt(b.n.LastEventMs, a.n.LastEventMs)
		}
		return cmpInt(a.n.Hash, b.n.Hash)
	})

	var blocks []pack.Block
	for _, r := range rs {
		blocks = append(blocks, e.summaryBlocks(t, r.n)...)
	}
	// With a query vector, each expanded event's own cosine, by URI.
	var evCos eventCosines
	if qv != nil {
		evCos = eventCosines{st: st, qv: qv, by: map[string]float64{}}
	}
	eventNodes := min(q.MaxEventNodes, s, q.MaxEvents)
	emitted := 0
	for i := 0; i < eventNodes && emitted < q.MaxEvents; i++ {
		left := eventNodes - i
		perNode := min(int(math.Ceil(float64(max(q.MaxEvents-emitted, 1))/float64(max(left, 1))))*eventOverfetch, q.MaxEvents)
		evs, err := e.nodeEvents(ctx, t, rs[i].n, p, &q, min(perNode, q.MaxEvents-emitted), evCos)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, evs...)
		emitted += len(evs)
	}
	if len(hits) > 0 {
		evs, err := e.hitEvents(ctx, t, hits, &q, evCos)
		if err != nil {
			return nil, err
		}
		blocks = append(blocks, evs...)
	}
	ents, err := e.entityBlocks(ctx, t, rs, p, q.MaxEvents)
	if err != nil {
		return nil, err
	}
	blocks = append(blocks, ents...)
	cosines := make(map[uint64]*float64, len(rs))
	for _, r := range rs {
		cosines[r.n.Hash] = r.cosine
	}
	scores := make(map[string]uint32, len(blocks))
	for i := range blocks {
		sc := p.Score(blocks[i].Text)
		blocks[i].Score = int64(sc)
		blocks[i].Cosine = cosines[blocks[i].NodeHash]
		// An embedded query orders events by their own similarity too:
		// a paraphrase shares no words to score.
		if c, ok := evCos.by[blocks[i].URI]; ok && c > 0 {
			sc += min(uint32(min(c, 1)*cosineOrderWeight), math.MaxUint32-sc)
		}
		scores[blocks[i].Text] = max(scores[blocks[i].Text], sc)
	}
	pack.Order(blocks, func(text string) uint32 { return scores[text] })
	return pack.Dedup(blocks), nil
}

// queryVector embeds the query when the tenant's Space takes it; a
// declined or failed query runs lexical-only.
func (e *Engine) queryVector(ctx context.Context, t, text string) []float32 {
	if e.o.Embedder == nil || strings.TrimSpace(text) == "" {
		return nil
	}
	if _, pinned := e.spaces.Pinned(t); !pinned {
		return nil
	}
	vecs, info, err := embed.EmbedWithInfo(ctx, e.o.Embedder, []string{text})
	if err == nil {
		_, err = e.spaces.Check(ctx, t, embed.SpaceOf(info))
	}
	if err != nil {
		e.o.Logger.Warn("query runs lexical-only", "tenant", t, "err", err)
		return nil
	}
	return vecs[0]
}

// candidates are the nodes to rank: the caller's, or the union of the
// vector and BM25 top-C (nodes, and the nodes of matching events), in
// scope and window. With neither a term nor a vector to go by, the newest
// nodes in scope.
//
// It also returns where the events to expand directly are
// (Options.EventHits): the user's nearest to the query vector, then the
// event index's best matches, each in rank order.
func (e *Engine) candidates(st *tenant, p *plan.Plan, qv []float32, q *Query) ([]*Node, []eventLoc) {
	var out []*Node
	var hits []eventLoc
	seen := map[uint64]bool{}
	take := func(h uint64) {
		if seen[h] {
			return
		}
		seen[h] = true
		if n, ok := st.nodes[h]; ok && inScope(n, q) {
			out = append(out, n)
		}
	}
	if len(q.NodeHashes) > 0 {
		for _, h := range q.NodeHashes {
			take(h)
		}
		return out, nil
	}
	c := vindex.CandidateCount(max(q.MaxSummaryNodes, q.MaxEvents))
	// The scope applies before the top C: a user's evidence must not lose
	// its places to other users' documents. A user's scope searches that
	// user's postings and vectors alone; the rest of a scope filters them.
	var keepNode, keepEvent func(uint64) bool
	if q.Session != "" || q.Agent != "" || q.StartMs > 0 || q.EndMs > 0 {
		keepNode = func(h uint64) bool {
			n, ok := st.nodes[h]
			return ok && inScope(n, q)
		}
		keepEvent = func(id uint64) bool { return keepNode(st.events[id].node) }
	}
	uv := st.userVecs[q.User]
	switch {
	case qv == nil:
	case q.User != "":
		if uv != nil {
			for _, h := range uv.nearestNodes(qv, c, keepNode) {
				take(h)
			}
		}
	default:
		for _, idx := range []*vindex.Index{st.vecL0, st.vecL1} {
			if idx != nil {
				for _, h := range idx.Search(qv, c) {
					take(h.ID)
				}
			}
		}
	}
	hitSeen := map[uint64]bool{}
	hit := func(id uint64) {
		loc := st.events[id]
		take(loc.node)
		if !hitSeen[id] {
			hitSeen[id] = true
			hits = append(hits, loc)
		}
	}
	if qv != nil && q.User != "" && uv != nil && e.o.EventHits > 0 {
		for _, id := range uv.nearest(qv, e.o.EventHits, keepEvent) {
			hit(id)
		}
	}
	if len(p.Groups) > 0 {
		search := func(x *plan.Index, text string, keep func(uint64) bool) []plan.Hit {
			if q.User != "" {
				return x.SearchIn(text, c, q.User, keep)
			}
			return x.SearchFunc(text, c, keep)
		}
		for _, h := range search(st.nodeIdx, q.Text, keepNode) {
			take(h.ID)
		}
		for i, h := range search(st.eventIdx, q.Text, keepEvent) {
			if i < e.o.EventHits {
				hit(h.ID)
			} else {
				take(st.events[h.ID].node)
			}
		}
	}
	if len(out) > 0 || len(p.Groups) > 0 {
		return out, hits
	}
	for _, n := range st.nodes {
		if inScope(n, q) {
			out = append(out, n)
		}
	}
	slices.SortFunc(out, func(a, b *Node) int { return cmpDesc(a.LastEventMs, b.LastEventMs, 0, 0, a.Hash, b.Hash) })
	return out[:min(len(out), c)], nil
}

// keeps says whether ev passes the query's confidence and importance
// floors.
func (q *Query) keeps(ev *Event) bool {
	return ev.Confidence >= q.MinConfidence && ev.Importance >= q.MinImportance
}

func inScope(n *Node, q *Query) bool {
	switch {
	case q.User != "" && n.User != q.User,
		q.Session != "" && n.Session != q.Session,
		q.Agent != "" && n.Agent != q.Agent,
		q.StartMs > 0 && n.LastEventMs < q.StartMs,
		q.EndMs > 0 && n.FirstEventMs > q.EndMs:
		return false
	}
	return true
}

// scoreNode is a candidate's first score, in micros: an embedded node's
// best cosine to the query; an unembedded one's plan score, capped so that
// it stays below a perfect cosine (it can still be ranked, never over a
// strong semantic match).
func (e *Engine) scoreNode(n *Node, tx nodeTexts, p *plan.Plan, qv []float32) ranked {
	plan, groups := p.ScoreText(tx.all)
	r := ranked{n: n, refs: groups, summary: tx.summary}
	if qv != nil && len(n.VecL0) == len(qv) {
		best := vindex.Cosine(qv, n.VecL0)
		if len(n.VecL1) == len(qv) {
			best = max(best, vindex.Cosine(qv, n.VecL1))
		}
		r.score, r.cosine = int64(best*1e6), &best
		return r
	}
	if !e.o.LexicalOff {
		r.score = int64(min(plan, 1000)) * hybridLexicalMu
	}
	return r
}

// nodeEvents are up to want L2 blocks of n: its newest events in the
// window (at most eventScanCap looked at) that pass the filters and match
// the query's topic or a group (any, when the query has no groups).
func (e *Engine) nodeEvents(ctx context.Context, t string, n *Node, p *plan.Plan, q *Query, want int, cos eventCosines) ([]pack.Block, error) {
	var out []pack.Block
	scanned := 0
	var bad error
	err := e.store.Scan(ctx, PrefixRange(eventPrefix(t, n.Hash)), ReadOpts{Reverse: true}, func(_, v []byte) bool {
		var ev Event
		if ev, bad = decodeEventNoVec(v); bad != nil {
			return false
		}
		if q.EndMs > 0 && ev.EventMs > q.EndMs {
			return true
		}
		if q.StartMs > 0 && ev.EventMs < q.StartMs {
			return false // newest first: the rest are older still
		}
		scanned++
		if q.keeps(&ev) && (len(p.Groups) == 0 || p.MatchTopic(ev.Text) || p.MatchedGroups(ev.Text) > 0) {
			out = append(out, eventBlock(t, &ev))
			cos.note(out[len(out)-1].URI, ev.ID)
		}
		return scanned < eventScanCap && len(out) < want
	})
	if err == nil {
		err = bad
	}
	return out, err
}

// eventBlock is ev as an L2 block.
func eventBlock(t string, ev *Event) pack.Block {
	return pack.Block{
		URI: eventURI(t, ev.Node, ev.EventMs, ev.Seq), Tier: pack.TierL2, RecordType: ev.RecordType,
		NodeHash: ev.Node, EventTimeMs: ev.EventMs, Text: ev.Text, SourceRef: ev.SourceRef,
	}
}

// hitEvents are the L2 blocks of the events at locs (the event index's
// best matches) that pass the query's window and filters.
func (e *Engine) hitEvents(ctx context.Context, t string, locs []eventLoc, q *Query, cos eventCosines) ([]pack.Block, error) {
	keys := make([][]byte, len(locs))
	for i, l := range locs {
		keys[i] = eventKey(t, l.node, l.ms, l.seq)
	}
	vals, err := getAll(ctx, e.store, keys, ReadOpts{})
	if err != nil {
		return nil, err
	}
	out := make([]pack.Block, 0, len(vals))
	for _, v := range vals {
		if v == nil {
			continue // forgotten since the index was read
		}
		ev, err := decodeEventNoVec(v)
		if err != nil {
			return nil, err
		}
		if q.EndMs > 0 && ev.EventMs > q.EndMs || q.StartMs > 0 && ev.EventMs < q.StartMs || !q.keeps(&ev) {
			continue
		}
		out = append(out, eventBlock(t, &ev))
		cos.note(out[len(out)-1].URI, ev.ID)
	}
	return out, nil
}

// eventCosines are the cosines of expanded events to a query vector, by
// block URI, the vectors taken from st's memory; the zero value (no query
// vector) notes nothing.
type eventCosines struct {
	st *tenant
	qv []float32
	by map[string]float64
}

func (c eventCosines) note(uri string, id uint64) {
	if c.by == nil {
		return
	}
	c.st.mu.RLock()
	v := c.st.events[id].vec
	c.st.mu.RUnlock()
	if len(v) == len(c.qv) {
		c.by[uri] = vindex.Cosine(c.qv, v)
	}
}

// vecField starts an event record's vector. Event has no field but Vec
// that holds an array, and a string's quotes are escaped, so in a record
// json.Marshal wrote it can only be Vec's.
var vecField = []byte(`,"vec":[`)

// decodeEventNoVec decodes an event record but not its vector, which it
// cuts out first: retrieval takes vectors from memory, and parsing
// hundreds of JSON numbers an event was most of an embedded query's time.
func decodeEventNoVec(v []byte) (Event, error) {
	var ev Event
	if i := bytes.Index(v, vecField); i > 0 {
		if j := bytes.IndexByte(v[i:], ']'); j > 0 {
			cut := make([]byte, 0, len(v)-j-1)
			v = append(append(cut, v[:i]...), v[i+j+1:]...)
		}
	}
	err := json.Unmarshal(v, &ev)
	return ev, err
}

// entityBlocks are the best entities of the selected nodes by the plan's
// score of their name and value, as L1 blocks: at most min(4·limit, 256)
// read, MaxEntityBlocks returned, none when the query has no terms.
func (e *Engine) entityBlocks(ctx context.Context, t string, rs []ranked, p *plan.Plan, limit int) ([]pack.Block, error) {
	if len(p.Groups) == 0 {
		return nil, nil
	}
	budget := min(4*limit, maxEntityLoad)
	type scored struct {
		rec   EntityRecord
		score uint32
	}
	var all []scored
	for _, r := range rs {
		if budget <= 0 {
			break
		}
		var bad error
		err := e.store.Scan(ctx, PrefixRange(entityPrefix(t, r.n.Hash)), ReadOpts{}, func(_, v []byte) bool {
			var rec EntityRecord
			if bad = json.Unmarshal(v, &rec); bad != nil {
				return false
			}
			budget--
			if s := p.Score(rec.Name + " " + rec.Value); s > 0 {
				all = append(all, scored{rec, s})
			}
			return budget > 0
		})
		if err == nil {
			err = bad
		}
		if err != nil {
			return nil, err
		}
	}
	slices.SortStableFunc(all, func(a, b scored) int { return cmpInt(b.score, a.score) })
	out := make([]pack.Block, 0, min(len(all), e.o.MaxEntityBlocks))
	for _, x := range all[:min(len(all), e.o.MaxEntityBlocks)] {
		text := x.rec.Type + " " + x.rec.Name
		if x.rec.Value != "" {
			text += ": " + x.rec.Value
		}
		out = append(out, pack.Block{
			URI: entityURI(t, x.rec.Node, x.rec.Hash), Tier: pack.TierL1, RecordType: RecordEntity,
			NodeHash: x.rec.Node, EventTimeMs: x.rec.UpdatedMs, Text: text,
			SourceRef: "entity:" + strconv.FormatUint(x.rec.Hash, 10),
		})
	}
	return out, nil
}

func (e *Engine) summaryBlocks(t string, n *Node) []pack.Block {
	out := []pack.Block{{URI: nodeURI(t, n.Hash) + "/l0", Tier: pack.TierL0, RecordType: RecordMatchedChunk,
		NodeHash: n.Hash, EventTimeMs: n.LastEventMs, Text: n.L0, SourceRef: n.SourceRef}}
	if n.L1 != "" {
		out = append(out, pack.Block{URI: nodeURI(t, n.Hash) + "/l1", Tier: pack.TierL1, RecordType: RecordMatchedChunk,
			NodeHash: n.Hash, EventTimeMs: n.LastEventMs, Text: n.L1, SourceRef: n.SourceRef})
	}
	return out
}

// URIs of blocks: tsctx://tenant/{t}/node/{n}[/l0|/l1|/event/{ms}|/entity/{h}].
func nodeURI(t string, n uint64) string {
	return "tsctx://tenant/" + t + "/node/" + strconv.FormatUint(n, 10)
}

func eventURI(t string, n uint64, ms int64, seq uint32) string {
	return nodeURI(t, n) + "/event/" + strconv.FormatInt(ms, 10) + "." + strconv.FormatUint(uint64(seq), 10)
}

func entityURI(t string, n, h uint64) string {
	return nodeURI(t, n) + "/entity/" + strconv.FormatUint(h, 10)
}

type ordered interface {
	~int | ~int64 | ~uint32 | ~uint64
}

func cmpInt[T ordered](a, b T) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// cmpDesc orders by x desc, then y desc, then h asc.
func cmpDesc[X, Y ordered](xa, xb X, ya, yb Y, ha, hb uint64) int {
	if c := cmpInt(xb, xa); c != 0 {
		return c
	}
	if c := cmpInt(yb, ya); c != 0 {
		return c
	}
	return cmpInt(ha, hb)
}
