package commands

import (
	"context"
	"errors"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// Reply writes one RESP reply in the connection's protocol. A host's
// reply writer has these methods (temporalstore's resp.Reply does);
// aggregates are a header then their elements.
type Reply interface {
	OK()
	Simple(s string)
	// Error writes an error reply; msg starts with its code ("ERR", ...).
	Error(msg string)
	Int(n int64)
	Bulk(b []byte)
	// BulkString writes s as a bulk string.
	BulkString(s string)
	// Null is RESP2's null bulk string; NullArray RESP2's null array
	// (both RESP3's null).
	Null()
	NullArray()
	Array(n int)
	// Map writes n pairs (an array of 2n in RESP2).
	Map(n int)
}

// Command is one verb, described as a RESP server's command table needs
// it.
type Command struct {
	// Name is the verb; Arity Redis's (negative: at least).
	Name  string
	Arity int
	// Write marks a verb that changes data; Connection one that acts on
	// the connection (the pub/sub verbs: a host refuses them inside MULTI
	// and to scripts).
	Write, Connection bool
	// FirstKey, LastKey and KeyStep say where its keys are.
	FirstKey, LastKey, KeyStep int
	Group, Summary             string
	// Run serves one call and writes exactly one reply. ctx is the
	// connection's: a blocked read ends with it.
	Run func(ctx context.Context, c Call, w Reply)
	// RunMany, when set, serves a run of pipelined calls, writing their
	// replies in order, so that their writes share a batch (XADD).
	RunMany func(ctx context.Context, calls []Call, w Reply)
}

// Call is one call of a Command.
type Call struct {
	// Args are the call's arguments, the name first; valid until Run
	// returns.
	Args [][]byte
	// Protocol is the connection's, 2 or 3.
	Protocol int
	// NoBlock makes a BLOCK read answer at once, as inside MULTI or a
	// script.
	NoBlock bool
	// Conn is the connection, which the pub/sub verbs need (nil: they
	// refuse).
	Conn Conn
}

// simple adapts a handler that needs only the arguments.
func simple(f func(ctx context.Context, protocol int, args [][]byte, w Reply)) func(context.Context, Call, Reply) {
	return func(ctx context.Context, c Call, w Reply) { f(withNotifier(ctx, c), c.Protocol, c.Args, w) }
}

// Commands returns the stream verbs served by st.
func Commands(st *ferricstore.Store) []Command {
	h := &handler{x: st.Streams(), now: func() int64 { return st.Now().UnixMilli() }}
	return []Command{
		{Name: "xadd", Arity: -5, Write: true, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Appends a new message to a stream. Creates the key if it doesn't exist.", Run: simple(h.xadd), RunMany: h.xaddMany},
		{Name: "xlen", Arity: 2, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Return the number of messages in a stream.", Run: simple(h.xlen)},
		{Name: "xrange", Arity: -4, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Returns the messages from a stream within a range of IDs.", Run: simple(h.xrange)},
		{Name: "xrevrange", Arity: -4, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Returns the messages from a stream within a range of IDs in reverse order.", Run: simple(h.xrevrange)},
		{Name: "xdel", Arity: -3, Write: true, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Returns the number of messages after removing them from a stream.", Run: simple(h.xdel)},
		{Name: "xtrim", Arity: -4, Write: true, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Deletes messages from the beginning of a stream.", Run: simple(h.xtrim)},
		{Name: "xsetid", Arity: -3, Write: true, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "An internal command for replicating stream values.", Run: simple(h.xsetid)},
		{Name: "xgroup", Arity: -2, Write: true, FirstKey: 2, LastKey: 2, KeyStep: 1, Group: "stream", Summary: "A container for consumer groups commands.", Run: simple(h.xgroup)},
		{Name: "xack", Arity: -4, Write: true, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Returns the number of messages that were successfully acknowledged by the consumer group member of a stream.", Run: simple(h.xack)},
		{Name: "xclaim", Arity: -6, Write: true, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Changes, or acquires, ownership of a message in a consumer group, as if the message was delivered a consumer group member.", Run: simple(h.xclaim)},
		{Name: "xautoclaim", Arity: -6, Write: true, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Changes, or acquires, ownership of messages in a consumer group, as if the messages were delivered to as consumer group member.", Run: simple(h.xautoclaim)},
		{Name: "xpending", Arity: -3, FirstKey: 1, LastKey: 1, KeyStep: 1, Group: "stream", Summary: "Returns the information and entries from a stream consumer group's pending entries list.", Run: simple(h.xpending)},
		{Name: "xread", Arity: -4, Group: "stream", Summary: "Returns messages from multiple streams with IDs greater than the ones requested. Blocks until a message is available otherwise.", Run: h.xread},
		{Name: "xreadgroup", Arity: -7, Write: true, Group: "stream", Summary: "Returns new or historical messages from a stream for a consumer in a group. Blocks until a message is available otherwise.", Run: h.xreadgroup},
		{Name: "xinfo", Arity: -2, Group: "stream", Summary: "A container for stream introspection commands.", Run: simple(h.xinfo)},
	}
}

// handler serves the verbs on one store.
type handler struct {
	x   *ferricstore.Streams
	now func() int64
}

// Redis's common error texts.
const (
	errSyntax   = "ERR syntax error"
	errNotInt   = "ERR value is not an integer or out of range"
	errInvalid  = "ERR Invalid stream ID specified as stream command argument"
	errInternal = "ERR internal error: "
)

// fail writes err as the reply: its text when it is a Redis error of
// ours, an internal error otherwise.
func fail(w Reply, err error) {
	msg := err.Error()
	switch {
	case errors.Is(err, ferricstore.ErrClosed), errors.Is(err, ferricstore.ErrFailed):
		w.Error("ERR " + msg)
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		w.Error("ERR " + msg)
	case isRedisError(msg):
		w.Error(msg)
	default:
		w.Error(errInternal + msg)
	}
}

func isRedisError(msg string) bool {
	code, _, _ := strings.Cut(msg, " ")
	return code != "" && strings.ToUpper(code) == code && !strings.ContainsAny(code, ":.")
}

// parseInt reads a 64-bit integer as Redis's getLongLongFromObject does.
func parseInt(b []byte) (int64, bool) {
	s := string(b)
	v, err := strconv.ParseInt(s, 10, 64)
	if err != nil || s == "" || s[0] == '+' || (len(s) > 1 && s[0] == '0') || strings.HasPrefix(s, "-0") {
		return 0, false
	}
	return v, true
}

func eq(b []byte, s string) bool { return strings.EqualFold(string(b), s) }

// writeEntry writes [id, [f1, v1, ...]], or [id, nil] for an entry whose
// fields are gone.
func writeEntry(w Reply, e stream.Entry) {
	w.Array(2)
	w.Bulk(e.ID.Append(nil))
	if e.Fields == nil {
		w.NullArray()
		return
	}
	w.Array(len(e.Fields))
	for _, f := range e.Fields {
		w.Bulk(f)
	}
}

func writeEntries(w Reply, es []stream.Entry) {
	w.Array(len(es))
	for _, e := range es {
		writeEntry(w, e)
	}
}

func writeIDs(w Reply, ids []stream.ID) {
	w.Array(len(ids))
	for _, id := range ids {
		w.Bulk(id.Append(nil))
	}
}

// parseTrim reads XADD's (xadd) or XTRIM's options from args[i:] as
// Redis's streamParseAddOrTrimArgsOrReply does, and returns the trim and
// where the ID (XADD) or the end (XTRIM) is.
func parseTrim(args [][]byte, i int, xadd bool) (t stream.Trim, noMk bool, next int, errMsg string) {
	limitGiven := false
	for ; i < len(args); i++ {
		more := len(args) - 1 - i
		opt := args[i]
		switch {
		case xadd && string(opt) == "*":
			goto done
		case (eq(opt, "maxlen") || eq(opt, "minid")) && more > 0:
			if t.Strategy != 0 {
				return t, false, 0, "ERR syntax error, MAXLEN and MINID options at the same time are not compatible"
			}
			t.Approx = false
			if more >= 2 && (string(args[i+1]) == "~" || string(args[i+1]) == "=") {
				t.Approx = string(args[i+1]) == "~"
				i++
			}
			if eq(opt, "maxlen") {
				n, ok := parseInt(args[i+1])
				if !ok {
					return t, false, 0, errNotInt
				}
				if n < 0 {
					return t, false, 0, "ERR The MAXLEN argument must be >= 0."
				}
				t.Strategy, t.MaxLen = stream.TrimMaxLen, n
			} else {
				id, err := stream.ParseStrictID(string(args[i+1]))
				if err != nil {
					return t, false, 0, errInvalid
				}
				t.Strategy, t.MinID = stream.TrimMinID, id
			}
			i++
		case eq(opt, "limit") && more > 0:
			n, ok := parseInt(args[i+1])
			if !ok {
				return t, false, 0, errNotInt
			}
			if n < 0 {
				return t, false, 0, "ERR The LIMIT argument must be >= 0."
			}
			t.Limit, limitGiven = n, true
			i++
		case xadd && eq(opt, "nomkstream"):
			noMk = true
		case xadd:
			goto done
		default:
			return t, false, 0, errSyntax
		}
	}
done:
	if t.Limit != 0 && t.Strategy == 0 {
		return t, false, 0, "ERR syntax error, LIMIT cannot be used without specifying a trimming strategy"
	}
	if !xadd && t.Strategy == 0 {
		return t, false, 0, "ERR syntax error, XTRIM must be called with a trimming strategy"
	}
	switch {
	case limitGiven && !t.Approx:
		return t, false, 0, "ERR syntax error, LIMIT cannot be used without the special ~ option"
	case !limitGiven && t.Approx:
		t.Limit = stream.DefaultApproxLimit
	case !limitGiven:
		t.Limit = 0
	}
	return t, noMk, i, ""
}

func (h *handler) xadd(ctx context.Context, _ int, args [][]byte, w Reply) {
	x := h.submitXAdd(ctx, args)
	x.reply(ctx, w)
}

// xaddMany serves pipelined XADDs: all are queued before any is waited
// for, so they share the shard's batch and its fsync; the replies go out
// in order.
func (h *handler) xaddMany(ctx context.Context, calls []Call, w Reply) {
	xs := make([]queuedAdd, len(calls))
	for i, c := range calls {
		xs[i] = h.submitXAdd(withNotifier(ctx, c), c.Args)
	}
	for i, c := range calls {
		xs[i].reply(withNotifier(ctx, c), w)
	}
}

// queuedAdd is an XADD parsed and queued, or the error that refused it.
type queuedAdd struct {
	key     []byte
	msg     string // a parse error's reply
	err     error
	p       ferricstore.PendingAdd
	trimmed *int64
}

// submitXAdd parses an XADD and queues it.
func (h *handler) submitXAdd(ctx context.Context, args [][]byte) queuedAdd {
	x := queuedAdd{key: args[1]}
	t, noMk, i, msg := parseTrim(args, 2, true)
	if msg != "" {
		x.msg = msg
		return x
	}
	idText := "*"
	if i < len(args) {
		idText = string(args[i])
		if idText != "*" {
			if _, _, err := stream.ParseAddID(idText); err != nil {
				x.msg = errInvalid
				return x
			}
		}
		i++
	}
	if n := len(args) - i; n < 2 || n%2 == 1 {
		x.msg = "ERR wrong number of arguments for 'xadd' command"
		return x
	}
	x.trimmed = new(int64)
	x.p, x.err = h.x.AddAsync(ctx, string(args[1]), ferricstore.AddArgs{ID: idText, NoMkStream: noMk, Trim: t, Fields: args[i:], Trimmed: x.trimmed})
	return x
}

// reply waits for the XADD and writes its reply and events.
func (x queuedAdd) reply(ctx context.Context, w Reply) {
	if x.msg != "" {
		w.Error(x.msg)
		return
	}
	if x.err != nil {
		fail(w, x.err)
		return
	}
	id, added, err := x.p.Wait()
	switch {
	case err != nil:
		fail(w, err)
	case !added:
		w.Null()
	default:
		w.Bulk(id.Append(nil))
		notify(ctx, "xadd", x.key)
		if *x.trimmed > 0 {
			notify(ctx, "xtrim", x.key)
		}
	}
}

func (h *handler) xlen(ctx context.Context, _ int, args [][]byte, w Reply) {
	n, err := h.x.Len(ctx, string(args[1]))
	if err != nil {
		fail(w, err)
		return
	}
	w.Int(int64(n))
}

// parseBound reads a range bound: "(id" exclusive (strict), else an ID,
// "-" or "+"; missing is the sequence of a bare ms.
func parseBound(b []byte, missing uint64) (stream.ID, bool, error) {
	if len(b) > 1 && b[0] == '(' {
		id, err := stream.ParseStrictBound(string(b[1:]), missing)
		return id, true, err
	}
	id, err := stream.ParseID(string(b), missing)
	return id, false, err
}

func (h *handler) xrange(ctx context.Context, _ int, args [][]byte, w Reply) {
	h.rangeCmd(ctx, args, args[2], args[3], false, w)
}

func (h *handler) xrevrange(ctx context.Context, _ int, args [][]byte, w Reply) {
	h.rangeCmd(ctx, args, args[3], args[2], true, w)
}

func (h *handler) rangeCmd(ctx context.Context, args [][]byte, startArg, endArg []byte, rev bool, w Reply) {
	start, end, msg := parseInterval(startArg, endArg)
	if msg != "" {
		w.Error(msg)
		return
	}
	count := int64(-1)
	for j := 4; j < len(args); j++ {
		if eq(args[j], "count") && j+1 < len(args) {
			n, ok := parseInt(args[j+1])
			if !ok {
				w.Error(errNotInt)
				return
			}
			count = max(n, 0)
			j++
			continue
		}
		w.Error(errSyntax)
		return
	}
	var es []stream.Entry
	exists := false
	err := h.x.View(ctx, string(args[1]), func(s *stream.Stream) error {
		if s != nil {
			exists = true
			if count != 0 {
				es = s.Range(start, end, int(max(count, 0)), rev)
			}
		}
		return nil
	})
	switch {
	case err != nil:
		fail(w, err)
	case !exists:
		w.Array(0)
	case count == 0:
		w.NullArray()
	default:
		writeEntries(w, es)
	}
}

// strictIDs parses args as explicit IDs.
func strictIDs(args [][]byte) ([]stream.ID, bool) {
	ids := make([]stream.ID, len(args))
	for i, a := range args {
		id, err := stream.ParseStrictID(string(a))
		if err != nil {
			return nil, false
		}
		ids[i] = id
	}
	return ids, true
}

func (h *handler) xdel(ctx context.Context, _ int, args [][]byte, w Reply) {
	ids, ok := strictIDs(args[2:])
	if !ok {
		w.Error(errInvalid)
		return
	}
	n, err := h.x.Delete(ctx, string(args[1]), ids)
	if err != nil {
		fail(w, err)
		return
	}
	w.Int(int64(n))
	if n > 0 {
		notify(ctx, "xdel", args[1])
	}
}

func (h *handler) xtrim(ctx context.Context, _ int, args [][]byte, w Reply) {
	t, _, _, msg := parseTrim(args, 2, false)
	if msg != "" {
		w.Error(msg)
		return
	}
	n, err := h.x.Trim(ctx, string(args[1]), t)
	if err != nil {
		fail(w, err)
		return
	}
	w.Int(n)
	if n > 0 {
		notify(ctx, "xtrim", args[1])
	}
}

func (h *handler) xsetid(ctx context.Context, _ int, args [][]byte, w Reply) {
	id, err := stream.ParseStrictID(string(args[2]))
	if err != nil {
		w.Error(errInvalid)
		return
	}
	added := int64(-1)
	var maxDel stream.ID
	for i := 3; i < len(args); i++ {
		more := len(args) - 1 - i
		switch {
		case eq(args[i], "entriesadded") && more > 0:
			n, ok := parseInt(args[i+1])
			if !ok {
				w.Error(errNotInt)
				return
			}
			if n < 0 {
				w.Error("ERR entries_added must be positive")
				return
			}
			added = n
			i++
		case eq(args[i], "maxdeletedid") && more > 0:
			md, err := stream.ParseStrictID(string(args[i+1]))
			if err != nil {
				w.Error(errInvalid)
				return
			}
			if id.Less(md) {
				w.Error("ERR The ID specified in XSETID is smaller than the provided max_deleted_entry_id")
				return
			}
			maxDel = md
			i++
		default:
			w.Error(errSyntax)
			return
		}
	}
	if err := h.x.SetID(ctx, string(args[1]), id, added, maxDel); err != nil {
		fail(w, err)
		return
	}
	w.OK()
	notify(ctx, "xsetid", args[1])
}

func (h *handler) xack(ctx context.Context, _ int, args [][]byte, w Reply) {
	ids, ok := strictIDs(args[3:])
	if !ok {
		w.Error(errInvalid)
		return
	}
	n, err := h.x.Ack(ctx, string(args[1]), string(args[2]), ids)
	if err != nil {
		fail(w, err)
		return
	}
	w.Int(int64(n))
}
