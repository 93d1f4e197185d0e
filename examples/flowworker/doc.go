// Command flowworker is a worker process for a server's durable flows:
// it claims flows of a type over RESP, runs a small job on each and
// completes it, until interrupted (it then finishes the jobs it holds).
//
//	go run ./examples/server &
//	go run ./examples/flowworker --enqueue 1000 --type email
//	go run ./examples/flowworker --type email --name w1 --concurrency 8
//
// Each job records its effect in the server idempotently (SADD of the
// flow's ID to flowworker:<type>:done) and counts its runs (INCR
// flowworker:<type>:runs:<id>): a worker killed in the middle of a job
// leaves its flows leased until the lease runs out, another worker then
// runs them again, and each flow is still completed once. Run several and
// kill some with SIGKILL to see it; FLOW.HISTORY <id> shows who held it.
package main
