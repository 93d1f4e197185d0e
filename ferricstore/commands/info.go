package commands

import (
	"context"

	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

// xinfoCmd is XINFO's subcommands.
var xinfoCmd = container{name: "XINFO", arity: map[string]int{"stream": -3, "groups": 3, "consumers": 4, "help": 2},
	help: []string{
		"XINFO <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
		"CONSUMERS <key> <groupname>",
		"    Show consumers of <groupname>.",
		"GROUPS <key>",
		"    Show the stream consumer groups.",
		"STREAM <key> [FULL [COUNT <count>]",
		"    Show information about the stream.",
		"HELP",
		"    Print this help.",
	}}

func (h *handler) xinfo(ctx context.Context, _ int, args [][]byte, w Reply) {
	sub, ok := xinfoCmd.subcommand(args, w)
	if !ok {
		return
	}
	full, count := false, int64(10)
	if sub == "stream" && len(args) > 3 {
		if !eq(args[3], "full") || (len(args) != 4 && len(args) != 6) || (len(args) == 6 && !eq(args[4], "count")) {
			w.Error(errSyntax)
			return
		}
		full = true
		if len(args) == 6 {
			n, ok := parseInt(args[5])
			if !ok {
				w.Error(errNotInt)
				return
			}
			count = max(n, 0)
		}
	}
	now := h.now()
	err := h.x.View(ctx, string(args[2]), func(s *stream.Stream) error {
		if s == nil {
			w.Error("ERR no such key")
			return nil
		}
		switch sub {
		case "consumers":
			g := s.Group(string(args[3]))
			if g == nil {
				w.Error(noGroupFor(args[2], args[3]))
				return nil
			}
			cs := g.Consumers()
			w.Array(len(cs))
			for _, c := range cs {
				w.Map(4)
				w.Bulk([]byte("name"))
				w.Bulk([]byte(c.Name))
				w.Bulk([]byte("pending"))
				w.Int(int64(c.Pending()))
				w.Bulk([]byte("idle"))
				w.Int(max(now-c.SeenTime, 0))
				w.Bulk([]byte("inactive"))
				if c.ActiveTime < 0 {
					w.Int(-1)
				} else {
					w.Int(max(now-c.ActiveTime, 0))
				}
			}
		case "groups":
			gs := s.Groups()
			w.Array(len(gs))
			for _, g := range gs {
				w.Map(6)
				w.Bulk([]byte("name"))
				w.Bulk([]byte(g.Name))
				w.Bulk([]byte("consumers"))
				w.Int(int64(len(g.Consumers())))
				w.Bulk([]byte("pending"))
				w.Int(int64(g.PendingCount()))
				w.Bulk([]byte("last-delivered-id"))
				w.Bulk(g.LastID.Append(nil))
				writeGroupCounters(w, s, g)
			}
		default:
			writeStreamInfo(w, s, full, count)
		}
		return nil
	})
	if err != nil {
		fail(w, err)
	}
}

// writeGroupCounters writes a group's entries-read and lag (null when
// unknown).
func writeGroupCounters(w Reply, s *stream.Stream, g *stream.Group) {
	w.Bulk([]byte("entries-read"))
	if g.EntriesRead == stream.UnknownEntriesRead {
		w.Null()
	} else {
		w.Int(g.EntriesRead)
	}
	w.Bulk([]byte("lag"))
	if lag, ok := s.Lag(g); ok {
		w.Int(lag)
	} else {
		w.Null()
	}
}

// writeStreamInfo is XINFO STREAM's reply. The radix-tree counts are the
// stream's nodes of stream.NodeSize entries: the same unit approximate
// trimming works in.
func writeStreamInfo(w Reply, s *stream.Stream, full bool, count int64) {
	n := 10
	if full {
		n = 9
	}
	w.Map(n)
	nodes := int64((s.Len() + stream.NodeSize - 1) / stream.NodeSize)
	w.Bulk([]byte("length"))
	w.Int(int64(s.Len()))
	w.Bulk([]byte("radix-tree-keys"))
	w.Int(nodes)
	w.Bulk([]byte("radix-tree-nodes"))
	w.Int(nodes + 1)
	w.Bulk([]byte("last-generated-id"))
	w.Bulk(s.LastID.Append(nil))
	w.Bulk([]byte("max-deleted-entry-id"))
	w.Bulk(s.MaxDeletedID.Append(nil))
	w.Bulk([]byte("entries-added"))
	w.Int(int64(s.EntriesAdded))
	w.Bulk([]byte("recorded-first-entry-id"))
	first, ok := s.First()
	if !ok {
		first.ID = stream.ID{}
	}
	w.Bulk(first.ID.Append(nil))
	if !full {
		w.Bulk([]byte("groups"))
		w.Int(int64(len(s.Groups())))
		w.Bulk([]byte("first-entry"))
		if ok {
			writeEntry(w, first)
		} else {
			w.Null()
		}
		w.Bulk([]byte("last-entry"))
		if last, ok := s.Last(); ok {
			writeEntry(w, last)
		} else {
			w.Null()
		}
		return
	}
	w.Bulk([]byte("entries"))
	writeEntries(w, s.Range(stream.ID{}, stream.MaxID, int(count), false))
	w.Bulk([]byte("groups"))
	gs := s.Groups()
	w.Array(len(gs))
	for _, g := range gs {
		w.Map(7)
		w.Bulk([]byte("name"))
		w.Bulk([]byte(g.Name))
		w.Bulk([]byte("last-delivered-id"))
		w.Bulk(g.LastID.Append(nil))
		writeGroupCounters(w, s, g)
		w.Bulk([]byte("pel-count"))
		w.Int(int64(g.PendingCount()))
		w.Bulk([]byte("pel"))
		pel := pendingOf(g, nil, count)
		w.Array(len(pel))
		for _, p := range pel {
			w.Array(4)
			w.Bulk(p.ID.Append(nil))
			w.Bulk([]byte(p.Consumer.Name))
			w.Int(p.DeliveryTime)
			w.Int(int64(p.DeliveryCount))
		}
		w.Bulk([]byte("consumers"))
		cs := g.Consumers()
		w.Array(len(cs))
		for _, c := range cs {
			w.Map(4)
			w.Bulk([]byte("name"))
			w.Bulk([]byte(c.Name))
			w.Bulk([]byte("seen-time"))
			w.Int(c.SeenTime)
			w.Bulk([]byte("pel-count"))
			w.Int(int64(c.Pending()))
			w.Bulk([]byte("pel"))
			own := pendingOf(g, c, count)
			w.Array(len(own))
			for _, p := range own {
				w.Array(3)
				w.Bulk(p.ID.Append(nil))
				w.Int(p.DeliveryTime)
				w.Int(int64(p.DeliveryCount))
			}
		}
	}
}

// pendingOf returns up to count (0: all) of the group's pending entries,
// or of consumer c's when c is not nil, in ID order.
func pendingOf(g *stream.Group, c *stream.Consumer, count int64) []*stream.Pending {
	var out []*stream.Pending
	g.PendingRange(c, stream.ID{}, stream.MaxID, func(p *stream.Pending) bool {
		out = append(out, p)
		return count == 0 || int64(len(out)) < count
	})
	return out
}
