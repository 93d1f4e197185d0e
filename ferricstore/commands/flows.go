package commands

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/flow"
)

// FlowCommands returns the FLOW.* verbs served by st's flows.
func FlowCommands(st *ferricstore.Store) []Command {
	h := &flowHandler{fl: st.Flows()}
	write := func(name string, arity, firstKey int, summary string, run func(context.Context, Call, Reply)) Command {
		c := Command{Name: name, Arity: arity, Write: true, Group: "flow", Summary: summary, Run: run}
		if firstKey > 0 {
			c.FirstKey, c.LastKey, c.KeyStep = firstKey, firstKey, 1
		}
		return c
	}
	read := func(name string, arity, firstKey int, summary string, run func(context.Context, Call, Reply)) Command {
		c := write(name, arity, firstKey, summary, run)
		c.Write = false
		return c
	}
	return []Command{
		write("flow.create", -4, 1, "Creates a durable flow (work item) of a type, due now or at RUN_AT.", h.create),
		write("flow.create_many", -5, 0, "Creates flows in one write: [INDEPENDENT true] [RETURN status|full] ITEM id TYPE t [options] ...; all or none unless INDEPENDENT true; each item answered with its id, state, version and fencing token, or its whole record with RETURN full.", h.many(parseCreate)),
		write("flow.claim_due", -10, 0, "Leases due flows of a type and state to a worker, optionally blocking until one is due; RETURN lease answers each with its id, payload, tokens and attempts only.", h.claim(false)),
		write("flow.reclaim", -10, 0, "Leases running flows of a type whose lease expired to a worker.", h.claim(true)),
		write("flow.transition", -5, 1, "Moves a flow to another waiting state, under its lease when running.", h.one(parseTransition)),
		write("flow.transition_many", -7, 0, "FLOW.TRANSITION for many flows in one write.", h.many(parseTransition)),
		write("flow.complete", -5, 1, "Completes a running flow under its lease; repeating it under that lease is a no-op.", h.one(parseComplete)),
		write("flow.complete_many", -6, 0, "FLOW.COMPLETE for many flows in one write.", h.many(parseComplete)),
		write("flow.fail", -5, 1, "Fails a running flow under its lease.", h.one(parseFail)),
		write("flow.fail_many", -6, 0, "FLOW.FAIL for many flows in one write.", h.many(parseFail)),
		write("flow.retry", -5, 1, "Sends a running flow back to its state after the policy's backoff, or to the exhaustion state.", h.one(parseRetry)),
		write("flow.retry_many", -6, 0, "FLOW.RETRY for many flows in one write.", h.many(parseRetry)),
		write("flow.cancel", -2, 1, "Cancels a flow that is not terminal (under its lease when running).", h.one(parseCancel)),
		write("flow.cancel_many", -3, 0, "FLOW.CANCEL for many flows in one write.", h.many(parseCancel)),
		write("flow.extend_lease", 7, 1, "Moves a running flow's lease deadline to LEASE_MS from now.", h.one(parseExtend)),
		write("flow.rewind", -2, 1, "Puts a terminal flow back in a waiting state (TO s, default queued).", h.one(parseRewind)),
		read("flow.get", 2, 1, "Returns a flow's record.", h.get),
		read("flow.history", -2, 1, "Returns a flow's events: [COUNT n] [REV true].", h.history),
		write("flow.policy.set", -4, 0, "Sets a flow type's (or a type's state's) retry, lane and lifetime policy.", h.policySet),
		read("flow.policy.get", -2, 0, "Returns the policy in force for a flow type (or a type's state).", h.policyGet),
		write("flow.schedule.set", -6, 1, "Makes an interval schedule whose occurrences create flows.", h.scheduleSet),
		read("flow.schedule.get", 2, 1, "Returns a schedule.", h.scheduleGet),
		write("flow.schedule.del", 2, 1, "Deletes a schedule.", h.scheduleDel),
		read("flow.schedule.list", 1, 0, "Returns the schedules' names.", h.scheduleList),
		read("flow.stats", 1, 0, "Returns the flows counted by state.", h.stats),
	}
}

type flowHandler struct{ fl *ferricstore.Flows }

// Errors of the FLOW verbs' arguments.
const errFlowBool = "ERR value is not a boolean (true or false)"

// argErr is an argument that does not parse: its reply.
type argErr string

func (e argErr) Error() string { return string(e) }

// failFlow writes a flow call's error: an argument's as it is, any other
// (the flow package's, a batch's with its index, a closed store's) after
// "ERR ".
func failFlow(w Reply, err error) {
	if ae, ok := errors.AsType[argErr](err); ok {
		w.Error(string(ae))
		return
	}
	w.Error("ERR " + err.Error())
}

// opts walks a call's OPTION value pairs from args[i:] and hands each to
// set; a token stop ends the walk (ITEM, for batches) and its index is
// returned.
func opts(args [][]byte, i int, stop string, set func(name string, v []byte) error) (int, error) {
	for i < len(args) {
		name := strings.ToUpper(string(args[i]))
		if stop != "" && name == stop {
			return i, nil
		}
		if i+1 >= len(args) {
			return i, argErr(errSyntax)
		}
		if err := set(name, args[i+1]); err != nil {
			return i, err
		}
		i += 2
	}
	return i, nil
}

func intArg(v []byte) (int64, error) {
	n, ok := parseInt(v)
	if !ok {
		return 0, argErr(errNotInt)
	}
	return n, nil
}

func uintArg(v []byte) (uint64, error) {
	n, err := strconv.ParseUint(string(v), 10, 64)
	if err != nil {
		return 0, argErr(errNotInt)
	}
	return n, nil
}

func boolArg(v []byte) (bool, error) {
	switch strings.ToLower(string(v)) {
	case "true", "1", "yes":
		return true, nil
	case "false", "0", "no":
		return false, nil
	}
	return false, argErr(errFlowBool)
}

// maxActive reads MAX_ACTIVE_MS: a count of ms or INFINITY.
func maxActive(v []byte) (int64, error) {
	if eq(v, "infinity") {
		return -1, nil
	}
	n, err := intArg(v)
	if err == nil && n <= 0 {
		err = argErr("ERR MAX_ACTIVE_MS must be positive or INFINITY")
	}
	return n, err
}

// parser reads one flow command from args[i:] up to stop and returns it
// and where it ended.
type parser func(args [][]byte, i int, stop string) (flow.Command, int, error)

func parseCreate(args [][]byte, i int, stop string) (flow.Command, int, error) {
	c := &flow.Create{ID: string(args[i])}
	i++
	for i < len(args) {
		name := strings.ToUpper(string(args[i]))
		if stop != "" && name == stop {
			break
		}
		if name == "ATTRIBUTE" {
			// The one option with two values.
			if i+2 >= len(args) {
				return nil, i, argErr(errSyntax)
			}
			c.Attributes = append(c.Attributes, flow.Attr{Key: string(args[i+1]), Value: string(args[i+2])})
			i += 3
			continue
		}
		if i+1 >= len(args) {
			return nil, i, argErr(errSyntax)
		}
		v := args[i+1]
		var err error
		switch name {
		case "TYPE":
			c.Type = string(v)
		case "STATE":
			c.State = string(v)
		case "PAYLOAD":
			c.Payload = append([]byte(nil), v...)
		case "RUN_AT":
			c.RunAtMs, err = intArg(v)
			c.HasRunAt = true
		case "PRIORITY":
			c.Priority, err = intArg(v)
		case "PARTITION":
			c.Partition = string(v)
		case "PARENT_FLOW_ID":
			c.ParentID = string(v)
		case "ROOT_FLOW_ID":
			c.RootID = string(v)
		case "CORRELATION_ID":
			c.CorrelationID = string(v)
		case "MAX_ACTIVE_MS":
			c.MaxActiveMs, err = maxActive(v)
		case "IDEMPOTENT":
			c.Idempotent, err = boolArg(v)
		default:
			err = argErr(errSyntax)
		}
		if err != nil {
			return nil, i, err
		}
		i += 2
	}
	return c, i, nil
}

func parseTransition(args [][]byte, i int, stop string) (flow.Command, int, error) {
	if i+2 >= len(args) {
		return nil, i, argErr(errSyntax)
	}
	c := &flow.Transition{ID: string(args[i]), From: string(args[i+1]), To: string(args[i+2])}
	fencing := false
	end, err := opts(args, i+3, stop, func(name string, v []byte) (err error) {
		switch name {
		case "LEASE_TOKEN":
			c.LeaseToken = string(v)
		case "FENCING":
			c.Fencing, err = uintArg(v)
			fencing = true
		case "RUN_AT":
			c.RunAtMs, err = intArg(v)
			c.HasRunAt = true
		case "PRIORITY":
			c.Priority, err = intArg(v)
			c.HasPriority = true
		case "PAYLOAD":
			c.Payload, c.HasPayload = append([]byte(nil), v...), true
		default:
			return argErr(errSyntax)
		}
		return err
	})
	if err == nil && !fencing {
		err = argErr("ERR FENCING is required")
	}
	return c, end, err
}

// leaseCall reads "id lease FENCING f" and the options after it.
func leaseCall(args [][]byte, i int, stop string, set func(name string, v []byte) error) (id, token string, fencing uint64, end int, err error) {
	if i+3 >= len(args) || !eq(args[i+2], "fencing") {
		return "", "", 0, i, argErr(errSyntax)
	}
	id, token = string(args[i]), string(args[i+1])
	if fencing, err = uintArg(args[i+3]); err != nil {
		return "", "", 0, i, err
	}
	end, err = opts(args, i+4, stop, set)
	return id, token, fencing, end, err
}

// finishCall reads "id lease FENCING f [opt detail]", the shape of
// COMPLETE (RESULT) and FAIL (ERROR).
func finishCall(args [][]byte, i int, stop, opt string) (id, token string, fencing uint64, detail []byte, end int, err error) {
	id, token, fencing, end, err = leaseCall(args, i, stop, func(name string, v []byte) error {
		if name != opt {
			return argErr(errSyntax)
		}
		detail = append([]byte(nil), v...)
		return nil
	})
	return id, token, fencing, detail, end, err
}

func parseComplete(args [][]byte, i int, stop string) (flow.Command, int, error) {
	c := &flow.Complete{}
	var end int
	var err error
	c.ID, c.LeaseToken, c.Fencing, c.Result, end, err = finishCall(args, i, stop, "RESULT")
	return c, end, err
}

func parseFail(args [][]byte, i int, stop string) (flow.Command, int, error) {
	c := &flow.Fail{}
	var end int
	var err error
	c.ID, c.LeaseToken, c.Fencing, c.Error, end, err = finishCall(args, i, stop, "ERROR")
	return c, end, err
}

func parseRetry(args [][]byte, i int, stop string) (flow.Command, int, error) {
	c := &flow.Retry{}
	var err error
	var end int
	c.ID, c.LeaseToken, c.Fencing, end, err = leaseCall(args, i, stop, func(name string, v []byte) (err error) {
		switch name {
		case "ERROR":
			c.Error = append([]byte(nil), v...)
		case "RUN_AT":
			c.RunAtMs, err = intArg(v)
			c.HasRunAt = true
		case "MAX_RETRIES":
			c.Override.MaxRetries, err = intArg(v)
			c.Override.Set |= flow.SetMaxRetries
		case "EXHAUSTED_TO":
			c.Override.ExhaustedTo = string(v)
			c.Override.Set |= flow.SetExhaustedTo
		default:
			return argErr(errSyntax)
		}
		return err
	})
	return c, end, err
}

func parseCancel(args [][]byte, i int, stop string) (flow.Command, int, error) {
	c := &flow.Cancel{ID: string(args[i])}
	end, err := opts(args, i+1, stop, func(name string, v []byte) (err error) {
		switch name {
		case "LEASE_TOKEN":
			c.LeaseToken = string(v)
		case "FENCING":
			c.Fencing, err = uintArg(v)
		case "REASON":
			c.Reason = append([]byte(nil), v...)
		default:
			return argErr(errSyntax)
		}
		return err
	})
	return c, end, err
}

func parseExtend(args [][]byte, i int, stop string) (flow.Command, int, error) {
	c := &flow.ExtendLease{}
	var err error
	var end int
	c.ID, c.LeaseToken, c.Fencing, end, err = leaseCall(args, i, stop, func(name string, v []byte) (err error) {
		if name != "LEASE_MS" {
			return argErr(errSyntax)
		}
		c.LeaseMs, err = intArg(v)
		return err
	})
	if err == nil && c.LeaseMs == 0 {
		err = argErr("ERR LEASE_MS is required")
	}
	return c, end, err
}

func parseRewind(args [][]byte, i int, stop string) (flow.Command, int, error) {
	c := &flow.Rewind{ID: string(args[i])}
	end, err := opts(args, i+1, stop, func(name string, v []byte) error {
		if name != "TO" {
			return argErr(errSyntax)
		}
		c.To = string(v)
		return nil
	})
	return c, end, err
}

func (h *flowHandler) create(ctx context.Context, c Call, w Reply) {
	cmd, _, err := parseCreate(c.Args, 1, "")
	if err != nil {
		failFlow(w, err)
		return
	}
	r, err := h.fl.Create(ctx, *cmd.(*flow.Create))
	if err != nil {
		failFlow(w, err)
		return
	}
	writeRecord(w, r)
}

// one serves a verb that changes one flow.
func (h *flowHandler) one(parse parser) func(context.Context, Call, Reply) {
	return func(ctx context.Context, c Call, w Reply) {
		cmd, _, err := parse(c.Args, 1, "")
		if err != nil {
			failFlow(w, err)
			return
		}
		res, err := h.fl.Batch(ctx, []flow.Command{cmd}, false)
		if err != nil {
			var be *flow.BatchError
			if errors.As(err, &be) {
				err = be.Err
			}
			failFlow(w, err)
			return
		}
		writeRecord(w, res[0].Record)
	}
}

// many serves a *_MANY verb: [INDEPENDENT true] ITEM ... ITEM ...
func (h *flowHandler) many(parse parser) func(context.Context, Call, Reply) {
	return func(ctx context.Context, c Call, w Reply) {
		args := c.Args
		i, independent, full := 1, false, false
		for i+1 < len(args) && !eq(args[i], "item") {
			var err error
			switch {
			case eq(args[i], "independent"):
				independent, err = boolArg(args[i+1])
			case eq(args[i], "return") && (eq(args[i+1], "full") || eq(args[i+1], "status")):
				full = eq(args[i+1], "full")
			default:
				err = argErr(errSyntax)
			}
			if err != nil {
				failFlow(w, err)
				return
			}
			i += 2
		}
		var cmds []flow.Command
		for i < len(args) {
			if !eq(args[i], "item") || i+1 >= len(args) {
				failFlow(w, argErr(errSyntax))
				return
			}
			cmd, end, err := parse(args, i+1, "ITEM")
			if err != nil {
				failFlow(w, err)
				return
			}
			cmds = append(cmds, cmd)
			i = end
		}
		if len(cmds) == 0 {
			failFlow(w, argErr(errSyntax))
			return
		}
		items, err := h.fl.Batch(ctx, cmds, independent)
		if err != nil {
			failFlow(w, err)
			return
		}
		w.Array(len(items))
		for _, it := range items {
			switch {
			case it.Err != nil:
				failFlow(w, it.Err)
			case full:
				writeRecord(w, it.Record)
			default:
				writeStatus(w, it.Record)
			}
		}
	}
}

// writeStatus writes the short form of a batch item's record: its id,
// state, version and fencing token.
func writeStatus(w Reply, r flow.Record) {
	w.Map(4)
	pair(w, "id", r.ID)
	pair(w, "state", r.State)
	pairInt(w, "version", int64(r.Version))
	pairInt(w, "fencing_token", int64(r.Fencing))
}

// claim serves FLOW.CLAIM_DUE (and with expired, FLOW.RECLAIM):
// type STATE s WORKER w LEASE_MS n LIMIT k [PRIORITY n] [PARTITION p]
// [BLOCK ms] [RECLAIM_EXPIRED true].
func (h *flowHandler) claim(expired bool) func(context.Context, Call, Reply) {
	return func(ctx context.Context, c Call, w Reply) {
		cl := flow.Claim{Type: string(c.Args[1]), OnlyExpired: expired}
		block := time.Duration(-1)
		leaseForm := false
		_, err := opts(c.Args, 2, "", func(name string, v []byte) (err error) {
			var n int64
			switch name {
			case "STATE":
				cl.State = string(v)
			case "WORKER":
				cl.Worker = string(v)
			case "LEASE_MS":
				cl.LeaseMs, err = intArg(v)
			case "LIMIT":
				n, err = intArg(v)
				cl.Limit = int(min(max(n, -1), flow.MaxClaimLimit+1))
			case "PRIORITY":
				cl.Priority, err = intArg(v)
				cl.HasPriority = true
			case "PARTITION":
				cl.Partition, cl.HasPartition = string(v), true
			case "BLOCK":
				if n, err = intArg(v); err == nil {
					if n < 0 {
						return argErr("ERR timeout is negative")
					}
					block = time.Duration(n) * time.Millisecond
				}
			case "RECLAIM_EXPIRED":
				cl.ReclaimExpired, err = boolArg(v)
			case "RETURN":
				switch {
				case eq(v, "lease"):
					leaseForm = true
				case eq(v, "full"):
					leaseForm = false
				default:
					return argErr(errSyntax)
				}
			default:
				return argErr(errSyntax)
			}
			return err
		})
		if err != nil {
			failFlow(w, err)
			return
		}
		var rs []flow.Record
		switch {
		case block < 0 || c.NoBlock:
			rs, err = h.fl.Claim(ctx, cl)
		case block == 0:
			rs, err = h.fl.ClaimWait(ctx, cl)
		default:
			bctx, cancel := context.WithTimeout(ctx, block)
			rs, err = h.fl.ClaimWait(bctx, cl)
			cancel()
		}
		if err != nil {
			failFlow(w, err)
			return
		}
		w.Array(len(rs))
		for _, r := range rs {
			if leaseForm {
				writeLease(w, r)
			} else {
				writeRecord(w, r)
			}
		}
	}
}

// writeLease writes what a worker needs of a claimed flow (RETURN lease):
// its id, payload, lease and fencing tokens, attempts and the state it
// was claimed from.
func writeLease(w Reply, r flow.Record) {
	w.Map(6)
	pair(w, "id", r.ID)
	pairBytes(w, "payload", r.Payload)
	pair(w, "lease_token", r.LeaseToken)
	pairInt(w, "fencing_token", int64(r.Fencing))
	pairInt(w, "attempts", r.Attempts)
	pair(w, "run_state", r.RunState)
}

func (h *flowHandler) get(ctx context.Context, c Call, w Reply) {
	r, err := h.fl.Get(ctx, string(c.Args[1]))
	switch {
	case errors.Is(err, flow.ErrNotFound):
		w.Null()
	case err != nil:
		failFlow(w, err)
	default:
		writeRecord(w, r)
	}
}

func (h *flowHandler) history(ctx context.Context, c Call, w Reply) {
	count, rev := 0, false
	_, err := opts(c.Args, 2, "", func(name string, v []byte) (err error) {
		switch name {
		case "COUNT":
			var n int64
			n, err = intArg(v)
			if err == nil && n <= 0 {
				err = argErr("ERR COUNT must be > 0")
			}
			count = int(min(n, 1<<30))
		case "REV":
			rev, err = boolArg(v)
		default:
			return argErr(errSyntax)
		}
		return err
	})
	if err != nil {
		failFlow(w, err)
		return
	}
	h2, err := h.fl.History(ctx, string(c.Args[1]), count, rev)
	if err != nil {
		failFlow(w, err)
		return
	}
	w.Array(len(h2))
	for _, e := range h2 {
		w.Map(8)
		pair(w, "id", e.ID)
		pair(w, "event", e.Kind)
		pairOpt(w, "from", e.From)
		pairOpt(w, "to", e.To)
		pairOpt(w, "worker", e.Worker)
		pairInt(w, "fencing_token", int64(e.Fencing))
		pairInt(w, "version", int64(e.Version))
		pairOpt(w, "detail", e.Detail)
	}
}

func parsePolicy(args [][]byte, i int) (flow.SetPolicy, error) {
	sp := flow.SetPolicy{Type: string(args[1])}
	p := &sp.Policy
	_, err := opts(args, i, "", func(name string, v []byte) (err error) {
		switch name {
		case "STATE":
			sp.State = string(v)
		case "MAX_RETRIES":
			p.MaxRetries, err = intArg(v)
			p.Set |= flow.SetMaxRetries
		case "BACKOFF":
			var ok bool
			if p.Backoff, ok = flow.ParseBackoff(string(v)); !ok {
				return argErr("ERR BACKOFF must be none, fixed, linear or exponential")
			}
			p.Set |= flow.SetBackoff
		case "BASE_MS":
			p.BaseMs, err = intArg(v)
			p.Set |= flow.SetBaseMs
		case "MAX_MS":
			p.MaxMs, err = intArg(v)
			p.Set |= flow.SetMaxMs
		case "JITTER_PCT":
			p.JitterPct, err = intArg(v)
			p.Set |= flow.SetJitterPct
		case "EXHAUSTED_TO":
			p.ExhaustedTo = string(v)
			p.Set |= flow.SetExhaustedTo
		case "MODE":
			switch {
			case eq(v, "fifo"):
				p.Mode = flow.FIFO
			case eq(v, "parallel"):
				p.Mode = flow.Parallel
			default:
				return argErr("ERR MODE must be FIFO or PARALLEL")
			}
			p.Set |= flow.SetMode
		case "MAX_ACTIVE_MS":
			p.MaxActiveMs, err = maxActive(v)
			p.MaxActiveMs = max(p.MaxActiveMs, 0)
			p.Set |= flow.SetMaxActiveMs
		case "EXPECTED_GENERATION":
			sp.ExpectedGeneration, err = uintArg(v)
			sp.HasExpected = true
		default:
			return argErr(errSyntax)
		}
		return err
	})
	return sp, err
}

func (h *flowHandler) policySet(ctx context.Context, c Call, w Reply) {
	sp, err := parsePolicy(c.Args, 2)
	if err != nil {
		failFlow(w, err)
		return
	}
	p, err := h.fl.SetPolicy(ctx, sp)
	if err != nil {
		failFlow(w, err)
		return
	}
	writePolicy(w, p, p.Generation)
}

func (h *flowHandler) policyGet(ctx context.Context, c Call, w Reply) {
	state := ""
	if len(c.Args) == 4 && eq(c.Args[2], "state") {
		state = string(c.Args[3])
	} else if len(c.Args) != 2 {
		failFlow(w, argErr(errSyntax))
		return
	}
	set, _, err := h.fl.Policy(ctx, string(c.Args[1]), state)
	if err != nil {
		failFlow(w, err)
		return
	}
	writePolicy(w, h.fl.Effective(ctx, string(c.Args[1]), state), set.Generation)
}

func writePolicy(w Reply, p flow.Policy, generation uint64) {
	w.Map(9)
	pairInt(w, "max_retries", p.MaxRetries)
	pair(w, "backoff", p.Backoff.String())
	pairInt(w, "base_ms", p.BaseMs)
	pairInt(w, "max_ms", p.MaxMs)
	pairInt(w, "jitter_pct", p.JitterPct)
	pair(w, "exhausted_to", p.ExhaustedTo)
	pair(w, "mode", strings.ToUpper(p.Mode.String()))
	w.BulkString("max_active_ms")
	if p.MaxActiveMs == 0 {
		w.BulkString("INFINITY")
	} else {
		w.Int(p.MaxActiveMs)
	}
	pairInt(w, "generation", int64(generation))
}

func (h *flowHandler) scheduleSet(ctx context.Context, c Call, w Reply) {
	ss := flow.SetSchedule{Schedule: flow.Schedule{Name: string(c.Args[1])}}
	s := &ss.Schedule
	every := false
	_, err := opts(c.Args, 2, "", func(name string, v []byte) (err error) {
		switch name {
		case "TYPE":
			s.Type = string(v)
		case "EVERY":
			s.EveryMs, err = intArg(v)
			every = true
		case "START_AT":
			ss.StartMs, err = intArg(v)
			ss.HasStart = true
		case "STATE":
			s.State = string(v)
		case "PAYLOAD":
			s.Payload = append([]byte(nil), v...)
		case "PRIORITY":
			s.Priority, err = intArg(v)
		case "PARTITION":
			s.Partition = string(v)
		case "OVERLAP":
			var ok bool
			if s.Overlap, ok = flow.ParseOverlap(string(v)); !ok {
				return argErr("ERR OVERLAP must be allow, skip, queue_after_previous or fail_schedule")
			}
		case "REPLACE":
			ss.Replace, err = boolArg(v)
		default:
			return argErr(errSyntax)
		}
		return err
	})
	if err == nil && !every {
		err = argErr("ERR EVERY is required (0 fires once)")
	}
	if err != nil {
		failFlow(w, err)
		return
	}
	got, err := h.fl.SetSchedule(ctx, ss)
	if err != nil {
		failFlow(w, err)
		return
	}
	writeSchedule(w, got)
}

func (h *flowHandler) scheduleGet(ctx context.Context, c Call, w Reply) {
	s, err := h.fl.Schedule(ctx, string(c.Args[1]))
	switch {
	case errors.Is(err, flow.ErrScheduleNotFound):
		w.Null()
	case err != nil:
		failFlow(w, err)
	default:
		writeSchedule(w, s)
	}
}

func (h *flowHandler) scheduleDel(ctx context.Context, c Call, w Reply) {
	err := h.fl.DeleteSchedule(ctx, string(c.Args[1]))
	switch {
	case errors.Is(err, flow.ErrScheduleNotFound):
		w.Int(0)
	case err != nil:
		failFlow(w, err)
	default:
		w.Int(1)
	}
}

func (h *flowHandler) scheduleList(ctx context.Context, c Call, w Reply) {
	names, err := h.fl.Schedules(ctx)
	if err != nil {
		failFlow(w, err)
		return
	}
	w.Array(len(names))
	for _, n := range names {
		w.BulkString(n)
	}
}

func writeSchedule(w Reply, s flow.Schedule) {
	w.Map(14)
	pair(w, "name", s.Name)
	pair(w, "type", s.Type)
	pair(w, "state", s.State)
	pairOpt(w, "partition_key", s.Partition)
	pairBytes(w, "payload", s.Payload)
	pairInt(w, "priority", s.Priority)
	pairInt(w, "every_ms", s.EveryMs)
	pairInt(w, "next_due_ms", s.NextDueMs)
	pair(w, "overlap", s.Overlap.String())
	pairInt(w, "fired", int64(s.Fired))
	pairInt(w, "coalesced", int64(s.Coalesced))
	pairInt(w, "skipped", int64(s.Skipped))
	pairOpt(w, "last_target", s.LastTarget)
	status := "active"
	switch {
	case s.Failed:
		status = "failed"
	case s.Done:
		status = "done"
	}
	pair(w, "status", status)
}

func (h *flowHandler) stats(ctx context.Context, c Call, w Reply) {
	n, err := h.fl.Counts(ctx)
	if err != nil {
		failFlow(w, err)
		return
	}
	w.Map(8)
	pairInt(w, "waiting", int64(n.Waiting))
	pairInt(w, "due", int64(n.Due))
	pairInt(w, "running", int64(n.Running))
	pairInt(w, "expired_leases", int64(n.Expired))
	pairInt(w, "completed", int64(n.Completed))
	pairInt(w, "failed", int64(n.Failed))
	pairInt(w, "cancelled", int64(n.Cancelled))
	pairInt(w, "schedules", int64(n.Schedules))
}

// recordFields is how many pairs writeRecord writes.
const recordFields = 23

// writeRecord writes a flow's record as a map (RESP2: flat pairs).
func writeRecord(w Reply, r flow.Record) {
	w.Map(recordFields)
	pair(w, "id", r.ID)
	pair(w, "type", r.Type)
	pair(w, "state", r.State)
	pairOpt(w, "partition_key", r.Partition)
	pairBytes(w, "payload", r.Payload)
	pairBytes(w, "result", r.Result)
	pairBytes(w, "error", r.Error)
	pairInt(w, "version", int64(r.Version))
	pairInt(w, "attempts", r.Attempts)
	pairInt(w, "priority", r.Priority)
	pairInt(w, "created_at_ms", r.CreatedMs)
	pairInt(w, "updated_at_ms", r.UpdatedMs)
	pairInt(w, "next_run_at_ms", r.NextRunAtMs)
	pairOpt(w, "lease_owner", r.LeaseOwner)
	pairOpt(w, "lease_token", r.LeaseToken)
	pairInt(w, "lease_deadline_ms", r.LeaseDeadlineMs)
	pairInt(w, "fencing_token", int64(r.Fencing))
	pairOpt(w, "run_state", r.RunState)
	pairOpt(w, "parent_flow_id", r.ParentID)
	pairOpt(w, "root_flow_id", r.RootID)
	pairOpt(w, "correlation_id", r.CorrelationID)
	w.BulkString("attributes")
	w.Map(len(r.Attributes))
	for _, a := range r.Attributes {
		w.BulkString(a.Key)
		w.BulkString(a.Value)
	}
	w.BulkString("max_active_ms")
	if r.MaxActiveMs == 0 {
		w.Null()
	} else {
		w.Int(r.MaxActiveMs)
	}
}

func pair(w Reply, k, v string) {
	w.BulkString(k)
	w.BulkString(v)
}

// pairOpt writes an empty value as null.
func pairOpt(w Reply, k, v string) {
	w.BulkString(k)
	if v == "" {
		w.Null()
		return
	}
	w.BulkString(v)
}

func pairBytes(w Reply, k string, v []byte) {
	w.BulkString(k)
	if v == nil {
		w.Null()
		return
	}
	w.Bulk(v)
}

func pairInt(w Reply, k string, v int64) {
	w.BulkString(k)
	w.Int(v)
}
