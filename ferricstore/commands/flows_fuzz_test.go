package commands

import (
	"bytes"
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore"
)

// countReply counts the top-level replies written, to check that every
// call writes exactly one.
type countReply struct {
	depth []int // elements left in the open aggregates
	top   int
	errs  []string
}

func (r *countReply) elem() {
	for len(r.depth) > 0 {
		r.depth[len(r.depth)-1]--
		if r.depth[len(r.depth)-1] > 0 {
			return
		}
		r.depth = r.depth[:len(r.depth)-1]
	}
	if len(r.depth) == 0 {
		r.top++
	}
}

func (r *countReply) agg(n int) {
	if n == 0 {
		r.elem()
		return
	}
	r.depth = append(r.depth, n)
}

func (r *countReply) OK()               { r.elem() }
func (r *countReply) Simple(string)     { r.elem() }
func (r *countReply) Error(msg string)  { r.errs = append(r.errs, msg); r.elem() }
func (r *countReply) Int(int64)         { r.elem() }
func (r *countReply) Bulk([]byte)       { r.elem() }
func (r *countReply) BulkString(string) { r.elem() }
func (r *countReply) Null()             { r.elem() }
func (r *countReply) NullArray()        { r.elem() }
func (r *countReply) Array(n int)       { r.agg(n) }
func (r *countReply) Map(n int)         { r.agg(2 * n) }

// FuzzFlowVerbs: any arguments to any FLOW verb get exactly one reply,
// never a panic, and never an internal error.
func FuzzFlowVerbs(f *testing.F) {
	st, err := ferricstore.Open(ferricstore.Options{Dir: f.TempDir(), Shards: 2})
	require.NoError(f, err)
	f.Cleanup(func() { st.Close() })
	verbs := map[string]Command{}
	for _, c := range FlowCommands(st) {
		verbs[c.Name] = c
	}
	for _, seed := range []string{
		"flow.create a TYPE t PAYLOAD p ATTRIBUTE k v PRIORITY 3",
		"flow.create_many INDEPENDENT true ITEM a TYPE t ITEM b TYPE t ATTRIBUTE x y",
		"flow.claim_due t STATE queued WORKER w LEASE_MS 100 LIMIT 5 RECLAIM_EXPIRED true RETURN lease",
		"flow.complete_many ITEM a w:1:1 FENCING 1 RESULT r ITEM b w:1:1 FENCING 1",
		"flow.transition a queued review FENCING 0 RUN_AT 5",
		"flow.retry a tok FENCING 1 MAX_RETRIES 2 EXHAUSTED_TO dead",
		"flow.policy.set t STATE queued MAX_RETRIES 2 BACKOFF linear MODE fifo MAX_ACTIVE_MS infinity",
		"flow.schedule.set s TYPE t EVERY 0 START_AT 1 OVERLAP skip",
		"flow.history a COUNT 2 REV true",
		"flow.extend_lease a tok FENCING 1 LEASE_MS 10",
	} {
		f.Add([]byte(seed))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		fields := bytes.Fields(line)
		if len(fields) == 0 {
			return
		}
		c, ok := verbs[string(bytes.ToLower(fields[0]))]
		if !ok {
			return
		}
		if (c.Arity > 0 && len(fields) != c.Arity) || (c.Arity < 0 && len(fields) < -c.Arity) {
			return // the server answers these before the verb runs
		}
		w := &countReply{}
		c.Run(context.Background(), Call{Args: fields, Protocol: 3, NoBlock: true}, w)
		require.Equal(t, 1, w.top, "one reply for %q", line)
		for _, e := range w.errs {
			require.NotContains(t, e, "internal error", "%q", line)
		}
	})
}
