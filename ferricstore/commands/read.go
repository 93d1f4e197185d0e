package commands

import (
	"context"
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// readArgs are XREAD's and XREADGROUP's parsed arguments.
type readArgs struct {
	count           int
	block           time.Duration // < 0: no BLOCK
	noAck           bool
	group, consumer string
	keys            []string
	ids             [][]byte
}

// parseRead reads XREAD's (group false) or XREADGROUP's options as Redis
// does; msg is the error to reply.
func parseRead(args [][]byte, group bool) (a readArgs, msg string) {
	a.block = -1
	streamsAt := 0
	for i := 1; i < len(args); i++ {
		more := len(args) - i - 1
		o := args[i]
		switch {
		case eq(o, "block") && more > 0:
			i++
			ms, ok := parseInt(args[i])
			if !ok {
				return a, "ERR timeout is not an integer or out of range"
			}
			if ms < 0 {
				return a, "ERR timeout is negative"
			}
			a.block = time.Duration(min(ms, math.MaxInt64/int64(time.Millisecond))) * time.Millisecond
		case eq(o, "count") && more > 0:
			i++
			n, ok := parseInt(args[i])
			if !ok {
				return a, errNotInt
			}
			a.count = int(min(max(n, 0), math.MaxInt32))
		case eq(o, "streams") && more > 0:
			streamsAt = i + 1
			if (len(args)-streamsAt)%2 != 0 {
				return a, "ERR Unbalanced XREAD list of streams: for each stream key an ID or '$' must be specified."
			}
			i = len(args)
		case eq(o, "group") && more >= 2:
			if !group {
				return a, "ERR The GROUP option is only supported by XREADGROUP. You called XREAD instead."
			}
			a.group, a.consumer = string(args[i+1]), string(args[i+2])
			i += 2
		case eq(o, "noack"):
			if !group {
				return a, "ERR The NOACK option is only supported by XREADGROUP. You called XREAD instead."
			}
			a.noAck = true
		default:
			return a, errSyntax
		}
	}
	if streamsAt == 0 {
		return a, errSyntax
	}
	if group && a.group == "" && a.consumer == "" {
		return a, "ERR Missing GROUP option for XREADGROUP"
	}
	n := (len(args) - streamsAt) / 2
	for _, k := range args[streamsAt : streamsAt+n] {
		a.keys = append(a.keys, string(k))
	}
	a.ids = args[streamsAt+n:]
	return a, ""
}

// streamReply is one stream's part of a read's reply.
type streamReply struct {
	key     string
	entries []stream.Entry
}

// writeRead writes a read's reply: null when nothing, else per stream
// [key, entries] (RESP2) or a map key → entries (RESP3).
func writeRead(w Reply, protocol int, out []streamReply) {
	if len(out) == 0 {
		w.NullArray()
		return
	}
	if protocol == 3 {
		w.Map(len(out))
	} else {
		w.Array(len(out))
	}
	for _, r := range out {
		if protocol != 3 {
			w.Array(2)
		}
		w.Bulk([]byte(r.key))
		writeEntries(w, r.entries)
	}
}

// wait waits for a change of one of the shards whose channels chans are
// (taken before the read that found nothing, so that no change is missed),
// until deadline (zero: none) or ctx ends; false when it is time to give
// up.
func wait(ctx context.Context, chans []<-chan struct{}, deadline time.Time) bool {
	cases := make([]reflect.SelectCase, 0, len(chans)+2)
	for _, ch := range chans {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch)})
	}
	cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())})
	if !deadline.IsZero() {
		d := time.Until(deadline)
		if d <= 0 {
			return false
		}
		t := time.NewTimer(d)
		defer t.Stop()
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(t.C)})
	}
	i, _, _ := reflect.Select(cases)
	return i < len(chans)
}

// Blocker is what a Conn implements to wait as its host's blocking verbs
// do (resp.Request.Block): with a context that ends when the client
// disconnects, and its pushes written meanwhile.
type Blocker interface {
	Block(wait func(ctx context.Context))
}

// block is wait through the call's Conn when it is a Blocker.
func block(ctx context.Context, c Call, chans []<-chan struct{}, deadline time.Time) bool {
	b, ok := c.Conn.(Blocker)
	if !ok {
		return wait(ctx, chans, deadline)
	}
	woke := false
	b.Block(func(ctx context.Context) { woke = wait(ctx, chans, deadline) })
	return woke
}

// changes are the change channels of keys' shards.
func (h *handler) changes(keys []string) []<-chan struct{} {
	out := make([]<-chan struct{}, len(keys))
	for i, k := range keys {
		out[i] = h.x.Changes(k)
	}
	return out
}

func deadlineOf(block time.Duration) time.Time {
	if block <= 0 {
		return time.Time{}
	}
	return time.Now().Add(block)
}

func (h *handler) xread(ctx context.Context, c Call, w Reply) {
	protocol, args := c.Protocol, c.Args
	a, msg := parseRead(args, false)
	if msg != "" {
		w.Error(msg)
		return
	}
	// Resolve each ID now: "$" is the stream's last ID at call time.
	after := make([]stream.ID, len(a.keys))
	for i, k := range a.keys {
		text := string(a.ids[i])
		switch text {
		case ">":
			w.Error("ERR The > ID can be specified only when calling XREADGROUP using the GROUP <group> <consumer> option.")
			return
		case "$":
			if err := h.x.View(ctx, k, func(s *stream.Stream) error {
				if s != nil {
					after[i] = s.LastID
				}
				return nil
			}); err != nil {
				fail(w, err)
				return
			}
		default:
			id, err := stream.ParseStrictID(text)
			if err != nil {
				w.Error(errInvalid)
				return
			}
			after[i] = id
		}
	}
	if c.NoBlock {
		a.block = -1
	}
	deadline := deadlineOf(a.block)
	for {
		ch := h.changes(a.keys)
		var out []streamReply
		for i, k := range a.keys {
			if err := h.x.View(ctx, k, func(s *stream.Stream) error {
				if s != nil {
					if es := s.After(after[i], a.count); len(es) > 0 {
						out = append(out, streamReply{k, es})
					}
				}
				return nil
			}); err != nil {
				fail(w, err)
				return
			}
		}
		if len(out) > 0 || a.block < 0 || !block(ctx, c, ch, deadline) {
			writeRead(w, protocol, out)
			return
		}
	}
}

func (h *handler) xreadgroup(ctx context.Context, c Call, w Reply) {
	ctx = withNotifier(ctx, c)
	protocol, args := c.Protocol, c.Args
	a, msg := parseRead(args, true)
	if msg != "" {
		w.Error(msg)
		return
	}
	for i, k := range a.keys {
		ok, err := h.hasGroup(ctx, k, a.group)
		if err != nil {
			fail(w, err)
			return
		}
		if !ok {
			w.Error(fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option", k, a.group))
			return
		}
		switch text := string(a.ids[i]); text {
		case "$":
			w.Error("ERR The $ ID is meaningless in the context of XREADGROUP: you want to read the history of this consumer by specifying a proper ID, or use the > ID to get new messages. The $ ID would just return an empty result set.")
			return
		case ">":
		default:
			if _, err := stream.ParseStrictID(text); err != nil {
				w.Error(errInvalid)
				return
			}
		}
	}
	if c.NoBlock {
		a.block = -1
	}
	deadline := deadlineOf(a.block)
	blocked := false
	for {
		var out []streamReply
		for i, k := range a.keys {
			known := blocked || consumerKnown(ctx, h.x, k, a.group, a.consumer)
			es, err := h.x.ReadGroup(ctx, k, a.group, a.consumer, string(a.ids[i]), a.count, a.noAck)
			if err != nil {
				h.readGroupFail(w, err, k, a.group, blocked)
				return
			}
			notifyNewConsumer(ctx, h.x, k, a.group, a.consumer, known)
			// A history read answers even when empty; a new read only
			// when it found entries.
			if len(es) > 0 || string(a.ids[i]) != ">" {
				if es == nil {
					es = []stream.Entry{}
				}
				out = append(out, streamReply{k, es})
			}
		}
		if len(out) > 0 || a.block < 0 {
			writeRead(w, protocol, out)
			return
		}
		// Blocked: the shard's writer hands new entries to the blocked
		// readers of the group in the order they blocked.
		wt, err := h.x.WaitGroup(ctx, a.keys, a.group, a.consumer, a.count, a.noAck)
		if err != nil {
			fail(w, err)
			return
		}
		if wt == nil {
			continue // entries came meanwhile
		}
		blocked = true
		if h.awaitGroup(ctx, c, w, wt, a, deadline) {
			return
		}
	}
}

// awaitGroup waits for wt until deadline and writes the reply: its
// entries, null at the deadline, or an error when a stream or the group
// goes away. false when it gave up without a reply (the waiter was
// cancelled and a read should be tried again).
func (h *handler) awaitGroup(ctx context.Context, c Call, w Reply, wt *ferricstore.GroupWaiter, a readArgs, deadline time.Time) bool {
	served := func() bool {
		key, es, err := wt.Result()
		if err != nil {
			fail(w, err)
		} else {
			writeRead(w, c.Protocol, []streamReply{{key, es}})
		}
		return true
	}
	for {
		chans := append(h.changes(a.keys), wt.Done())
		if !block(ctx, c, chans, deadline) {
			if wt.Cancel() {
				writeRead(w, c.Protocol, nil)
				return true
			}
			<-wt.Done()
			return served()
		}
		select {
		case <-wt.Done():
			return served()
		default:
		}
		// A change to a shard: the stream or the group may be gone.
		for _, k := range a.keys {
			ok, err := h.hasGroup(ctx, k, a.group)
			if err == nil && ok {
				continue
			}
			if !wt.Cancel() {
				<-wt.Done()
				return served()
			}
			if err == nil {
				_, err = h.x.ReadGroup(ctx, k, a.group, a.consumer, ">", a.count, a.noAck)
			}
			h.readGroupFail(w, err, k, a.group, true)
			return true
		}
	}
}

// readGroupFail writes an XREADGROUP's error: after it blocked, Redis's
// words for a stream or group that went away.
func (h *handler) readGroupFail(w Reply, err error, key, group string, blocked bool) {
	switch {
	case blocked && errors.Is(err, ferricstore.ErrGroupNeedsKey):
		w.Error("UNBLOCKED the stream key no longer exists")
	case blocked && errors.Is(err, stream.ErrNoGroup):
		w.Error("NOGROUP the consumer group this client was blocked on no longer exists")
	case errors.Is(err, ferricstore.ErrGroupNeedsKey), errors.Is(err, stream.ErrNoGroup):
		w.Error(fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s' in XREADGROUP with GROUP option", key, group))
	default:
		fail(w, err)
	}
}
