package flowresp

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// Client sends flow commands to a server. Its redis.Client must speak
// RESP3 (Options.Protocol 3, go-redis's default) and have a ReadTimeout
// longer than the claims' waits (-1 for none), since a blocked claim
// holds its connection until a flow comes or its wait ends.
type Client struct{ rc *redis.Client }

// New returns a client over rc.
func New(rc *redis.Client) *Client { return &Client{rc: rc} }

// knownErrors maps the server's flow error texts back to the sentinels.
var knownErrors = []error{flow.ErrNotFound, flow.ErrExists, flow.ErrIdempotentConflict, flow.ErrStaleLease, flow.ErrTerminal,
	flow.ErrNotTerminal, flow.ErrWrongState, flow.ErrRunningState, flow.ErrPolicyGeneration}

// asError turns a server error into the flow sentinel it names, when it
// names one.
func asError(err error) error {
	if err == nil {
		return nil
	}
	msg := strings.TrimPrefix(err.Error(), "ERR ")
	for _, k := range knownErrors {
		if msg == k.Error() {
			return k
		}
	}
	return err
}

func (c *Client) one(ctx context.Context, args ...any) (flow.Record, error) {
	v, err := c.rc.Do(ctx, args...).Result()
	if err != nil {
		return flow.Record{}, asError(err)
	}
	return record(v)
}

// record reads a record reply.
func record(v any) (flow.Record, error) {
	m, ok := v.(map[any]any)
	if !ok {
		return flow.Record{}, fmt.Errorf("flowresp: a record reply is %T (RESP3 needed)", v)
	}
	str := func(k string) string { s, _ := m[k].(string); return s }
	num := func(k string) int64 { n, _ := m[k].(int64); return n }
	bytes := func(k string) []byte {
		if s, ok := m[k].(string); ok {
			return []byte(s)
		}
		return nil
	}
	r := flow.Record{
		ID: str("id"), Type: str("type"), State: str("state"), Partition: str("partition_key"),
		Payload: bytes("payload"), Result: bytes("result"), Error: bytes("error"),
		Version: uint64(num("version")), Attempts: num("attempts"), Priority: num("priority"),
		CreatedMs: num("created_at_ms"), UpdatedMs: num("updated_at_ms"), NextRunAtMs: num("next_run_at_ms"),
		LeaseOwner: str("lease_owner"), LeaseToken: str("lease_token"), LeaseDeadlineMs: num("lease_deadline_ms"),
		Fencing: uint64(num("fencing_token")), RunState: str("run_state"), ParentID: str("parent_flow_id"),
		RootID: str("root_flow_id"), CorrelationID: str("correlation_id"), MaxActiveMs: num("max_active_ms"),
	}
	if attrs, ok := m["attributes"].(map[any]any); ok {
		for k, v := range attrs {
			r.Attributes = append(r.Attributes, flow.Attr{Key: fmt.Sprint(k), Value: fmt.Sprint(v)})
		}
	}
	return r, nil
}

// Create sends FLOW.CREATE.
func (c *Client) Create(ctx context.Context, cr flow.Create) (flow.Record, error) {
	return c.one(ctx, createArgs([]any{"FLOW.CREATE"}, &cr)...)
}

func createArgs(args []any, cr *flow.Create) []any {
	args = append(args, cr.ID, "TYPE", cr.Type)
	if cr.State != "" {
		args = append(args, "STATE", cr.State)
	}
	if cr.Payload != nil {
		args = append(args, "PAYLOAD", cr.Payload)
	}
	if cr.HasRunAt {
		args = append(args, "RUN_AT", cr.RunAtMs)
	}
	if cr.Priority != 0 {
		args = append(args, "PRIORITY", cr.Priority)
	}
	if cr.Partition != "" {
		args = append(args, "PARTITION", cr.Partition)
	}
	for _, a := range cr.Attributes {
		args = append(args, "ATTRIBUTE", a.Key, a.Value)
	}
	switch {
	case cr.MaxActiveMs > 0:
		args = append(args, "MAX_ACTIVE_MS", cr.MaxActiveMs)
	case cr.MaxActiveMs < 0:
		args = append(args, "MAX_ACTIVE_MS", "INFINITY")
	}
	if cr.Idempotent {
		args = append(args, "IDEMPOTENT", "true")
	}
	return args
}

func leaseArgs(verb, id, token string, fencing uint64) []any {
	return []any{verb, id, token, "FENCING", strconv.FormatUint(fencing, 10)}
}

// Complete sends FLOW.COMPLETE.
func (c *Client) Complete(ctx context.Context, cm flow.Complete) (flow.Record, error) {
	args := leaseArgs("FLOW.COMPLETE", cm.ID, cm.LeaseToken, cm.Fencing)
	if cm.Result != nil {
		args = append(args, "RESULT", cm.Result)
	}
	return c.one(ctx, args...)
}

// Fail sends FLOW.FAIL.
func (c *Client) Fail(ctx context.Context, f flow.Fail) (flow.Record, error) {
	args := leaseArgs("FLOW.FAIL", f.ID, f.LeaseToken, f.Fencing)
	if f.Error != nil {
		args = append(args, "ERROR", f.Error)
	}
	return c.one(ctx, args...)
}

// Retry sends FLOW.RETRY.
func (c *Client) Retry(ctx context.Context, r flow.Retry) (flow.Record, error) {
	args := leaseArgs("FLOW.RETRY", r.ID, r.LeaseToken, r.Fencing)
	if r.Error != nil {
		args = append(args, "ERROR", r.Error)
	}
	if r.HasRunAt {
		args = append(args, "RUN_AT", r.RunAtMs)
	}
	if r.Override.Set&flow.SetMaxRetries != 0 {
		args = append(args, "MAX_RETRIES", r.Override.MaxRetries)
	}
	if r.Override.Set&flow.SetExhaustedTo != 0 {
		args = append(args, "EXHAUSTED_TO", r.Override.ExhaustedTo)
	}
	return c.one(ctx, args...)
}

// ExtendLease sends FLOW.EXTEND_LEASE.
func (c *Client) ExtendLease(ctx context.Context, e flow.ExtendLease) (flow.Record, error) {
	return c.one(ctx, append(leaseArgs("FLOW.EXTEND_LEASE", e.ID, e.LeaseToken, e.Fencing), "LEASE_MS", e.LeaseMs)...)
}

// Transition sends FLOW.TRANSITION.
func (c *Client) Transition(ctx context.Context, t flow.Transition) (flow.Record, error) {
	args := []any{"FLOW.TRANSITION", t.ID, t.From, t.To, "FENCING", strconv.FormatUint(t.Fencing, 10)}
	if t.LeaseToken != "" {
		args = append(args, "LEASE_TOKEN", t.LeaseToken)
	}
	if t.HasRunAt {
		args = append(args, "RUN_AT", t.RunAtMs)
	}
	if t.HasPriority {
		args = append(args, "PRIORITY", t.Priority)
	}
	if t.HasPayload {
		args = append(args, "PAYLOAD", t.Payload)
	}
	return c.one(ctx, args...)
}

// ClaimWait sends FLOW.CLAIM_DUE ... BLOCK, blocking for ctx's deadline
// (forever without one); nothing claimed is nil.
func (c *Client) ClaimWait(ctx context.Context, cl flow.Claim) ([]flow.Record, error) {
	args := []any{"FLOW.CLAIM_DUE", cl.Type, "STATE", cl.State, "WORKER", cl.Worker, "LEASE_MS", cl.LeaseMs, "LIMIT", cl.Limit}
	if cl.OnlyExpired {
		args[0] = "FLOW.RECLAIM"
	}
	if cl.HasPriority {
		args = append(args, "PRIORITY", cl.Priority)
	}
	if cl.HasPartition {
		args = append(args, "PARTITION", cl.Partition)
	}
	if cl.ReclaimExpired {
		args = append(args, "RECLAIM_EXPIRED", "true")
	}
	block := int64(0)
	if d, ok := ctx.Deadline(); ok {
		// The server's wait ends a little before the client's, so that
		// the reply comes back rather than the connection timing out.
		block = max(1, time.Until(d).Milliseconds()-50)
	}
	args = append(args, "BLOCK", block)
	vs, err := c.rc.Do(ctx, args...).Slice()
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil // the wait ended, as a BLOCK's timeout does
		}
		return nil, asError(err)
	}
	out := make([]flow.Record, 0, len(vs))
	for _, v := range vs {
		r, err := record(v)
		if err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, nil
}

// Batch sends the *_MANY verb of cmds' kind (they must all be of one
// kind) and returns each item's result; records of the short form
// (id, state, version, fencing token).
func (c *Client) Batch(ctx context.Context, cmds []flow.Command, independent bool) ([]flow.ItemResult, error) {
	if len(cmds) == 0 {
		return nil, nil
	}
	var verb string
	args := []any{""}
	if independent {
		args = append(args, "INDEPENDENT", "true")
	}
	for _, cmd := range cmds {
		args = append(args, "ITEM")
		var v string
		switch x := cmd.(type) {
		case *flow.Create:
			v = "FLOW.CREATE_MANY"
			args = createArgs(args, x)
		case *flow.Complete:
			v = "FLOW.COMPLETE_MANY"
			args = append(args, leaseArgs("", x.ID, x.LeaseToken, x.Fencing)[1:]...)
			if x.Result != nil {
				args = append(args, "RESULT", x.Result)
			}
		case *flow.Cancel:
			v = "FLOW.CANCEL_MANY"
			args = append(args, x.ID)
			if x.LeaseToken != "" {
				args = append(args, "LEASE_TOKEN", x.LeaseToken, "FENCING", strconv.FormatUint(x.Fencing, 10))
			}
		default:
			return nil, fmt.Errorf("flowresp: %T in a batch", cmd)
		}
		if verb != "" && v != verb {
			return nil, errors.New("flowresp: a batch holds one kind of command")
		}
		verb = v
	}
	args[0] = verb
	vs, err := c.rc.Do(ctx, args...).Slice()
	if err != nil {
		return nil, asError(err)
	}
	out := make([]flow.ItemResult, len(vs))
	for i, v := range vs {
		if e, ok := v.(error); ok {
			out[i].Err = asError(e)
			continue
		}
		m, ok := v.(map[any]any)
		if !ok {
			return nil, fmt.Errorf("flowresp: a batch item is %T", v)
		}
		id, _ := m["id"].(string)
		state, _ := m["state"].(string)
		version, _ := m["version"].(int64)
		fencing, _ := m["fencing_token"].(int64)
		out[i].Record = flow.Record{ID: id, State: state, Version: uint64(version), Fencing: uint64(fencing)}
	}
	return out, nil
}
