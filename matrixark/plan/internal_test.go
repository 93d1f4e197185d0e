package plan

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"
)

// The original's synonym keys for stopwords are kept, and are unreachable.
func TestStopwordSynonymKeysKept(t *testing.T) {
	for _, w := range []string{"where", "when", "who", "why", "conversation", "dialogue"} {
		require.NotEmpty(t, synonyms(w), w)
		require.True(t, IsStopword(w), w)
		require.Empty(t, New(w).Groups, w)
	}
}

// Every synonym is a lowercase word or phrase whose normalised form is
// itself, so group members match the same way through both branches of the
// match rule. Synonyms under the added keys are also at least four bytes.
func TestSynonymTableShape(t *testing.T) {
	ported := strings.Fields(`checkout payment billing purchase order risk fraud score latest recent
		current currently now status state failed failure outage down error dependency backend
		ticket followup follow support agent helpdesk preference preferences setting choice likes
		want wants wanted prefer preferred update updated updates changed change modify replaced
		switch switched switching moved move session sessions conversation dialogue chat message
		messages user customer service timeline temporal history sequence before after during
		schedule scheduled reschedule rescheduled appointment meeting deadline tomorrow tonight
		morning afternoon evening many count number quantity total amount multi hop reasoning why
		because reason cause root problem issue resolved fixed recovered recovery solved closed
		where location located office work workplace when date time who person people roommate
		housemate manager supervisor lead name named called pet dog cat friend coworker colleague
		teammate recommend recommended suggest suggested introduced referred travel trip flight
		remember recall remind medication medicine meds prescription doctor physician clinic snack
		meal gift present allergy allergic avoid correction corrected correct backup contact cancel
		cancelled canceled`)
	added := strings.Fields(`job jobs employer company hired home house apartment live lives living
		car cars vehicle truck dentist hospital checkup vacation holiday puppy kitten animal price
		cost costs paid spent buy bought buying purchased start started begin began finish finished
		ended completed birthday anniversary partner wife husband spouse`)
	for _, k := range append(ported, added...) {
		syn := synonyms(k)
		require.NotEmpty(t, syn, k)
		for _, s := range syn {
			require.Equal(t, s, strings.TrimSpace(Normalize(s)), "%s → %q", k, s)
		}
	}
	for _, k := range added {
		for _, s := range synonyms(k) {
			require.GreaterOrEqual(t, len(s), 4, "%s → %q: short synonyms match inside too many words", k, s)
		}
	}
}

func TestRulesFollowTableOrder(t *testing.T) {
	p := New("alias dog score tomorrow because became told correct before after status")
	var got []uint32
	for _, r := range p.rules {
		got = append(got, r.bonus)
	}
	require.Equal(t, []uint32{75, 50, 65, 65, 90, 70, 85, 80, 80, 80, 75}, got)
}

func TestRemoveDropsEmptyPostings(t *testing.T) {
	x := NewIndex()
	x.AddIn(1, "u1", "alpha beta")
	x.AddIn(2, "u2", "beta")
	x.Remove(1)
	require.NotContains(t, x.groups, "u1")
	require.NotContains(t, x.df, "alpha")
	require.Equal(t, 1, x.df["beta"])
	x.AddIn(2, "u3", "beta") // moves to another group
	require.NotContains(t, x.groups, "u2")
	x.Remove(2)
	require.Empty(t, x.groups)
	require.Empty(t, x.df)
	require.Zero(t, x.totalLen)
}

// normalizeRef is Normalize as its doc says it, one character at a time.
func normalizeRef(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 'A' && r <= 'Z':
			b.WriteRune(r + 'a' - 'A')
		case r < utf8.RuneSelf && isASCIIAlnum(byte(r)):
			b.WriteRune(r)
		default:
			b.WriteByte(' ')
		}
	}
	return b.String()
}

func FuzzNormalize(f *testing.F) {
	for _, s := range []string{"", "Topic-3…", "ÜBER\xffcool\x00", "a\u00e9b", "\xe2\x82"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		require.Equal(t, normalizeRef(s), Normalize(s))
	})
}
