package matrixark_test

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/embed"
	"github.com/temporalstore/temporalstore-go/matrixark/memstore"
	"github.com/temporalstore/temporalstore-go/matrixark/pack"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

var t0 = time.UnixMilli(1_764_460_800_000)

func newEngine(s matrixark.Store, edit func(*matrixark.Options)) *matrixark.Engine {
	o := matrixark.Options{Now: func() time.Time { return t0 }, Counter: tokens.Words{}}
	if edit != nil {
		edit(&o)
	}
	return matrixark.New(s, o)
}

func ingest(t *testing.T, e *matrixark.Engine, tenant string, in matrixark.Input) matrixark.IngestResult {
	t.Helper()
	r, err := e.Ingest(t.Context(), tenant, in)
	require.NoError(t, err)
	return r
}

// corpus ingests three documents and a conversation for tenant acme.
func corpus(t *testing.T, e *matrixark.Engine) map[string]uint64 {
	nodes := map[string]uint64{}
	nodes["checkout"] = ingest(t, e, "acme", matrixark.Input{SourceID: "runbook-7", Title: "Checkout outage",
		Body: "Customer checkout failed. Payment risk score spiked after the fraud rule change. The team rolled back at 14:05.", TimeMs: t0.UnixMilli() - 3000, User: "alice"}).Node
	nodes["lunch"] = ingest(t, e, "acme", matrixark.Input{SourceID: "memo-2", Title: "Lunch menu",
		Body: "Soup and bread on Monday. Pasta on Tuesday.", TimeMs: t0.UnixMilli() - 2000, User: "alice"}).Node
	nodes["office"] = ingest(t, e, "acme", matrixark.Input{Session: "s1", User: "bob", Messages: []matrixark.Message{
		{Role: "user", Content: "My office was in Porto."},
		{Role: "user", Content: "Update: my office is now in Lisbon, since March 3.", TimeMs: t0.UnixMilli() - 500},
		{Role: "assistant", Content: "Noted, Lisbon it is."},
	}, TimeMs: t0.UnixMilli() - 1000}).Node
	return nodes
}

func TestIngestRetrievePack(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	e := newEngine(s, nil)
	nodes := corpus(t, e)

	blocks, err := e.Retrieve(ctx, "acme", matrixark.Query{Text: "checkout payment failure"})
	require.NoError(t, err)
	require.NotEmpty(t, blocks)
	require.Equal(t, nodes["checkout"], blocks[0].NodeHash, "the checkout node ranks first")
	var tiers []pack.Tier
	for _, b := range blocks {
		require.Equal(t, nodes["checkout"], b.NodeHash, "lunch and office match no term: %+v", b)
		tiers = append(tiers, b.Tier)
		require.True(t, strings.HasPrefix(b.URI, "tsctx://tenant/acme/node/"), b.URI)
	}
	require.Contains(t, tiers, pack.TierL2, "the matching chunk is expanded")

	// Where is the office now? The newer message wins the first L2 slot.
	blocks, err = e.Retrieve(ctx, "acme", matrixark.Query{Text: "where is the office now", User: "bob"})
	require.NoError(t, err)
	var l2 []string
	for _, b := range blocks {
		require.Equal(t, nodes["office"], b.NodeHash)
		if b.Tier == pack.TierL2 {
			l2 = append(l2, b.Text)
		}
	}
	require.NotEmpty(t, l2)
	require.Contains(t, l2[0], "Lisbon")

	// Scope: alice has no office node.
	blocks, err = e.Retrieve(ctx, "acme", matrixark.Query{Text: "office", User: "alice"})
	require.NoError(t, err)
	require.Empty(t, blocks)

	// Pack: the prompt is charged first, the budget holds, the audit is
	// durable and readable by session and by id.
	res, err := e.Pack(ctx, "acme", matrixark.PackRequest{Retrieve: matrixark.Query{Text: "checkout payment"},
		Prompt: "Why did checkout fail?", SessionID: "chat-9", QueryID: "q1", MaxPromptTokens: 40})
	require.NoError(t, err)
	require.True(t, strings.HasPrefix(res.InjectedPrompt, "Why did checkout fail?\n\n<context>\n"), res.InjectedPrompt)
	a := res.Audit
	require.LessOrEqual(t, a.PromptTokens+a.SelectedTokens, 40)
	require.Equal(t, 4, a.PromptTokens)
	require.Len(t, a.SelectedRefs, len(res.Selected))
	require.Len(t, a.BlockedRefs, len(res.Blocked))
	require.NotEmpty(t, res.Selected)
	require.Equal(t, "acme", a.Tenant)
	require.Equal(t, t0.UnixMilli(), a.RequestTimeMs)

	got, err := e.Audits(ctx, "acme", matrixark.AuditQuery{Session: "chat-9"})
	require.NoError(t, err)
	require.Equal(t, []pack.Audit{a}, got)
	one, err := e.Audit(ctx, "acme", a.AuditID)
	require.NoError(t, err)
	require.Equal(t, a, one)
	_, err = e.Audit(ctx, "other", a.AuditID)
	require.ErrorIs(t, err, matrixark.ErrNotFound, "another tenant cannot read it")
	got, err = e.Audits(ctx, "acme", matrixark.AuditQuery{Session: "chat-9", StartMs: t0.UnixMilli() + 1})
	require.NoError(t, err)
	require.Empty(t, got)

	// A fresh engine over the same store rebuilds its indexes without
	// filling caches, and ranks the same.
	fills := s.Stats().Fills
	e2 := newEngine(s, nil)
	again, err := e2.Retrieve(ctx, "acme", matrixark.Query{Text: "checkout payment failure"})
	require.NoError(t, err)
	require.Equal(t, nodes["checkout"], again[0].NodeHash)
	require.Less(t, s.Stats().Fills-fills, 5, "only the retrieval's own reads fill")
}

func TestIngestDuplicateAndAppend(t *testing.T) {
	e := newEngine(memstore.New(), nil)
	in := matrixark.Input{SourceID: "d", Body: "Alpha beta gamma."}
	first := ingest(t, e, "acme", in)
	require.False(t, first.Duplicate)
	second := ingest(t, e, "acme", in)
	require.True(t, second.Duplicate)
	require.Equal(t, first.Node, second.Node)

	// A session grows: new messages land on the same node.
	a := ingest(t, e, "acme", matrixark.Input{Session: "s", Messages: []matrixark.Message{{Role: "user", Content: "hello there"}}})
	b := ingest(t, e, "acme", matrixark.Input{Session: "s", Messages: []matrixark.Message{{Role: "user", Content: "the parcel arrived on Friday"}}})
	require.Equal(t, a.Node, b.Node)
	blocks, err := e.Retrieve(t.Context(), "acme", matrixark.Query{Text: "parcel"})
	require.NoError(t, err)
	var refs []string
	for _, b := range blocks {
		if b.Tier == pack.TierL2 {
			refs = append(refs, b.SourceRef)
		}
	}
	require.Equal(t, []string{"s:1"}, refs, "turns number on from the node's events")
}

func TestTenantIsolation(t *testing.T) {
	e := newEngine(memstore.New(), nil)
	corpus(t, e)
	ingest(t, e, "globex", matrixark.Input{SourceID: "x", Body: "Nothing about payments here but the word checkout."})
	blocks, err := e.Retrieve(t.Context(), "globex", matrixark.Query{Text: "checkout payment"})
	require.NoError(t, err)
	for _, b := range blocks {
		require.Contains(t, b.URI, "tsctx://tenant/globex/")
	}
	blocks, err = e.Retrieve(t.Context(), "initech", matrixark.Query{Text: "checkout"})
	require.NoError(t, err)
	require.Empty(t, blocks)
}

func TestValidation(t *testing.T) {
	s := memstore.New()
	e := newEngine(s, nil)
	for name, c := range map[string]struct {
		tenant string
		in     matrixark.Input
	}{
		"no tenant":       {"", matrixark.Input{SourceID: "d", Body: "x"}},
		"colon in tenant": {"a:b", matrixark.Input{SourceID: "d", Body: "x"}},
		"no source":       {"t", matrixark.Input{Body: "x"}},
		"empty body":      {"t", matrixark.Input{SourceID: "d", Body: "  "}},
		"body too long":   {"t", matrixark.Input{SourceID: "d", Body: strings.Repeat("x", matrixark.MaxTextBytes+1)}},
		"bad kind":        {"t", matrixark.Input{SourceID: "d", Body: "x", Kind: 42}},
		"space in user":   {"t", matrixark.Input{SourceID: "d", Body: "x", User: "a b"}},
		"long message": {"t", matrixark.Input{Session: "s", Messages: []matrixark.Message{
			{Role: "user", Content: strings.Repeat("x", matrixark.MaxTextBytes+1)}}}},
		"blank messages": {"t", matrixark.Input{Session: "s", Messages: []matrixark.Message{{Role: "user", Content: " "}}}},
	} {
		_, err := e.Ingest(t.Context(), c.tenant, c.in)
		require.ErrorIs(t, err, matrixark.ErrInvalid, name)
	}
	require.Zero(t, s.Stats().Applies, "nothing was written")
	_, err := e.Retrieve(t.Context(), "t", matrixark.Query{Text: strings.Repeat("q", matrixark.MaxTextBytes+1)})
	require.ErrorIs(t, err, matrixark.ErrInvalid)
}

// failing is a Store whose Apply fails for keys with a given prefix.
type failing struct {
	matrixark.Store
	prefix string
}

func (f failing) Apply(ctx context.Context, m []matrixark.Mutation, o matrixark.WriteOpts) error {
	for _, x := range m {
		if strings.HasPrefix(string(x.Key), f.prefix) {
			return errors.New("disk full")
		}
	}
	return f.Store.Apply(ctx, m, o)
}

func TestPackFailsWithoutItsAudit(t *testing.T) {
	s := failing{Store: memstore.New(), prefix: "ctx:audit:"}
	e := newEngine(s, nil)
	corpus(t, e)
	res, err := e.Pack(t.Context(), "acme", matrixark.PackRequest{Retrieve: matrixark.Query{Text: "checkout"}, Prompt: "p"})
	require.ErrorIs(t, err, matrixark.ErrAuditWrite)
	require.Empty(t, res.InjectedPrompt)
}

// flaky fails every Embed.
type flaky struct{}

func (flaky) Embed(context.Context, []string) ([][]float32, error) {
	return nil, errors.New("provider down")
}
func (flaky) Info() embed.Info { return embed.Info{Provider: "openai", Model: "m", Dim: 8} }

func TestEmbeddings(t *testing.T) {
	ctx := t.Context()

	// A failing provider defers: stored without vectors, still found.
	s := memstore.New()
	e := newEngine(s, func(o *matrixark.Options) { o.Embedder = flaky{} })
	r := ingest(t, e, "acme", matrixark.Input{SourceID: "d", Body: "Checkout failed for a customer."})
	require.True(t, r.EmbedDeferred)
	blocks, err := e.Retrieve(ctx, "acme", matrixark.Query{Text: "checkout"})
	require.NoError(t, err)
	require.NotEmpty(t, blocks)

	// Unless told to abort: then nothing is written.
	e = newEngine(memstore.New(), func(o *matrixark.Options) { o.Embedder = flaky{}; o.AbortOnEmbedFailure = true })
	_, err = e.Ingest(ctx, "acme", matrixark.Input{SourceID: "d", Body: "Checkout failed."})
	require.Error(t, err)

	// Requiring a model refuses the hash embedder outright.
	e = newEngine(memstore.New(), func(o *matrixark.Options) { o.Embedder = embed.RequireModel(embed.NewHash("")) })
	_, err = e.Ingest(ctx, "acme", matrixark.Input{SourceID: "d", Body: "Checkout failed."})
	require.ErrorIs(t, err, matrixark.ErrModelRequired)

	// The first vectors pin the Space; another encoder of the same width
	// is declined (counted), its ingest deferred, its node still found.
	s = memstore.New()
	e = newEngine(s, func(o *matrixark.Options) { o.Embedder = embed.NewHash("") })
	r = ingest(t, e, "acme", matrixark.Input{SourceID: "a", Body: "Checkout failed for a customer."})
	require.False(t, r.EmbedDeferred)
	blocks, err = e.Retrieve(ctx, "acme", matrixark.Query{Text: "checkout"})
	require.NoError(t, err)
	require.NotEmpty(t, blocks)
	e2 := newEngine(s, func(o *matrixark.Options) { o.Embedder = embed.NewHash("other-model") })
	r = ingest(t, e2, "acme", matrixark.Input{SourceID: "b", Body: "Refund issued to the customer."})
	require.True(t, r.EmbedDeferred)
	require.Equal(t, map[string]uint64{embed.ReasonEncoder: 1, embed.ReasonWidth: 0}, e2.Declined())
	blocks, err = e2.Retrieve(ctx, "acme", matrixark.Query{Text: "refund"})
	require.NoError(t, err)
	require.NotEmpty(t, blocks, "a declined query runs lexical-only")
}

func TestForget(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	e := newEngine(s, func(o *matrixark.Options) { o.Embedder = embed.NewHash("") })
	nodes := corpus(t, e)
	ok, err := e.Forget(ctx, "acme", matrixark.KindDoc, "runbook-7")
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, nodes["checkout"], matrixark.NodeHash("acme", matrixark.KindDoc, "runbook-7"))

	// Nothing of it is retrieved, by this engine or one rebuilt from the store.
	for _, eng := range []*matrixark.Engine{e, newEngine(s, nil)} {
		blocks, err := eng.Retrieve(ctx, "acme", matrixark.Query{Text: "checkout payment"})
		require.NoError(t, err)
		for _, b := range blocks {
			require.NotEqual(t, nodes["checkout"], b.NodeHash)
		}
	}
	var left []string
	require.NoError(t, s.Scan(ctx, matrixark.Range{}, matrixark.ReadOpts{}, func(k, _ []byte) bool {
		left = append(left, string(k))
		return true
	}))
	for _, k := range left {
		require.NotContains(t, k, string(binary.BigEndian.AppendUint64(nil, nodes["checkout"])), "a record of the forgotten node is left: %q", k)
	}

	// The same source ingested again is a new node, not a duplicate.
	r := ingest(t, e, "acme", matrixark.Input{SourceID: "runbook-7", Title: "Checkout outage",
		Body: "Customer checkout failed. Payment risk score spiked after the fraud rule change. The team rolled back at 14:05."})
	require.False(t, r.Duplicate)

	ok, err = e.Forget(ctx, "acme", matrixark.KindDoc, "never-ingested")
	require.NoError(t, err)
	require.False(t, ok)
}

// A user's weaker match is found however many stronger ones other users
// hold: the scope applies before the top C candidates are taken.
func TestScopeBeforeCandidates(t *testing.T) {
	e := newEngine(memstore.New(), nil)
	for i := range 300 {
		ingest(t, e, "acme", matrixark.Input{Session: fmt.Sprintf("s%d", i), User: fmt.Sprintf("u%d", i),
			Messages: []matrixark.Message{{Role: "user", Content: "checkout payment checkout payment refund"}}})
	}
	zed := ingest(t, e, "acme", matrixark.Input{Session: "z", User: "zed",
		Messages: []matrixark.Message{{Role: "user", Content: "the checkout page was slow today, nothing else happened at all"}}})
	blocks, err := e.Retrieve(t.Context(), "acme", matrixark.Query{Text: "checkout payment", User: "zed"})
	require.NoError(t, err)
	require.NotEmpty(t, blocks)
	require.Equal(t, zed.Node, blocks[0].NodeHash)
}

// l2Texts are the texts of the L2 blocks, in order; no block may hold
// other, another user's words.
func l2Texts(t *testing.T, blocks []pack.Block, other string) []string {
	t.Helper()
	var l2 []string
	for _, b := range blocks {
		require.NotContains(t, b.Text, other, "another user's event")
		if b.Tier == pack.TierL2 {
			l2 = append(l2, b.Text)
		}
	}
	return l2
}

// An event whose session's summary ranks below the event nodes' is found
// by the event index and expanded directly (Options.EventHits); with
// EventHits −1, the original's expansion alone, it is missed.
func TestEventHitsExpandBeyondEventNodes(t *testing.T) {
	const evidence = "The dentist moved my appointment to Friday at nine."
	load := func(e *matrixark.Engine) {
		for i := range 5 {
			ingest(t, e, "acme", matrixark.Input{Session: fmt.Sprintf("d%d", i), User: "carol", TimeMs: t0.UnixMilli() - int64(1000*i), Messages: []matrixark.Message{
				{Role: "user", Content: fmt.Sprintf("Dentist appointment dentist notes, part %d: dentist dentist.", i)},
			}})
		}
		msgs := []matrixark.Message{}
		for i := range 30 {
			msgs = append(msgs, matrixark.Message{Role: "user", Content: fmt.Sprintf("Groceries: add item %d to the list.", i)})
		}
		msgs = append(msgs, matrixark.Message{ID: "m-evidence", Role: "user", Content: evidence})
		ingest(t, e, "acme", matrixark.Input{Session: "g", User: "carol", TimeMs: t0.UnixMilli() - 9000, Messages: msgs})
		// Another user's matching event is out of scope either way.
		ingest(t, e, "acme", matrixark.Input{Session: "x", User: "dave", TimeMs: t0.UnixMilli(), Messages: []matrixark.Message{
			{Role: "user", Content: "My dentist appointment moved to Monday."},
		}})
	}
	for _, tc := range []struct {
		hits  int
		found bool
	}{{0, true}, {-1, false}} {
		e := newEngine(memstore.New(), func(o *matrixark.Options) { o.EventHits = tc.hits })
		load(e)
		blocks, err := e.Retrieve(t.Context(), "acme", matrixark.Query{Text: "when is my dentist appointment", User: "carol"})
		require.NoError(t, err)
		l2 := l2Texts(t, blocks, "Monday")
		require.Equal(t, tc.found, slices.Contains(l2, evidence), "EventHits %d: %q", tc.hits, l2)
	}
}

// concepts embeds a text by the concepts its words name: a dog (puppy,
// beagle, dog), a shop (grocer, shop) or neither; a stand-in for a model's
// meaning in a test.
type concepts struct{}

func (concepts) Embed(_ context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, s := range texts {
		v := []float32{0, 0, 0.1}
		l := strings.ToLower(s)
		for _, w := range []string{"puppy", "beagle", "dog"} {
			if strings.Contains(l, w) {
				v[0]++
			}
		}
		for _, w := range []string{"grocer", "shop"} {
			if strings.Contains(l, w) {
				v[1]++
			}
		}
		out[i] = v
	}
	return out, nil
}

func (concepts) Info() embed.Info { return embed.Info{Provider: "openai", Model: "concepts", Dim: 3} }

// An embedded query finds the user's event that shares its meaning but
// none of its words, and ranks it first among the L2 blocks; lexically
// the same store never finds it.
func TestEmbeddedEventHits(t *testing.T) {
	const evidence = "Walking Biscuit, my beagle, takes most of my evening."
	for _, tc := range []struct {
		emb   embed.Embedder
		hits  int
		found bool
	}{{concepts{}, 0, true}, {nil, 0, false}, {concepts{}, -1, false}} {
		e := newEngine(memstore.New(), func(o *matrixark.Options) { o.Embedder = tc.emb; o.EventHits = tc.hits })
		for i := range 11 {
			ingest(t, e, "acme", matrixark.Input{Session: fmt.Sprintf("p%d", i), User: "erin", TimeMs: t0.UnixMilli() - int64(1000*i), Messages: []matrixark.Message{
				{Role: "user", Content: fmt.Sprintf("We chose a name for project %d: Atlas-%d.", i, i)},
			}})
		}
		msgs := []matrixark.Message{}
		for i := range 20 {
			msgs = append(msgs, matrixark.Message{Role: "user", Content: fmt.Sprintf("Grocery shop list item %d.", i)})
		}
		msgs = append(msgs, matrixark.Message{Role: "user", Content: evidence})
		ingest(t, e, "acme", matrixark.Input{Session: "g", User: "erin", TimeMs: t0.UnixMilli() - 20000, Messages: msgs})
		ingest(t, e, "acme", matrixark.Input{Session: "x", User: "fay", TimeMs: t0.UnixMilli(), Messages: []matrixark.Message{
			{Role: "user", Content: "My dog is a beagle too."},
		}})

		blocks, err := e.Retrieve(t.Context(), "acme", matrixark.Query{Text: "What did we name the puppy?", User: "erin"})
		require.NoError(t, err)
		l2 := l2Texts(t, blocks, "beagle too")
		if !tc.found {
			require.NotContains(t, l2, evidence)
			continue
		}
		require.NotEmpty(t, l2)
		require.Equal(t, evidence, l2[0], "%q", l2)

		// Forgotten, its vector goes with it.
		ok, err := e.Forget(t.Context(), "acme", matrixark.KindChat, "g")
		require.NoError(t, err)
		require.True(t, ok)
		blocks, err = e.Retrieve(t.Context(), "acme", matrixark.Query{Text: "What did we name the puppy?", User: "erin"})
		require.NoError(t, err)
		for _, b := range blocks {
			require.NotEqual(t, evidence, b.Text)
		}
	}
}

// A query in a user's scope searches that user's node vectors: another
// user's hundreds of closer nodes cannot take its places among the top C,
// and with no shared word and no event hits, only the vectors find it.
func TestEmbeddedNodesScopedByUser(t *testing.T) {
	e := newEngine(memstore.New(), func(o *matrixark.Options) { o.Embedder = concepts{}; o.EventHits = -1 })
	for i := range 300 {
		ingest(t, e, "acme", matrixark.Input{Session: fmt.Sprintf("f%d", i), User: "fay", TimeMs: t0.UnixMilli() - int64(i), Messages: []matrixark.Message{
			{Role: "user", Content: fmt.Sprintf("My dog barks at %d.", i)},
		}})
	}
	const evidence = "Walking Biscuit, my beagle, past the grocer."
	ingest(t, e, "acme", matrixark.Input{Session: "g", User: "erin", TimeMs: t0.UnixMilli(), Messages: []matrixark.Message{
		{Role: "user", Content: evidence},
	}})
	blocks, err := e.Retrieve(t.Context(), "acme", matrixark.Query{Text: "What did we name the puppy?", User: "erin"})
	require.NoError(t, err)
	found := false
	for _, b := range blocks {
		require.NotContains(t, b.Text, "barks", "another user's node")
		found = found || strings.Contains(b.Text, "Biscuit")
	}
	require.True(t, found, "erin's session among %d blocks", len(blocks))

	// Forgotten, its vectors go with it.
	ok, err := e.Forget(t.Context(), "acme", matrixark.KindChat, "g")
	require.NoError(t, err)
	require.True(t, ok)
	blocks, err = e.Retrieve(t.Context(), "acme", matrixark.Query{Text: "What did we name the puppy?", User: "erin"})
	require.NoError(t, err)
	require.Empty(t, blocks)
}

// More event hits than one Store read takes are read in parts: 1,000
// nearest events and the event index's best matches, over a user's 1,400
// matching events, are more than MaxGetKeys keys.
func TestEventHitsBeyondOneRead(t *testing.T) {
	e := newEngine(memstore.New(), func(o *matrixark.Options) { o.Embedder = concepts{}; o.EventHits = matrixark.MaxLimit })
	for s := range 2 {
		msgs := make([]matrixark.Message, 700)
		for i := range msgs {
			msgs[i] = matrixark.Message{Role: "user", Content: fmt.Sprintf("My dog %d%s.", 700*s+i, strings.Repeat(" walks", i%5))}
		}
		ingest(t, e, "acme", matrixark.Input{Session: fmt.Sprintf("s%d", s), User: "gus", TimeMs: t0.UnixMilli() - int64(s), Messages: msgs})
	}
	blocks, err := e.Retrieve(t.Context(), "acme", matrixark.Query{Text: "dog", User: "gus"})
	require.NoError(t, err)
	l2 := l2Texts(t, blocks, "cat")
	require.Greater(t, len(l2), matrixark.MaxGetKeys)
}

// An Engine's indexes are derived from the Store when it first serves a
// tenant: records another Engine writes later are missed until
// Invalidate, after which they are found.
func TestInvalidate(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	a, b := newEngine(s, nil), newEngine(s, nil)
	q := matrixark.Query{Text: "checkout payment failure"}
	blocks, err := b.Retrieve(ctx, "acme", q)
	require.NoError(t, err)
	require.Empty(t, blocks)
	corpus(t, a)
	blocks, err = b.Retrieve(ctx, "acme", q)
	require.NoError(t, err)
	require.Empty(t, blocks, "b's indexes predate a's writes")
	b.Invalidate()
	blocks, err = b.Retrieve(ctx, "acme", q)
	require.NoError(t, err)
	require.NotEmpty(t, blocks)
}
