package contextbench

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"os"
	"runtime"
	"runtime/pprof"
	"slices"
	"strconv"
	"time"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/embed"
	"github.com/temporalstore/temporalstore-go/matrixark/memstore"
	"github.com/temporalstore/temporalstore-go/matrixark/pack"
	"github.com/temporalstore/temporalstore-go/matrixark/plan"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// tenant holds every user: one application's memory, queries scoped by user.
const tenant = "bench"

// Systems, in alternation order; ours_hash and ours_half run only when
// asked for (Config.Embedded).
const (
	sysOurs   = "ours"
	sysHash   = "ours_hash"
	sysHalf   = "ours_half"
	sysModel  = "ours_model"
	sysBM25   = "bm25"
	sysReplay = "replay"
)

// Goals of the issue and the spec (§12).
const (
	goalP50Ms       = 5.0  // retrieve+pack p50 at 100k nodes
	goalPoints      = 10.0 // recall@10 over BM25's, in points
	specP95Ms       = 17.0 // p95 at a 1,200 budget
	specP95MsTimes  = 46.0 // p95 at ten times the size
	progressEvery   = 2 * time.Second
	bm25TopK        = 10
	goalNodes       = 100_000
	specScaleFactor = 10
)

// answer is one system's reply to one query.
type answer struct {
	ranked []string // message refs in rank order; nil: no ranking
	packed []string // message refs in the packed prompt; nil: no pack
	// tokens is what the pack spent, prompt included; blocks and l2 the
	// blocks it selected, and of those the raw messages.
	tokens, blocks, l2 int
	// total is the whole call; retrieve and pack its two parts, each
	// timed on its own; embed, for an arm with a model, the query's
	// embedding alone (the provider's round trip), the floor of its total.
	total, retrieve, pack, embed time.Duration
}

type system struct {
	name   string
	answer func(ctx context.Context, q Query) (answer, error)
	// counter counts its packs' tokens, its cache emptied before each run.
	counter *repeatCounter
}

// repeatCounter is a tokens.Cache over the shared counter that a system's
// packs count with, emptied before each of its runs: within a run, blocks
// that come back query after query are counted once (as the Engine's
// default counter does in service); no run starts with an earlier run's
// counts.
type repeatCounter struct {
	base, c tokens.Counter
}

func newRepeatCounter(base tokens.Counter) *repeatCounter {
	r := &repeatCounter{base: base}
	r.reset()
	return r
}

func (r *repeatCounter) reset()             { r.c = tokens.Cache(r.base, 0) }
func (r *repeatCounter) Name() string       { return r.base.Name() }
func (r *repeatCounter) Count(s string) int { return r.c.Count(s) }

// run is one pass of one system over every query of a size.
type run struct {
	Nodes   int     `json:"nodes"`
	System  string  `json:"system"`
	Repeat  int     `json:"repeat"`
	Latency latency `json:"latency_ms"`
	// TokensP50 and TokensMax are what a pack spent, prompt included;
	// OverBudget counts packs above the budget (none may be).
	TokensP50  float64 `json:"tokens_p50"`
	TokensMax  float64 `json:"tokens_max"`
	OverBudget int     `json:"over_budget"`
	BlocksP50  float64 `json:"selected_blocks_p50"`
	L2P50      float64 `json:"selected_l2_p50"`
	Quality    Quality `json:"quality"`
}

// latency is in milliseconds. Total is the whole call (for ours
// Engine.Pack: retrieve, pack and the durable audit write); Retrieve and
// Pack are the two parts, timed on their own (Engine.Retrieve, then
// pack.Pack of its blocks).
type latency struct {
	P50         benchkit.Float `json:"p50"`
	P95         benchkit.Float `json:"p95"`
	P99         benchkit.Float `json:"p99"`
	RetrieveP50 benchkit.Float `json:"retrieve_p50"`
	RetrieveP95 benchkit.Float `json:"retrieve_p95"`
	PackP50     benchkit.Float `json:"pack_p50"`
	PackP95     benchkit.Float `json:"pack_p95"`
	// EmbedP50 is the query embedding's p50 (an arm with a model), and
	// BesideEmbedP50 the p50 of total minus it: what the engine adds.
	EmbedP50       benchkit.Float `json:"embed_p50,omitempty"`
	BesideEmbedP50 benchkit.Float `json:"beside_embed_p50,omitempty"`
}

// loadStat is how a system's store was filled.
type loadStat struct {
	Seconds     float64 `json:"seconds"`
	NodesPerSec float64 `json:"nodes_per_s"`
	// RebuildSeconds is the query engine's rebuild of its indexes from the
	// Store on first use (ours_half, whose store two engines filled).
	RebuildSeconds float64 `json:"rebuild_seconds,omitempty"`
	// HeapMB is the live heap the system's data added, after a GC.
	HeapMB float64 `json:"heap_mb"`
}

// summary is a system's figures at one size over the repeats.
type summary struct {
	P50Ms         benchkit.Summary `json:"p50_ms"`
	P95Ms         benchkit.Summary `json:"p95_ms"`
	P99Ms         benchkit.Summary `json:"p99_ms"`
	RetrieveP50Ms benchkit.Summary `json:"retrieve_p50_ms"`
	RetrieveP95Ms benchkit.Summary `json:"retrieve_p95_ms"`
	PackP50Ms     benchkit.Summary `json:"pack_p50_ms"`
	PackP95Ms     benchkit.Summary `json:"pack_p95_ms"`
	// EmbedP50Ms and BesideEmbedP50Ms: see latency (zero without a model).
	EmbedP50Ms       benchkit.Summary `json:"embed_p50_ms"`
	BesideEmbedP50Ms benchkit.Summary `json:"beside_embed_p50_ms"`
	TokensP50        float64          `json:"tokens_p50"`
	TokensMax        float64          `json:"tokens_max"`
	OverBudget       int              `json:"over_budget"`
	Quality          Quality          `json:"quality"`
	// Deterministic is true when every repeat ranked and packed alike.
	Deterministic bool `json:"deterministic"`
}

// sizeReport is one corpus size.
type sizeReport struct {
	Nodes      int                 `json:"nodes"`
	Users      int                 `json:"users"`
	Messages   int                 `json:"messages"`
	Queries    int                 `json:"queries"`
	QueryKinds map[string]int      `json:"query_kinds"`
	Load       map[string]loadStat `json:"load"`
	Systems    map[string]summary  `json:"systems"`
}

// goal is one target, met or not.
type goal struct {
	Name   string         `json:"name"`
	Value  benchkit.Float `json:"value"`
	Target float64        `json:"target"`
	Met    bool           `json:"met"`
	Note   string         `json:"note,omitempty"`
}

// report is the JSON written at the end.
type report struct {
	Conditions benchkit.Host  `json:"conditions"`
	Config     Config         `json:"config"`
	Tokenizer  string         `json:"tokenizer"`
	Notes      []string       `json:"notes"`
	Sizes      []sizeReport   `json:"sizes"`
	Runs       []run          `json:"runs"`
	Goals      []goal         `json:"goals"`
	Summary    benchkit.Pairs `json:"summary"`
}

var notes = []string{
	"one tenant holds every user; a query is scoped to its user (Query.User), as an application's memory is",
	"ours: Engine.Pack over memstore; total = Engine.Pack (retrieve, pack, durable audit write); retrieve = Engine.Retrieve and pack = pack.Pack of its blocks, each timed on its own after it",
	"recall@k and MRR count the message refs of ours' L2 blocks in rank order; pack retention the message refs among the selected blocks",
	"bm25: one plan.Index per user over that user's messages, top 10 by BM25, packed in that order with the same packer and budget",
	"replay: the user's messages newest first, packed with the same packer and budget; its recall@k is of the newest k messages",
	"baseline blocks carry a short uri (msg://<ref>), so each costs fewer header tokens than ours",
	"every system counts tokens with o200k_base through a count cache of its own, emptied before each of its runs: blocks that come back query after query are counted once a run",
	"ours_hash/ours_half use embed.Hash, whose vectors carry no meaning: they show the cost and the ranking without a real model, not a semantic arm",
	"ours_model embeds with a real model through its OpenAI-compatible server (scripts/embed-server: all-MiniLM-L6-v2 run by numpy on this machine's CPUs); its latency includes embedding each query",
}

// Run builds the corpus of each size, loads every system, answers the
// queries with each in turn, and writes the report.
func Run(ctx context.Context, cfg Config, stdout io.Writer, log *slog.Logger) error {
	if err := cfg.validate(); err != nil {
		return err
	}
	began := time.Now()
	counter := tokens.O200k() // built once, before anything is timed
	counter.Count("warm up")
	rep := report{Conditions: benchkit.HostConditions(), Config: cfg, Tokenizer: counter.Name(), Notes: notes}
	for _, size := range cfg.Sizes {
		sr, runs, err := runSize(ctx, cfg, size, counter, log)
		if err != nil {
			return fmt.Errorf("%d nodes: %w", size, err)
		}
		rep.Sizes = append(rep.Sizes, sr)
		rep.Runs = append(rep.Runs, runs...)
		runtime.GC() // the size's stores are garbage now
	}
	rep.Goals = goals(rep.Sizes)
	rep.Summary = summaryPairs(rep.Sizes)
	out := cfg.Out
	if out == "" {
		var err error
		if out, err = benchkit.ResultPath("context"); err != nil {
			return err
		}
	}
	if err := benchkit.WriteJSON(out, rep); err != nil {
		return err
	}
	printTable(stdout, rep)
	log.Info("report written", "path", out, "took", time.Since(began).Round(time.Millisecond))
	fmt.Fprintln(stdout, detailLine(rep.Sizes))
	fmt.Fprintln(stdout, benchkit.SummaryLine("context", rep.Summary))
	return nil
}

// sizeLabel is 10k for 10,000.
func sizeLabel(n int) string {
	switch {
	case n >= 1_000_000 && n%1_000_000 == 0:
		return strconv.Itoa(n/1_000_000) + "m"
	case n >= 1_000 && n%1_000 == 0:
		return strconv.Itoa(n/1_000) + "k"
	}
	return strconv.Itoa(n)
}

func runSize(ctx context.Context, cfg Config, size int, counter tokens.Counter, log *slog.Logger) (sizeReport, []run, error) {
	users := size / cfg.SessionsPerUser
	c := Generate(cfg.Seed, users, cfg.SessionsPerUser, cfg.Queries)
	sr := sizeReport{Nodes: len(c.Sessions), Users: users, Messages: c.Messages, Queries: len(c.Queries),
		QueryKinds: map[string]int{}, Load: map[string]loadStat{}, Systems: map[string]summary{}}
	for _, q := range c.Queries {
		sr.QueryKinds[q.Kind]++
	}
	log.Info("corpus", "nodes", sr.Nodes, "users", users, "messages", c.Messages, "queries", sr.Queries)

	var systems []system
	add := func(name string, build func(counter tokens.Counter) (system, float64, error)) error {
		before := heapMB()
		t0 := time.Now()
		rc := newRepeatCounter(counter)
		s, rebuild, err := build(rc)
		if err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
		s.counter = rc
		secs := time.Since(t0).Seconds()
		sr.Load[name] = loadStat{Seconds: secs, NodesPerSec: float64(sr.Nodes) / secs, RebuildSeconds: rebuild, HeapMB: heapMB() - before}
		log.Info("loaded", "system", name, "nodes", sr.Nodes, "took", time.Since(t0).Round(time.Millisecond), "heap_mb", int(sr.Load[name].HeapMB))
		systems = append(systems, s)
		return nil
	}
	err := add(sysOurs, func(counter tokens.Counter) (system, float64, error) {
		e := matrixark.New(memstore.New(), matrixark.Options{Counter: counter})
		err := ingest(ctx, log, sysOurs, c.Sessions, func(int) *matrixark.Engine { return e })
		return oursSystem(sysOurs, e, counter, cfg.Budget), 0, err
	})
	for _, arm := range cfg.Embedded {
		if err != nil {
			break
		}
		switch arm {
		case "hash":
			err = add(sysHash, func(counter tokens.Counter) (system, float64, error) {
				e := matrixark.New(memstore.New(), matrixark.Options{Counter: counter, Embedder: embed.NewHash("")})
				err := ingest(ctx, log, sysHash, c.Sessions, func(int) *matrixark.Engine { return e })
				return oursSystem(sysHash, e, counter, cfg.Budget), 0, err
			})
		case "model":
			err = add(sysModel, func(counter tokens.Counter) (system, float64, error) {
				emb, err := embed.NewOpenAI(embed.OpenAIOptions{BaseURL: cfg.EmbedURL, Model: cfg.EmbedModel, Timeout: 5 * time.Minute})
				if err != nil {
					return system{}, 0, err
				}
				e := matrixark.New(memstore.New(), matrixark.Options{Counter: counter, Embedder: emb})
				err = ingest(ctx, log, sysModel, c.Sessions, func(int) *matrixark.Engine { return e })
				s := oursSystem(sysModel, e, counter, cfg.Budget)
				s.answer = timingEmbed(s.answer, emb)
				return s, 0, err
			})
		case "half":
			err = add(sysHalf, func(counter tokens.Counter) (system, float64, error) {
				return halfSystem(ctx, log, c, counter, cfg.Budget)
			})
		}
	}
	if err == nil {
		err = add(sysBM25, func(counter tokens.Counter) (system, float64, error) {
			return bm25System(c, counter, cfg.Budget), 0, nil
		})
	}
	if err == nil {
		err = add(sysReplay, func(counter tokens.Counter) (system, float64, error) {
			return replaySystem(c, counter, cfg.Budget), 0, nil
		})
	}
	if err != nil {
		return sr, nil, err
	}

	byName := map[string]system{}
	var names []string
	for _, s := range systems {
		byName[s.name] = s
		names = append(names, s.name)
	}
	var runs []run
	if cfg.CPUProfile != "" {
		stop, err := startCPUProfile(cfg.CPUProfile)
		if err != nil {
			return sr, nil, err
		}
		defer stop()
	}
	err = benchkit.Alternate(ctx, cfg.Repeats, names, func(ctx context.Context, repeat int, name string) error {
		r, err := measure(ctx, byName[name], c.Queries, cfg.Budget)
		if err != nil {
			return err
		}
		r.Nodes, r.System, r.Repeat = sr.Nodes, name, repeat+1
		log.Info("run", "nodes", sr.Nodes, "system", name, "repeat", fmt.Sprintf("%d/%d", repeat+1, cfg.Repeats),
			"p50_ms", benchkit.FormatNumber(float64(r.Latency.P50), 3), "p95_ms", benchkit.FormatNumber(float64(r.Latency.P95), 3),
			"recall10", benchkit.FormatNumber(float64(r.Quality.Recall10), 3), "retention", benchkit.FormatNumber(float64(r.Quality.Retention), 3))
		runs = append(runs, r)
		return nil
	})
	if err != nil {
		return sr, nil, err
	}
	for _, name := range names {
		sr.Systems[name] = summarize(runs, name)
	}
	return sr, runs, nil
}

func heapMB() float64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return float64(m.HeapAlloc) / (1 << 20)
}

// ingest loads every session through engineFor(i), logging progress with
// an ETA from the rate of the last etaWindow.
func ingest(ctx context.Context, log *slog.Logger, name string, sessions []Session, engineFor func(i int) *matrixark.Engine) error {
	t0 := time.Now()
	last := t0
	rate := rateWindow{span: etaWindow}
	rate.add(t0, 0)
	for i, s := range sessions {
		in := matrixark.Input{User: s.User, Session: s.ID, TimeMs: s.TimeMs, Messages: make([]matrixark.Message, len(s.Messages))}
		for j, m := range s.Messages {
			in.Messages[j] = matrixark.Message{ID: m.ID, Role: m.Role, Content: m.Content, TimeMs: m.TimeMs}
		}
		if _, err := engineFor(i).Ingest(ctx, tenant, in); err != nil {
			return fmt.Errorf("ingest %s: %w", s.ID, err)
		}
		if now := time.Now(); now.Sub(last) >= progressEvery {
			done := i + 1
			rate.add(now, done)
			perS := rate.perSecond()
			log.Info("loading", "system", name, "nodes", fmt.Sprintf("%d/%d", done, len(sessions)),
				"nodes_per_s", benchkit.FormatNumber(perS, 3), "elapsed", now.Sub(t0).Round(time.Second),
				"eta", etaAt(perS, len(sessions)-done).Round(time.Second))
			last = now
		}
	}
	return nil
}

// etaWindow is how far back the loading rate is measured: long enough to
// smooth a noisy machine, short enough to follow a load that slows.
const etaWindow = 30 * time.Second

// rateWindow is nodes a second over the samples of the last span (and the
// one sample before it).
type rateWindow struct {
	span    time.Duration
	samples []rateSample
}

type rateSample struct {
	at   time.Time
	done int
}

func (w *rateWindow) add(at time.Time, done int) {
	w.samples = append(w.samples, rateSample{at, done})
	for len(w.samples) > 2 && at.Sub(w.samples[1].at) >= w.span {
		w.samples = w.samples[1:]
	}
}

// perSecond is 0 until two samples are apart in time.
func (w *rateWindow) perSecond() float64 {
	if len(w.samples) < 2 {
		return 0
	}
	first, last := w.samples[0], w.samples[len(w.samples)-1]
	secs := last.at.Sub(first.at).Seconds()
	if secs <= 0 {
		return 0
	}
	return float64(last.done-first.done) / secs
}

// etaAt is the time left for n nodes at perS a second; 0 when the rate is
// unknown.
func etaAt(perS float64, n int) time.Duration {
	if perS <= 0 || n <= 0 {
		return 0
	}
	return time.Duration(float64(n) / perS * float64(time.Second))
}

// promptFor is the prompt a pack charges first.
func promptFor(q Query) string {
	return "Answer the question from the context below.\nQuestion: " + q.Text
}

// oursSystem answers with the Engine: Engine.Pack, then Retrieve and
// pack.Pack on their own, so the split of the time is measured.
func oursSystem(name string, e *matrixark.Engine, counter tokens.Counter, budget int) system {
	return system{name: name, answer: func(ctx context.Context, q Query) (answer, error) {
		rq := matrixark.Query{Text: q.Text, User: q.User}
		prompt := promptFor(q)
		t0 := time.Now()
		pr, err := e.Pack(ctx, tenant, matrixark.PackRequest{Retrieve: rq, Prompt: prompt, SessionID: q.User, QueryID: q.ID, MaxPromptTokens: budget})
		total := time.Since(t0)
		if err != nil {
			return answer{}, err
		}
		t1 := time.Now()
		blocks, err := e.Retrieve(ctx, tenant, rq)
		retrieve := time.Since(t1)
		if err != nil {
			return answer{}, err
		}
		t2 := time.Now()
		pack.Pack(prompt, blocks, pack.Options{Counter: counter, MaxPromptTokens: budget})
		packed := time.Since(t2)

		a := answer{ranked: []string{}, packed: []string{}, total: total, retrieve: retrieve, pack: packed,
			tokens: pr.Audit.PromptTokens + pr.Audit.SelectedTokens, blocks: len(pr.Selected)}
		for _, b := range blocks {
			if b.Tier == pack.TierL2 {
				a.ranked = append(a.ranked, b.SourceRef)
			}
		}
		for _, b := range pr.Selected {
			if b.Tier == pack.TierL2 {
				a.packed = append(a.packed, b.SourceRef)
				a.l2++
			}
		}
		return a, nil
	}}
}

// startCPUProfile profiles the process into path until the returned
// function is called.
func startCPUProfile(path string) (func(), error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, err
	}
	return func() {
		pprof.StopCPUProfile()
		f.Close()
	}, nil
}

// timingEmbed wraps a model arm's answer: after it, the query is embedded
// once more on its own through the same provider, the floor any retrieval
// by this model pays on this machine.
func timingEmbed(next func(context.Context, Query) (answer, error), emb embed.Embedder) func(context.Context, Query) (answer, error) {
	return func(ctx context.Context, q Query) (answer, error) {
		a, err := next(ctx, q)
		if err != nil {
			return a, err
		}
		t0 := time.Now()
		if _, err := emb.Embed(ctx, []string{q.Text}); err != nil {
			return a, fmt.Errorf("embedding the query alone: %w", err)
		}
		a.embed = time.Since(t0)
		return a, nil
	}
}

// halfSystem fills one store through two engines, every other session
// embedded, and answers with a third that embeds queries and rebuilds its
// indexes from the store.
func halfSystem(ctx context.Context, log *slog.Logger, c Corpus, counter tokens.Counter, budget int) (system, float64, error) {
	st := memstore.New()
	embedded := matrixark.New(st, matrixark.Options{Counter: counter, Embedder: embed.NewHash("")})
	plain := matrixark.New(st, matrixark.Options{Counter: counter})
	err := ingest(ctx, log, sysHalf, c.Sessions, func(i int) *matrixark.Engine {
		if i%2 == 0 {
			return embedded
		}
		return plain
	})
	if err != nil {
		return system{}, 0, err
	}
	e := matrixark.New(st, matrixark.Options{Counter: counter, Embedder: embed.NewHash("")})
	t0 := time.Now()
	if _, err := e.Retrieve(ctx, tenant, matrixark.Query{Text: "rebuild", User: "nobody"}); err != nil {
		return system{}, 0, err
	}
	return oursSystem(sysHalf, e, counter, budget), time.Since(t0).Seconds(), nil
}

// userMessages groups the corpus's messages by user, each user's oldest
// first.
func userMessages(c Corpus) map[string][]Message {
	out := map[string][]Message{}
	for _, s := range c.Sessions {
		out[s.User] = append(out[s.User], s.Messages...)
	}
	for _, ms := range out {
		slices.SortStableFunc(ms, func(a, b Message) int { return cmpInt64(a.TimeMs, b.TimeMs) })
	}
	return out
}

func cmpInt64(a, b int64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	return 0
}

// messageBlock is a message as a baseline packs it.
func messageBlock(m Message) pack.Block {
	return pack.Block{URI: "msg://" + m.ID, Tier: pack.TierL2, RecordType: matrixark.RecordRawMessage,
		EventTimeMs: m.TimeMs, Text: m.Content, SourceRef: m.ID}
}

// packBlocks packs blocks with the shared packer and returns the answer's
// pack fields.
func packBlocks(prompt string, blocks []pack.Block, counter tokens.Counter, budget int, a *answer) {
	t0 := time.Now()
	res := pack.Pack(prompt, blocks, pack.Options{Counter: counter, MaxPromptTokens: budget})
	a.pack = time.Since(t0)
	a.packed = make([]string, 0, len(res.Selected))
	for _, s := range res.Selected {
		a.packed = append(a.packed, s.SourceRef)
	}
	a.tokens, a.blocks, a.l2 = res.PromptTokens+res.SelectedTokens, len(res.Selected), len(res.Selected)
}

// bm25System ranks a user's messages by BM25 (plan.Index, no plan rerank)
// and packs the top 10.
func bm25System(c Corpus, counter tokens.Counter, budget int) system {
	type userIndex struct {
		x    *plan.Index
		byID map[uint64]Message
	}
	idx := map[string]*userIndex{}
	for user, ms := range userMessages(c) {
		ui := &userIndex{x: plan.NewIndex(), byID: make(map[uint64]Message, len(ms))}
		for i, m := range ms {
			ui.x.Add(uint64(i+1), m.Content)
			ui.byID[uint64(i+1)] = m
		}
		idx[user] = ui
	}
	return system{name: sysBM25, answer: func(_ context.Context, q Query) (answer, error) {
		ui := idx[q.User]
		t0 := time.Now()
		hits := ui.x.Search(q.Text, bm25TopK)
		a := answer{retrieve: time.Since(t0), ranked: make([]string, 0, len(hits))}
		blocks := make([]pack.Block, 0, len(hits))
		for _, h := range hits {
			m := ui.byID[h.ID]
			a.ranked = append(a.ranked, m.ID)
			blocks = append(blocks, messageBlock(m))
		}
		packBlocks(promptFor(q), blocks, counter, budget, &a)
		a.total = a.retrieve + a.pack
		return a, nil
	}}
}

// replaySystem packs a user's messages newest first until the budget is
// spent.
func replaySystem(c Corpus, counter tokens.Counter, budget int) system {
	newest := map[string][]pack.Block{}
	for user, ms := range userMessages(c) {
		bs := make([]pack.Block, len(ms))
		for i, m := range ms {
			bs[len(ms)-1-i] = messageBlock(m)
		}
		newest[user] = bs
	}
	return system{name: sysReplay, answer: func(_ context.Context, q Query) (answer, error) {
		bs := newest[q.User]
		var a answer
		a.ranked = make([]string, 0, bm25TopK)
		for _, b := range bs[:min(bm25TopK, len(bs))] {
			a.ranked = append(a.ranked, b.SourceRef)
		}
		// A replay reads no further back than the budget reaches: the
		// newest n messages, n doubled until one of them is held back.
		var t time.Duration
		for n := 16; ; n *= 2 {
			packBlocks(promptFor(q), bs[:min(n, len(bs))], counter, budget, &a)
			t += a.pack
			if n >= len(bs) || len(a.packed) < n {
				break
			}
		}
		a.pack, a.total = t, t
		return a, nil
	}}
}

// measure answers every query once with s.
func measure(ctx context.Context, s system, qs []Query, budget int) (run, error) {
	var total, retrieve, packed, embedded, beside []time.Duration
	var toks, blocks, l2 []float64
	t := newTally()
	r := run{}
	if s.counter != nil {
		s.counter.reset()
	}
	for _, q := range qs {
		if err := ctx.Err(); err != nil {
			return run{}, err
		}
		a, err := s.answer(ctx, q)
		if err != nil {
			return run{}, fmt.Errorf("%s: %w", q.ID, err)
		}
		total, retrieve, packed = append(total, a.total), append(retrieve, a.retrieve), append(packed, a.pack)
		if a.embed > 0 {
			embedded, beside = append(embedded, a.embed), append(beside, max(a.total-a.embed, 0))
		}
		toks, blocks, l2 = append(toks, float64(a.tokens)), append(blocks, float64(a.blocks)), append(l2, float64(a.l2))
		if a.tokens > budget {
			r.OverBudget++
		}
		t.add(q, a.ranked, a.packed)
	}
	ms := func(ds []time.Duration) [3]benchkit.Float {
		ps := benchkit.DurationPercentiles(ds, 50, 95, 99)
		return [3]benchkit.Float{benchkit.Float(ps[0].Seconds() * 1e3), benchkit.Float(ps[1].Seconds() * 1e3), benchkit.Float(ps[2].Seconds() * 1e3)}
	}
	tt, rt, pt := ms(total), ms(retrieve), ms(packed)
	r.Latency = latency{P50: tt[0], P95: tt[1], P99: tt[2], RetrieveP50: rt[0], RetrieveP95: rt[1], PackP50: pt[0], PackP95: pt[1]}
	if len(embedded) > 0 {
		r.Latency.EmbedP50, r.Latency.BesideEmbedP50 = ms(embedded)[0], ms(beside)[0]
	}
	slices.Sort(toks)
	slices.Sort(blocks)
	slices.Sort(l2)
	r.TokensP50, r.BlocksP50, r.L2P50 = benchkit.Percentile(toks, 50), benchkit.Percentile(blocks, 50), benchkit.Percentile(l2, 50)
	if len(toks) > 0 {
		r.TokensMax = toks[len(toks)-1]
	}
	r.Quality = t.quality()
	return r, nil
}

// summarize is system name's figures over its runs.
func summarize(runs []run, name string) summary {
	var mine []run
	for _, r := range runs {
		if r.System == name {
			mine = append(mine, r)
		}
	}
	col := func(f func(run) benchkit.Float) benchkit.Summary {
		return benchkit.Summarize(benchkit.Column(mine, func(r run) float64 { return float64(f(r)) }))
	}
	s := summary{
		P50Ms:            col(func(r run) benchkit.Float { return r.Latency.P50 }),
		P95Ms:            col(func(r run) benchkit.Float { return r.Latency.P95 }),
		P99Ms:            col(func(r run) benchkit.Float { return r.Latency.P99 }),
		RetrieveP50Ms:    col(func(r run) benchkit.Float { return r.Latency.RetrieveP50 }),
		RetrieveP95Ms:    col(func(r run) benchkit.Float { return r.Latency.RetrieveP95 }),
		PackP50Ms:        col(func(r run) benchkit.Float { return r.Latency.PackP50 }),
		PackP95Ms:        col(func(r run) benchkit.Float { return r.Latency.PackP95 }),
		EmbedP50Ms:       col(func(r run) benchkit.Float { return r.Latency.EmbedP50 }),
		BesideEmbedP50Ms: col(func(r run) benchkit.Float { return r.Latency.BesideEmbedP50 }),
		Deterministic:    true,
	}
	if len(mine) == 0 {
		return s
	}
	s.Quality, s.TokensP50 = mine[0].Quality, mine[0].TokensP50
	for _, r := range mine {
		s.TokensMax = max(s.TokensMax, r.TokensMax)
		s.OverBudget += r.OverBudget
		if !sameQuality(r.Quality, mine[0].Quality) || r.TokensP50 != mine[0].TokensP50 {
			s.Deterministic = false
		}
	}
	return s
}

// sameQuality compares two Quality values, NaN equal to NaN (their
// printed forms, maps in key order).
func sameQuality(a, b Quality) bool { return fmt.Sprintf("%v", a) == fmt.Sprintf("%v", b) }
