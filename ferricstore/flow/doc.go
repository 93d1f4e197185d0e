// Package flow is a durable work queue's state as a value: flow records
// that workers claim under leases, the state machine between queued,
// running and the terminal states, retries with backoff, per-type
// policies, FIFO lanes, interval schedules and each flow's history.
//
// A Table does no I/O and reads no clock: Apply takes the time with the
// command, and everything it decides from it (lease tokens, deadlines,
// backoff and its jitter) follows from the two, so a log of applied
// commands with their times replays into the same table. Commands that
// fail change nothing.
//
//	t := flow.NewTable()
//	_, _ = t.Apply(now, &flow.Create{ID: "order-1", Type: "email"})
//	res, _ := t.Apply(now, &flow.Claim{Type: "email", State: flow.Queued, Worker: "w1", LeaseMs: 30_000, Limit: 10})
//	r := res.Records[0]
//	done, err := t.Apply(now, &flow.Complete{ID: r.ID, LeaseToken: r.LeaseToken, Fencing: r.Fencing})
//	// done.Flow is the completed record
//
// A claim moves a due flow to Running, raises its fencing token and
// gives it a lease token and a deadline; every call made under the lease
// names both, and a call whose token or fencing is not the record's
// fails with ErrStaleLease. An expired lease makes the flow reclaimable
// (Claim.ReclaimExpired, Claim.OnlyExpired), which raises the fencing
// again: the late worker's calls are stale from then on, so a flow is
// completed once however many workers ran it. Claims take due flows by
// priority (highest first), then due time, then creation order.
//
// A Table is not safe for concurrent use.
package flow
