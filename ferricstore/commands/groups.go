package commands

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/temporalstore/temporalstore-go/ferricstore"
	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// noGroup is the NOGROUP text of XPENDING, XCLAIM and XAUTOCLAIM.
func noGroup(key, group []byte) string {
	return fmt.Sprintf("NOGROUP No such key '%s' or consumer group '%s'", key, group)
}

// noGroupFor is the NOGROUP text of XGROUP's and XINFO's subcommands.
func noGroupFor(key, group []byte) string {
	return fmt.Sprintf("NOGROUP No such consumer group '%s' for key name '%s'", group, key)
}

// xgroupCmd is XGROUP's subcommands, as the command table has them.
var xgroupCmd = container{name: "XGROUP", arity: map[string]int{"create": -5, "setid": -5, "destroy": 4, "createconsumer": 5, "delconsumer": 5, "help": 2},
	help: []string{
		"XGROUP <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CREATE <key> <groupname> <id|$> [option]",
		"    Create a new consumer group. Options are:",
		"    * MKSTREAM",
		"      Create the empty stream if it does not exist.",
		"    * ENTRIESREAD entries_read",
		"      Set the group's entries_read counter (internal use).",
		"CREATECONSUMER <key> <groupname> <consumer>",
		"    Create a new consumer in the specified group.",
		"DELCONSUMER <key> <groupname> <consumer>",
		"    Remove the specified consumer.",
		"DESTROY <key> <groupname>",
		"    Remove the specified group.",
		"SETID <key> <groupname> <id|$> [ENTRIESREAD entries_read]",
		"    Set the current group ID and entries_read counter.",
		"HELP",
		"    Print this help.",
	}}

// container is a command with subcommands (XGROUP, XINFO, PUBSUB): each
// one's arity, and HELP's lines.
type container struct {
	name  string
	arity map[string]int
	help  []string
}

// subcommand checks args' subcommand and its arity and answers HELP, as
// Redis's command table does, and returns the subcommand in lower case;
// false when it has replied.
func (ct *container) subcommand(args [][]byte, w Reply) (string, bool) {
	sub := strings.ToLower(string(args[1]))
	arity, known := ct.arity[sub]
	switch {
	case !known:
		w.Error(fmt.Sprintf("ERR unknown subcommand '%s'. Try %s HELP.", args[1], ct.name))
	case !arityOK(arity, len(args)):
		w.Error(fmt.Sprintf("ERR wrong number of arguments for '%s|%s' command", strings.ToLower(ct.name), sub))
	case sub == "help":
		w.Array(len(ct.help))
		for _, l := range ct.help {
			w.Simple(l)
		}
	default:
		return sub, true
	}
	return "", false
}

func arityOK(arity, n int) bool {
	if arity < 0 {
		return n >= -arity
	}
	return n == arity
}

// parseEntriesRead reads ENTRIESREAD's value.
func parseEntriesRead(b []byte) (int64, string) {
	n, ok := parseInt(b)
	if !ok {
		return 0, errNotInt
	}
	if n < 0 && n != stream.UnknownEntriesRead {
		return 0, "ERR value for ENTRIESREAD must be positive or -1"
	}
	return n, ""
}

func (h *handler) xgroup(ctx context.Context, _ int, args [][]byte, w Reply) {
	sub, ok := xgroupCmd.subcommand(args, w)
	if !ok {
		return
	}
	key, group := string(args[2]), string(args[3])
	entriesRead := int64(stream.UnknownEntriesRead)
	mkStream := false
	if sub == "create" {
		if len(args) > 8 {
			w.Error(badSubcommand(args[1]))
			return
		}
		for i := 5; i < len(args); i++ {
			switch {
			case eq(args[i], "mkstream"):
				mkStream = true
			case eq(args[i], "entriesread") && i+1 < len(args):
				n, msg := parseEntriesRead(args[i+1])
				if msg != "" {
					w.Error(msg)
					return
				}
				entriesRead = n
				i++
			default:
				w.Error(badSubcommand(args[1]))
				return
			}
		}
	}
	// The stream must exist (but for CREATE … MKSTREAM), and for three
	// subcommands the group too.
	var exists, hasGroup bool
	if err := h.x.View(ctx, key, func(s *stream.Stream) error {
		exists = s != nil
		hasGroup = exists && s.Group(group) != nil
		return nil
	}); err != nil {
		fail(w, err)
		return
	}
	if !exists && !(sub == "create" && mkStream) {
		w.Error(ferricstore.ErrGroupNeedsKey.Error())
		return
	}
	if !hasGroup && (sub == "setid" || sub == "createconsumer" || sub == "delconsumer") {
		w.Error(noGroupFor(args[2], args[3]))
		return
	}
	switch sub {
	case "create":
		if string(args[4]) != "$" {
			if _, err := stream.ParseStrictID(string(args[4])); err != nil {
				w.Error(errInvalid)
				return
			}
		}
		if err := h.x.CreateGroup(ctx, key, group, string(args[4]), mkStream, entriesRead); err != nil {
			fail(w, err)
			return
		}
		w.OK()
		notify(ctx, "xgroup-create", args[2])
	case "setid":
		if len(args) != 5 && len(args) != 7 {
			w.Error(badSubcommand(args[1]))
			return
		}
		id := string(args[4])
		if id != "$" {
			parsed, err := stream.ParseID(id, 0)
			if err != nil {
				w.Error(errInvalid)
				return
			}
			id = parsed.String()
		}
		if len(args) == 7 {
			if !eq(args[5], "entriesread") {
				w.Error(badSubcommand(args[1]))
				return
			}
			n, msg := parseEntriesRead(args[6])
			if msg != "" {
				w.Error(msg)
				return
			}
			entriesRead = n
		}
		if err := h.x.SetGroupID(ctx, key, group, id, entriesRead); err != nil {
			h.groupFail(w, err, args)
			return
		}
		w.OK()
		notify(ctx, "xgroup-setid", args[2])
	case "destroy":
		ok, err := h.x.DestroyGroup(ctx, key, group)
		if err != nil {
			fail(w, err)
			return
		}
		w.Int(b2i(ok))
		if ok {
			notify(ctx, "xgroup-destroy", args[2])
		}
	case "createconsumer":
		ok, err := h.x.CreateConsumer(ctx, key, group, string(args[4]))
		if err != nil {
			h.groupFail(w, err, args)
			return
		}
		w.Int(b2i(ok))
		if ok {
			notify(ctx, "xgroup-createconsumer", args[2])
		}
	case "delconsumer":
		n, err := h.x.DeleteConsumer(ctx, key, group, string(args[4]))
		if err != nil {
			h.groupFail(w, err, args)
			return
		}
		w.Int(int64(n))
		notify(ctx, "xgroup-delconsumer", args[2])
	}
}

// groupFail writes err, naming key and group when the group went away
// between the check and the write.
func (h *handler) groupFail(w Reply, err error, args [][]byte) {
	if errors.Is(err, stream.ErrNoGroup) {
		w.Error(noGroupFor(args[2], args[3]))
		return
	}
	fail(w, err)
}

// badSubcommand is Redis's error for a subcommand's bad arguments.
func badSubcommand(sub []byte) string {
	return fmt.Sprintf("ERR unknown subcommand or wrong number of arguments for '%s'. Try XGROUP HELP.", sub)
}

func b2i(b bool) int64 {
	if b {
		return 1
	}
	return 0
}

func (h *handler) xpending(ctx context.Context, _ int, args [][]byte, w Reply) {
	summary := len(args) == 3
	if !summary && (len(args) < 6 || len(args) > 9) {
		w.Error(errSyntax)
		return
	}
	var start, end stream.ID
	var count, minIdle int64
	var consumer []byte
	if !summary {
		i := 3
		if eq(args[3], "idle") {
			n, ok := parseInt(args[4])
			if !ok {
				w.Error(errNotInt)
				return
			}
			minIdle = n
			if len(args) < 8 {
				w.Error(errSyntax)
				return
			}
			i += 2
		}
		n, ok := parseInt(args[i+2])
		if !ok {
			w.Error(errNotInt)
			return
		}
		count = max(n, 0)
		var msg string
		if start, end, msg = parseInterval(args[i], args[i+1]); msg != "" {
			w.Error(msg)
			return
		}
		if i+3 < len(args) {
			consumer = args[i+3]
		}
	}
	now := h.now()
	err := h.x.View(ctx, string(args[1]), func(s *stream.Stream) error {
		var g *stream.Group
		if s != nil {
			g = s.Group(string(args[2]))
		}
		if g == nil {
			w.Error(noGroup(args[1], args[2]))
			return nil
		}
		if summary {
			w.Array(4)
			w.Int(int64(g.PendingCount()))
			first, last, ok := g.PendingBounds()
			if !ok {
				w.Null()
				w.Null()
				w.NullArray()
				return nil
			}
			w.Bulk(first.Append(nil))
			w.Bulk(last.Append(nil))
			var holders []*stream.Consumer
			for _, c := range g.Consumers() {
				if c.Pending() > 0 {
					holders = append(holders, c)
				}
			}
			w.Array(len(holders))
			for _, c := range holders {
				w.Array(2)
				w.Bulk([]byte(c.Name))
				w.Bulk(fmt.Appendf(nil, "%d", c.Pending()))
			}
			return nil
		}
		var c *stream.Consumer
		if consumer != nil {
			if c = g.Consumer(string(consumer)); c == nil {
				w.Array(0)
				return nil
			}
		}
		var rows []*stream.Pending
		if count > 0 {
			g.PendingRange(c, start, end, func(p *stream.Pending) bool {
				if minIdle > 0 && now-p.DeliveryTime < minIdle {
					return true
				}
				rows = append(rows, p)
				return int64(len(rows)) < count
			})
		}
		w.Array(len(rows))
		for _, p := range rows {
			w.Array(4)
			w.Bulk(p.ID.Append(nil))
			w.Bulk([]byte(p.Consumer.Name))
			w.Int(max(now-p.DeliveryTime, 0))
			w.Int(int64(p.DeliveryCount))
		}
		return nil
	})
	if err != nil {
		fail(w, err)
	}
}

// parseInterval reads a start and an end bound, exclusive ones moved
// inward, as XRANGE and XPENDING do.
func parseInterval(startArg, endArg []byte) (start, end stream.ID, msg string) {
	if start, msg = parseStart(startArg); msg != "" {
		return start, end, msg
	}
	end, endEx, err := parseBound(endArg, stream.MaxID.Seq)
	if err != nil {
		return start, end, errInvalid
	}
	if endEx {
		prev, ok := end.Prev()
		if !ok {
			return start, end, "ERR invalid end ID for the interval"
		}
		end = prev
	}
	return start, end, ""
}

// parseStart reads a start bound, an exclusive one moved to the next ID.
func parseStart(arg []byte) (stream.ID, string) {
	start, excl, err := parseBound(arg, 0)
	if err != nil {
		return start, errInvalid
	}
	if excl {
		next, ok := start.Next()
		if !ok {
			return start, "ERR invalid start ID for the interval"
		}
		start = next
	}
	return start, ""
}

// hasGroup reports whether key's stream has group.
func (h *handler) hasGroup(ctx context.Context, key, group string) (bool, error) {
	var ok bool
	err := h.x.View(ctx, key, func(s *stream.Stream) error {
		ok = s != nil && s.Group(group) != nil
		return nil
	})
	return ok, err
}

func (h *handler) xclaim(ctx context.Context, _ int, args [][]byte, w Reply) {
	key, group := string(args[1]), string(args[2])
	if ok, err := h.hasGroup(ctx, key, group); err != nil || !ok {
		if err != nil {
			fail(w, err)
		} else {
			w.Error(noGroup(args[1], args[2]))
		}
		return
	}
	minIdle, ok := parseInt(args[4])
	if !ok {
		w.Error("ERR Invalid min-idle-time argument for XCLAIM")
		return
	}
	a := ferricstore.ClaimArgs{MinIdle: max(minIdle, 0)}
	j := 5
	var ids []stream.ID
	for ; j < len(args); j++ {
		id, err := stream.ParseStrictID(string(args[j]))
		if err != nil {
			break
		}
		ids = append(ids, id)
	}
	for ; j < len(args); j++ {
		more := len(args) - 1 - j
		opt := args[j]
		num := func(what string) (int64, bool) {
			n, ok := parseInt(args[j+1])
			if !ok {
				w.Error("ERR Invalid " + what + " option argument for XCLAIM")
			}
			j++
			return n, ok
		}
		switch {
		case eq(opt, "force"):
			a.Force = true
		case eq(opt, "justid"):
			a.JustID = true
		case eq(opt, "idle") && more > 0:
			n, ok := num("IDLE")
			if !ok {
				return
			}
			a.Idle, a.Time = &n, nil
		case eq(opt, "time") && more > 0:
			n, ok := num("TIME")
			if !ok {
				return
			}
			a.Time, a.Idle = &n, nil
		case eq(opt, "retrycount") && more > 0:
			n, ok := num("RETRYCOUNT")
			if !ok {
				return
			}
			a.RetryCount = &n
		case eq(opt, "lastid") && more > 0:
			id, err := stream.ParseStrictID(string(args[j+1]))
			if err != nil {
				w.Error(errInvalid)
				return
			}
			a.LastID = id
			j++
		default:
			w.Error(fmt.Sprintf("ERR Unrecognized XCLAIM option '%s'", opt))
			return
		}
	}
	known := consumerKnown(ctx, h.x, key, group, string(args[3]))
	es, err := h.x.Claim(ctx, key, group, string(args[3]), ids, a)
	if err != nil {
		if errors.Is(err, stream.ErrNoGroup) || errors.Is(err, ferricstore.ErrGroupNeedsKey) {
			w.Error(noGroup(args[1], args[2]))
			return
		}
		fail(w, err)
		return
	}
	defer notifyNewConsumer(ctx, h.x, key, group, string(args[3]), known)
	if a.JustID {
		writeIDs(w, idsOf(es))
		return
	}
	writeEntries(w, es)
}

func idsOf(es []stream.Entry) []stream.ID {
	out := make([]stream.ID, len(es))
	for i, e := range es {
		out[i] = e.ID
	}
	return out
}

func (h *handler) xautoclaim(ctx context.Context, _ int, args [][]byte, w Reply) {
	minIdle, ok := parseInt(args[4])
	if !ok {
		w.Error("ERR Invalid min-idle-time argument for XAUTOCLAIM")
		return
	}
	start, msg := parseStart(args[5])
	if msg != "" {
		w.Error(msg)
		return
	}
	count, justID := int64(100), false
	for j := 6; j < len(args); j++ {
		more := len(args) - 1 - j
		switch {
		case eq(args[j], "count") && more > 0:
			n, ok := parseInt(args[j+1])
			if !ok || n < 1 || n > (1<<63-1)/16 {
				w.Error("ERR COUNT must be > 0")
				return
			}
			count = n
			j++
		case eq(args[j], "justid"):
			justID = true
		default:
			w.Error(errSyntax)
			return
		}
	}
	known := consumerKnown(ctx, h.x, string(args[1]), string(args[2]), string(args[3]))
	res, err := h.x.AutoClaim(ctx, string(args[1]), string(args[2]), string(args[3]), max(minIdle, 0), start, int(count), justID)
	if err != nil {
		if errors.Is(err, stream.ErrNoGroup) || errors.Is(err, ferricstore.ErrGroupNeedsKey) {
			w.Error(noGroup(args[1], args[2]))
			return
		}
		fail(w, err)
		return
	}
	defer notifyNewConsumer(ctx, h.x, string(args[1]), string(args[2]), string(args[3]), known)
	w.Array(3)
	w.Bulk(res.Next.Append(nil))
	if justID {
		writeIDs(w, idsOf(res.Claimed))
	} else {
		writeEntries(w, res.Claimed)
	}
	writeIDs(w, res.Deleted)
}
