package liveness

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

var t0 = time.Unix(1_700_000_000, 0)

// beats sends n heartbeats from peer every interval (plus jitter(i)),
// starting at t0, and returns the last one's time.
func beats(d *Detector, peer string, n int, interval time.Duration, jitter func(i int) time.Duration) time.Time {
	at := t0
	for i := range n {
		if i > 0 {
			at = at.Add(interval + jitter(i))
		}
		d.Heartbeat(peer, at)
	}
	return at
}

func noJitter(int) time.Duration { return 0 }

func newDetector(t *testing.T, o Options) *Detector {
	t.Helper()
	d, err := NewDetector(o)
	require.NoError(t, err)
	return d
}

func TestPhiGolden(t *testing.T) {
	// Intervals of exactly 100 ms once the first-interval seeds are out of
	// the window: the std dev is the 50 ms floor, so 200 ms after the last
	// beat is two deviations late: φ = −log10(0.5·erfc(√2)).
	d := newDetector(t, Options{Window: 10})
	last := beats(d, "n2", 50, 100*time.Millisecond, noJitter)
	phi, ok := d.Phi("n2", last.Add(200*time.Millisecond))
	require.True(t, ok)
	require.InDelta(t, -math.Log10(0.5*math.Erfc(math.Sqrt2)), phi, 1e-9)
	require.InDelta(t, 1.643, phi, 1e-3)
}

func TestPhiGrowsWithSilence(t *testing.T) {
	d := newDetector(t, Options{})
	jitter := func(i int) time.Duration { return time.Duration(i%5-2) * 5 * time.Millisecond }
	last := beats(d, "n2", 300, 100*time.Millisecond, jitter)
	tests := []struct {
		after      time.Duration
		suspected  bool
		phiAtLeast float64
		phiBelow   float64
	}{
		{0, false, 0, 0.1},
		{100 * time.Millisecond, false, 0, 1},
		{300 * time.Millisecond, false, 3, 8},
		{500 * time.Millisecond, true, 8, math.Inf(1)},
		{10 * time.Second, true, math.Inf(1), math.Inf(1)},
	}
	prev := -1.0
	for _, tc := range tests {
		now := last.Add(tc.after)
		phi, ok := d.Phi("n2", now)
		require.True(t, ok)
		require.GreaterOrEqual(t, phi, tc.phiAtLeast, "after %v", tc.after)
		if !math.IsInf(tc.phiBelow, 1) {
			require.Less(t, phi, tc.phiBelow, "after %v", tc.after)
		}
		require.GreaterOrEqual(t, phi, prev)
		prev = phi
		if tc.suspected {
			require.Equal(t, []string{"n2"}, d.Suspected(now), "after %v", tc.after)
		} else {
			require.Empty(t, d.Suspected(now), "after %v", tc.after)
		}
	}
}

func TestPhiAdaptsToEachPeer(t *testing.T) {
	// A peer on a slow, irregular link is judged by its own history: a
	// silence that convicts a fast, steady peer is normal for it.
	d := newDetector(t, Options{})
	beats(d, "fast", 100, 100*time.Millisecond, noJitter)
	slowJitter := func(i int) time.Duration { return time.Duration(i%7-3) * 100 * time.Millisecond }
	beats(d, "slow", 100, time.Second, slowJitter)
	// Both last beat at about the same time; look 1.8 s after the later.
	fastLast := t0.Add(99 * 100 * time.Millisecond)
	now := fastLast.Add(1800 * time.Millisecond)
	d.Heartbeat("slow", fastLast) // ignored: older than slow's last beat
	phiSlow, _ := d.Phi("slow", now)
	phiFast, _ := d.Phi("fast", now)
	require.Greater(t, phiFast, phiSlow)
	require.Contains(t, d.Suspected(now), "fast")
	require.NotContains(t, d.Suspected(now), "slow")
}

func TestFirstHeartbeat(t *testing.T) {
	d := newDetector(t, Options{FirstInterval: time.Second})
	d.Heartbeat("n2", t0)
	phi, ok := d.Phi("n2", t0.Add(time.Second))
	require.True(t, ok)
	require.Less(t, phi, 1.0)
	require.Equal(t, []string{"n2"}, d.Suspected(t0.Add(5*time.Second)))
}

func TestUnknownAndForgotten(t *testing.T) {
	d := newDetector(t, Options{})
	_, ok := d.Phi("n9", t0)
	require.False(t, ok)
	d.Heartbeat("n2", t0)
	require.Equal(t, []string{"n2"}, d.Suspected(t0.Add(time.Hour)))
	d.Forget("n2")
	_, ok = d.Phi("n2", t0)
	require.False(t, ok)
	require.Empty(t, d.Suspected(t0.Add(time.Hour)))
}

func TestOutOfOrderHeartbeatIgnored(t *testing.T) {
	d := newDetector(t, Options{Window: 4})
	last := beats(d, "n2", 10, 100*time.Millisecond, noJitter)
	before, _ := d.Phi("n2", last.Add(250*time.Millisecond))
	d.Heartbeat("n2", last.Add(-time.Second))
	after, _ := d.Phi("n2", last.Add(250*time.Millisecond))
	require.Equal(t, before, after)
}

func TestWindowForgetsOldIntervals(t *testing.T) {
	// 1 s intervals, then many 100 ms ones: with a window of 20 only the
	// fast ones are left and 600 ms of silence is suspect.
	d := newDetector(t, Options{Window: 20})
	last := beats(d, "n2", 30, time.Second, noJitter)
	for range 1000 {
		last = last.Add(100 * time.Millisecond)
		d.Heartbeat("n2", last)
	}
	require.Equal(t, []string{"n2"}, d.Suspected(last.Add(600*time.Millisecond)))
	a := d.peers["n2"]
	mean, std := a.stats()
	require.InDelta(t, 0.1, mean, 1e-9)
	require.InDelta(t, 0, std, 1e-6)
}

func TestDetectorOptions(t *testing.T) {
	tests := []struct {
		name string
		o    Options
		ok   bool
	}{
		{"defaults", Options{}, true},
		{"negative threshold", Options{Threshold: -1}, false},
		{"infinite threshold", Options{Threshold: math.Inf(1)}, false},
		{"NaN threshold", Options{Threshold: math.NaN()}, false},
		{"window of one", Options{Window: 1}, false},
		{"negative pause", Options{AcceptablePause: -time.Second}, false},
		{"negative std dev", Options{MinStdDev: -1}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewDetector(tc.o)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrInvalid)
			}
		})
	}
}

func newJury(t *testing.T, members []string, o JuryOptions) *Jury {
	t.Helper()
	j, err := NewJury(members, o)
	require.NoError(t, err)
	return j
}

func report(t *testing.T, j *Jury, observer string, suspects ...string) {
	t.Helper()
	require.NoError(t, j.Report(observer, suspects))
}

func TestJuryConvictsOnlyPastTheRatio(t *testing.T) {
	j := newJury(t, []string{"n1", "n2", "n3"}, JuryOptions{})
	// One observer (perhaps the partitioned one) convicts nobody.
	report(t, j, "n1", "n3")
	v := j.Evaluate()
	require.Empty(t, v.Convicted)
	require.False(t, v.SafeMode)

	report(t, j, "n2", "n3")
	v = j.Evaluate()
	require.Equal(t, []string{"n3"}, v.Convicted)
	require.Equal(t, []string{"n3"}, v.Newly)
	require.True(t, j.Convicted("n3"))

	// Evaluating again changes nothing.
	v = j.Evaluate()
	require.Equal(t, []string{"n3"}, v.Convicted)
	require.Empty(t, v.Newly)
}

func TestJuryRefusesSelfClearing(t *testing.T) {
	j := newJury(t, []string{"n1", "n2", "n3"}, JuryOptions{})
	report(t, j, "n1", "n3")
	report(t, j, "n2", "n3")
	require.Equal(t, []string{"n3"}, j.Evaluate().Convicted)

	// n3 says it is fine and blames the others: neither counts.
	report(t, j, "n3")
	require.Equal(t, []string{"n3"}, j.Evaluate().Convicted)
	report(t, j, "n3", "n1", "n2")
	v := j.Evaluate()
	require.Equal(t, []string{"n3"}, v.Convicted)
	require.Empty(t, v.Newly)

	// One observer still suspects it: still past the ratio? No: one of
	// two is under 2/3, so it is acquitted by the others' reports.
	report(t, j, "n1")
	v = j.Evaluate()
	require.Empty(t, v.Convicted)
	require.Equal(t, []string{"n3"}, v.Acquitted)
}

func TestJurySelfSuspicionDropped(t *testing.T) {
	j := newJury(t, []string{"n1", "n2", "n3"}, JuryOptions{})
	report(t, j, "n3", "n3")
	report(t, j, "n1", "n3")
	require.Empty(t, j.Evaluate().Convicted)
}

func TestJurySafeModeWhenManyAtOnce(t *testing.T) {
	members := []string{"n1", "n2", "n3", "n4", "n5"}
	j := newJury(t, members, JuryOptions{})
	// Three observers suddenly suspect two members: at most one at once
	// in five (⌊5/3⌋ = 1), so this is treated as a network fault.
	for _, o := range []string{"n1", "n2", "n3"} {
		report(t, j, o, "n4", "n5")
	}
	v := j.Evaluate()
	require.True(t, v.SafeMode)
	require.Contains(t, v.SafeReason, "2 members suspected at once")
	require.Empty(t, v.Convicted)

	// The suspicion narrows to one: it is convicted.
	for _, o := range []string{"n1", "n2", "n3", "n5"} {
		report(t, j, o, "n4")
	}
	v = j.Evaluate()
	require.False(t, v.SafeMode)
	require.Equal(t, []string{"n4"}, v.Convicted)
}

func TestJurySafeModeKeepsAMajority(t *testing.T) {
	j := newJury(t, []string{"n1", "n2", "n3"}, JuryOptions{})
	report(t, j, "n1", "n3")
	report(t, j, "n2", "n3")
	require.Equal(t, []string{"n3"}, j.Evaluate().Convicted)
	// n1 now suspects n2: n2's only live observer. Convicting it would
	// leave one of three members live.
	report(t, j, "n1", "n2", "n3")
	v := j.Evaluate()
	require.True(t, v.SafeMode)
	require.Contains(t, v.SafeReason, "under a majority")
	require.Equal(t, []string{"n3"}, v.Convicted)
}

func TestJuryRefusesToOrphanAShard(t *testing.T) {
	members := []string{"n1", "n2", "n3", "n4", "n5"}
	placement := map[string][]string{"t/0": {"n1", "n2", "n3"}, "t/1": {"n4", "n5"}}
	j := newJury(t, members, JuryOptions{Placement: func() map[string][]string { return placement }})
	for _, o := range []string{"n1", "n2", "n3", "n5"} {
		report(t, j, o, "n4")
	}
	require.Equal(t, []string{"n4"}, j.Evaluate().Convicted)
	for _, o := range []string{"n1", "n2", "n3"} {
		report(t, j, o, "n4", "n5")
	}
	v := j.Evaluate()
	require.Equal(t, []string{"n4"}, v.Convicted)
	require.Contains(t, v.Refused, "n5")
	require.Contains(t, v.Refused["n5"], "shard t/1")
}

func TestJuryReportErrors(t *testing.T) {
	j := newJury(t, []string{"n1", "n2", "n3"}, JuryOptions{})
	require.ErrorIs(t, j.Report("n9", nil), ErrUnknownMember)
	require.ErrorIs(t, j.Report("n1", []string{"n2", "n9"}), ErrUnknownMember)
	// A refused report leaves the earlier one in place.
	report(t, j, "n1", "n3")
	report(t, j, "n2", "n3")
	require.ErrorIs(t, j.Report("n1", []string{"n9"}), ErrUnknownMember)
	require.Equal(t, []string{"n3"}, j.Evaluate().Convicted)
}

func TestJuryOptions(t *testing.T) {
	tests := []struct {
		name    string
		members []string
		o       JuryOptions
		ok      bool
	}{
		{"defaults", []string{"a"}, JuryOptions{}, true},
		{"ratio one", []string{"a"}, JuryOptions{Ratio: 1}, true},
		{"ratio half", []string{"a"}, JuryOptions{Ratio: 0.5}, false},
		{"ratio over one", []string{"a"}, JuryOptions{Ratio: 1.5}, false},
		{"fraction over one", []string{"a"}, JuryOptions{MaxConvictFraction: 2}, false},
		{"no members", nil, JuryOptions{}, false},
		{"repeated member", []string{"a", "b", "a"}, JuryOptions{}, false},
		{"empty member", []string{"a", ""}, JuryOptions{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			_, err := NewJury(tc.members, tc.o)
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, ErrInvalid)
			}
		})
	}
}

func TestCheckRemoval(t *testing.T) {
	placement := map[string][]string{
		"a": {"n1", "n2", "n3"},
		"b": {"n3", "n4"},
		"c": {"n1", "n2", "n3", "n4", "n5"},
	}
	tests := []struct {
		name   string
		down   []string
		remove string
		want   error
	}{
		{"healthy", nil, "n1", nil},
		{"not a voter anywhere", nil, "n9", nil},
		{"last live voter of b", []string{"n4"}, "n3", ErrWouldOrphan},
		// c without n1 has four voters, two of them down: under three.
		{"below quorum in c", []string{"n4", "n5"}, "n1", ErrBelowQuorum},
		// n3's removal both leaves a below quorum (n1, n2 down) and b
		// orphaned (n4 down): the orphan is reported.
		{"orphan first", []string{"n1", "n2", "n4"}, "n3", ErrWouldOrphan},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			down := map[string]bool{}
			for _, d := range tc.down {
				down[d] = true
			}
			err := CheckRemoval(placement, down, tc.remove)
			if tc.want == nil {
				require.NoError(t, err)
			} else {
				require.ErrorIs(t, err, tc.want)
			}
		})
	}
}

func TestJuryInvariantsUnderRandomReports(t *testing.T) {
	// Whatever the members report, a majority stays live, no evaluation
	// convicts more than its bound, and no shard loses its last voter.
	rng := rand.New(rand.NewPCG(1, 2))
	for round := range 200 {
		n := 3 + rng.IntN(5)
		members := make([]string, n)
		for i := range members {
			members[i] = fmt.Sprintf("n%d", i)
		}
		placement := map[string][]string{}
		for s := range 4 {
			a, b := rng.IntN(n), rng.IntN(n)
			placement[fmt.Sprint("s", s)] = []string{members[a], members[b]}
		}
		j := newJury(t, members, JuryOptions{Placement: func() map[string][]string { return placement }})
		atOnce := max(1, n/3)
		for range 50 {
			o := members[rng.IntN(n)]
			var suspects []string
			for _, m := range members {
				if rng.IntN(3) == 0 {
					suspects = append(suspects, m)
				}
			}
			report(t, j, o, suspects...)
			v := j.Evaluate()
			require.GreaterOrEqual(t, n-len(v.Convicted), n/2+1, "round %d", round)
			require.LessOrEqual(t, len(v.Newly), atOnce, "round %d", round)
			down := map[string]bool{}
			for _, c := range v.Convicted {
				down[c] = true
			}
			for s, voters := range placement {
				alive := 0
				for _, x := range voters {
					if !down[x] {
						alive++
					}
				}
				require.Positive(t, alive, "round %d: shard %s orphaned", round, s)
			}
		}
	}
}
