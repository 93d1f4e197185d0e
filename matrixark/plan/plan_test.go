package plan_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/temporalstore/temporalstore-go/matrixark/plan"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"", nil},
		{"The checkout and the payment", []string{"checkout", "payment"}},
		{"What is the LATEST status?", []string{"latest", "status"}},
		{"a an is to 42 abc", []string{"abc"}},
		{"Payment payment PAYMENT", []string{"payment", "payment", "payment"}},
		{"user_id=alice42", []string{"user", "alice42"}},
		// Splitting is on non-ASCII characters too: "café" leaves "caf".
		{"café crème", []string{"caf"}},
		{"memory-context: question about benchmark", nil},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			require.Equal(t, tc.want, plan.New(tc.query).Terms)
		})
	}
}

func TestStopwords(t *testing.T) {
	spec := strings.Fields("the and for with that this what when where which who why how about " +
		"would likely still considered consider more benchmark context memory conversation dialogue question")
	for _, w := range spec {
		require.True(t, plan.IsStopword(w), w)
	}
	require.Empty(t, plan.New(strings.Join(spec, " ")).Terms, "every stopword is dropped")
	for _, w := range []string{"then", "whom", "contexts", "memories", "questions", "status", "The"} {
		require.False(t, plan.IsStopword(w), w)
	}
}

func TestStem(t *testing.T) {
	tests := []struct{ in, want string }{
		{"stories", "story"},
		{"series", "sery"},
		{"ties", "tie"}, // 4 bytes: not >4 for "ies", >3 for "s"
		{"boxes", "box"},
		{"updates", "updat"},
		{"goes", "goe"},
		{"cats", "cat"},
		{"class", "clas"},
		{"news", "new"},
		{"bus", "bus"},
		{"yes", "yes"},
		{"ies", "ies"},
		{"checkout", "checkout"},
		{"", ""},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, plan.Stem(tc.in), tc.in)
	}
}

func TestGroups(t *testing.T) {
	tests := []struct {
		term     string
		stem     string
		synonyms []string
		members  []string
	}{
		{"checkout", "", []string{"payment", "purchase", "order"}, []string{"checkout", "order", "payment", "purchase"}},
		{"payments", "payment", nil, []string{"payment", "payments"}},
		{"stories", "story", nil, []string{"stories", "story"}},
		{"moved", "", []string{"switched", "changed", "relocated"}, []string{"changed", "moved", "relocated", "switched"}},
		{"office", "", []string{"location", "place", "job"}, []string{"job", "location", "office", "place"}},
		// The rule is crude on purpose: "updates" drops "es".
		{"updates", "updat", []string{"changed", "change", "modify", "replaced"},
			[]string{"change", "changed", "modify", "replaced", "updat", "updates"}},
		// The term is also its own synonym: members are deduplicated.
		{"employer", "", []string{"work", "employer", "company", "office"}, []string{"company", "employer", "office", "work"}},
		// Arms tuned to one evaluation corpus are not ported.
		{"identity", "", nil, []string{"identity"}},
		{"bookshelf", "", nil, []string{"bookshelf"}},
		{"writing", "", nil, []string{"writing"}},
	}
	for _, tc := range tests {
		t.Run(tc.term, func(t *testing.T) {
			p := plan.New(tc.term)
			require.Len(t, p.Groups, 1)
			g := p.Groups[0]
			require.Equal(t, tc.term, g.Term)
			require.Equal(t, tc.stem, g.Stem)
			require.Equal(t, tc.synonyms, g.Synonyms)
			require.Equal(t, tc.members, g.Members)
		})
	}
}

func TestGroupMatchesAnyMember(t *testing.T) {
	p := plan.New("checkout")
	for _, text := range []string{"the ORDER shipped", "purchase done", "payment", "Checkout"} {
		require.Equal(t, 1, p.MatchedGroups(text), text)
	}
	require.Equal(t, 0, p.MatchedGroups("refund issued"))
}

func TestBigrams(t *testing.T) {
	tests := []struct {
		query string
		want  []string
	}{
		{"checkout", nil},
		{"checkout payment risk", []string{"checkout payment", "payment risk"}},
		// Bigrams join adjacent terms, after filtering.
		{"the checkout of a payment", []string{"checkout payment"}},
	}
	for _, tc := range tests {
		require.Equal(t, tc.want, plan.New(tc.query).Bigrams, tc.query)
	}

	p := plan.New("alpha bravo")
	bigram := func(text string) uint32 { return p.Score(text) - p.Score("alpha, bravo") }
	require.Equal(t, uint32(50), bigram("alpha bravo"))
	require.Equal(t, uint32(50), bigram("Alpha-Bravo"), "the normalised form joins across punctuation")
	require.Equal(t, uint32(0), bigram("bravo alpha"), "order matters")
}

func TestTopic(t *testing.T) {
	tests := []struct {
		query string
		want  string
	}{
		{"latest payment fraud status topic 3", "3"},
		{"Topic 12 what", "12"},
		{"topic 42 then topic 7", "42"},
		{"the topic: 9", "9"},
		{"topic 007", "007"},
		{"topic x9", ""},
		{"topic 3a", ""},
		{"topics 3", ""},
		{"9 topic", ""},
		{"topic", ""},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			p := plan.New(tc.query)
			require.Equal(t, tc.want, p.Topic)
			if tc.want != "" {
				require.Equal(t, "topic "+tc.want, p.TopicPhrase())
			} else {
				require.Empty(t, p.TopicPhrase())
			}
		})
	}

	// The digits are filtered out of the terms, yet still name the topic.
	p := plan.New("what about topic 5")
	require.Equal(t, []string{"topic"}, p.Terms)
	require.Equal(t, "5", p.Topic)

	require.True(t, p.MatchTopic("Notes on topic 5."))
	require.True(t, p.MatchTopic("TOPIC-5"), "normalised form")
	require.True(t, p.MatchTopic("topic 50"), "substring rule, as in the original")
	require.False(t, p.MatchTopic("topic 4"))
	require.False(t, plan.New("topic").MatchTopic("topic 5"))
}

func TestIntents(t *testing.T) {
	tests := []struct {
		query string
		want  plan.Intent
	}{
		{"nothing here", 0},
		{"latest", plan.IntentLatest},
		{"update", plan.IntentLatest},
		{"status", plan.IntentLatest},
		{"currently", plan.IntentLatest},
		{"Status NOW", plan.IntentLatest | plan.IntentCorrection},
		{"updated", plan.IntentLatest | plan.IntentCorrection},
		{"history", plan.IntentTemporal},
		{"during", plan.IntentTemporal},
		{"after", plan.IntentTemporal | plan.IntentAfter},
		{"before", plan.IntentTemporal | plan.IntentBefore},
		{"correct", plan.IntentCorrection},
		{"avoid", plan.IntentCorrection},
		{"changed", plan.IntentCorrection | plan.IntentContrastive},
		{"told", plan.IntentReminder},
		{"reminder", plan.IntentReminder},
		{"switching", plan.IntentContrastive},
		{"became", plan.IntentContrastive},
		{"instead", plan.IntentContrastive},
		{"cancel", plan.IntentContrastive},
		{"cancelled", plan.IntentContrastive},
		{"canceled", plan.IntentContrastive},
		{"because", plan.IntentSocial},
		{"teammate", plan.IntentSocial},
		{"date", plan.IntentSchedule},
		{"tonight", plan.IntentSchedule},
		{"rescheduled", plan.IntentSchedule},
		{"score", plan.IntentQuantity},
		{"percentage", plan.IntentQuantity},
		{"dog", plan.IntentAlias},
		{"named", plan.IntentAlias},
		// Dead triggers: when and who are stopwords and never set a flag.
		{"when", 0},
		{"who", 0},
		{"when is the meeting", plan.IntentSchedule},
		{"who recommended her", plan.IntentSocial},
		{"why where", 0},
	}
	for _, tc := range tests {
		t.Run(tc.query, func(t *testing.T) {
			require.Equal(t, tc.want, plan.New(tc.query).Intents, plan.New(tc.query).Intents.String())
		})
	}
	require.Equal(t, "latest|correction", (plan.IntentCorrection | plan.IntentLatest).String())
	require.True(t, (plan.IntentAfter | plan.IntentTemporal).Has(plan.IntentAfter))
	require.False(t, plan.IntentAfter.Has(plan.IntentAfter|plan.IntentTemporal))
}

func TestDeadTriggersAndSynonymKeys(t *testing.T) {
	for _, w := range []string{"when", "who", "where", "why"} {
		p := plan.New(w)
		require.Empty(t, p.Groups, w)
		require.Zero(t, p.Score("timeline temporal session place city office user customer cause"), w)
	}
	// Adding a dead word to a query changes nothing.
	texts := []string{"the timeline of the meeting", "recommended by a friend", "at noon"}
	for _, pair := range [][2]string{{"when meeting", "meeting"}, {"who recommended", "recommended"}} {
		with, without := plan.New(pair[0]), plan.New(pair[1])
		for _, text := range texts {
			require.Equal(t, without.Score(text), with.Score(text), pair[0]+" on "+text)
		}
	}
}
