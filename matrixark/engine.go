package matrixark

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixark/embed"
	"github.com/temporalstore/temporalstore-go/matrixark/internal/h64"
	"github.com/temporalstore/temporalstore-go/matrixark/plan"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
	"github.com/temporalstore/temporalstore-go/matrixark/vindex"
)

// Errors of the embedding rules, as matrixark's own.
var (
	ErrModelRequired    = embed.ErrModelRequired
	ErrEmbeddingWidth   = embed.ErrEmbeddingWidth
	ErrEmbeddingEncoder = embed.ErrEmbeddingEncoder
)

// Limits of a request (ErrInvalid beyond them).
const (
	MaxTextBytes    = 64 << 10 // a body, a message, a query
	MaxTitleBytes   = 16 << 10
	MaxRefBytes     = 4 << 10 // a source id, a message id
	MaxNameBytes    = 512     // a tenant, a user, a session, an agent
	MaxMessages     = 1000    // messages of one ingest
	DefaultLimit    = 100
	MaxLimit        = 1000
	eventScanCap    = 64 // events a node's expansion looks at, newest first
	eventOverfetch  = 2
	maxEntityLoad   = 256
	agentScopeKey   = "agent:codex"
	importanceHigh  = 0.9
	importanceBase  = 0.5
	hybridLexicalMu = 500 // micros of node score per plan point, capped at 1000 points
	// cosineOrderWeight turns an event's cosine to an embedded query into
	// plan points of the final order: 0.3, a close paraphrase, weighs as
	// two matched groups and a bigram.
	cosineOrderWeight = 500
)

// Options configure New. The zero value works: no embedder (nodes rank
// lexically), o200k_base token counts, the wall clock.
type Options struct {
	// Embedder embeds texts at ingest and queries at retrieval. Default
	// nil: nothing is embedded and every node ranks by its lexical score.
	Embedder embed.Embedder
	// Counter counts the tokens a pack spends. Default
	// tokens.Cache(tokens.O200k(), 0): o200k_base, each text counted once
	// while it stays in 16 MiB of remembered texts.
	Counter tokens.Counter
	// Now is the clock of event and audit times. Default time.Now.
	Now func() time.Time
	// LexicalOff scores unembedded nodes 0 instead of by their plan score
	// (MATRIXARK_CONTEXT_HYBRID_LEXICAL=0): ranking among them then falls
	// to recency.
	LexicalOff bool
	// AbortOnEmbedFailure fails an ingest whose embedding fails or is
	// declined, instead of storing it without vectors, marked for a
	// re-embed (MATRIXARK_EMBED_DEFER_ON_FAILURE=0).
	AbortOnEmbedFailure bool
	// MaxEntityBlocks caps the entity blocks of one retrieval. Default 8.
	MaxEntityBlocks int
	// EventHits is how many of the event index's best matches in scope a
	// retrieval adds as L2 blocks, beside the newest matching events of
	// its event nodes: the original's expansion alone misses an event
	// whose session's summary does not rank. A query embedded in a user's
	// scope also adds as many of the user's events nearest to it, and
	// orders events by their cosine as well as their plan score. Default
	// 10; −1 adds none, as the original.
	EventHits int
	// Logger receives warnings (a deferred embedding). Default: discarded.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Counter == nil {
		o.Counter = tokens.Cache(tokens.O200k(), 0)
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.MaxEntityBlocks <= 0 {
		o.MaxEntityBlocks = 8
	}
	if o.EventHits == 0 {
		o.EventHits = 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// Engine ingests, retrieves and packs context per tenant over a Store. Its
// indexes (BM25 over nodes and events, int8 vectors) are derived state,
// rebuilt from the Store on a tenant's first use. Safe for concurrent use.
type Engine struct {
	store  Store
	o      Options
	spaces *embed.Spaces
	seq    atomic.Uint32

	mu      sync.Mutex
	tenants map[string]*tenant
}

// tenant is one tenant's derived state.
type tenant struct {
	mu       sync.RWMutex
	loaded   bool
	nodes    map[uint64]*Node
	texts    map[uint64]nodeTexts // each node's texts, prepared for scoring
	nodeIdx  *plan.Index          // canonical name, L0 and L1 of each node
	eventIdx *plan.Index          // each event's text
	events   map[uint64]eventLoc  // event id → where its record is
	userVecs map[string]*userVecs // each user's event vectors
	vecL0    *vindex.Index        // nil until a vector of the Space is stored
	vecL1    *vindex.Index
}

// New returns an Engine over s.
func New(s Store, o Options) *Engine {
	e := &Engine{store: s, o: o.withDefaults(), tenants: map[string]*tenant{}}
	e.spaces = embed.NewSpaces(embed.SpacesOptions{Pin: func(ctx context.Context, t string, sp embed.Space) error {
		b, err := json.Marshal(sp)
		if err != nil {
			return err
		}
		return s.Apply(ctx, []Mutation{{Key: spaceKey(t), Value: b}}, WriteOpts{Durable: true})
	}})
	return e
}

// Declined counts the vectors refused by their tenant's Space, by reason
// (embed.ReasonWidth, embed.ReasonEncoder).
func (e *Engine) Declined() map[string]uint64 { return e.spaces.Declined() }

func checkName(what, v string, required bool) error {
	switch {
	case v == "" && required:
		return fmt.Errorf("%w: %s is required", ErrInvalid, what)
	case len(v) > MaxNameBytes:
		return fmt.Errorf("%w: %s longer than %d bytes", ErrInvalid, what, MaxNameBytes)
	case strings.ContainsAny(v, ": \t\r\n"):
		return fmt.Errorf("%w: %s %q holds a colon or whitespace", ErrInvalid, what, v)
	}
	return nil
}

// Invalidate drops every tenant's derived state: the next use of a tenant
// rebuilds it from the Store. Call it when another Engine may have written
// the Store meanwhile (a cluster member that served the context before
// this one); calls already running finish on the state they hold.
func (e *Engine) Invalidate() {
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.tenants)
}

// state returns tenant t's derived state, loading it from the Store on
// first use.
func (e *Engine) state(ctx context.Context, t string) (*tenant, error) {
	e.mu.Lock()
	st, ok := e.tenants[t]
	if !ok {
		st = &tenant{}
		e.tenants[t] = st
	}
	e.mu.Unlock()
	st.mu.RLock()
	loaded := st.loaded
	st.mu.RUnlock()
	if loaded {
		return st, nil
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.loaded {
		return st, nil
	}
	if err := e.load(ctx, t, st); err != nil {
		return nil, err
	}
	st.loaded = true
	return st, nil
}

// load rebuilds st from the Store. It reads without filling caches: a
// rebuild is a sweep, not the hot set.
func (e *Engine) load(ctx context.Context, t string, st *tenant) error {
	st.nodes, st.texts, st.events = map[uint64]*Node{}, map[uint64]nodeTexts{}, map[uint64]eventLoc{}
	st.userVecs = map[string]*userVecs{}
	st.nodeIdx, st.eventIdx = plan.NewIndex(), plan.NewIndex()
	sweep := ReadOpts{NoFill: true}
	got, err := e.store.Get(ctx, [][]byte{spaceKey(t)}, sweep)
	if err != nil {
		return err
	}
	if got[0] != nil {
		var sp embed.Space
		if err := json.Unmarshal(got[0], &sp); err != nil {
			return fmt.Errorf("matrixark: tenant %s: space record: %w", t, err)
		}
		if err := e.spaces.Load(t, sp); err != nil {
			return err
		}
	}
	var bad error
	err = e.store.Scan(ctx, PrefixRange(tenantKey(famNode, t)), sweep, func(_, v []byte) bool {
		n := new(Node)
		if bad = json.Unmarshal(v, n); bad != nil {
			return false
		}
		st.addNode(n)
		return true
	})
	if err == nil {
		err = bad
	}
	if err != nil {
		return err
	}
	err = e.store.Scan(ctx, PrefixRange(tenantKey(famEvent, t)), sweep, func(_, v []byte) bool {
		var ev Event
		if bad = json.Unmarshal(v, &ev); bad != nil {
			return false
		}
		st.addEvent(&ev)
		return true
	})
	if err == nil {
		err = bad
	}
	return err
}

// Nodes and events are indexed by their user, whose queries search only
// their postings (a user's scope is the common one).
func (st *tenant) addNode(n *Node) {
	st.nodes[n.Hash] = n
	all := n.CanonicalName + " " + n.L0 + " " + n.L1
	st.texts[n.Hash] = nodeTexts{all: plan.Prepare(all), summary: plan.Prepare(n.L0 + " " + n.L1)}
	st.nodeIdx.AddIn(n.Hash, n.User, all)
	st.vecL0 = addVector(st.vecL0, n.Hash, n.VecL0)
	st.vecL1 = addVector(st.vecL1, n.Hash, n.VecL1)
	if n.User != "" && (len(n.VecL0) > 0 || len(n.VecL1) > 0) {
		uv := st.userVecsOf(n.User)
		if uv.nodes == nil {
			uv.nodes = map[uint64]nodeVecs{}
		}
		// As addVector: a node stored without vectors keeps its old ones.
		nv := uv.nodes[n.Hash]
		if len(n.VecL0) > 0 {
			nv.l0 = n.VecL0
		}
		if len(n.VecL1) > 0 {
			nv.l1 = n.VecL1
		}
		uv.nodes[n.Hash] = nv
	}
}

func (st *tenant) userVecsOf(user string) *userVecs {
	uv := st.userVecs[user]
	if uv == nil {
		uv = &userVecs{}
		st.userVecs[user] = uv
	}
	return uv
}

func (st *tenant) addEvent(ev *Event) {
	var user string
	if n := st.nodes[ev.Node]; n != nil {
		user = n.User
	}
	st.eventIdx.AddIn(ev.ID, user, ev.Text)
	if len(ev.Vec) > 0 && user != "" {
		uv := st.userVecsOf(user)
		uv.ids, uv.vecs = append(uv.ids, ev.ID), append(uv.vecs, ev.Vec)
	}
	st.events[ev.ID] = eventLoc{node: ev.Node, ms: ev.EventMs, seq: ev.Seq, vec: ev.Vec}
}

// userVecs are one user's event and node vectors: a query in the user's
// scope compares its vector with each (a user's events are hundreds to a
// few thousand; an index over every user's would need the scope after it,
// and other users' nodes took the tenant index's top C).
type userVecs struct {
	ids   []uint64
	vecs  [][]float32
	nodes map[uint64]nodeVecs
}

// nodeVecs are a node's L0 and L1 vectors (either may be missing).
type nodeVecs struct{ l0, l1 []float32 }

// scoredID is an id and its cosine to a query vector.
type scoredID struct {
	id  uint64
	cos float64
}

// bestIDs are the ids of the k best of s, best first, ties by id.
func bestIDs(s []scoredID, k int) []uint64 {
	if k <= 0 {
		return nil
	}
	slices.SortFunc(s, func(a, b scoredID) int { return cmp.Or(cmp.Compare(b.cos, a.cos), cmp.Compare(a.id, b.id)) })
	out := make([]uint64, 0, min(k, len(s)))
	for _, x := range s[:min(k, len(s))] {
		out = append(out, x.id)
	}
	return out
}

// nearestNodes are the hashes of the k nodes whose better summary cosine
// to qv is highest, of those keep accepts (all when nil), best first.
func (uv *userVecs) nearestNodes(qv []float32, k int, keep func(uint64) bool) []uint64 {
	scored := make([]scoredID, 0, len(uv.nodes))
	for id, nv := range uv.nodes {
		if keep != nil && !keep(id) {
			continue
		}
		c, any := math.Inf(-1), false
		for _, v := range [][]float32{nv.l0, nv.l1} {
			if len(v) == len(qv) {
				c, any = max(c, vindex.Cosine(qv, v)), true
			}
		}
		if any {
			scored = append(scored, scoredID{id, c})
		}
	}
	return bestIDs(scored, k)
}

// nearest are the ids of the k event vectors most similar to qv (of its
// width), of those keep accepts (all when nil), best first.
func (uv *userVecs) nearest(qv []float32, k int, keep func(uint64) bool) []uint64 {
	if k <= 0 {
		return nil
	}
	var scored []scoredID
	for i, v := range uv.vecs {
		if len(v) != len(qv) || keep != nil && !keep(uv.ids[i]) {
			continue
		}
		scored = append(scored, scoredID{uv.ids[i], vindex.Cosine(qv, v)})
	}
	return bestIDs(scored, k)
}

// remove drops the vectors of ids.
func (uv *userVecs) remove(ids map[uint64]bool) {
	n := 0
	for i, id := range uv.ids {
		if !ids[id] {
			uv.ids[n], uv.vecs[n] = id, uv.vecs[i]
			n++
		}
	}
	clear(uv.vecs[n:])
	uv.ids, uv.vecs = uv.ids[:n], uv.vecs[:n]
}

// eventLoc is an event's node and the rest of its record's key.
type eventLoc struct {
	node uint64
	ms   int64
	seq  uint32
	// vec is the event's vector (nil without one): retrieval reads event
	// records without theirs (eventNoVec).
	vec []float32
}

// nodeTexts are the texts a query scores a node by, prepared once: all
// (canonical name, L0 and L1) ranks the candidates, summary (L0 and L1)
// reranks the selected.
type nodeTexts struct{ all, summary plan.Text }

// addVector adds v to idx, making the index on the first vector. A vector
// of another width than the index's is left out: the Space check keeps
// those from being stored.
func addVector(idx *vindex.Index, id uint64, v []float32) *vindex.Index {
	if len(v) == 0 {
		return idx
	}
	if idx == nil {
		var err error
		if idx, err = vindex.New(len(v)); err != nil {
			return nil
		}
	}
	_ = idx.Add(id, v)
	return idx
}

// nextSeq orders records written within one millisecond.
func (e *Engine) nextSeq() uint32 { return e.seq.Add(1) }

func hashOf(s string) uint64 { return h64.Sum(s) }
