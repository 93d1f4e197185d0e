package temporalstore

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func randomBytes(rng *rand.Rand, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte('a' + rng.IntN(26))
	}
	return b
}

// A round runs the stages in their fixed order, and each does its work:
// expired keys are swept, overwritten values compacted away, memory given
// back; the data reads the same afterwards and after a reopen.
func TestMaintenanceRoundRunsStagesInOrder(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	opts := Options{Dir: dir, Now: clk.Now, MaintenanceInterval: Disabled, CheckpointRecords: 500}
	e, err := testOpen(t.Context(), opts)
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, e.CreateTable(ctx, "m", "t", TableOptions{Shards: 2, SegmentBytes: 64 << 10}))
	rng := rand.New(rand.NewPCG(1, 1))
	want := map[string]string{}
	for round := range 8 {
		for i := range 300 {
			k, v := fmt.Sprintf("k%d", i), string(randomBytes(rng, 200))
			c := Command{Namespace: "m", Table: "t", Kind: KindSet, Key: []byte(k), Value: []byte(v)}
			if i%3 == 0 && round == 7 {
				c.TTL = time.Second // expire before the round
			} else {
				want[k] = v
			}
			exec(t, e, c)
		}
	}
	for i := 0; i < 300; i += 3 {
		delete(want, fmt.Sprintf("k%d", i))
	}
	clk.Advance(2 * time.Second)
	before, err := e.Stats()
	require.NoError(t, err)
	for _, st := range before {
		if st.Namespace == "m" {
			// Two shards took the 2,400 SETs: each has keys, live and
			// written bytes, and a write amplification over 1.
			require.Positive(t, st.Keys)
			require.Positive(t, st.LiveBytes)
			require.Greater(t, st.WriteAmp, 1.0)
			require.Less(t, st.WriteAmp, 1.5)
			require.Greater(t, st.SpaceAmp, 2.0, "eight rounds of overwrites")
		}
	}

	r, err := e.Maintain(ctx)
	require.NoError(t, err)
	var names []string
	got := map[string]StageReport{}
	for _, st := range r.Stages {
		names = append(names, st.Name)
		got[st.Name] = st
	}
	require.Equal(t, []string{"reclaim_log", "expire", "evict", "reclaim_memory", "compact"}, names)
	require.Equal(t, Stages, names)
	require.Equal(t, int64(100), got[StageExpire].Items, "the keys written with a TTL")
	require.Positive(t, got[StageReclaimLog].Items+got[StageCompact].Items, "overwrites left segments to reclaim")
	after, err := e.Stats()
	require.NoError(t, err)
	var logBefore, logAfter int64
	for i := range before {
		if before[i].Namespace == "m" {
			logBefore += before[i].LogBytes
			logAfter += after[i].LogBytes
		}
	}
	t.Logf("round %v: %+v; log %d -> %d bytes", r.Duration, r.Stages, logBefore, logAfter)
	require.Less(t, logAfter, logBefore)

	check := func(e *Engine) {
		for i := range 300 {
			k := fmt.Sprintf("k%d", i)
			r := exec(t, e, Command{Namespace: "m", Table: "t", Kind: KindGet, Key: []byte(k)})
			require.Equal(t, want[k] != "", r.Found, k)
			require.Equal(t, want[k], string(r.Value), k)
		}
	}
	check(e)
	require.NoError(t, e.Close())
	e, err = testOpen(t.Context(), opts)
	require.NoError(t, err)
	defer e.Close()
	check(e)
}

// The background loop runs rounds on its own.
func TestBackgroundMaintenanceSweeps(t *testing.T) {
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	e, err := testOpen(t.Context(), Options{Dir: t.TempDir(), Now: clk.Now, MaintenanceInterval: 5 * time.Millisecond})
	require.NoError(t, err)
	defer e.Close()
	for i := range 50 {
		exec(t, e, Command{Kind: KindSet, Key: fmt.Appendf(nil, "k%d", i), Value: []byte("v"), TTL: time.Second})
	}
	clk.Advance(2 * time.Second)
	require.Eventually(t, func() bool {
		st, err := e.Stats()
		require.NoError(t, err)
		keys := 0
		for _, s := range st {
			keys += s.Keys
		}
		return keys == 0
	}, 10*time.Second, 10*time.Millisecond)
}
