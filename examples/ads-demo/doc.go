// Command ads-demo is the ads serving path as an executable demo and
// benchmark: a simulated day of ad requests served on TemporalStore, on
// redis-server and on Go maps, with the same decision logic on each, and
// the day's invariants checked against each store's own state.
//
//	go run ./examples/ads-demo --requests 200000 --clients 16 --repeats 3
//
// # The day
//
// A catalog of campaigns (200 by default) is generated from --seed: each
// targets topics and audience segments, bids a price per click, has a
// budget for the day, a pacing plan over its hours (even, daytime or
// evening), and a frequency cap of N impressions per user in each cap
// window (1, 4 or 24 hours). Requests are drawn from the same seed: users
// Zipf-distributed (s=1.1), topics too (s=1.3, which makes the campaigns'
// demand Zipf-like), one request a simulated millisecond at most, spread
// over one simulated day; a request's time identifies its events.
//
// # A decision
//
//  1. Targeting: the campaigns of the request's topic and the user's
//     segment, from an index over the catalog.
//  2. Budget and pacing: drop a campaign when its spend with this charge
//     would pass its limit, the smaller of its budget and its plan's share
//     by the request's time plus a slack (1% of the budget and one
//     impression's largest charge). Spend is the backend's, reread every
//     --spend-refresh, plus what this process charged since.
//  3. Features: the user's impressions of the last day and clicks, read
//     from the store in one round trip; impressions in the last hour and
//     day, clicks in the day, and per campaign those in its current cap
//     window (a capped campaign is dropped).
//  4. Ranking: pCTR from the campaign's base rate, the user's smoothed
//     click rate, hourly fatigue and repeat exposure (PCTR); eCPM = bid ×
//     pCTR × 1000; the charge of an impression is bid × pCTR.
//  5. Take: the backend grants the best offer whose cap slot and budget
//     charge both fit, atomically, or the next (up to --max-offers).
//  6. Record: the impression, and a click when the user clicks (drawn from
//     the seed), each written so that a retry counts once; --retry of them
//     are sent twice.
//
// # Backends
//
// ours is the TemporalStore server over RESP with its own verbs:
// QUOTATAKE for cap slots, HSETANDGETOPT for budget charges into a spend
// ledger bucketed on the simulated clock, FAPPENDPOLICY ... FIRST, FQUERY
// and FAGG for the user's event series (see ours). redis is redis-server 7
// with a Lua script (EVALSHA) taking cap and budget for every ranked offer
// at once, and sorted sets for the events. map is the same logic on Go maps
// behind a mutex, no network: the ceiling.
//
// # Invariants
//
// After each day the backend's state is read back and checked (Check): no
// user has more impressions of a campaign in a cap window than its cap;
// no campaign spent more than its budget, nor, at the end of any ledger
// bucket, more than its plan's share plus the slack; every recorded
// impression's charge adds up to the campaign's spend counter and to what
// the decisions granted; every event is recorded once, retries included.
//
// # Measurement
//
// Each backend serves the same day --repeats times, the backends
// alternating, from a fresh store each time. Without --resp and --redis the
// program builds examples/server and starts it, and redis-server, on free
// ports: ours with --async (acknowledged once written, fsync every 10 ms)
// against redis-server's appendonly with appendfsync everysec, or both
// fsyncing every write with --durable; the servers run on half the CPUs and
// this program on the other half (--cpu-split). It prints one JSON report
// (per-repeat figures, medians, ratios with their spread), then the line
//
//	ads: decisions_per_s=<ours> redis_per_s=<redis> map_per_s=<map> ours_vs_redis_ratio=<x> null_ceiling_vs_redis_ratio=<y> invariants_held=<true|false>
//
// and exits non-zero when an invariant failed. Progress goes to stderr.
//
// Each run also reports the CPU time a decision took in the server (when
// this program started it) and in this program, and the impressions a
// history read returned. After each day on a RESP server come two
// ceilings (--ceiling), on a quarter as many decisions: the server's
// transport (the same clients and round trips, every command a PING), and
// the backend's client code against a null server, a process on the
// servers' CPUs that answers every command at once, the takes granted and
// the history reads as long as the day's (nullServer). The second is what
// this program allows with that backend's round trips and replies,
// whatever the server: null_ceiling_vs_redis_ratio, ours' over redis's
// day, bounds ours_vs_redis_ratio from above. --profile writes CPU profiles
// of the first repeat: this program's, and the server's for ours.
package main
