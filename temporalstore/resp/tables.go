package resp

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// Tables, tenants and tenant tokens.
//
// TABLE and TENANT are the operator's verbs: they list, describe, create
// and drop the engine's tables, and change a table's limits and read-only
// shards or a tenant's limit (the engine keeps the changes across
// restarts). They describe to any global token and change with a
// read-write one; a tenant's token gets NOPERM.
//
// A tenant token (Options.TenantTokens) authenticates a connection as its
// tenant: its keys live in the namespace named as the tenant (database 0
// in the table tenant/Options.Table, database n in tenant/Table@n), its
// commands carry the tenant (so the engine's tenant limit applies), a
// read-only token runs reads only, and the verbs that reach past the
// namespace (tenantRefused) are refused with NOPERM.

// TenantToken is what a tenant token grants (Options.TenantTokens).
type TenantToken = ts.TenantToken

func registerTables() {
	register(
		&cmdSpec{name: "table", arity: -2, flags: flagNoTx | flagNoScript, run: cmdTable},
		&cmdSpec{name: "tenant", arity: -2, flags: flagNoTx | flagNoScript, run: cmdTenant},
	)
}

// tenantRefused are the built-in verbs a tenant's connection may not run,
// and of some verbs the subcommands (nil: every one): they act on the
// whole server, show other tenants' commands, or change what other
// tenants run. Verbs added by Options.Commands are refused too: their
// keys are not kept in namespaces.
var tenantRefused = map[string]map[string]bool{
	"table":    nil,
	"tenant":   nil,
	"slowlog":  nil,
	"save":     nil,
	"bgsave":   nil,
	"debug":    nil,
	"config":   {"set": true, "resetstat": true, "rewrite": true},
	"client":   {"kill": true, "list": true, "pause": true, "unpause": true, "no-evict": true},
	"latency":  {"reset": true},
	"memory":   {"doctor": true, "stats": true, "malloc-stats": true, "purge": true},
	"script":   {"flush": true, "kill": true},
	"function": {"load": true, "delete": true, "flush": true, "restore": true, "kill": true},
	"cluster":  {"addmember": true, "forget": true},
}

// tenantRefusal is the error a tenant's connection gets for a call of
// spec, "" when it may run it.
func (c *conn) tenantRefusal(spec *cmdSpec, args [][]byte) string {
	if c.tenant == "" {
		return ""
	}
	name := spec.name
	subs, refused := tenantRefused[name]
	switch {
	case commands[name] != spec:
		refused = true // an added verb
	case refused && subs != nil:
		refused = len(args) > 1 && subs[strings.ToLower(string(args[1]))]
		if refused {
			name += "|" + strings.ToLower(string(args[1]))
		}
	}
	if !refused {
		return ""
	}
	return fmt.Sprintf("NOPERM a tenant's token cannot run the '%s' command", name)
}

// setTenant makes the connection its tenant's ("" for none): its keys
// then live in the tenant's namespace, in the database it selected. The
// keys it watched were another namespace's, and are forgotten.
func (c *conn) setTenant(tenant string) {
	if tenant == c.tenant {
		return
	}
	c.unwatch()
	c.tenant = tenant
	c.namespace = cmp.Or(tenant, c.s.opts.Namespace)
	c.selectDB(int(c.db.Load()))
}

// checkTenantTokens reports tenant tokens New cannot take.
func checkTenantTokens(opts Options) error {
	if err := ts.CheckTenantTokens(opts.TenantTokens, opts.Tokens, opts.ReadOnlyTokens); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidOptions, err)
	}
	return nil
}

// mayChange says whether the connection may change tables or tenants:
// with a global read-write token (any global token may describe them).
// On false it has written the error.
func (c *conn) mayChange() bool {
	if c.access != accessWrite {
		c.errorf("NOPERM a read-only token cannot change tables or tenants")
		return false
	}
	return true
}

// tableOptionArgs parses TABLE CREATE's and TABLE SET's options into o
// (CREATE's) and l (SET's), SHARDS, KEYGROUPS and ASYNC only when create;
// it writes the error and returns false on a bad one.
func (c *conn) tableOptionArgs(args [][]byte, o *ts.TableOptions, l *ts.TableLimits, create bool) bool {
	for i := 0; i < len(args); i++ {
		opt := strings.ToLower(string(args[i]))
		if opt == "async" && create {
			o.Async = true
			continue
		}
		if i+1 >= len(args) {
			c.syntaxErr()
			return false
		}
		v := args[i+1]
		i++
		switch opt {
		case "shards", "keygroups", "shardburst":
			n, ok := c.intArg(v)
			if !ok {
				return false
			}
			if n < 0 || n > 1<<20 {
				c.errorf("ERR %s out of range", strings.ToUpper(opt))
				return false
			}
			switch {
			case opt == "shardburst":
				o.ShardBurst, l.ShardBurst = int(n), ptr(int(n))
			case !create:
				c.errorf("ERR %s is fixed when the table is made", strings.ToUpper(opt))
				return false
			case opt == "shards":
				o.Shards = int(n)
			default:
				o.KeyGroups = int(n)
			}
		case "readqps", "writeqps", "shardrate":
			f, ok := c.floatArg(v)
			if !ok {
				return false
			}
			switch opt {
			case "readqps":
				o.ReadQPS, l.ReadQPS = f, ptr(f)
			case "writeqps":
				o.WriteQPS, l.WriteQPS = f, ptr(f)
			default:
				o.ShardRate, l.ShardRate = f, ptr(f)
			}
		default:
			c.syntaxErr()
			return false
		}
	}
	return true
}

func ptr[T any](v T) *T { return &v }

// tableArity is each TABLE subcommand's arity, as Redis counts it (the
// verb and subcommand included; negative: at least).
var tableArity = map[string]int{"help": 2, "list": 2, "info": 4, "create": -4, "set": -6, "readonly": 6, "drop": 4}

func cmdTable(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	arity, ok := tableArity[sub]
	switch {
	case !ok:
		c.errorf("ERR unknown subcommand '%s'. Try TABLE HELP.", cString(args[1]))
		return
	case arity < 0 && len(args) < -arity, arity > 0 && len(args) != arity:
		c.errorf("ERR wrong number of arguments for 'table|%s' command", sub)
		return
	}
	e := c.s.opts.Engine
	var ns, name string
	if len(args) >= 4 {
		ns, name = string(args[2]), string(args[3])
	}
	switch sub {
	case "help":
		c.w.simpleLines([]string{
			"TABLE <subcommand> [<arg> [value] [opt] ...]. Subcommands are:",
			"LIST", "    The tables, as namespace/name.",
			"INFO <namespace> <name>", "    A table's options, read-only shards and per-shard statistics.",
			"CREATE <namespace> <name> [SHARDS n] [KEYGROUPS n] [READQPS q] [WRITEQPS q] [SHARDRATE r] [SHARDBURST n] [ASYNC]", "    Make a table.",
			"SET <namespace> <name> [READQPS q] [WRITEQPS q] [SHARDRATE r] [SHARDBURST n]", "    Change a table's limits (0: none); kept across restarts.",
			"READONLY <namespace> <name> <shard>|ALL ON|OFF", "    Refuse a shard's writes, or stop; kept across restarts.",
			"DROP <namespace> <name>", "    Delete a table, its numbered databases and their data.",
		})
	case "list":
		list, err := e.ListTables()
		if err != nil {
			c.engineError(err)
			return
		}
		c.w.array(len(list))
		for _, ti := range list {
			c.w.bulkString(ti.Namespace + "/" + ti.Name)
		}
	case "info":
		ti, err := e.DescribeTable(ns, name)
		if err != nil {
			c.engineError(err)
			return
		}
		st, err := e.TableStats(ns, name)
		if err != nil {
			c.engineError(err)
			return
		}
		c.tableInfo(ti, st)
	case "create":
		var o ts.TableOptions
		if !c.mayChange() || !c.tableOptionArgs(args[4:], &o, &ts.TableLimits{}, true) || !c.tablesLocal() {
			return
		}
		if err := e.CreateTable(c.ctx, ns, name, o); err != nil {
			c.engineError(err)
			return
		}
		c.w.ok()
	case "set":
		var l ts.TableLimits
		if !c.mayChange() || !c.tableOptionArgs(args[4:], &ts.TableOptions{}, &l, false) {
			return
		}
		if err := e.SetTableLimits(c.ctx, ns, name, l); err != nil {
			c.engineError(err)
			return
		}
		c.w.ok()
	case "readonly":
		sh := ts.AllShards
		if !is(args[4], "all") {
			n, ok := c.intArg(args[4])
			if !ok {
				return
			}
			if n < 0 || n > 1<<20 {
				c.errorf("ERR shard %d out of range", n)
				return
			}
			sh = int(n)
		}
		var on bool
		switch {
		case is(args[5], "on"):
			on = true
		case is(args[5], "off"):
		default:
			c.syntaxErr()
			return
		}
		if !c.mayChange() {
			return
		}
		if err := e.SetTableReadOnly(c.ctx, ns, name, sh, on); err != nil {
			c.engineError(err)
			return
		}
		c.w.ok()
	case "drop":
		if !c.mayChange() || !c.tablesLocal() {
			return
		}
		if err := e.DropTable(c.ctx, ns, name); err != nil {
			c.engineError(err)
			return
		}
		c.w.ok()
	}
}

// tablesLocal refuses to make or drop a table in a cluster, whose
// catalog is not replicated: the table would be this member's alone.
func (c *conn) tablesLocal() bool {
	if c.s.opts.Cluster != nil {
		c.errorf("ERR tables are made and dropped on a single node only: a cluster's catalog is not replicated")
		return false
	}
	return true
}

// tableInfo writes TABLE INFO's map.
func (c *conn) tableInfo(ti ts.TableInfo, st []ts.ShardStats) {
	o := ti.Options
	keys := 0
	for _, s := range st {
		keys += s.Keys
	}
	c.w.mapHeader(13)
	c.w.bulkString("namespace")
	c.w.bulkString(ti.Namespace)
	c.w.bulkString("name")
	c.w.bulkString(ti.Name)
	c.w.bulkString("shards")
	c.w.int(int64(o.Shards))
	c.w.bulkString("key_groups")
	c.w.int(int64(o.KeyGroups))
	c.w.bulkString("async")
	c.w.int(b2i(o.Async))
	c.w.bulkString("sync_interval_ms")
	c.w.int(o.SyncInterval.Milliseconds())
	c.w.bulkString("read_qps")
	c.w.double(o.ReadQPS)
	c.w.bulkString("write_qps")
	c.w.double(o.WriteQPS)
	c.w.bulkString("shard_rate")
	c.w.double(o.ShardRate)
	c.w.bulkString("shard_burst")
	c.w.int(int64(o.ShardBurst))
	c.w.bulkString("read_only_shards")
	c.w.array(len(ti.ReadOnlyShards))
	for _, i := range ti.ReadOnlyShards {
		c.w.int(int64(i))
	}
	c.w.bulkString("keys")
	c.w.int(int64(keys))
	c.w.bulkString("shard_stats")
	c.w.array(len(st))
	for _, s := range st {
		c.w.mapHeader(8)
		c.w.bulkString("shard")
		c.w.int(int64(s.Shard))
		c.w.bulkString("keys")
		c.w.int(int64(s.Keys))
		c.w.bulkString("read_only")
		c.w.int(b2i(s.ReadOnly))
		c.w.bulkString("live_bytes")
		c.w.int(s.LiveBytes)
		c.w.bulkString("log_bytes")
		c.w.int(s.LogBytes)
		c.w.bulkString("log_segments")
		c.w.int(int64(s.LogSegments))
		c.w.bulkString("log_records")
		c.w.int(int64(s.LogRecords))
		c.w.bulkString("space_amp")
		c.w.double(s.SpaceAmp)
	}
}

func cmdTenant(c *conn, args [][]byte) {
	sub := strings.ToLower(string(args[1]))
	e := c.s.opts.Engine
	switch {
	case sub == "help" && len(args) == 2:
		c.w.simpleLines([]string{
			"TENANT <subcommand> [<arg> ...]. Subcommands are:",
			"LIST", "    The tenants with a limit of their own, and the limit.",
			"GET <tenant>", "    The limit of commands a second that applies to a tenant (0: none).",
			"SET <tenant> QPS <q>", "    Set a tenant's limit: above 0 limits it, 0 goes back to the default, -1 lifts any; kept across restarts.",
		})
	case sub == "list" && len(args) == 2:
		own := e.TenantLimits()
		c.w.mapHeader(len(own))
		for _, t := range slices.Sorted(maps.Keys(own)) {
			c.w.bulkString(t)
			c.w.double(own[t])
		}
	case sub == "get" && len(args) == 3:
		tenant := string(args[2])
		if err := ts.CheckName(tenant); err != nil {
			c.engineError(err)
			return
		}
		q, own := e.TenantQPS(tenant)
		c.w.mapHeader(3)
		c.w.bulkString("tenant")
		c.w.bulkString(tenant)
		c.w.bulkString("qps")
		c.w.double(q)
		c.w.bulkString("own")
		c.w.int(b2i(own))
	case sub == "set" && len(args) == 5:
		if !is(args[3], "qps") {
			c.syntaxErr()
			return
		}
		q, ok := c.floatArg(args[4])
		if !ok || !c.mayChange() {
			return
		}
		if err := e.SetTenantQPS(c.ctx, string(args[2]), q); err != nil {
			c.engineError(err)
			return
		}
		c.w.ok()
	case sub == "help" || sub == "list" || sub == "get" || sub == "set":
		c.errorf("ERR wrong number of arguments for 'tenant|%s' command", sub)
	default:
		c.errorf("ERR unknown subcommand '%s'. Try TENANT HELP.", cString(args[1]))
	}
}
