package memory_test

import (
	"crypto/md5"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark"
	"github.com/temporalstore/temporalstore-go/matrixark/embed"
	"github.com/temporalstore/temporalstore-go/matrixark/memory"
	"github.com/temporalstore/temporalstore-go/matrixark/memstore"
	"github.com/temporalstore/temporalstore-go/matrixark/pack"
	"github.com/temporalstore/temporalstore-go/matrixark/plan"
	"github.com/temporalstore/temporalstore-go/matrixark/tokens"
)

var t0 = time.UnixMilli(1_764_460_800_000)

var uuid4 = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)

// clock advances one second per reading, so every write has its own time.
type clock struct{ ms atomic.Int64 }

func (c *clock) now() time.Time { return time.UnixMilli(c.ms.Add(1000)) }

type fixture struct {
	s   *memstore.Store
	e   *matrixark.Engine
	m   *memory.Memories
	clk *clock
}

func newFixture(t *testing.T) *fixture {
	t.Helper()
	c := &clock{}
	c.ms.Store(t0.UnixMilli())
	s := memstore.New()
	e := matrixark.New(s, matrixark.Options{Counter: tokens.Words{}, Now: func() time.Time { return t0 }})
	return &fixture{s: s, e: e, m: memory.New(e, s, memory.Options{Now: c.now}), clk: c}
}

func (f *fixture) add(t *testing.T, tenant string, r memory.AddRequest) []memory.Result {
	t.Helper()
	res, err := f.m.Add(t.Context(), tenant, r)
	require.NoError(t, err)
	return res
}

func user(texts ...string) []memory.Message {
	out := make([]memory.Message, len(texts))
	for i, s := range texts {
		out[i] = memory.Message{Role: "user", Content: s}
	}
	return out
}

func memoriesOf(items []memory.Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = it.Memory
	}
	return out
}

func TestAdd(t *testing.T) {
	alice := memory.Scope{UserID: "alice"}
	for _, c := range []struct {
		name  string
		first []memory.Message // added before, without Infer
		req   memory.AddRequest
		want  []string
	}{
		{name: "verbatim keeps duplicates",
			req:  memory.AddRequest{Messages: user("I like tea.", "I like tea."), Scope: alice},
			want: []string{"I like tea.", "I like tea."}},
		{name: "infer drops batch duplicates",
			req:  memory.AddRequest{Messages: user("I like tea.", "I like tea.", "I ride a bike."), Scope: alice, Infer: true},
			want: []string{"I like tea.", "I ride a bike."}},
		{name: "infer drops what the scope remembers", first: user("I like tea."),
			req:  memory.AddRequest{Messages: user("I like tea.", "I like coffee."), Scope: alice, Infer: true},
			want: []string{"I like coffee."}},
		{name: "infer compares within the exact scope", first: user("I like tea."),
			req:  memory.AddRequest{Messages: user("I like tea."), Scope: memory.Scope{UserID: "alice", RunID: "r1"}, Infer: true},
			want: []string{"I like tea."}},
		{name: "system and blank messages are skipped",
			req: memory.AddRequest{Scope: alice, Messages: []memory.Message{
				{Role: "system", Content: "You are helpful."}, {Role: "user", Content: "  "},
				{Role: "assistant", Content: "Noted.", Name: "bot"}}},
			want: []string{"Noted."}},
		{name: "nothing to add", req: memory.AddRequest{Scope: alice}, want: []string{}},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			if c.first != nil {
				f.add(t, "acme", memory.AddRequest{Messages: c.first, Scope: alice})
			}
			res := f.add(t, "acme", c.req)
			got := []string{}
			for _, r := range res {
				require.Regexp(t, uuid4, r.ID)
				require.Equal(t, memory.EventAdd, r.Event)
				got = append(got, r.Memory)
				it, err := f.m.Get(t.Context(), "acme", r.ID)
				require.NoError(t, err)
				require.NotNil(t, it)
				require.Equal(t, r.Memory, it.Memory)
				require.Equal(t, r.Role, it.Role)
				require.Equal(t, r.ActorID, it.ActorID)
			}
			require.Equal(t, c.want, got)
		})
	}
}

func TestAddResultJSON(t *testing.T) {
	f := newFixture(t)
	res := f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{AgentID: "a1"}, Messages: []memory.Message{
		{Role: "user", Content: "one"}, {Role: "assistant", Content: "two", Name: "helper-bot"}}})
	require.Len(t, res, 2)
	var got []map[string]any
	b, err := json.Marshal(res)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))
	require.Equal(t, map[string]any{"id": res[0].ID, "memory": "one", "event": "ADD", "actor_id": nil, "role": "user"}, got[0])
	require.Equal(t, "helper-bot", got[1]["actor_id"])
}

func TestScopeValidation(t *testing.T) {
	for _, c := range []struct {
		name  string
		scope memory.Scope
		err   error  // nil: accepted
		user  string // the stored user_id when accepted
	}{
		{"no id", memory.Scope{}, memory.ErrNoIdentifier, ""},
		{"trimmed", memory.Scope{UserID: "  alice\t"}, nil, "alice"},
		{"agent only", memory.Scope{AgentID: "a"}, nil, ""},
		{"blank", memory.Scope{UserID: "   "}, matrixark.ErrInvalid, ""},
		{"blank beside a good one", memory.Scope{UserID: "alice", RunID: " "}, matrixark.ErrInvalid, ""},
		{"inner space", memory.Scope{UserID: "al ice"}, matrixark.ErrInvalid, ""},
		{"inner newline", memory.Scope{AgentID: "a\nb"}, matrixark.ErrInvalid, ""},
		{"colon", memory.Scope{RunID: "r:1"}, matrixark.ErrInvalid, ""},
		{"too long", memory.Scope{UserID: strings.Repeat("u", matrixark.MaxNameBytes+1)}, matrixark.ErrInvalid, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			res, err := f.m.Add(t.Context(), "acme", memory.AddRequest{Messages: user("hello world"), Scope: c.scope})
			if c.err != nil {
				require.ErrorIs(t, err, c.err)
				require.ErrorIs(t, err, matrixark.ErrInvalid)
				require.Zero(t, f.s.Stats().Applies, "nothing is written")
				return
			}
			require.NoError(t, err)
			it, err := f.m.Get(t.Context(), "acme", res[0].ID)
			require.NoError(t, err)
			require.Equal(t, c.user, it.UserID)
		})
	}
	f := newFixture(t)
	_, err := f.m.Add(t.Context(), "acme", memory.AddRequest{Messages: user("x")})
	require.EqualError(t, err, "matrixark: invalid request: At least one identifier (user_id, agent_id, run_id) is required.")
	for _, tenant := range []string{"", "a:b", "a b"} {
		_, err := f.m.Add(t.Context(), tenant, memory.AddRequest{Messages: user("x"), Scope: memory.Scope{UserID: "u"}})
		require.ErrorIs(t, err, matrixark.ErrInvalid, "tenant %q", tenant)
	}
}

func TestItemShape(t *testing.T) {
	f := newFixture(t)
	text := "My office moved to Lisbon."
	res := f.add(t, "acme", memory.AddRequest{Messages: user(text), Scope: memory.Scope{UserID: "alice", RunID: "r1"},
		Metadata: map[string]any{"topic": "work", "user_id": "mallory", "agent_id": "x", "run_id": "y", "actor_id": "z"}})
	it, err := f.m.Get(t.Context(), "acme", res[0].ID)
	require.NoError(t, err)

	var got map[string]any
	b, err := json.Marshal(it)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &got))
	keys := slices.Sorted(func(yield func(string) bool) {
		for k := range got {
			if !yield(k) {
				return
			}
		}
	})
	require.Equal(t, []string{"created_at", "hash", "id", "memory", "metadata", "role", "run_id", "updated_at", "user_id"}, keys)
	sum := md5.Sum([]byte(text))
	require.Equal(t, hex.EncodeToString(sum[:]), got["hash"])
	require.Equal(t, map[string]any{"topic": "work"}, got["metadata"], "id keys are stripped")
	require.Equal(t, "alice", got["user_id"], "metadata cannot move a memory to another scope")
	created, err := time.Parse(time.RFC3339Nano, it.CreatedAt)
	require.NoError(t, err)
	_, offset := created.Zone()
	require.Zero(t, offset)
	require.True(t, strings.HasSuffix(it.CreatedAt, "+00:00"))
	require.Equal(t, it.CreatedAt, it.UpdatedAt)

	// Metadata of only id keys is none at all.
	res = f.add(t, "acme", memory.AddRequest{Messages: user("x"), Scope: memory.Scope{UserID: "alice"},
		Metadata: map[string]any{"user_id": "bob"}})
	it, err = f.m.Get(t.Context(), "acme", res[0].ID)
	require.NoError(t, err)
	require.Nil(t, it.Metadata)
	b, err = json.Marshal(it)
	require.NoError(t, err)
	require.Contains(t, string(b), `"metadata":null`)

	// Unknown and malformed ids name nothing.
	for _, id := range []string{"", "nope", strings.ToUpper(res[0].ID[:35]) + "x", "00000000-0000-4000-8000-000000000000"} {
		it, err := f.m.Get(t.Context(), "acme", id)
		require.NoError(t, err)
		require.Nil(t, it)
	}
	upper, err := f.m.Get(t.Context(), "acme", strings.ToUpper(res[0].ID))
	require.NoError(t, err)
	require.NotNil(t, upper, "ids compare case-insensitively")
}

func TestUpdateDeleteHistory(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	res := f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{UserID: "alice"},
		Messages: []memory.Message{{Role: "user", Content: "I live in Porto.", Name: "alice-phone"}}})
	id := res[0].ID
	before, err := f.m.Get(ctx, "acme", id)
	require.NoError(t, err)

	text := "I live in Lisbon."
	require.NoError(t, f.m.Update(ctx, "acme", id, memory.UpdateRequest{Text: &text, Metadata: map[string]any{"v": 2.0}}))
	after, err := f.m.Get(ctx, "acme", id)
	require.NoError(t, err)
	require.Equal(t, text, after.Memory)
	sum := md5.Sum([]byte(text))
	require.Equal(t, hex.EncodeToString(sum[:]), after.Hash)
	require.Equal(t, before.CreatedAt, after.CreatedAt, "created_at stays")
	require.Greater(t, after.UpdatedAt, before.UpdatedAt)
	require.Equal(t, map[string]any{"v": 2.0}, after.Metadata)

	// Metadata only: the text stays.
	require.NoError(t, f.m.Update(ctx, "acme", id, memory.UpdateRequest{Metadata: map[string]any{}}))
	after, err = f.m.Get(ctx, "acme", id)
	require.NoError(t, err)
	require.Equal(t, text, after.Memory)
	require.Nil(t, after.Metadata)

	require.NoError(t, f.m.Delete(ctx, "acme", id))
	gone, err := f.m.Get(ctx, "acme", id)
	require.NoError(t, err)
	require.Nil(t, gone)

	rows, err := f.m.History(ctx, "acme", id)
	require.NoError(t, err)
	require.Len(t, rows, 4)
	var events []string
	for _, r := range rows {
		events = append(events, r.Event)
		require.Equal(t, id, r.MemoryID)
		require.Regexp(t, uuid4, r.ID)
		require.Equal(t, before.CreatedAt, r.CreatedAt)
		require.Equal(t, "alice-phone", r.ActorID)
		require.Equal(t, "user", r.Role)
	}
	require.Equal(t, []string{"ADD", "UPDATE", "UPDATE", "DELETE"}, events, "oldest first")
	require.Equal(t, memory.HistoryRow{ID: rows[0].ID, MemoryID: id, NewMemory: "I live in Porto.", Event: "ADD",
		CreatedAt: before.CreatedAt, ActorID: "alice-phone", Role: "user"}, rows[0])
	require.Equal(t, "I live in Porto.", rows[1].OldMemory)
	require.Equal(t, text, rows[1].NewMemory)
	require.Equal(t, text, rows[3].OldMemory)
	require.Empty(t, rows[3].NewMemory)
	require.True(t, rows[3].IsDeleted)
	require.False(t, rows[1].IsDeleted)

	var wire map[string]any
	b, err := json.Marshal(rows[0])
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(b, &wire))
	require.Equal(t, map[string]any{"id": rows[0].ID, "memory_id": id, "old_memory": nil, "new_memory": "I live in Porto.",
		"event": "ADD", "created_at": before.CreatedAt, "updated_at": nil, "is_deleted": false, "actor_id": "alice-phone",
		"role": "user"}, wire)

	// A deleted memory can be neither updated nor deleted again.
	require.ErrorIs(t, f.m.Delete(ctx, "acme", id), matrixark.ErrNotFound)
	require.ErrorIs(t, f.m.Update(ctx, "acme", id, memory.UpdateRequest{Text: &text}), matrixark.ErrNotFound)
	require.ErrorIs(t, f.m.Delete(ctx, "acme", "not-a-uuid"), matrixark.ErrNotFound)
	empty := " "
	require.ErrorIs(t, f.m.Update(ctx, "acme", id, memory.UpdateRequest{}), matrixark.ErrInvalid)
	require.ErrorIs(t, f.m.Update(ctx, "acme", id, memory.UpdateRequest{Text: &empty}), matrixark.ErrInvalid)

	none, err := f.m.History(ctx, "acme", "00000000-0000-4000-8000-000000000000")
	require.NoError(t, err)
	require.Equal(t, []memory.HistoryRow{}, none)
}

func TestSearch(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	alice := memory.Scope{UserID: "alice"}
	f.add(t, "acme", memory.AddRequest{Scope: alice, Metadata: map[string]any{"topic": "travel"},
		Messages: user("Alice is flying to Tokyo in May.", "Alice prefers window seats on long flights.")})
	pizza := f.add(t, "acme", memory.AddRequest{Scope: alice, Messages: user("Alice loves pizza with olives.")})
	f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{UserID: "bob"}, Messages: user("Bob is flying to Tokyo as well.")})
	f.add(t, "globex", memory.AddRequest{Scope: alice, Messages: user("Tokyo trip planned by another Alice.")})

	search := func(r memory.SearchRequest) []memory.Item {
		t.Helper()
		got, err := f.m.Search(ctx, "acme", r)
		require.NoError(t, err)
		return got
	}
	const q = "Tokyo flight in May"
	got := search(memory.SearchRequest{Query: q, Filter: memory.Filter{Scope: alice}})
	require.Equal(t, []string{"Alice is flying to Tokyo in May.", "Alice prefers window seats on long flights."}, memoriesOf(got),
		"the memory matching more of the query first; bob's and globex's are out of scope")
	p := plan.New(q)
	for i, it := range got {
		require.NotNil(t, it.Score)
		require.Equal(t, memory.Score(p, it.Memory), *it.Score)
		require.Greater(t, *it.Score, 0.0)
		require.LessOrEqual(t, *it.Score, 0.5, "a lexical score stays below a perfect cosine")
		if i > 0 {
			require.LessOrEqual(t, *it.Score, *got[i-1].Score, "best first")
		}
	}

	// The threshold gates; the limit cuts.
	top := *got[0].Score
	require.Len(t, search(memory.SearchRequest{Query: q, Filter: memory.Filter{Scope: alice}, Threshold: top}), 1)
	require.Len(t, search(memory.SearchRequest{Query: q, Filter: memory.Filter{Scope: alice, Limit: 1}}), 1)
	require.Empty(t, search(memory.SearchRequest{Query: q, Filter: memory.Filter{Scope: alice}, Threshold: 0.51}))

	// Filters AND: ids inside filters and metadata equality.
	got = search(memory.SearchRequest{Query: q, Filter: memory.Filter{Filters: map[string]any{"user_id": "alice", "topic": "travel"}}})
	require.Len(t, got, 2)
	require.Empty(t, search(memory.SearchRequest{Query: q, Filter: memory.Filter{Filters: map[string]any{"user_id": "alice", "topic": "food"}}}))
	got = search(memory.SearchRequest{Query: "Tokyo", Filter: memory.Filter{Scope: memory.Scope{UserID: "bob"}, Filters: map[string]any{"user_id": "alice"}}})
	require.Equal(t, []string{"Bob is flying to Tokyo as well."}, memoriesOf(got), "the scope wins over filters")
	_, err := f.m.Search(ctx, "acme", memory.SearchRequest{Query: "Tokyo", Filter: memory.Filter{Filters: map[string]any{"user_id": 7}}})
	require.ErrorIs(t, err, matrixark.ErrInvalid)
	_, err = f.m.Search(ctx, "acme", memory.SearchRequest{Query: "Tokyo"})
	require.ErrorIs(t, err, memory.ErrNoIdentifier)
	_, err = f.m.Search(ctx, "acme", memory.SearchRequest{Query: "Tokyo", Filter: memory.Filter{Scope: alice, Limit: matrixark.MaxLimit + 1}})
	require.ErrorIs(t, err, matrixark.ErrInvalid)

	// Updated: found by the new text, and scored by it.
	text := "Alice now loves sushi."
	require.NoError(t, f.m.Update(ctx, "acme", pizza[0].ID, memory.UpdateRequest{Text: &text}))
	got = search(memory.SearchRequest{Query: "sushi", Filter: memory.Filter{Scope: alice}})
	require.Equal(t, []string{text}, memoriesOf(got))
	// The old text is forgotten: it finds nothing any more.
	require.Empty(t, search(memory.SearchRequest{Query: "pizza olives", Filter: memory.Filter{Scope: alice}}))

	// Deleted: never found again.
	require.NoError(t, f.m.Delete(ctx, "acme", pizza[0].ID))
	require.Empty(t, search(memory.SearchRequest{Query: "sushi", Filter: memory.Filter{Scope: alice}}))
	all, err := f.m.GetAll(ctx, "acme", memory.Filter{Scope: alice})
	require.NoError(t, err)
	require.Len(t, all, 2)
}

func TestSearchPastDeleted(t *testing.T) {
	f := newFixture(t)
	alice := memory.Scope{UserID: "alice"}
	var ids []string
	for i := range 40 {
		res := f.add(t, "acme", memory.AddRequest{Scope: alice, Messages: user(fmt.Sprintf("Invoice %d of the harbor project.", i))})
		ids = append(ids, res[0].ID)
	}
	for _, id := range ids[:39] {
		require.NoError(t, f.m.Delete(t.Context(), "acme", id))
	}
	got, err := f.m.Search(t.Context(), "acme", memory.SearchRequest{Query: "harbor invoice", Filter: memory.Filter{Scope: alice, Limit: 1}})
	require.NoError(t, err)
	require.Len(t, got, 1, "the one live memory is found behind 39 deleted ones")
	require.Equal(t, ids[39], got[0].ID)
}

func TestSearchIgnoresForeignSources(t *testing.T) {
	f := newFixture(t)
	res := f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{UserID: "alice"}, Messages: user("The harbor opens at six.")})
	// A document claiming the memory's source id lives in another node.
	_, err := f.e.Ingest(t.Context(), "acme", matrixark.Input{SourceID: "mem:" + res[0].ID, Body: "Harbor harbor harbor.", User: "alice"})
	require.NoError(t, err)
	got, err := f.m.Search(t.Context(), "acme", memory.SearchRequest{Query: "harbor", Filter: memory.Filter{Scope: memory.Scope{UserID: "alice"}}})
	require.NoError(t, err)
	require.Equal(t, []string{"The harbor opens at six."}, memoriesOf(got))

	// The memory is context too: the Engine retrieves it as a raw message.
	blocks, err := f.e.Retrieve(t.Context(), "acme", matrixark.Query{Text: "harbor opens", User: "alice"})
	require.NoError(t, err)
	var raw []pack.Block
	for _, b := range blocks {
		if b.Tier == pack.TierL2 && b.RecordType == matrixark.RecordRawMessage {
			raw = append(raw, b)
		}
	}
	require.NotEmpty(t, raw)
	require.Equal(t, "mem:"+res[0].ID, raw[0].SourceRef)
}

func TestGetAllAndExpiry(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	alice := memory.Scope{UserID: "alice", AgentID: "travel"}
	f.add(t, "acme", memory.AddRequest{Scope: alice, Messages: user("first")})
	f.add(t, "acme", memory.AddRequest{Scope: alice, Messages: user("second")})
	past := time.UnixMilli(f.clk.ms.Load()).UTC().AddDate(0, 0, -2).Format(time.DateOnly)
	old := f.add(t, "acme", memory.AddRequest{Scope: alice, Messages: user("third, expired"), ExpirationDate: past})
	f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{UserID: "alice"}, Messages: user("other agent")})
	future := time.UnixMilli(f.clk.ms.Load()).UTC().Add(time.Hour).Format(time.RFC3339)
	f.add(t, "acme", memory.AddRequest{Scope: alice, Messages: user("fourth, expires later"), ExpirationDate: future})

	all, err := f.m.GetAll(ctx, "acme", memory.Filter{Scope: alice})
	require.NoError(t, err)
	require.Equal(t, []string{"fourth, expires later", "second", "first"}, memoriesOf(all), "newest first, expired hidden")
	all, err = f.m.GetAll(ctx, "acme", memory.Filter{Scope: alice, ShowExpired: true, Limit: 2})
	require.NoError(t, err)
	require.Equal(t, []string{"fourth, expires later", "third, expired"}, memoriesOf(all))
	all, err = f.m.GetAll(ctx, "acme", memory.Filter{Scope: memory.Scope{UserID: "alice"}})
	require.NoError(t, err)
	require.Len(t, all, 4, "user alice across agents")
	got, err := f.m.Search(ctx, "acme", memory.SearchRequest{Query: "third expired", Filter: memory.Filter{Scope: alice}})
	require.NoError(t, err)
	require.Empty(t, got)
	it, err := f.m.Get(ctx, "acme", old[0].ID)
	require.NoError(t, err)
	require.NotNil(t, it, "get still returns an expired memory")

	// Clearing the expiry brings it back.
	clear := ""
	require.NoError(t, f.m.Update(ctx, "acme", old[0].ID, memory.UpdateRequest{ExpirationDate: &clear}))
	all, err = f.m.GetAll(ctx, "acme", memory.Filter{Scope: alice})
	require.NoError(t, err)
	require.Len(t, all, 4)

	_, err = f.m.GetAll(ctx, "acme", memory.Filter{})
	require.ErrorIs(t, err, memory.ErrNoIdentifier)
	_, err = f.m.Add(ctx, "acme", memory.AddRequest{Scope: alice, Messages: user("x"), ExpirationDate: "next tuesday"})
	require.ErrorIs(t, err, matrixark.ErrInvalid)
}

func TestDeleteAllAndReset(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	a1 := f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{UserID: "alice", RunID: "r1"}, Messages: user("one", "two")})
	f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{UserID: "alice", RunID: "r2"}, Messages: user("three")})
	f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{UserID: "bob"}, Messages: user("four")})
	other := f.add(t, "globex", memory.AddRequest{Scope: memory.Scope{UserID: "alice", RunID: "r1"}, Messages: user("five")})

	_, err := f.m.DeleteAll(ctx, "acme", memory.Scope{})
	require.ErrorIs(t, err, memory.ErrNoIdentifier)
	n, err := f.m.DeleteAll(ctx, "acme", memory.Scope{UserID: "alice", RunID: "r1"})
	require.NoError(t, err)
	require.Equal(t, 2, n)
	left, err := f.m.GetAll(ctx, "acme", memory.Filter{Scope: memory.Scope{UserID: "alice"}})
	require.NoError(t, err)
	require.Equal(t, []string{"three"}, memoriesOf(left))
	rows, err := f.m.History(ctx, "acme", a1[0].ID)
	require.NoError(t, err)
	require.Len(t, rows, 2)
	require.Equal(t, memory.EventDelete, rows[1].Event)

	// A deleted text may be remembered again with Infer.
	again := f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{UserID: "alice", RunID: "r1"}, Messages: user("one"), Infer: true})
	require.Len(t, again, 1)

	require.NoError(t, f.m.Reset(ctx, "acme"))
	for _, s := range []memory.Scope{{UserID: "alice"}, {UserID: "bob"}} {
		left, err := f.m.GetAll(ctx, "acme", memory.Filter{Scope: s})
		require.NoError(t, err)
		require.Empty(t, left)
	}
	rows, err = f.m.History(ctx, "acme", a1[0].ID)
	require.NoError(t, err)
	require.Empty(t, rows)
	it, err := f.m.Get(ctx, "globex", other[0].ID)
	require.NoError(t, err)
	require.NotNil(t, it, "a reset is per tenant")
	rows, err = f.m.History(ctx, "globex", other[0].ID)
	require.NoError(t, err)
	require.Len(t, rows, 1)
}

func TestTenantIsolation(t *testing.T) {
	f := newFixture(t)
	ctx := t.Context()
	res := f.add(t, "acme", memory.AddRequest{Scope: memory.Scope{UserID: "alice"}, Messages: user("The vault code is 4711.")})
	id := res[0].ID
	it, err := f.m.Get(ctx, "globex", id)
	require.NoError(t, err)
	require.Nil(t, it)
	got, err := f.m.Search(ctx, "globex", memory.SearchRequest{Query: "vault code", Filter: memory.Filter{Scope: memory.Scope{UserID: "alice"}}})
	require.NoError(t, err)
	require.Empty(t, got)
	text := "stolen"
	require.ErrorIs(t, f.m.Update(ctx, "globex", id, memory.UpdateRequest{Text: &text}), matrixark.ErrNotFound)
	require.ErrorIs(t, f.m.Delete(ctx, "globex", id), matrixark.ErrNotFound)
	rows, err := f.m.History(ctx, "globex", id)
	require.NoError(t, err)
	require.Empty(t, rows)
	it, err = f.m.Get(ctx, "acme", id)
	require.NoError(t, err)
	require.Equal(t, "The vault code is 4711.", it.Memory)
}

func TestConcurrentInfer(t *testing.T) {
	f := newFixture(t)
	done := make(chan []memory.Result, 8)
	for range 8 {
		go func() {
			res, err := f.m.Add(t.Context(), "acme", memory.AddRequest{Scope: memory.Scope{UserID: "alice"},
				Messages: user("I like tea."), Infer: true})
			if err != nil {
				res = nil
			}
			done <- res
		}()
	}
	stored := 0
	for range 8 {
		stored += len(<-done)
	}
	require.Equal(t, 1, stored, "one of eight concurrent adds of a text is kept")
}

func BenchmarkSearch(b *testing.B) {
	s := memstore.New()
	e := matrixark.New(s, matrixark.Options{Counter: tokens.Words{}})
	m := memory.New(e, s, memory.Options{})
	alice := memory.Scope{UserID: "alice"}
	for i := range 1000 {
		_, err := m.Add(b.Context(), "acme", memory.AddRequest{Scope: alice,
			Messages: user(fmt.Sprintf("Note %d: the harbor crane %d was inspected on day %d.", i, i%37, i%365))})
		require.NoError(b, err)
	}
	req := memory.SearchRequest{Query: "harbor crane 12 inspection", Filter: memory.Filter{Scope: alice, Limit: 10}}
	for b.Loop() {
		got, err := m.Search(b.Context(), "acme", req)
		if err != nil || len(got) == 0 {
			b.Fatal(err, len(got))
		}
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N), "µs/search")
}

// An updated or deleted memory's old text is gone from the Engine: context
// retrieval (and so a pack) finds only current memories.
func TestChangesReachContext(t *testing.T) {
	ctx := t.Context()
	f := newFixture(t)
	sc := memory.Scope{UserID: "alice"}
	res := f.add(t, "acme", memory.AddRequest{Messages: user("my parrot is called Kiwi", "I play the cello"), Scope: sc, Infer: true})
	require.Len(t, res, 2)
	texts := func(q string) []string {
		blocks, err := f.e.Retrieve(ctx, "acme", matrixark.Query{Text: q, User: "alice"})
		require.NoError(t, err)
		var out []string
		for _, b := range blocks {
			if b.Tier == "L2" {
				out = append(out, b.Text)
			}
		}
		return out
	}
	require.Equal(t, []string{"my parrot is called Kiwi"}, texts("parrot"))

	newText := "my parrot is called Mango"
	require.NoError(t, f.m.Update(ctx, "acme", res[0].ID, memory.UpdateRequest{Text: &newText}))
	require.Equal(t, []string{newText}, texts("parrot"))
	require.Empty(t, texts("kiwi"))

	require.NoError(t, f.m.Delete(ctx, "acme", res[0].ID))
	require.Empty(t, texts("parrot"))

	require.NoError(t, f.m.Reset(ctx, "acme"))
	require.Empty(t, texts("cello"))
}

// With an embedder, a memory scores the cosine of the query and its node,
// as the Engine ranked it, rather than the lexical score.
func TestSearchScoresByCosineWithAnEmbedder(t *testing.T) {
	ctx := t.Context()
	s := memstore.New()
	e := matrixark.New(s, matrixark.Options{Counter: tokens.Words{}, Embedder: embed.NewHash("hash-test"), Now: func() time.Time { return t0 }})
	m := memory.New(e, s, memory.Options{Now: func() time.Time { return t0 }})
	alice := memory.Scope{UserID: "alice"}
	_, err := m.Add(ctx, "acme", memory.AddRequest{Scope: alice, Messages: user("Alice is flying to Tokyo in May.", "Alice loves pizza with olives.")})
	require.NoError(t, err)
	const q = "Tokyo flight in May"
	got, err := m.Search(ctx, "acme", memory.SearchRequest{Query: q, Filter: memory.Filter{Scope: alice}})
	require.NoError(t, err)
	require.NotEmpty(t, got)
	blocks, err := e.Retrieve(ctx, "acme", matrixark.Query{Text: q, User: "alice", MaxSummaryNodes: 100})
	require.NoError(t, err)
	cosine := map[string]*float64{}
	for _, b := range blocks {
		cosine[b.SourceRef] = b.Cosine
	}
	for _, it := range got {
		c := cosine["mem:"+it.ID]
		require.NotNil(t, c, "the node was scored by its vectors")
		require.Equal(t, min(max(*c, 0), 1), *it.Score, "the cosine, clamped to [0, 1]")
	}
}
