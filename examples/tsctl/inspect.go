package main

import (
	"cmp"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// inspectReport is inspect's result.
type inspectReport struct {
	Data   string        `json:"data"`
	Engine string        `json:"engine"`
	Tables []tableLayout `json:"tables"`
	Totals layoutTotals  `json:"totals"`
	// Beside are the directories next to the engine's.
	Beside []dirUsage `json:"beside"`
	// InUse is set when a process (a running server) holds a shard's
	// log open: the figures may be changing.
	InUse bool `json:"in_use"`
}

type tableLayout struct {
	Namespace string                     `json:"namespace"`
	Table     string                     `json:"table"`
	Dir       string                     `json:"dir"`
	Options   temporalstore.TableOptions `json:"options"`
	ReadOnly  []int                      `json:"read_only,omitempty"`
	Shards    []shardLayout              `json:"shards"`
	Segments  int                        `json:"segments"`
	Bytes     int64                      `json:"bytes"`
}

type shardLayout struct {
	Shard int    `json:"shard"`
	Dir   string `json:"dir"`
	// Checkpoint is the newest image's applied index, Checkpoints the
	// number of images; HasCheckpoint is false without any.
	HasCheckpoint bool   `json:"has_checkpoint"`
	Checkpoint    uint64 `json:"checkpoint_applied"`
	Checkpoints   int    `json:"checkpoints"`
	Segments      int    `json:"segments"`
	// FirstSegment is the first index of the oldest segment.
	FirstSegment uint64 `json:"first_segment_index"`
	Bytes        int64  `json:"bytes"`
	InUse        bool   `json:"in_use,omitempty"`
	Missing      bool   `json:"missing,omitempty"`
}

type layoutTotals struct {
	Tables   int   `json:"tables"`
	Shards   int   `json:"shards"`
	Segments int   `json:"segments"`
	Images   int   `json:"images"`
	Bytes    int64 `json:"bytes"`
}

func (a *app) inspectCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "inspect",
		Short: "Describe a data directory offline: tables, shards, checkpoints, segments",
		Long: "inspect reads the layout of --data without writing to it: each table's options and, for each shard, " +
			"its newest checkpoint's applied index, its log segments and their size. The server need not run.",
		Args: args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			rep, err := inspect(a.dataDir)
			if err != nil {
				return err
			}
			a.emit(rep, rep.text)
			return nil
		},
	}
}

// inspect describes the data directory data, reading no file but the
// catalog.
func inspect(data string) (*inspectReport, error) {
	engine, err := engineDir(data)
	if err != nil {
		return nil, err
	}
	cat, err := temporalstore.ReadCatalog(engine)
	if err != nil {
		return nil, err
	}
	rep := &inspectReport{Data: data, Engine: engine, Tables: []tableLayout{}, Beside: []dirUsage{}}
	for _, c := range cat {
		shards, err := tableShards(engine, c)
		if err != nil {
			return nil, err
		}
		tl := tableLayout{Namespace: c.Namespace, Table: c.Table, Dir: c.Dir, Options: c.Options, ReadOnly: c.ReadOnly, Shards: []shardLayout{}}
		for _, sf := range shards {
			sl := shardLayout{Shard: sf.Shard, Dir: sf.Dir, Checkpoints: len(sf.Images), Segments: len(sf.Segments),
				Bytes: sf.Bytes, InUse: sf.InUse, Missing: sf.Missing}
			if n := len(sf.Images); n > 0 {
				sl.HasCheckpoint, sl.Checkpoint = true, sf.Images[n-1].Index
			}
			if len(sf.Segments) > 0 {
				sl.FirstSegment = sf.Segments[0].Index
			}
			tl.Shards = append(tl.Shards, sl)
			tl.Segments += sl.Segments
			tl.Bytes += sl.Bytes
			rep.InUse = rep.InUse || sf.InUse
			rep.Totals.Shards++
			rep.Totals.Images += sl.Checkpoints
		}
		rep.Tables = append(rep.Tables, tl)
		rep.Totals.Tables++
		rep.Totals.Segments += tl.Segments
		rep.Totals.Bytes += tl.Bytes
	}
	// Beside the engine only when data is a server's data directory.
	if filepath.Clean(engine) != filepath.Clean(data) {
		for _, name := range dataSubdirs {
			u, err := usage(name, filepath.Join(data, name))
			if err != nil {
				return nil, err
			}
			rep.Beside = append(rep.Beside, u)
		}
	}
	return rep, nil
}

// optionsText is a table's options on one line: shards, durability and
// the limits set.
func optionsText(o temporalstore.TableOptions) string {
	parts := []string{fmt.Sprintf("shards=%d", o.Shards)}
	if o.KeyGroups != 0 && o.KeyGroups != o.Shards {
		parts = append(parts, fmt.Sprintf("key_groups=%d", o.KeyGroups))
	}
	if o.Async {
		parts = append(parts, "async (sync every "+cmp.Or(o.SyncInterval, temporalstore.DefaultSyncInterval).String()+")")
	} else {
		parts = append(parts, "durable")
	}
	if o.SlotRouting {
		parts = append(parts, "slot_routing")
	}
	limits := []struct {
		name string
		v    float64
	}{{"read_qps", o.ReadQPS}, {"write_qps", o.WriteQPS}, {"shard_rate", o.ShardRate}}
	for _, l := range limits {
		if l.v != 0 {
			parts = append(parts, fmt.Sprintf("%s=%g", l.name, l.v))
		}
	}
	if o.ShardBurst != 0 {
		parts = append(parts, fmt.Sprintf("shard_burst=%d", o.ShardBurst))
	}
	if o.SegmentBytes != 0 {
		parts = append(parts, "segment_bytes="+humanBytes(o.SegmentBytes))
	}
	if o.DefaultTTL != 0 {
		parts = append(parts, "default_ttl="+o.DefaultTTL.String())
	}
	if o.FeatureMaxSize != 0 {
		parts = append(parts, fmt.Sprintf("feature_max_size=%d", o.FeatureMaxSize))
	}
	if o.FeatureMaxAge != 0 {
		parts = append(parts, "feature_max_age="+o.FeatureMaxAge.String())
	}
	if o.NoRollup {
		parts = append(parts, "no_rollup")
	}
	return strings.Join(parts, " ")
}

// humanBytes is n in B, KiB, MiB, GiB or TiB.
func humanBytes(n int64) string {
	const unit = 1024
	if n < unit {
		return fmt.Sprintf("%d B", n)
	}
	div, exp := int64(unit), 0
	for m := n / unit; m >= unit && exp < 3; m /= unit {
		div *= unit
		exp++
	}
	return fmt.Sprintf("%.1f %ciB", float64(n)/float64(div), "KMGT"[exp])
}

func (r *inspectReport) text(w io.Writer) {
	fmt.Fprintf(w, "engine %s\n", r.Engine)
	if r.InUse {
		fmt.Fprintln(w, "note: a running process holds the logs open; the figures may be changing")
	}
	for _, t := range r.Tables {
		fmt.Fprintf(w, "\ntable %s/%s (dir %s)\n  options: %s\n", t.Namespace, t.Table, t.Dir, optionsText(t.Options))
		if len(t.ReadOnly) > 0 {
			fmt.Fprintf(w, "  read-only shards: %v\n", t.ReadOnly)
		}
		tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "  shard\tcheckpoint\timages\tsegments\tfirst index\tbytes\t")
		for _, s := range t.Shards {
			cp, first, note := "-", "-", ""
			if s.HasCheckpoint {
				cp = fmt.Sprint(s.Checkpoint)
			}
			if s.Segments > 0 {
				first = fmt.Sprint(s.FirstSegment)
			}
			switch {
			case s.Missing:
				note = " missing"
			case s.InUse:
				note = " in use"
			}
			fmt.Fprintf(tw, "  %d\t%s\t%d\t%d\t%s\t%s\t%s\n", s.Shard, cp, s.Checkpoints, s.Segments, first, humanBytes(s.Bytes), note)
		}
		tw.Flush()
		fmt.Fprintf(w, "  %d segments, %s\n", t.Segments, humanBytes(t.Bytes))
	}
	fmt.Fprintf(w, "\ntotal: %d tables, %d shards, %d checkpoints, %d segments, %s\n",
		r.Totals.Tables, r.Totals.Shards, r.Totals.Images, r.Totals.Segments, humanBytes(r.Totals.Bytes))
	for _, u := range r.Beside {
		if u.Absent {
			fmt.Fprintf(w, "%s: absent\n", u.Name)
			continue
		}
		fmt.Fprintf(w, "%s: %d files, %s\n", u.Name, u.Files, humanBytes(u.Bytes))
	}
}
