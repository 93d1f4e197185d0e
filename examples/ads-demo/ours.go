package main

import (
	"bytes"
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// quotaWindowMs is the window of a cap counter's QUOTATAKE: longer than
// any run, since each counter is one cap window of the simulated day
// already (QUOTATAKE windows run on the server's clock).
const quotaWindowMs = 1_000_000_000_000

// ours runs the decisions on TemporalStore's own verbs, over RESP:
//
//   - a cap slot is QUOTATAKE on the user's counter of the campaign's cap
//     window: taken only while under the cap, atomically;
//   - a budget charge is HSETANDGETOPT on the campaign's control state: it
//     adds the charge to the ledger bucket of the request's simulated time
//     (bucketMs precision) and returns the day's spend with it, in one
//     call; a charge that went over the limit is taken back at once;
//   - impressions and clicks are points of the user's feature series at
//     the impression's simulated time, written with FAPPENDPOLICY ... FIRST,
//     so a retried event writes nothing; the history is one FQUERY window
//     and one FAGG count.
//
// Both takes of an offer go in one pipeline; the take-backs of a refused
// offer ride with the next offer's takes. A refused charge is visible to
// other decisions until taken back, so it can only make them refuse, never
// overspend.
type ours struct {
	rc *redis.Client
}

func newOurs(addr string, conns int) *ours {
	return &ours{rc: newClient(addr, conns)}
}

func (b *ours) Close() error { return b.rc.Close() }

func (b *ours) Reset(ctx context.Context) error { return b.rc.FlushAll(ctx).Err() }

func (b *ours) Spend(ctx context.Context, into []int64) error {
	cmds := make([]*redis.IntCmd, len(into))
	_, err := b.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for c := range into {
			cmds[c] = intCmd(ctx, p, "HQUERY", budgetKey(c), dayStart, farEnd, "sum")
		}
		return nil
	})
	if err != nil {
		return err
	}
	for c, cmd := range cmds {
		into[c] = cmd.Val()
	}
	return nil
}

// intCmd queues a command of an integer reply on p. Typed commands read
// their reply without the generic reply's boxing.
func intCmd(ctx context.Context, p redis.Pipeliner, args ...any) *redis.IntCmd {
	cmd := redis.NewIntCmd(ctx, args...)
	_ = p.Process(ctx, cmd) // a pipeline only queues: errors come with Exec
	return cmd
}

// rawCmd queues a command on p whose reply is read as raw RESP, for
// parsePoints.
func rawCmd(ctx context.Context, p redis.Pipeliner, args ...any) *redis.RawCmd {
	cmd := redis.NewRawCmd(ctx, args...)
	_ = p.Process(ctx, cmd)
	return cmd
}

func (b *ours) History(ctx context.Context, user int, at int64, into *History) error {
	var clicks *redis.IntCmd
	into.raw.Reset()
	_, err := b.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
		// The points' reply is copied raw into the history's buffer,
		// reused from one decision to the next.
		_ = p.Process(ctx, redis.NewRawWriteToCmd(ctx, &into.raw, "FQUERY", impsKey(user), at-lookbackMs+1, at))
		clicks = intCmd(ctx, p, "FAGG", clicksKey(user), at-dayMs+1, at, "count")
		return nil
	})
	if err != nil {
		return err
	}
	into.Imps = into.Imps[:0]
	err = parsePoints(into.raw.Bytes(), func(at int64, v []byte) error {
		imp, err := parseImp(v)
		imp.At = at
		into.Imps = append(into.Imps, imp)
		return err
	})
	into.Clicks = int(clicks.Val())
	return err
}

// parsePoints calls fn with each point of a raw RESP2 reply of points,
// [[time, value], ...], as FQUERY and CONTROLSTATEDETAIL reply. value
// is only valid during the call.
func parsePoints(raw []byte, fn func(at int64, value []byte) error) error {
	bad := func() error { return fmt.Errorf("%w: %.80q", ErrReply, raw) }
	// line returns the line at the start of raw, without its CRLF, and
	// moves raw past it.
	line := func() ([]byte, bool) {
		i := bytes.IndexByte(raw, '\r')
		if i < 1 || i+1 >= len(raw) || raw[i+1] != '\n' {
			return nil, false
		}
		l := raw[:i]
		raw = raw[i+2:]
		return l, true
	}
	num := func(prefix byte) (int64, bool) {
		l, ok := line()
		if !ok || l[0] != prefix {
			return 0, false
		}
		return atoi(l[1:])
	}
	if len(raw) > 0 && raw[0] == '-' {
		l, _ := line()
		return fmt.Errorf("%w: %s", ErrServer, l[1:])
	}
	n, ok := num('*')
	if !ok {
		return bad()
	}
	for range n {
		if pair, ok := num('*'); !ok || pair != 2 {
			return bad()
		}
		at, ok := num(':')
		if !ok {
			return bad()
		}
		size, ok := num('$')
		if !ok || int64(len(raw)) < size+2 {
			return bad()
		}
		v := raw[:size]
		raw = raw[size+2:]
		if err := fn(at, v); err != nil {
			return err
		}
	}
	return nil
}

// atoi reads the decimal b, not negative, without allocating.
func atoi(b []byte) (int64, bool) {
	if len(b) == 0 || len(b) > 18 {
		return 0, false
	}
	var n int64
	for _, c := range b {
		if c < '0' || c > '9' {
			return 0, false
		}
		n = n*10 + int64(c-'0')
	}
	return n, true
}

// impValue is how an impression's campaign and charge are stored.
func impValue(imp Imp) string {
	return strconv.Itoa(imp.Campaign) + ":" + strconv.FormatInt(imp.Charge, 10)
}

// parseImp reads impValue's "campaign:charge" (and any ":rest" after it)
// without allocating.
func parseImp[T string | []byte](v T) (Imp, error) {
	var n [2]int64
	f, i := 0, 0
	for ; i < len(v) && f < 2; i++ {
		switch c := v[i]; {
		case c == ':':
			f++
		case c >= '0' && c <= '9' && n[f] < 1e17:
			n[f] = n[f]*10 + int64(c-'0')
		default:
			return Imp{}, fmt.Errorf("%w: impression %q", ErrReply, v)
		}
	}
	if f == 0 || i < 2 || v[0] == ':' {
		return Imp{}, fmt.Errorf("%w: impression %q", ErrReply, v)
	}
	return Imp{Campaign: int(n[0]), Charge: n[1]}, nil
}

func (b *ours) Take(ctx context.Context, user int, at int64, offers []Offer) (int, int, error) {
	var undo [][]any
	for i := range offers {
		o := &offers[i]
		ck, bk := capKey(user, o), budgetKey(o.Campaign)
		var capCmd *redis.IntSliceCmd
		var spendCmd *redis.IntCmd
		_, err := b.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, args := range undo {
				p.Do(ctx, args...)
			}
			capCmd = redis.NewIntSliceCmd(ctx, "QUOTATAKE", ck, o.CapN, quotaWindowMs, 1)
			_ = p.Process(ctx, capCmd)
			spendCmd = intCmd(ctx, p, "HSETANDGETOPT", bk, at, o.Charge, dayStart, farEnd, "sum", bucketMs, 0, "")
			return nil
		})
		if err != nil {
			return -1, i + 1, err
		}
		undo = undo[:0]
		quota := capCmd.Val()
		if len(quota) != 3 {
			return -1, i + 1, fmt.Errorf("%w: QUOTATAKE %v", ErrReply, quota)
		}
		if quota[0] == 1 && spendCmd.Val() <= o.Limit {
			return i, i + 1, nil
		}
		if quota[0] == 1 {
			undo = append(undo, []any{"CONTROLSTATEINCR", ck, time.Now().UnixMilli(), -1})
		}
		undo = append(undo, []any{"HSETANDGETOPT", bk, at, -o.Charge, 0, 0, "sum", bucketMs, 0, ""})
	}
	if len(undo) > 0 {
		_, err := b.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
			for _, args := range undo {
				p.Do(ctx, args...)
			}
			return nil
		})
		if err != nil {
			return -1, len(offers), err
		}
	}
	return -1, len(offers), nil
}

func (b *ours) Record(ctx context.Context, ev Event) (bool, error) {
	key, value := impsKey(ev.User), impValue(ev.Imp)
	if ev.Click {
		key = clicksKey(ev.User)
	}
	cmd := redis.NewIntCmd(ctx, "FAPPENDPOLICY", key, ev.Imp.At, value, "FIRST")
	_ = b.rc.Process(ctx, cmd)
	n, err := cmd.Result()
	return n == 1, err
}

func (b *ours) State(ctx context.Context, users, campaigns int) (*State, error) {
	st := newState(users, campaigns)
	err := inBatches(users, func(lo, hi int) error {
		imps := make([]*redis.RawCmd, hi-lo)
		clicks := make([]*redis.IntCmd, hi-lo)
		_, err := b.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
			for u := lo; u < hi; u++ {
				imps[u-lo] = rawCmd(ctx, p, "FQUERY", impsKey(u), 0, farEnd, maxSeries)
				clicks[u-lo] = intCmd(ctx, p, "FAGG", clicksKey(u), 0, farEnd, "count")
			}
			return nil
		})
		if err != nil {
			return err
		}
		for u := lo; u < hi; u++ {
			err := parsePoints(imps[u-lo].Val(), func(at int64, v []byte) error {
				imp, err := parseImp(v)
				imp.At = at
				st.Imps[u] = append(st.Imps[u], imp)
				return err
			})
			if err != nil {
				return err
			}
			if len(st.Imps[u]) >= maxSeries {
				return fmt.Errorf("%w: user %d has %d impressions, the most a series read returns", ErrReply, u, len(st.Imps[u]))
			}
			st.Clicks[u] = int(clicks[u-lo].Val())
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	ledgers := make([]*redis.RawCmd, campaigns)
	_, err = b.rc.Pipelined(ctx, func(p redis.Pipeliner) error {
		for c := range campaigns {
			// The family's state is kept under the original's family key.
			ledgers[c] = rawCmd(ctx, p, "CONTROLSTATEDETAIL", "control_state:h:"+budgetKey(c), 0, farEnd)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for c, cmd := range ledgers {
		err := parsePoints(cmd.Val(), func(start int64, v []byte) error {
			n, err := strconv.ParseInt(string(v), 10, 64)
			st.Ledger[c] = append(st.Ledger[c], Bucket{Start: start, Spend: n})
			return err
		})
		if err != nil {
			return nil, err
		}
	}
	if err := b.Spend(ctx, st.Spend); err != nil {
		return nil, err
	}
	return st, nil
}

// maxSeries is the most points a feature series read returns (and a
// series keeps): a user's day of impressions must stay below it.
const maxSeries = 10_000

// stateBatch is how many users one pipeline of a State read covers.
const stateBatch = 1000

// inBatches calls fn on [lo, hi) ranges of stateBatch covering 0..n.
func inBatches(n int, fn func(lo, hi int) error) error {
	for lo := 0; lo < n; lo += stateBatch {
		if err := fn(lo, min(lo+stateBatch, n)); err != nil {
			return err
		}
	}
	return nil
}
