package plan_test

import (
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/temporalstore/temporalstore-go/matrixark/plan"
)

func TestGoldens(t *testing.T) {
	tests := []struct {
		query, text string
		want        uint32
	}{
		{"checkout", "Customer checkout failed. Payment risk score spiked.", 108},
		{"latest payment fraud status topic 3",
			"…latest memory update for topic 3; checkout payment risk score changed after a fraud review, with the current status captured…",
			1206},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, plan.New(tc.query).Score(tc.text), tc.query)
	}
}

func TestContains(t *testing.T) {
	tests := []struct {
		text, term string
		want       bool
	}{
		{"I know", "now", true}, // substring, not word
		{"CHECKOUT", "checkout", true},
		{"moved\nto Austin", "moved to", true},
		{"moved, to", "moved to", false}, // ", " normalises to two spaces
		{"topic-3", "topic 3", true},
		{"what", "at ", true}, // "at " trims to "at" in the normalised branch
		{"abc", "", true},     // the empty string is a substring of anything
		{"abc", " ", false},   // a term that normalises to nothing never matches
		{"\u212Aelvin", "kelvin", false},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, plan.Contains(tc.text, tc.term), "%q in %q", tc.term, tc.text)
	}
}

func TestMatch(t *testing.T) {
	require.True(t, plan.New("the and").Match("anything"), "no groups matches everything")
	require.True(t, plan.New("checkout").Match("order #4"))
	require.False(t, plan.New("checkout").Match("refund"))
	require.True(t, plan.New("refund topic 7").Match("see topic 7"), "topic alone matches")
	require.Zero(t, plan.New("the and").Score("the and"), "no groups scores 0")
}

func TestScoreGroupBonuses(t *testing.T) {
	tests := []struct {
		query, text string
		want        uint32
	}{
		// 5+5+7, all three groups +100, bigrams "alpha bravo" and "bravo charlie" +50 each.
		{"alpha bravo charlie", "alpha bravo charlie", 5 + 5 + 7 + 100 + 50 + 50},
		// Two of three groups: +12·2, no bigram.
		{"alpha bravo charlie", "charlie, alpha", 7 + 5 + 12*2},
		// One of three: no bonus.
		{"alpha bravo charlie", "bravo", 5},
		{"alpha bravo charlie", "nothing", 0},
		// Three of four: +12·3; two bigrams.
		{"alpha bravo charlie delta", "alpha bravo charlie", 5 + 5 + 7 + 12*3 + 50 + 50},
		// A single matched group is "all groups".
		{"alpha", "alpha", 5 + 100},
		// The longest matching member counts: "payment" (7) beats "order" (5).
		{"checkout", "order and payment", 7 + 100},
		// Topic: +1000 on top of the group scores.
		{"topic 3", "topic 3", 1000 + 5 + 100},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, plan.New(tc.query).Score(tc.text), "%q on %q", tc.query, tc.text)
	}
}

func TestScoreIntentBonuses(t *testing.T) {
	// Each row: a query setting the flag, a text with no group match and one
	// reward cue, so the score is the flag's bonus alone.
	tests := []struct {
		flag, query, text string
		want              uint32
	}{
		{"latest", "status", "recent", 75},
		{"temporal", "history", "sequence", 50},
		{"after", "after", "later", 65},
		{"after phrase", "after", "moved-to", 65},
		{"before", "before", "earlier", 65},
		{"correction", "correct", "instead", 90},
		{"correction phrase", "correct", "no-longer", 90},
		{"reminder", "recall", "reminder", 70},
		{"contrastive", "became", "switched", 85},
		{"contrastive phrase", "became", "changed from", 85},
		{"social", "teammate", "from", 80},
		{"schedule", "tomorrow", "calendar", 80},
		// "at " loses its space in the normalised branch, as in the original.
		{"schedule at", "tomorrow", "what", 80},
		{"quantity digit", "percent", "7", 80},
		{"quantity word", "percent", "total", 80},
		{"alias", "supervisor", "named", 75},
		{"no cue", "supervisor", "nothing", 0},
	}
	for _, tc := range tests {
		t.Run(tc.flag, func(t *testing.T) {
			p := plan.New(tc.query)
			require.Zero(t, p.MatchedGroups(tc.text), "the text must not match a group")
			require.Equal(t, tc.want, p.Score(tc.text))
		})
	}
}

func TestScoreSaturation(t *testing.T) {
	// "after correction" on "correction: old value":
	//   groups: correction=10, after=0; one of two matched, no bonus → 10;
	//   temporal: no cue; after: no reward cue, "old" → 10−25 saturates to 0;
	//   correction: cue "correction" → 0+90.
	// Without saturation it would be 75.
	require.Equal(t, uint32(90), plan.New("after correction").Score("correction: old value"))
	// "after switch" on "the switch is old": 6, then −25 → 0, then contrastive +85.
	require.Equal(t, uint32(85), plan.New("after switch").Score("the switch is old"))
	// A penalty alone floors at 0.
	require.Equal(t, uint32(0), plan.New("after").Score("old"))
}

func TestScorePenalties(t *testing.T) {
	// The same text with and without an opposite-direction cue.
	after := plan.New("after")
	require.Equal(t, after.Score("after")-25, after.Score("after, earlier"))
	before := plan.New("before")
	require.Equal(t, before.Score("before")-25, before.Score("before, later"))
}

func TestNewerFactPreference(t *testing.T) {
	newer := "Later she moved to the new office in Austin."
	older := "Before that, her office was in Seattle, earlier in the year."
	for _, q := range []string{"where is her office after the move", "current office after the move"} {
		p := plan.New(q)
		require.Greater(t, p.Score(newer), p.Score(older), q)
	}
	// And the other way round for "before".
	p := plan.New("her office before the move")
	require.Greater(t, p.Score(older), p.Score(newer))
}

func TestScoreDeterministic(t *testing.T) {
	p := plan.New("latest payment fraud status topic 3")
	text := "topic 3: payment fraud, status latest"
	first := p.Score(text)
	for range 10 {
		require.Equal(t, first, p.Score(text))
		require.Equal(t, first, plan.New("latest payment fraud status topic 3").Score(text))
	}
}

func TestScoreGroups(t *testing.T) {
	for _, c := range []struct{ q, text string }{
		{"checkout payment", "Customer checkout failed. Payment risk score spiked."},
		{"latest fraud status topic 3", "topic 3: the latest fraud review"},
		{"the and", "anything"},
		{"office moved", "nothing relevant"},
	} {
		p := plan.New(c.q)
		score, groups := p.ScoreGroups(c.text)
		require.Equal(t, p.Score(c.text), score, c.q)
		require.Equal(t, p.MatchedGroups(c.text), groups, c.q)
	}
}
