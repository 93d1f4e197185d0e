package contextbench

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixark/embed"
	"github.com/temporalstore/temporalstore-go/tools/benchkit"
)

// The quick mode runs every system, ours' embedded arms included, prints
// the two closing lines, and writes a report whose every recall and
// retention is a fraction and whose packs keep to the budget.
func TestRunQuick(t *testing.T) {
	out := filepath.Join(t.TempDir(), "context.json")
	cfg := DefaultConfig(true)
	// Two repeats show that every system ranks alike each time; fewer
	// queries keep the race detector's run short.
	cfg.Out, cfg.Embedded, cfg.Repeats, cfg.Queries = out, []string{"hash", "half"}, 2, 30
	var stdout bytes.Buffer
	require.NoError(t, Run(t.Context(), cfg, &stdout, benchkit.NewProgress(io.Discard)))

	lines := strings.Split(strings.TrimSpace(stdout.String()), "\n")
	require.GreaterOrEqual(t, len(lines), 2)
	num := `([0-9]+\.[0-9]+|n/a)`
	require.Regexp(t, `^context: retrieve_pack_p50_ms_1k=[0-9]+\.[0-9]{2} recall10=[0-9]\.[0-9]{3} recall10_vs_bm25_points=-?[0-9]+\.[0-9]$`, lines[len(lines)-1])
	require.Regexp(t, `^by size: 1k: p50_ms=`+num+` p95_ms=`+num+` `, lines[len(lines)-2])

	b, err := os.ReadFile(out)
	require.NoError(t, err)
	var rep struct {
		Sizes []struct {
			Nodes   int `json:"nodes"`
			Queries int `json:"queries"`
			Systems map[string]struct {
				P50Ms      benchkit.Summary `json:"p50_ms"`
				TokensMax  float64          `json:"tokens_max"`
				OverBudget int              `json:"over_budget"`
				Quality    map[string]any   `json:"quality"`
				Det        bool             `json:"deterministic"`
			} `json:"systems"`
			Load map[string]struct {
				Seconds float64 `json:"seconds"`
			} `json:"load"`
		} `json:"sizes"`
		Runs    []json.RawMessage  `json:"runs"`
		Goals   []goal             `json:"goals"`
		Summary map[string]float64 `json:"summary"`
	}
	require.NoError(t, json.Unmarshal(b, &rep))
	require.Len(t, rep.Sizes, 1)
	sr := rep.Sizes[0]
	require.Equal(t, 1000, sr.Nodes)
	require.Equal(t, cfg.Queries, sr.Queries)
	names := []string{sysOurs, sysHash, sysHalf, sysBM25, sysReplay}
	require.Len(t, sr.Systems, len(names))
	require.Len(t, rep.Runs, len(names)*cfg.Repeats)
	for _, name := range names {
		s, ok := sr.Systems[name]
		require.True(t, ok, name)
		require.Positive(t, s.P50Ms.Median, name)
		require.Zero(t, s.OverBudget, name)
		require.LessOrEqual(t, s.TokensMax, float64(cfg.Budget), name)
		require.True(t, s.Det, "%s ranks the same in every repeat", name)
		for _, key := range []string{"recall_at_1", "recall_at_5", "recall_at_10", "any_at_10", "all_at_10", "mrr", "pack_retention", "pack_retention_all"} {
			v, ok := s.Quality[key].(float64)
			require.True(t, ok, "%s %s is a number", name, key)
			require.True(t, v >= 0 && v <= 1, "%s %s=%v in [0,1]", name, key, v)
		}
		require.LessOrEqual(t, s.Quality["recall_at_1"], s.Quality["recall_at_10"], name)
	}
	require.Contains(t, sr.Load, sysOurs)
	require.Contains(t, rep.Summary, "recall10")
	require.NotEmpty(t, rep.Goals)
}

func TestGenerateDeterministic(t *testing.T) {
	a := Generate(7, 3, 40, 0)
	require.Equal(t, a, Generate(7, 3, 40, 0), "same seed, same corpus")
	require.NotEqual(t, a.Sessions, Generate(8, 3, 40, 0).Sessions, "another seed, another corpus")
	small := Generate(7, 2, 40, 0)
	require.Equal(t, small.Sessions, a.Sessions[:len(small.Sessions)], "a smaller corpus is the first users of a larger one")
	require.Len(t, Generate(7, 3, 40, 5).Queries, 5)
}

// Every query's evidence is messages of its user that hold planted facts:
// one for a single fact, the newer of two for an updated one (the older
// listed as stale), one in each of two sessions for a split one.
func TestGenerateEvidence(t *testing.T) {
	c := Generate(3, 20, MinSessionsPerUser+10, 0)
	require.Len(t, c.Sessions, 20*(MinSessionsPerUser+10))
	msgs := map[string]Message{}
	owner := map[string]string{}
	session := map[string]string{}
	total := 0
	for _, s := range c.Sessions {
		require.GreaterOrEqual(t, len(s.Messages), minMessages)
		require.LessOrEqual(t, len(s.Messages), maxMessages)
		for i, m := range s.Messages {
			require.Equal(t, map[bool]string{true: "user", false: "assistant"}[i%2 == 0], m.Role)
			msgs[m.ID], owner[m.ID], session[m.ID] = m, s.User, s.ID
			total++
		}
	}
	require.Equal(t, total, c.Messages)
	require.Len(t, c.Queries, 20*(singleFacts+splitFacts))
	kinds := map[string]int{}
	for _, q := range c.Queries {
		kinds[q.Kind]++
		for _, id := range append(append([]string{}, q.Evidence...), q.Stale...) {
			m, ok := msgs[id]
			require.True(t, ok, "%s: %s exists", q.ID, id)
			require.Equal(t, q.User, owner[id], "%s: %s is the user's", q.ID, id)
			require.Equal(t, "user", m.Role)
		}
		switch q.Kind {
		case KindSingle:
			require.Len(t, q.Evidence, 1, q.ID)
			require.Empty(t, q.Stale, q.ID)
		case KindUpdated:
			require.Len(t, q.Evidence, 1, q.ID)
			require.Len(t, q.Stale, 1, q.ID)
			require.Less(t, msgs[q.Stale[0]].TimeMs, msgs[q.Evidence[0]].TimeMs, "%s: the update comes later", q.ID)
		case KindSplit:
			require.Len(t, q.Evidence, 2, q.ID)
			require.NotEqual(t, session[q.Evidence[0]], session[q.Evidence[1]], "%s: two sessions", q.ID)
		default:
			t.Fatalf("%s: kind %q", q.ID, q.Kind)
		}
	}
	for _, k := range []string{KindSingle, KindUpdated, KindSplit} {
		require.Positive(t, kinds[k], k)
	}
}

func TestQuality(t *testing.T) {
	single := Query{Kind: KindSingle, Evidence: []string{"e"}}
	split := Query{Kind: KindSplit, Evidence: []string{"a", "b"}}
	updated := Query{Kind: KindUpdated, Evidence: []string{"new"}, Stale: []string{"old"}}
	ten := func(at int, ref string) []string {
		xs := make([]string, 12)
		for i := range xs {
			xs[i] = "x"
		}
		if at >= 0 {
			xs[at] = ref
		}
		return xs
	}
	tests := []struct {
		name           string
		q              Query
		ranked, packed []string
		want           Quality // the fields checked
	}{
		{"first", single, ten(0, "e"), []string{"e"}, Quality{Recall1: 1, Recall5: 1, Recall10: 1, Any1: 1, All10: 1, MRR: 1, Retention: 1, RetentionAll: 1}},
		{"third", single, ten(2, "e"), []string{}, Quality{Recall1: 0, Recall5: 1, Recall10: 1, Any1: 0, All10: 1, MRR: 1.0 / 3, Retention: 0, RetentionAll: 0}},
		{"eleventh", single, ten(10, "e"), []string{"x"}, Quality{Recall1: 0, Recall5: 0, Recall10: 0, Any1: 0, All10: 0, MRR: 1.0 / 11, Retention: 0, RetentionAll: 0}},
		{"half of a split", split, []string{"b", "x"}, []string{"a", "x"}, Quality{Recall1: 0.5, Recall5: 0.5, Recall10: 0.5, Any1: 1, All10: 0, MRR: 1, Retention: 0.5, RetentionAll: 0}},
		{"stale first", updated, []string{"old", "new"}, []string{"new"}, Quality{Recall1: 0, Recall5: 1, Recall10: 1, Any1: 0, All10: 1, MRR: 0.5, Retention: 1, RetentionAll: 1, StaleFirst: 1}},
		{"new first", updated, []string{"new", "old"}, []string{"new"}, Quality{Recall1: 1, Recall5: 1, Recall10: 1, Any1: 1, All10: 1, MRR: 1, Retention: 1, RetentionAll: 1, StaleFirst: 0}},
		{"nothing ranked", single, []string{}, []string{}, Quality{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tl := newTally()
			tl.add(tc.q, tc.ranked, tc.packed)
			got := tl.quality()
			require.Equal(t, 1, got.Queries)
			for _, f := range []struct {
				name      string
				got, want benchkit.Float
			}{
				{"recall1", got.Recall1, tc.want.Recall1}, {"recall5", got.Recall5, tc.want.Recall5}, {"recall10", got.Recall10, tc.want.Recall10},
				{"any1", got.Any1, tc.want.Any1}, {"all10", got.All10, tc.want.All10}, {"mrr", got.MRR, tc.want.MRR},
				{"retention", got.Retention, tc.want.Retention}, {"retention_all", got.RetentionAll, tc.want.RetentionAll},
			} {
				require.InDelta(t, float64(f.want), float64(f.got), 1e-9, f.name)
			}
			if len(tc.q.Stale) > 0 {
				require.InDelta(t, float64(tc.want.StaleFirst), float64(got.StaleFirst), 1e-9)
			} else {
				require.True(t, math.IsNaN(float64(got.StaleFirst)), "no updated query, no stale figure")
			}
			require.InDelta(t, float64(tc.want.Recall10), float64(got.ByKind[tc.q.Kind].Recall10), 1e-9)
		})
	}
}

// A system that neither ranks nor packs has NaN figures, written as null.
func TestQualityNotMeasured(t *testing.T) {
	tl := newTally()
	tl.add(Query{Kind: KindSingle, Evidence: []string{"e"}}, nil, nil)
	q := tl.quality()
	for _, v := range []benchkit.Float{q.Recall10, q.MRR, q.Retention, q.StaleFirst} {
		require.True(t, math.IsNaN(float64(v)))
	}
	b, err := json.Marshal(q)
	require.NoError(t, err)
	require.Contains(t, string(b), `"recall_at_10":null`)
}

func TestSizeLabel(t *testing.T) {
	for n, want := range map[int]string{1_000: "1k", 10_000: "10k", 100_000: "100k", 2_000_000: "2m", 1_500: "1500", 999: "999"} {
		require.Equal(t, want, sizeLabel(n), n)
	}
}

func TestConfigValidate(t *testing.T) {
	ok := DefaultConfig(true)
	tests := []struct {
		name string
		edit func(c *Config)
		want string // "" for valid
	}{
		{"defaults", func(*Config) {}, ""},
		{"no sizes", func(c *Config) { c.Sizes = nil }, "no sizes"},
		{"few sessions", func(c *Config) { c.SessionsPerUser = MinSessionsPerUser - 1 }, "sessions per user"},
		{"size below a user", func(c *Config) { c.Sizes = []int{50} }, "smaller than one user"},
		{"no repeats", func(c *Config) { c.Repeats = 0 }, "repeats"},
		{"no budget", func(c *Config) { c.Budget = 0 }, "budget"},
		{"unknown arm", func(c *Config) { c.Embedded = []string{"openai"} }, "unknown embedded arm"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			c := ok
			tc.edit(&c)
			err := c.validate()
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.ErrorContains(t, err, tc.want)
		})
	}
}

// Flags reach the configuration; a bad one is a usage error.
func TestCommandUsage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	require.Equal(t, 2, Command([]string{"--no-such-flag"}, &stdout, &stderr))
	require.Contains(t, stderr.String(), "bench context")
	stdout.Reset()
	require.Equal(t, 0, Command([]string{"--help"}, &stdout, &stderr))
	require.Regexp(t, regexp.MustCompile(`--sizes list\s+\[BENCH_SIZES\]`), stdout.String())
}

func TestRateWindow(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(s int) time.Time { return t0.Add(time.Duration(s) * time.Second) }
	tests := []struct {
		name    string
		samples []rateSample
		want    float64
	}{
		{"one sample", []rateSample{{at(0), 0}}, 0},
		{"flat", []rateSample{{at(0), 0}, {at(2), 20}, {at(4), 40}}, 10},
		// Only the last 30 s count: the fast start is forgotten.
		{"slows down", []rateSample{{at(0), 0}, {at(10), 1000}, {at(20), 1010}, {at(40), 1030}, {at(50), 1040}}, 1},
		{"no time passed", []rateSample{{at(3), 5}, {at(3), 9}}, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			w := rateWindow{span: etaWindow}
			for _, s := range tc.samples {
				w.add(s.at, s.done)
			}
			require.InDelta(t, tc.want, w.perSecond(), 1e-9)
		})
	}
	require.Equal(t, 90*time.Second, etaAt(10, 900))
	require.Zero(t, etaAt(0, 900))
	require.Zero(t, etaAt(10, 0))
}

func TestTimingEmbed(t *testing.T) {
	ctx := context.Background()
	next := func(context.Context, Query) (answer, error) { return answer{total: time.Second}, nil }
	a, err := timingEmbed(next, embed.NewHash(""))(ctx, Query{Text: "what did we name the puppy"})
	require.NoError(t, err)
	require.Equal(t, time.Second, a.total)
	require.Positive(t, a.embed)

	failing := func(context.Context, Query) (answer, error) { return answer{}, errors.New("no store") }
	_, err = timingEmbed(failing, embed.NewHash(""))(ctx, Query{Text: "q"})
	require.ErrorContains(t, err, "no store")
}
