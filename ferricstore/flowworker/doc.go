// Package flowworker runs workers over durable flows: a Queue to enqueue
// work, a Worker that claims due flows of a type and runs a handler on
// each under its lease (extending it while the handler runs), and a
// Workflow whose handlers, one per state, move a flow from state to
// state. They use a Client: *ferricstore.Flows in the same process, or a
// client of a server's FLOW verbs.
//
//	q := flowworker.Queue{Client: st.Flows(), Type: "email"}
//	_, err := q.Enqueue(ctx, "mail-1", body)
//	w := flowworker.Worker{Client: st.Flows(), Type: "email", Name: "w1", Concurrency: 8,
//		Handler: func(ctx context.Context, r flow.Record) error { return send(ctx, r.Payload) }}
//	err = w.Run(ctx) // until ctx ends; in-flight handlers finish first
//
// A handler's nil completes the flow; an error retries it after the
// type's backoff (FLOW.POLICY.SET), or fails it for good when wrapped with
// Permanent. A handler may run more than once for a flow (its worker died
// holding the lease, which then ran out), but the flow completes once: a
// late worker's completion is refused as stale. Make handlers' side
// effects idempotent by the flow's ID.
package flowworker
