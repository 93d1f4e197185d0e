package extract

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark/internal/h64"
)

func TestChunks(t *testing.T) {
	require.Empty(t, Chunks(""))
	require.Equal(t, []Chunk{{Text: "One short note.", Start: 0}}, Chunks("One short note."))
	require.Equal(t, "a\n\nb", Chunks("a\n\n\n\n\nb")[0].Text, "blank-line runs collapse to one paragraph break")

	// Sentences of 50 characters: cuts land after a ". " past 700.
	sentence := strings.Repeat("x", 47) + ". "
	doc := strings.Repeat(sentence, 80) // 3,920 characters
	cs := Chunks(doc)
	require.Greater(t, len(cs), 2)
	r := []rune(doc)
	for i, c := range cs {
		require.LessOrEqual(t, utf8.RuneCountInString(c.Text), ChunkMax)
		require.True(t, strings.HasSuffix(c.Text, "."), "chunk %d ends at a sentence end", i)
		require.Equal(t, c.Text, strings.TrimSpace(string(r[c.Start:c.Start+utf8.RuneCountInString(c.Text)+1])))
		if i > 0 {
			// The cut is just past the previous chunk's ". ".
			cut := cs[i-1].Start + utf8.RuneCountInString(cs[i-1].Text) + 1
			require.Greater(t, cut-cs[i-1].Start, 700)
			require.Equal(t, cut-ChunkOverlap, c.Start, "the next chunk starts 120 before the cut")
		}
	}
	require.True(t, strings.HasSuffix(doc, cs[len(cs)-1].Text+" "), "the last chunk reaches the end")

	// No boundary past 700: a hard cut at 1,400.
	hard := strings.Repeat("y", 3000)
	cs = Chunks(hard)
	require.Equal(t, 1400, utf8.RuneCountInString(cs[0].Text))
	require.Equal(t, 1400-ChunkOverlap, cs[1].Start)

	// Multi-byte text is cut on characters, not bytes.
	for _, c := range Chunks(strings.Repeat("é", 2000)) {
		require.True(t, utf8.ValidString(c.Text))
	}
}

func TestSummarize(t *testing.T) {
	body := "Alice moved to the Berlin office in March. She likes coffee. The deadline changed to Friday because of the audit. Lunch was fine"
	s := Summarize("doc", "Alice", body)
	require.Equal(t, "Alice: Alice moved to the Berlin office in March", s.L0)
	require.Equal(t, "kind=doc; title=Alice; key_facts=Alice moved to the Berlin office in March | "+
		"The deadline changed to Friday because of the audit | She likes coffee | Lunch was fine", s.L1)
	require.True(t, s.WantsL1())
	require.Len(t, s.Sentences, 4)

	long := Summarize("chat", "t", strings.Repeat("word ", 40))
	require.Len(t, strings.Fields(long.L0), L0Words)
	require.False(t, long.WantsL1(), "one sentence of 40 words")
	require.True(t, Summarize("chat", "t", strings.Repeat("word ", 200)).WantsL1())

	// Eight other sentences: the L1 keeps seven, the lead first.
	many := "Lead sentence here. " + strings.Repeat("Other one. ", 8)
	require.Equal(t, 1+L1OtherFacts, strings.Count(Summarize("doc", "t", many).L1, "|")+1)

	empty := Summarize("doc", "Title", "")
	require.Equal(t, "Title:", empty.L0)
}

func TestFactScore(t *testing.T) {
	for _, c := range []struct {
		s    string
		want int
	}{
		{"nothing here", 0},
		{"Alice moved to Berlin in 2024", 3 + 1 + 2}, // digit, Berlin, moved
		{"it is no longer open", 2},
		{"now we know", 2},                              // "now" as a word; "know" is not "now"
		{"changed because of Bob and Carol", 2 + 2 + 2}, // two markers, two names
	} {
		require.Equal(t, c.want, FactScore(c.s), c.s)
	}
}

func TestEntities(t *testing.T) {
	type e struct{ typ, name, value string }
	got := func(text string) []e {
		var out []e
		for _, x := range Entities(text) {
			require.Equal(t, h64.Sum(x.Type+":"+strings.ToLower(x.Name)), x.Key)
			out = append(out, e{x.Type, x.Name, x.Value})
		}
		return out
	}
	require.Equal(t, []e{{Person, "Alice", ""}, {Place, "Berlin", ""}}, got("Alice moved to Berlin. I met Alice there."))
	require.Equal(t, []e{{Org, "Acme Bank", ""}}, got("She works at Acme Bank"))
	require.Empty(t, got("Sounds good. ok thanks!"), "filler names nothing")
	require.Equal(t, []e{{Quantity, "$40", "$40"}, {Quantity, "3 days", "3 days"}, {State, "budget", "$40"}},
		got("the budget is $40 and the trip takes 3 days"))
	require.Equal(t, []e{{Quantity, "30%", "30%"}, {Quantity, "€12", "€12"}}, got("up 30% to €12"))
	require.Equal(t, []e{{Date, "March 3", "March 3"}, {Date, "2026-03-04", "2026-03-04"}, {Date, "friday", "friday"}},
		got("due March 3 or 2026-03-04, maybe friday"))
	// The latest state of a subject wins.
	require.Equal(t, []e{{Place, "Porto", ""}, {State, "office", "in Lisbon"}, {Place, "Lisbon", ""}},
		got("my office was in Porto. my office is now in Lisbon"))
}

func FuzzEntities(f *testing.F) {
	for _, s := range []string{"Alice moved to Berlin.", "$ 5 kg", "is is is", "€", "March", "2026-13-99", "Über Straße is now Lärm"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		for _, x := range Entities(text) {
			require.NotEmpty(t, x.Name)
			require.NotZero(t, x.Key)
		}
		for _, c := range Chunks(text) {
			require.LessOrEqual(t, utf8.RuneCountInString(c.Text), ChunkMax)
		}
		s := Summarize("doc", "t", text)
		require.LessOrEqual(t, len(strings.Fields(s.L0)), L0Words)
	})
}
