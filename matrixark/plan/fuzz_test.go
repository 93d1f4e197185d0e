package plan_test

import (
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"
	"github.com/temporalstore/temporalstore-go/matrixark/plan"
)

func FuzzPlan(f *testing.F) {
	seeds := [][2]string{
		{"checkout", "Customer checkout failed. Payment risk score spiked."},
		{"latest payment fraud status topic 3", "…latest memory update for topic 3; checkout payment risk score changed after a fraud review, with the current status captured…"},
		{"after correction", "correction: old value"},
		{"when who where why", "timeline"},
		{"topic 007 topic 8", "TOPIC-007"},
		{"", ""},
		{"\xff\xfeabc\x00def", "abc\xffdef"},
		{"stories updates ies", "story updat"},
	}
	for _, s := range seeds {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, query, text string) {
		p := plan.New(query)
		score := p.Score(text)
		require.Equal(t, score, p.Score(text), "Score is deterministic")
		require.Equal(t, score, plan.New(query).Score(text), "New is deterministic")

		require.Len(t, p.Groups, len(p.Terms))
		require.Len(t, p.Bigrams, max(len(p.Terms)-1, 0))
		for i, term := range p.Terms {
			require.GreaterOrEqual(t, len(term), plan.MinTermLen)
			require.False(t, plan.IsStopword(term))
			for _, r := range term {
				require.True(t, r < unicode.MaxASCII && (unicode.IsLower(r) || unicode.IsDigit(r)), "%q", term)
			}
			g := p.Groups[i]
			require.Equal(t, term, g.Term)
			require.True(t, slices.IsSorted(g.Members))
			require.Equal(t, len(g.Members), len(slices.Compact(slices.Clone(g.Members))), "members are unique")
			require.Contains(t, g.Members, term)
		}
		if p.Topic != "" {
			require.Equal(t, "", strings.Trim(p.Topic, "0123456789"))
		}

		// The match rule, spelled out naively, agrees with Contains.
		lower := []byte(text)
		for i, c := range lower {
			if c >= 'A' && c <= 'Z' {
				lower[i] = c + 'a' - 'A'
			}
		}
		for _, m := range append(slices.Clone(p.Terms), p.Bigrams...) {
			norm := strings.TrimSpace(plan.Normalize(m))
			want := strings.Contains(string(lower), m) || norm != "" && strings.Contains(plan.Normalize(text), norm)
			require.Equal(t, want, plan.Contains(text, m), "%q in %q", m, text)
		}

		matched := p.MatchedGroups(text)
		if len(p.Groups) == 0 {
			require.Zero(t, score)
		}
		if matched > 0 {
			require.True(t, p.Match(text))
		}
		if matched == len(p.Groups) && matched > 0 {
			require.GreaterOrEqual(t, score, uint32(100), "all groups matched")
		}
		if p.MatchTopic(text) && len(p.Groups) > 0 {
			require.GreaterOrEqual(t, score, uint32(1000))
		}
	})
}

func FuzzAnalyze(f *testing.F) {
	for _, s := range []string{"", "The Cats' payments, ÜBER-cool 42!", "İstanbul ǅ", "\xffabc", "stories of the memory"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, text string) {
		got := plan.Analyze(text)
		require.Equal(t, got, plan.Analyze(text))
		for _, tok := range got {
			require.NotEmpty(t, tok)
			for _, r := range tok {
				require.True(t, unicode.IsLetter(r) || unicode.IsDigit(r), "%q in %q", r, tok)
			}
		}
		// Whatever the text, indexing and searching it must not panic.
		x := plan.NewIndex()
		x.Add(1, text)
		for _, h := range x.Search(text, 3) {
			require.Equal(t, uint64(1), h.ID)
			require.Positive(t, h.Score)
		}
	})
}
