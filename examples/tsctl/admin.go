package main

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/temporalstore/temporalstore-go/temporalstore"
)

// The table and tenant commands call the server's HTTP admin routes:
//
//	GET    /tables                 {"status", "tables": [TableInfo...]}
//	POST   /tables                 {"namespace", "name", TableOptions...}
//	GET    /tables/{ns}/{name}     {"status", "table", "shards": [stats...]}
//	PATCH  /tables/{ns}/{name}     {"read_qps", "write_qps", "shard_rate", "shard_burst", "read_only", "shards"}
//	DELETE /tables/{ns}/{name}
//	GET    /tenants                {"status", "tenants": [{"tenant", "qps", "own"}...]}
//	GET    /tenants/{tenant}       {"status", "tenant", "qps", "own"}
//	PUT    /tenants/{tenant}       {"qps"}

// shardStat is a shard's statistics in GET /tables/{ns}/{name}.
type shardStat struct {
	Shard       int     `json:"shard"`
	Keys        int     `json:"keys"`
	Collections int     `json:"collections"`
	Spilled     int     `json:"spilled"`
	LiveBytes   int64   `json:"live_bytes"`
	LogBytes    int64   `json:"log_bytes"`
	SpaceAmp    float64 `json:"space_amp"`
	LogSegments int     `json:"log_segments"`
	LogRecords  uint64  `json:"log_records"`
	ReadOnly    bool    `json:"read_only"`
}

// tableReply is the reply of the routes of one table.
type tableReply struct {
	OK     bool                    `json:"ok"`
	Table  temporalstore.TableInfo `json:"table"`
	Shards []shardStat             `json:"shards,omitempty"`
}

// tenantReply is a tenant's limit.
type tenantReply struct {
	Tenant string `json:"tenant"`
	// QPS is the limit a second that applies, 0 for none; Own says it is
	// the tenant's, not the server's default.
	QPS float64 `json:"qps"`
	Own bool    `json:"own"`
}

// tableName reads a table from args: "ns/name" or "ns name".
func tableName(args []string) (ns, name string, err error) {
	if len(args) == 2 {
		return args[0], args[1], nil
	}
	ns, name, ok := strings.Cut(args[0], "/")
	if !ok || ns == "" || name == "" || strings.Contains(name, "/") {
		return "", "", fmt.Errorf("%w: %q is not NAMESPACE/TABLE", errUsage, args[0])
	}
	return ns, name, nil
}

func tablePath(ns, name string) string {
	return "/tables/" + url.PathEscape(ns) + "/" + url.PathEscape(name)
}

func (a *app) tableCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "table",
		Short: "List, create, describe, limit and drop a running server's tables",
	}
	cmd.AddCommand(a.tableListCmd(), a.tableCreateCmd(), a.tableInfoCmd(), a.tableSetCmd(), a.tableReadOnlyCmd(), a.tableDropCmd())
	return cmd
}

func (a *app) tableListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the tables with their options",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var reply struct {
				Tables []temporalstore.TableInfo `json:"tables"`
			}
			if _, err := a.call(cmd.Context(), http.MethodGet, "/tables", nil, &reply); err != nil {
				return err
			}
			if reply.Tables == nil {
				reply.Tables = []temporalstore.TableInfo{}
			}
			a.emit(map[string]any{"ok": true, "tables": reply.Tables}, func(w io.Writer) {
				tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', 0)
				fmt.Fprintln(tw, "TABLE\tOPTIONS\tREAD-ONLY SHARDS")
				for _, t := range reply.Tables {
					ro := "-"
					if len(t.ReadOnlyShards) > 0 {
						ro = fmt.Sprint(t.ReadOnlyShards)
					}
					fmt.Fprintf(tw, "%s/%s\t%s\t%s\n", t.Namespace, t.Name, optionsText(t.Options), ro)
				}
				tw.Flush()
			})
			return nil
		},
	}
}

// tableOptionFlags are create's flags, each a field of TableOptions in
// POST /tables' body, sent only when given.
type tableOptionFlags struct {
	shards, keyGroups, shardBurst, featureMaxSize int
	rangeLo, rangeHi                              uint32
	async, slotRouting, noRollup                  bool
	readQPS, writeQPS, shardRate                  float64
	segmentBytes                                  int64
	syncInterval, defaultTTL, featureMaxAge       time.Duration
}

func (f *tableOptionFlags) add(cmd *cobra.Command) {
	fs := cmd.Flags()
	fs.IntVar(&f.shards, "shards", 0, "shards (default: the server's, 4)")
	fs.IntVar(&f.keyGroups, "key-groups", 0, "key groups, a multiple of --shards (default: --shards)")
	fs.BoolVar(&f.slotRouting, "slot-routing", false, "route keys by Redis Cluster hash slot")
	fs.BoolVar(&f.async, "async", false, "acknowledge writes before fsync, syncing every --sync-interval")
	fs.DurationVar(&f.syncInterval, "sync-interval", 0, "how often an async table fsyncs (default 10ms)")
	fs.Uint32Var(&f.rangeLo, "range-lo", 0, "low end of the routing range")
	fs.Uint32Var(&f.rangeHi, "range-hi", 0, "high end of the routing range (default 1023)")
	addLimitFlags(cmd, &f.readQPS, &f.writeQPS, &f.shardRate, &f.shardBurst)
	fs.Int64Var(&f.segmentBytes, "segment-bytes", 0, "size of each shard's log segment files (default 8 MiB)")
	fs.DurationVar(&f.defaultTTL, "default-ttl", 0, "TTL of string writes that give none (default: none)")
	fs.IntVar(&f.featureMaxSize, "feature-max-size", 0, "points a feature series keeps")
	fs.DurationVar(&f.featureMaxAge, "feature-max-age", 0, "age past which feature points are dropped (default: none)")
	fs.BoolVar(&f.noRollup, "no-rollup", false, "turn off the feature series' rollup ladder")
}

func addLimitFlags(cmd *cobra.Command, readQPS, writeQPS, shardRate *float64, shardBurst *int) {
	fs := cmd.Flags()
	fs.Float64Var(readQPS, "read-qps", 0, "reads a second the table admits (0: no limit)")
	fs.Float64Var(writeQPS, "write-qps", 0, "writes a second the table admits (0: no limit)")
	fs.Float64Var(shardRate, "shard-rate", 0, "commands a second each shard admits (0: no limit)")
	fs.IntVar(shardBurst, "shard-burst", 0, "commands each shard admits at once")
}

// body is POST /tables' body: the name and the options given.
func (f *tableOptionFlags) body(cmd *cobra.Command, ns, name string) map[string]any {
	b := map[string]any{"namespace": ns, "name": name}
	set := func(flag, field string, v any) {
		if cmd.Flags().Changed(flag) {
			b[field] = v
		}
	}
	set("shards", "shards", f.shards)
	set("key-groups", "key_groups", f.keyGroups)
	set("slot-routing", "slot_routing", f.slotRouting)
	set("async", "async", f.async)
	set("sync-interval", "sync_interval", int64(f.syncInterval)) // a Duration is nanoseconds in JSON
	set("range-lo", "range_lo", f.rangeLo)
	set("range-hi", "range_hi", f.rangeHi)
	set("read-qps", "read_qps", f.readQPS)
	set("write-qps", "write_qps", f.writeQPS)
	set("shard-rate", "shard_rate", f.shardRate)
	set("shard-burst", "shard_burst", f.shardBurst)
	set("segment-bytes", "segment_bytes", f.segmentBytes)
	set("default-ttl", "default_ttl", int64(f.defaultTTL))
	set("feature-max-size", "feature_max_size", f.featureMaxSize)
	set("feature-max-age", "feature_max_age", int64(f.featureMaxAge))
	set("no-rollup", "no_rollup", f.noRollup)
	return b
}

func (a *app) tableCreateCmd() *cobra.Command {
	var f tableOptionFlags
	cmd := &cobra.Command{
		Use:   "create NAMESPACE/TABLE",
		Short: "Create a table",
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ns, name, err := tableName(argv)
			if err != nil {
				return err
			}
			var reply tableReply
			if _, err := a.call(cmd.Context(), http.MethodPost, "/tables", f.body(cmd, ns, name), &reply); err != nil {
				return err
			}
			reply.OK = true
			a.emit(reply, func(w io.Writer) {
				fmt.Fprintf(w, "created %s/%s: %s\n", reply.Table.Namespace, reply.Table.Name, optionsText(reply.Table.Options))
			})
			return nil
		},
	}
	f.add(cmd)
	return cmd
}

func (a *app) tableInfoCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "info NAMESPACE/TABLE",
		Short: "Describe a table and its shards",
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ns, name, err := tableName(argv)
			if err != nil {
				return err
			}
			var reply tableReply
			if _, err := a.call(cmd.Context(), http.MethodGet, tablePath(ns, name), nil, &reply); err != nil {
				return err
			}
			reply.OK = true
			a.emit(reply, reply.text)
			return nil
		},
	}
}

func (r *tableReply) text(w io.Writer) {
	t := r.Table
	fmt.Fprintf(w, "table %s/%s\n  options: %s\n", t.Namespace, t.Name, optionsText(t.Options))
	if len(t.ReadOnlyShards) > 0 {
		fmt.Fprintf(w, "  read-only shards: %v\n", t.ReadOnlyShards)
	}
	if len(r.Shards) == 0 {
		return
	}
	tw := tabwriter.NewWriter(w, 2, 8, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "  shard\tkeys\tcollections\tspilled\tlive\tlog\tsegments\trecords\tread-only\t")
	for _, s := range r.Shards {
		fmt.Fprintf(tw, "  %d\t%d\t%d\t%d\t%s\t%s\t%d\t%d\t%v\t\n", s.Shard, s.Keys, s.Collections, s.Spilled,
			humanBytes(s.LiveBytes), humanBytes(s.LogBytes), s.LogSegments, s.LogRecords, s.ReadOnly)
	}
	tw.Flush()
}

// patchTable sends PATCH body to table ns/name and reports the table.
func (a *app) patchTable(ctx context.Context, ns, name string, body map[string]any, what string) error {
	var reply tableReply
	if _, err := a.call(ctx, http.MethodPatch, tablePath(ns, name), body, &reply); err != nil {
		return err
	}
	reply.OK = true
	a.emit(reply, func(w io.Writer) {
		fmt.Fprintf(w, "%s %s/%s: %s", what, ns, name, optionsText(reply.Table.Options))
		if len(reply.Table.ReadOnlyShards) > 0 {
			fmt.Fprintf(w, "; read-only shards %v", reply.Table.ReadOnlyShards)
		}
		fmt.Fprintln(w)
	})
	return nil
}

func (a *app) tableSetCmd() *cobra.Command {
	var readQPS, writeQPS, shardRate float64
	var shardBurst int
	cmd := &cobra.Command{
		Use:   "set NAMESPACE/TABLE --read-qps N | --write-qps N | --shard-rate N | --shard-burst N",
		Short: "Change a table's admission limits (kept across restarts)",
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ns, name, err := tableName(argv)
			if err != nil {
				return err
			}
			body := map[string]any{}
			for flag, v := range map[string]any{"read-qps": readQPS, "write-qps": writeQPS, "shard-rate": shardRate, "shard-burst": shardBurst} {
				if cmd.Flags().Changed(flag) {
					body[strings.ReplaceAll(flag, "-", "_")] = v
				}
			}
			if len(body) == 0 {
				return fmt.Errorf("%w: give a limit to set: --read-qps, --write-qps, --shard-rate or --shard-burst", errUsage)
			}
			return a.patchTable(cmd.Context(), ns, name, body, "limits of")
		},
	}
	addLimitFlags(cmd, &readQPS, &writeQPS, &shardRate, &shardBurst)
	return cmd
}

func (a *app) tableReadOnlyCmd() *cobra.Command {
	var shards []int
	cmd := &cobra.Command{
		Use:   "readonly NAMESPACE/TABLE on|off",
		Short: "Put a table's shards (all, or --shards) in read-only mode, or take them out of it",
		Args:  args(cobra.RangeArgs(2, 3)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ns, name, err := tableName(argv[:len(argv)-1])
			if err != nil {
				return err
			}
			var on bool
			switch argv[len(argv)-1] {
			case "on", "true":
				on = true
			case "off", "false":
			default:
				return fmt.Errorf("%w: %q is not on or off", errUsage, argv[len(argv)-1])
			}
			body := map[string]any{"read_only": on}
			if len(shards) > 0 {
				body["shards"] = shards
			}
			return a.patchTable(cmd.Context(), ns, name, body, "read-only mode of")
		},
	}
	cmd.Flags().IntSliceVar(&shards, "shards", nil, "the shards, e.g. 0,2 (default: every shard)")
	return cmd
}

func (a *app) tableDropCmd() *cobra.Command {
	var yes bool
	cmd := &cobra.Command{
		Use:   "drop NAMESPACE/TABLE --yes",
		Short: "Delete a table and its data",
		Args:  args(cobra.RangeArgs(1, 2)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			ns, name, err := tableName(argv)
			if err != nil {
				return err
			}
			if !yes {
				return fmt.Errorf("%w: drop deletes %s/%s and all its data: add --yes", errUsage, ns, name)
			}
			if _, err := a.call(cmd.Context(), http.MethodDelete, tablePath(ns, name), nil, nil); err != nil {
				return err
			}
			a.emit(map[string]any{"ok": true, "dropped": ns + "/" + name}, func(w io.Writer) {
				fmt.Fprintf(w, "dropped %s/%s\n", ns, name)
			})
			return nil
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "confirm that the table's data is to be deleted")
	return cmd
}

func (a *app) tenantCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "tenant",
		Short: "Read and set tenants' limits on a running server",
	}
	cmd.AddCommand(a.tenantListCmd(), a.tenantGetCmd(), a.tenantSetCmd())
	return cmd
}

func tenantText(t tenantReply) func(io.Writer) {
	return func(w io.Writer) {
		limit := "no limit"
		if t.QPS > 0 {
			limit = fmt.Sprintf("%g commands a second", t.QPS)
		}
		whose := "the server's default"
		if t.Own {
			whose = "its own"
		}
		fmt.Fprintf(w, "tenant %s: %s (%s)\n", t.Tenant, limit, whose)
	}
}

func (a *app) tenantListCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "list",
		Short: "List the tenants with limits of their own",
		Args:  args(cobra.NoArgs),
		RunE: func(cmd *cobra.Command, _ []string) error {
			var reply struct {
				Tenants []tenantReply `json:"tenants"`
			}
			if _, err := a.call(cmd.Context(), http.MethodGet, "/tenants", nil, &reply); err != nil {
				return err
			}
			if reply.Tenants == nil {
				reply.Tenants = []tenantReply{}
			}
			a.emit(map[string]any{"ok": true, "tenants": reply.Tenants}, func(w io.Writer) {
				if len(reply.Tenants) == 0 {
					fmt.Fprintln(w, "no tenant has a limit of its own")
				}
				for _, t := range reply.Tenants {
					tenantText(t)(w)
				}
			})
			return nil
		},
	}
}

func (a *app) tenantGetCmd() *cobra.Command {
	return &cobra.Command{
		Use:   "get TENANT",
		Short: "Show the limit that applies to a tenant",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			var t tenantReply
			if _, err := a.call(cmd.Context(), http.MethodGet, "/tenants/"+url.PathEscape(argv[0]), nil, &t); err != nil {
				return err
			}
			a.emit(map[string]any{"ok": true, "tenant": t.Tenant, "qps": t.QPS, "own": t.Own}, tenantText(t))
			return nil
		},
	}
}

func (a *app) tenantSetCmd() *cobra.Command {
	var qps float64
	var unlimited, reset bool
	cmd := &cobra.Command{
		Use:   "set TENANT --qps N | --unlimited | --default",
		Short: "Set a tenant's limit of commands a second (kept across restarts)",
		Args:  args(cobra.ExactArgs(1)),
		RunE: func(cmd *cobra.Command, argv []string) error {
			given := 0
			for _, f := range []string{"qps", "unlimited", "default"} {
				if cmd.Flags().Changed(f) {
					given++
				}
			}
			if given != 1 {
				return fmt.Errorf("%w: give one of --qps, --unlimited or --default", errUsage)
			}
			switch {
			case unlimited:
				qps = temporalstore.Disabled // no limit, whatever the default
			case reset:
				qps = 0
			case qps <= 0:
				return fmt.Errorf("%w: --qps must be above 0 (--unlimited for no limit)", errUsage)
			}
			var t tenantReply
			if _, err := a.call(cmd.Context(), http.MethodPut, "/tenants/"+url.PathEscape(argv[0]), map[string]any{"qps": qps}, &t); err != nil {
				return err
			}
			a.emit(map[string]any{"ok": true, "tenant": t.Tenant, "qps": t.QPS, "own": t.Own}, tenantText(t))
			return nil
		},
	}
	cmd.Flags().Float64Var(&qps, "qps", 0, "commands a second the tenant may run")
	cmd.Flags().BoolVar(&unlimited, "unlimited", false, "let the tenant run unlimited")
	cmd.Flags().BoolVar(&reset, "default", false, "drop the tenant's own limit: the server's default applies")
	return cmd
}
