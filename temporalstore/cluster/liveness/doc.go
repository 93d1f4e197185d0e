// Package liveness decides which cluster members are down, with the
// guardrails that keep one bad observer or one bad network link from
// taking a healthy node out.
//
// A Detector is one node's view: an adaptive φ-accrual failure detector
// per peer. It learns the distribution of each peer's heartbeat
// inter-arrival times (a sliding window) and reports φ, the suspicion
// that the peer is gone: −log10 of the chance that a heartbeat still
// arrives this late. φ 8 (the default threshold) is a one-in-10⁸ chance
// under the learnt distribution, so a peer on a slow but steady link is
// not suspected, while one whose heartbeats stop is within a few of its
// usual intervals.
//
// A Jury turns the members' views into convictions:
//
//   - a member is convicted only when at least Ratio of the other live
//     members suspect it (two of two in a cluster of three by default),
//     so one partitioned observer convicts nobody;
//   - a member's report about itself counts for nothing: it can neither
//     clear its own conviction nor convict itself; only the others'
//     reports acquit it;
//   - a conviction that would leave a shard with no live voter (an
//     orphan) is refused (Verdict.Refused says which shard);
//   - safe mode: when the convictions would leave fewer than a majority
//     of members live, or convict more than MaxConvictFraction of them at
//     once, the jury convicts no one new until the reports calm down, and
//     Verdict.SafeMode says why.
//
// CheckRemoval is the check before a membership change takes a member out
// of its shards: refused when a shard would be orphaned or left below its
// quorum. In use:
//
//	d, _ := liveness.NewDetector(liveness.Options{})
//	d.Heartbeat("n2", time.Now()) // on each heartbeat from n2
//	j, _ := liveness.NewJury([]string{"n1", "n2", "n3"}, liveness.JuryOptions{})
//	j.Report("n1", d.Suspected(time.Now())) // each member's view, gossiped
//	v := j.Evaluate()                       // v.Convicted, v.SafeMode
//
// Times are passed in, never read from the clock, so tests drive them.
// Detector and Jury are safe for concurrent use.
package liveness
