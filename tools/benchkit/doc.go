// Package benchkit holds the pieces every benchmark driver under tools/bench
// shares: the alternating repeat runner, the statistics (percentiles,
// min/median/max summaries, per-repeat ratio spreads, least-squares linear
// fits), the host conditions stamped into every report, the JSON report
// writer and the progress logger.
//
// Conventions (see the repository's benchmark convention): a driver runs ours
// and every peer in one process, alternating them within each repeat, and
// reports each figure as min/median/max over the repeats. Every ratio is
// oriented so that above 1 means ours is better: throughput as ours/peer,
// latency and bytes as peer/ours, and its JSON key ends in "_ratio".
// Reports go to bench-results/<name>.json at the repository root; progress
// goes to stderr so stdout carries only the table and the summary line.
//
// Nothing here keeps package-level mutable state; every function is safe for
// concurrent use unless its doc says otherwise.
package benchkit
