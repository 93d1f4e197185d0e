package temporalstore

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

// Tables and tenants at run time: listing and describing tables, dropping
// them, changing their limits and read-only shards, and the tenants'
// limits. What changes is kept where Open finds it: limits and read-only
// shards in the catalog, tenants' limits in tenantsFile.
//
// A drop is crash-safe by an intent file: the table's directories are
// listed in dropsFile (durably) before the catalog forgets the table, and
// leave the list of those being removed only once removed. Open removes
// what that list names and the catalog does not (the drop committed), and
// forgets what the catalog still names (it did not), so a table is either
// whole or gone. A dropped table's directory is never given to a new
// table: records are cached, and a log kept outside the directory (an
// in-memory or replicated one) is found, by directory.

// ErrTableInUse is returned by DropTable for the default table, a table a
// surface serves (UseTable), and their numbered databases.
var ErrTableInUse = errors.New("temporalstore: table in use")

// AllShards names every shard of a table to SetTableReadOnly.
const AllShards = -1

// Files beside the catalog.
const (
	// dropsFile lists the directories of dropped tables (dropsState).
	dropsFile = "drops.json"
	// tenantsFile holds the tenants' own limits (SetTenantQPS).
	tenantsFile = "tenants.json"
)

// tableAdmin is the engine's state for dropping tables; under Engine.mu.
type tableAdmin struct {
	// inUse counts the surfaces serving each table (UseTable).
	inUse map[tableName]int
	// drops is dropsFile's content.
	drops dropsState
}

// dropsState is what dropsFile holds.
type dropsState struct {
	// Removing are the directories of dropped tables whose removal is
	// not finished.
	Removing []string `json:"removing"`
	// Retired are the directories of every table dropped, which no new
	// table takes.
	Retired []string `json:"retired"`
}

// retired reports whether dir is a dropped table's.
func (a *tableAdmin) retired(dir string) bool { return slices.Contains(a.drops.Retired, dir) }

// TableInfo describes a table.
type TableInfo struct {
	Namespace string       `json:"namespace"`
	Name      string       `json:"name"`
	Options   TableOptions `json:"options"`
	// ReadOnlyShards are the shards refusing writes now, in order: those
	// SetTableReadOnly put in read-only mode (kept across restarts) and
	// those SetReadOnly did (until the engine closes).
	ReadOnlyShards []int `json:"read_only_shards"`
}

// TableLimits are the admission limits of a table SetTableLimits changes:
// each field set replaces the TableOptions field of the same name (0: no
// limit), each nil one keeps it.
type TableLimits struct {
	ReadQPS    *float64 `json:"read_qps,omitempty"`
	WriteQPS   *float64 `json:"write_qps,omitempty"`
	ShardRate  *float64 `json:"shard_rate,omitempty"`
	ShardBurst *int     `json:"shard_burst,omitempty"`
}

// TenantToken is what a tenant token grants on the surfaces (resp,
// httpapi): its commands go to the namespace named as the tenant and
// carry it as Command.Tenant.
type TenantToken struct {
	// Tenant is the tenant, and the namespace its commands address.
	Tenant string
	// ReadOnly limits the token to reads.
	ReadOnly bool
}

// CheckTenantTokens reports tenant tokens a surface cannot take (ErrInvalid):
// an empty token, one that is also one of the global tokens, a tenant that
// is no namespace name.
func CheckTenantTokens(tokens map[string]TenantToken, global ...[]string) error {
	for tok, tt := range tokens {
		switch {
		case tok == "":
			return fmt.Errorf("%w: an empty tenant token", ErrInvalid)
		case slices.ContainsFunc(global, func(g []string) bool { return slices.Contains(g, tok) }):
			return fmt.Errorf("%w: a tenant token is also a global token", ErrInvalid)
		case CheckName(tt.Tenant) != nil:
			return fmt.Errorf("%w: tenant %q is no namespace name", ErrInvalid, tt.Tenant)
		}
	}
	return nil
}

// CheckName reports whether name can name a namespace or a table that
// CreateTable takes (letters, digits, '_', '.', '-', up to 128, not
// starting with '.' or '-'); tenants' names follow the same rule.
func CheckName(name string) error {
	if !nameRE.MatchString(name) {
		return fmt.Errorf("%w: name %q", ErrInvalid, name)
	}
	return nil
}

// catalogEntry is t's entry in the catalog, named k.
func (t *table) catalogEntry(k tableName) catalogEntry {
	return catalogEntry{Namespace: k.namespace, Table: k.name, Options: t.opts, Dir: t.dir, ReadOnly: t.readOnly}
}

// restoreReadOnly puts the catalog's read-only shards back in read-only
// mode.
func (t *table) restoreReadOnly(shards []int) error {
	for _, i := range shards {
		if i < 0 || i >= len(t.shards) {
			return fmt.Errorf("%w: read-only shard %d of %d", ErrInvalid, i, len(t.shards))
		}
		t.adm.shards[i].readOnly.Store(true)
	}
	t.readOnly = slices.Compact(slices.Sorted(slices.Values(shards)))
	return nil
}

// info describes t, named k.
func (t *table) info(k tableName) TableInfo {
	ti := TableInfo{Namespace: k.namespace, Name: k.name, Options: t.opts, ReadOnlyShards: []int{}}
	for i := range t.adm.shards {
		if t.adm.shards[i].readOnly.Load() {
			ti.ReadOnlyShards = append(ti.ReadOnlyShards, i)
		}
	}
	return ti
}

// ListTables describes every table, in name order: a numbered database's
// table (name@n) is listed once its first write made it.
func (e *Engine) ListTables() ([]TableInfo, error) {
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	out := make([]TableInfo, 0, len(e.tables))
	for _, k := range sortedTableNames(e.tables) {
		out = append(out, e.tables[k].info(k))
	}
	return out, nil
}

// DescribeTable describes table namespace/name ("" naming the defaults).
func (e *Engine) DescribeTable(namespace, name string) (TableInfo, error) {
	k := tableName{cmp.Or(namespace, DefaultNamespace), cmp.Or(name, DefaultTable)}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return TableInfo{}, ErrClosed
	}
	t, ok := e.tables[k]
	if !ok {
		return TableInfo{}, fmt.Errorf("%w: %s/%s", ErrNoTable, k.namespace, k.name)
	}
	return t.info(k), nil
}

// TableStats returns the statistics of each shard of table
// namespace/name ("" naming the defaults), as Stats does for all.
func (e *Engine) TableStats(namespace, name string) ([]ShardStats, error) {
	k := tableName{cmp.Or(namespace, DefaultNamespace), cmp.Or(name, DefaultTable)}
	e.mu.RLock()
	defer e.mu.RUnlock()
	if e.closed {
		return nil, ErrClosed
	}
	t, ok := e.tables[k]
	if !ok {
		return nil, fmt.Errorf("%w: %s/%s", ErrNoTable, k.namespace, k.name)
	}
	return t.stats(k), nil
}

// SetTableLimits changes the admission limits of table namespace/name, at
// once for the commands that follow and in the catalog, so that a restart
// keeps them.
func (e *Engine) SetTableLimits(ctx context.Context, namespace, name string, l TableLimits) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	for _, q := range []*float64{l.ReadQPS, l.WriteQPS, l.ShardRate} {
		// A limit is a rate a second: NaN and infinities are no rate.
		if q != nil && (math.IsNaN(*q) || math.IsInf(*q, 0)) {
			return fmt.Errorf("%w: limit %v", ErrInvalid, *q)
		}
	}
	return e.updateTable(namespace, name, func(t *table) error {
		set := func(dst *float64, v *float64) {
			if v != nil {
				*dst = *v
			}
		}
		set(&t.opts.ReadQPS, l.ReadQPS)
		set(&t.opts.WriteQPS, l.WriteQPS)
		set(&t.opts.ShardRate, l.ShardRate)
		if l.ShardBurst != nil {
			t.opts.ShardBurst = *l.ShardBurst
		}
		return t.opts.Validate()
	}, func(was, now *table) {
		now.adm.setLimits(&was.opts, now.opts)
	})
}

// SetTableReadOnly puts shard sh of table namespace/name (AllShards: every
// shard) in read-only mode, writes refused with ErrReadOnly, or takes it
// out, and keeps the mode in the catalog, so that a restart keeps it.
func (e *Engine) SetTableReadOnly(ctx context.Context, namespace, name string, sh int, on bool) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	var shards []int
	return e.updateTable(namespace, name, func(t *table) error {
		switch {
		case sh == AllShards:
			for i := range t.shards {
				shards = append(shards, i)
			}
		case sh < 0 || sh >= len(t.shards):
			return fmt.Errorf("%w: shard %d of %d", ErrInvalid, sh, len(t.shards))
		default:
			shards = []int{sh}
		}
		ro := slices.Clone(t.readOnly)
		for _, i := range shards {
			ro = slices.DeleteFunc(ro, func(j int) bool { return j == i })
			if on {
				ro = append(ro, i)
			}
		}
		slices.Sort(ro)
		t.readOnly = ro
		return nil
	}, func(_, now *table) {
		for _, i := range shards {
			now.adm.shards[i].readOnly.Store(on)
		}
	})
}

// updateTable replaces table namespace/name with a copy change edits, in
// the catalog first; apply then installs the change in the state the
// two copies share.
func (e *Engine) updateTable(namespace, name string, change func(t *table) error, apply func(was, now *table)) error {
	k := tableName{cmp.Or(namespace, DefaultNamespace), cmp.Or(name, DefaultTable)}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	t, ok := e.tables[k]
	if !ok {
		return fmt.Errorf("%w: %s/%s", ErrNoTable, k.namespace, k.name)
	}
	nt := *t
	if err := change(&nt); err != nil {
		return err
	}
	e.tables[k] = &nt
	if err := e.saveCatalogLocked(); err != nil {
		e.tables[k] = t
		return err
	}
	apply(t, &nt)
	e.publishLocked()
	return nil
}

// UseTable marks table namespace/name ("" naming the defaults), which
// need not exist yet, as one a surface serves with its numbered
// databases: DropTable refuses it and its databases with ErrTableInUse
// until release is called (once; later calls do nothing).
func (e *Engine) UseTable(namespace, name string) (release func()) {
	k := tableName{cmp.Or(namespace, DefaultNamespace), cmp.Or(name, DefaultTable)}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.admin.inUse == nil {
		e.admin.inUse = map[tableName]int{}
	}
	e.admin.inUse[k]++
	released := false
	return func() {
		e.mu.Lock()
		defer e.mu.Unlock()
		if released {
			return
		}
		released = true
		if e.admin.inUse[k]--; e.admin.inUse[k] <= 0 {
			delete(e.admin.inUse, k)
		}
	}
}

// DropTable deletes table namespace/name and, unless it is a numbered
// database's table itself, the tables of its numbered databases
// (name@n): they leave the catalog, their shards close and their files
// are removed. Commands naming them get ErrNoTable from then on; one
// running meanwhile may fail with ErrClosed. The default table, a table
// in use (UseTable) and their databases are refused with ErrTableInUse.
//
// A crash never leaves half a table: Open finds it either whole (the
// catalog still lists it) or gone (its files' removal is finished).
func (e *Engine) DropTable(ctx context.Context, namespace, name string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckName(namespace); err != nil {
		return err
	}
	base, isDB := databaseBase(name)
	if err := CheckName(cmp.Or(base, name)); err != nil {
		return err
	}
	// Maintenance rounds work on every shard without the engine's lock:
	// none runs while the dropped shards close.
	e.maintMu.Lock()
	defer e.maintMu.Unlock()
	e.mu.Lock()
	victims, standIn, err := e.dropLocked(namespace, name, base, isDB)
	e.mu.Unlock()
	if err != nil {
		return err
	}
	var dirs []string
	for _, t := range victims {
		if err := t.close(); err != nil {
			// Dropped either way: the log's last sync failing loses
			// nothing that is kept.
			e.opts.Logger.Warn("temporalstore: closing a dropped table", "namespace", namespace, "table", name, "err", err)
		}
		dirs = append(dirs, t.dir)
	}
	if standIn != nil {
		standIn.close()
		_ = os.RemoveAll(filepath.Join(e.opts.Dir, filepath.FromSlash(standIn.dir)))
	}
	if err := e.removeDropped(dirs); err != nil {
		// The drop is done; Open finishes the removal.
		e.opts.Logger.Warn("temporalstore: removing a dropped table's files; the next open retries", "namespace", namespace, "table", name, "err", err)
	}
	return nil
}

// dropLocked takes the tables DropTable drops out of the catalog, after
// listing their directories in dropsFile, and returns them with the
// stand-in of the dropped base's databases, if any.
func (e *Engine) dropLocked(namespace, name, base string, isDB bool) (victims []*table, standIn *table, err error) {
	if e.closed {
		return nil, nil, ErrClosed
	}
	k := tableName{namespace, name}
	if _, ok := e.tables[k]; !ok {
		return nil, nil, fmt.Errorf("%w: %s/%s", ErrNoTable, namespace, name)
	}
	if !isDB {
		base = name
	}
	switch bk := (tableName{namespace, base}); {
	case bk == tableName{DefaultNamespace, DefaultTable}:
		return nil, nil, fmt.Errorf("%w: %s/%s is the default table or one of its databases", ErrTableInUse, namespace, name)
	case e.admin.inUse[bk] > 0:
		return nil, nil, fmt.Errorf("%w: %s/%s is served by a surface's databases", ErrTableInUse, namespace, name)
	}
	keys := []tableName{k}
	if !isDB {
		for other := range e.tables {
			if b, ok := databaseBase(other.name); ok && other.namespace == namespace && b == name {
				keys = append(keys, other)
			}
		}
	}
	was := e.admin.drops
	drops := dropsState{Removing: slices.Clone(was.Removing), Retired: slices.Clone(was.Retired)}
	for _, dk := range keys {
		drops.Removing = append(drops.Removing, e.tables[dk].dir)
		drops.Retired = append(drops.Retired, e.tables[dk].dir)
	}
	// The intent first: a crash after it and before the catalog's
	// rewrite leaves the table whole, and Open forgets the intent.
	if err := e.saveDropsLocked(drops); err != nil {
		return nil, nil, err
	}
	removed := map[tableName]*table{}
	for _, dk := range keys {
		removed[dk] = e.tables[dk]
		delete(e.tables, dk)
	}
	if err := e.saveCatalogLocked(); err != nil {
		for dk, t := range removed {
			e.tables[dk] = t
		}
		// Should this fail too, the list names tables the catalog
		// keeps, which Open forgets.
		_ = e.saveDropsLocked(was)
		return nil, nil, err
	}
	for _, dk := range keys {
		victims = append(victims, removed[dk])
	}
	if !isDB {
		if standIn = e.standIns[k]; standIn != nil {
			delete(e.standIns, k)
		}
	}
	e.publishLocked()
	return victims, standIn, nil
}

// saveDropsLocked writes dropsFile, and keeps its content.
func (e *Engine) saveDropsLocked(d dropsState) error {
	slices.Sort(d.Retired)
	d.Retired = slices.Compact(d.Retired)
	b, err := json.MarshalIndent(d, "", "  ")
	if err != nil {
		return err
	}
	if err := writeDurably(e.opts.Dir, dropsFile, b); err != nil {
		return fmt.Errorf("temporalstore: drops: %w", err)
	}
	e.admin.drops = d
	return nil
}

// removeDropped removes the directories of dropped tables, each removal
// made durable (its parent fsynced) before dropsFile forgets it.
func (e *Engine) removeDropped(dirs []string) error {
	var errs error
	var done []string
	for _, d := range dirs {
		full := filepath.Join(e.opts.Dir, filepath.FromSlash(d))
		err := os.RemoveAll(full)
		if err == nil {
			err = syncDir(filepath.Dir(full))
		}
		if err != nil {
			errs = errors.Join(errs, err)
			continue
		}
		done = append(done, d)
	}
	if len(done) == 0 {
		return errs
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	d := e.admin.drops
	d.Removing = slices.DeleteFunc(slices.Clone(d.Removing), func(dir string) bool { return slices.Contains(done, dir) })
	return errors.Join(errs, e.saveDropsLocked(d))
}

// openTableAdmin finishes the drops a crash interrupted and reads the
// tenants' limits; Open calls it once the catalog's tables are open.
func (e *Engine) openTableAdmin() error {
	own := map[string]float64{}
	switch b, err := os.ReadFile(filepath.Join(e.opts.Dir, tenantsFile)); {
	case errors.Is(err, os.ErrNotExist):
	case err != nil:
		return fmt.Errorf("temporalstore: tenants: %w", err)
	default:
		if err := json.Unmarshal(b, &own); err != nil {
			return fmt.Errorf("temporalstore: tenants: %w", err)
		}
		for t, q := range own {
			if CheckName(t) != nil || !(q > 0 || q == Disabled) || math.IsInf(q, 0) {
				return fmt.Errorf("%w: tenants: %q: %v", ErrInvalid, t, q)
			}
		}
	}
	e.tenants.setOwn(own)

	b, err := os.ReadFile(filepath.Join(e.opts.Dir, dropsFile))
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("temporalstore: drops: %w", err)
	}
	var d dropsState
	if err := json.Unmarshal(b, &d); err != nil {
		return fmt.Errorf("temporalstore: drops: %w", err)
	}
	used := map[string]bool{}
	for _, t := range e.tables {
		used[t.dir] = true
	}
	for _, dir := range slices.Concat(d.Removing, d.Retired) {
		if !filepath.IsLocal(filepath.FromSlash(dir)) || dir == standInDir || strings.HasPrefix(dir, standInDir+"/") {
			return fmt.Errorf("%w: drops: directory %q", ErrInvalid, dir)
		}
	}
	// What the catalog still lists was never dropped: a crash came
	// between the intent and the catalog.
	keep := func(dir string) bool { return used[dir] }
	removing, retired := len(d.Removing), len(d.Retired)
	d.Removing = slices.DeleteFunc(d.Removing, keep)
	d.Retired = slices.DeleteFunc(d.Retired, keep)
	e.mu.Lock()
	if len(d.Removing) == removing && len(d.Retired) == retired {
		e.admin.drops = d
	} else {
		err = e.saveDropsLocked(d)
	}
	e.mu.Unlock()
	if err != nil {
		return err
	}
	return e.removeDropped(d.Removing)
}

// SetTenantQPS sets tenant's limit of commands a second (Command.Tenant),
// with a burst of one second's worth: qps > 0 limits it, 0 lets
// Options.TenantQPS apply again, Disabled lets it run unlimited. The
// limits are kept in the engine's directory, so a restart keeps them;
// a limit changed takes effect at the tenant's next command.
func (e *Engine) SetTenantQPS(ctx context.Context, tenant string, qps float64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckName(tenant); err != nil {
		return err
	}
	if !(qps >= 0 || qps == Disabled) || math.IsInf(qps, 0) {
		return fmt.Errorf("%w: tenant limit %v (above 0, 0 for the default, %d for none)", ErrInvalid, qps, Disabled)
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	own := e.TenantLimits()
	if qps == 0 {
		delete(own, tenant)
	} else {
		own[tenant] = qps
	}
	b, err := json.MarshalIndent(own, "", "  ")
	if err != nil {
		return err
	}
	if err := writeDurably(e.opts.Dir, tenantsFile, b); err != nil {
		return fmt.Errorf("temporalstore: tenants: %w", err)
	}
	e.tenants.setOwn(own)
	return nil
}

// TenantQPS is the limit of commands a second that applies to tenant, 0
// for none, and whether it is the tenant's own (SetTenantQPS) rather than
// Options.TenantQPS.
func (e *Engine) TenantQPS(tenant string) (qps float64, own bool) {
	e.tenants.mu.Lock()
	defer e.tenants.mu.Unlock()
	_, own = e.tenants.own[tenant]
	return e.tenants.rateLocked(tenant), own
}

// TenantLimits returns the tenants' own limits (Disabled: none), by
// tenant; the others have Options.TenantQPS.
func (e *Engine) TenantLimits() map[string]float64 {
	e.tenants.mu.Lock()
	defer e.tenants.mu.Unlock()
	out := make(map[string]float64, len(e.tenants.own))
	for t, q := range e.tenants.own {
		out[t] = q
	}
	return out
}
