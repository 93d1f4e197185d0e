// Package flowsbench is `bench flows`: durable work queues end to end.
// 100,000 flows (work items) are created, claimed and completed, durably,
// with producers and workers running at the same time ("live mode"); the
// headline is end-to-end flows/s, the wall time from the first create until
// the last of them is completed.
//
// Each system runs with Producers goroutines creating flows in batches of
// CreateBatch (the batches are handed out in order, so flows are created
// roughly in id order) and, beside them from the start, Workers goroutines
// each claiming up to ClaimLimit due flows under a Lease and then
// completing what it claimed in one batch. Payloads are PayloadBytes random
// bytes, the same for every system. Besides the rate, a run reports the
// p50/p95/p99 latency from a flow's creation (the moment its create batch
// was sent, so the create's commit is part of it) to its claim ("due to
// claim"), and the count of flows completed exactly once. That count is
// checked twice: by the harness, which counts every claim and completion
// it sees per flow, and by the system itself, queried after the run
// (Verify): every flow completed, none twice. A violation is an error of
// the run: the report is still written, and the command then fails.
//
// Systems are found by name in a registry (register); --systems picks
// them, in alternation order, and a name that is not registered is
// skipped with a log line. A system is one of two shapes:
//
//   - a poller (Claim and CompleteMany): the harness runs the workers,
//     each a loop of Claim then CompleteMany, sleeping briefly (1 ms,
//     doubling to 10 ms) after an empty claim;
//   - a consumer (Consume): the system works the flows with its own
//     worker pool and tells the harness of each claim and each durable
//     completion through hooks. River is one: its client fetches,
//     runs and completes jobs itself.
//
// The peers:
//
//   - postgres: PostgreSQL from Debian's packages (the binaries under
//     /usr/lib/postgresql/*/bin, or --pg-bin), a private cluster per run
//     in a fresh directory (initdb, then postgres on a free loopback port
//     and a unix socket in that directory), fsync=on and
//     synchronous_commit=on, its other settings the defaults. As root the
//     cluster runs as the postgres OS user, which the package creates. One
//     table holds the queue with a partial index for due claims; a create
//     batch is one multi-row INSERT, a claim one UPDATE ... WHERE id IN
//     (SELECT ... FOR UPDATE SKIP LOCKED) RETURNING id, payload (a worker
//     needs its flow's payload; every system hands it over), a completion one
//     UPDATE ... WHERE id = ANY($1) AND state = 'running' AND lease_owner
//     = $2; each statement its own transaction, so each is durable when
//     it returns. pgx v5 (pgxpool) over loopback TCP.
//   - river: github.com/riverqueue/river with its pgx driver on the same
//     kind of cluster, migrated with rivermigrate. Producers insert with
//     InsertMany; River's own client works the jobs with the settings of
//     River's own throughput benchmark (cmd/river bench): FetchCooldown
//     2 ms, FetchPollInterval 20 ms, and --river-max-workers workers. A
//     job's Work counts its job id in memory (a second count is a
//     double) and returns nil; a flow is done when River's completion
//     event arrives, which it sends once the completion is committed.
//
// Ours is the repository's own flows: examples/server built from the
// checkout, FLOW.* over RESP with go-redis (CREATE_MANY, CLAIM_DUE ...
// RETURN lease, COMPLETE_MANY), durable. The ceiling is what the same
// client code, protocol and disk allow: a bare RESP server in this
// process answering the same verbs in the same shapes from a map and a
// slice, each write command appended to a file and fdatasynced (group
// commit) before its reply; no leases, histories or indexes. Ours over
// the ceiling says how much the queue itself costs.
//
// The systems alternate within each repeat (benchkit.Alternate), each run
// on a fresh cluster or data directory. Every ratio is ours/peer of the
// end-to-end rate per repeat pair, reported as its median and min..max.
// The last line of stdout is
//
//	flows: e2e_per_s=... vs_postgres_ratio=... vs_river_ratio=...
//
// where e2e_per_s is ours' median and a figure that cannot be formed
// (ours not run) is n/a.
package flowsbench
