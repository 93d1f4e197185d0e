package temporalstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// Numbered databases (Redis's SELECT) over tables. Database 0 of a table
// is the table itself; database n > 0 is the table named base@n in the
// same namespace. '@' is outside the names CreateTable takes, so no table
// a user creates can take a database's name, and the HTTP surface, which
// creates tables by name, never reaches one by accident. A database's
// table is created on its first write (CreateDatabase), with its base
// table's options; until then a read of it answers as an empty table
// does, from a stand-in that holds nothing and takes no write.

// databaseSep separates a database's table name from its number.
const databaseSep = "@"

// DatabaseTable is the name of database db of table base ("" names
// DefaultTable): base itself for database 0.
func DatabaseTable(base string, db int) string {
	if db == 0 {
		return base
	}
	return cmp.Or(base, DefaultTable) + databaseSep + strconv.Itoa(db)
}

// databaseBase is the base table of a database's table name, and false
// for any other name.
func databaseBase(name string) (string, bool) {
	base, n, ok := strings.Cut(name, databaseSep)
	if !ok || base == "" || n == "" || n[0] == '0' || strings.Trim(n, "0123456789") != "" || len(n) > 9 {
		return "", false
	}
	return base, true
}

// CreateDatabase creates the table of database db of namespace/base,
// with base's options, unless it exists, and returns its name. Database 0
// is base, which must exist.
func (e *Engine) CreateDatabase(ctx context.Context, namespace, base string, db int) (string, error) {
	if err := ctx.Err(); err != nil {
		return "", err
	}
	namespace, base = cmp.Or(namespace, DefaultNamespace), cmp.Or(base, DefaultTable)
	if db < 0 {
		return "", fmt.Errorf("%w: database %d", ErrInvalid, db)
	}
	name := DatabaseTable(base, db)
	e.mu.RLock()
	bt, okBase := e.tables[tableName{namespace, base}]
	_, exists := e.tables[tableName{namespace, name}]
	closed := e.closed
	e.mu.RUnlock()
	switch {
	case closed:
		return "", ErrClosed
	case !okBase:
		return "", fmt.Errorf("%w: %s/%s", ErrNoTable, namespace, base)
	case exists:
		return name, nil
	}
	err := e.createTable(namespace, name, bt.opts)
	if err != nil && !errors.Is(err, ErrTableExists) {
		return "", err
	}
	return name, nil
}

// HasTable reports whether table namespace/name exists ("" naming the
// defaults); a database's table not written yet does not.
func (e *Engine) HasTable(namespace, name string) bool {
	view := e.view.Load()
	if view == nil {
		return false
	}
	_, ok := (*view)[tableName{cmp.Or(namespace, DefaultNamespace), cmp.Or(name, DefaultTable)}]
	return ok
}

// SwapTables exchanges the names of tables namespace/a and namespace/b,
// both of which must exist, at once for every command that names them
// after (Redis's SWAPDB): the catalog is rewritten with the two entries'
// directories exchanged, atomically and durably, and no data moves.
func (e *Engine) SwapTables(ctx context.Context, namespace, a, b string) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	namespace = cmp.Or(namespace, DefaultNamespace)
	ka, kb := tableName{namespace, cmp.Or(a, DefaultTable)}, tableName{namespace, cmp.Or(b, DefaultTable)}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	ta, okA := e.tables[ka]
	tb, okB := e.tables[kb]
	switch {
	case !okA:
		return fmt.Errorf("%w: %s/%s", ErrNoTable, ka.namespace, ka.name)
	case !okB:
		return fmt.Errorf("%w: %s/%s", ErrNoTable, kb.namespace, kb.name)
	case ka == kb:
		return nil
	}
	e.tables[ka], e.tables[kb] = tb, ta
	if err := e.saveCatalogLocked(); err != nil {
		e.tables[ka], e.tables[kb] = ta, tb
		return err
	}
	e.publishLocked()
	return nil
}

// standIn returns the empty, read-only table that answers for the
// databases of namespace/base not created yet, opening it at first need.
// It is no table of the catalog: its directory is emptied when opened.
func (e *Engine) standIn(namespace, base string) (*table, error) {
	key := tableName{namespace, base}
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return nil, ErrClosed
	}
	if t := e.standIns[key]; t != nil {
		return t, nil
	}
	bt, ok := e.tables[key]
	if !ok {
		return nil, fmt.Errorf("%w: %s/%s", ErrNoTable, namespace, base)
	}
	// One shard keeps it small; the base's key groups keep the
	// transaction rule the same as in a created database.
	opts := bt.opts
	opts.Shards, opts.Async, opts.SegmentBytes = 1, true, 64<<10
	dir := standInDir + "/" + namespace + "/" + base
	if err := os.RemoveAll(filepath.Join(e.opts.Dir, filepath.FromSlash(dir))); err != nil {
		return nil, fmt.Errorf("temporalstore: %w", err)
	}
	t, err := e.openTable(namespace, base+databaseSep+"empty", dir, opts)
	if err != nil {
		return nil, err
	}
	for i := range t.adm.shards {
		t.adm.shards[i].readOnly.Store(true)
	}
	if e.standIns == nil {
		e.standIns = map[tableName]*table{}
	}
	e.standIns[key] = t
	return t, nil
}

// standInDir holds the stand-ins' files; a leading '.' is outside the
// names a namespace may take.
const standInDir = ".empty"

// CopyBetween copies key of table namespace/from to dest of table
// namespace/to, with its expiry, as KindCopy does within a table: true if
// it did; not when key is absent, nor when dest exists and replace is not
// set. With move, key is then deleted from from (Redis's MOVE). The two
// tables' shards are taken in a fixed order, so that copies crossing in
// opposite directions cannot deadlock. The copy is written first, then
// the delete: two records of two logs, so a crash between them can leave
// the key in both tables, never in neither. Strings and every kind of
// collection are copied (series and control states as their images).
func (e *Engine) CopyBetween(ctx context.Context, namespace, from, to string, key, dest []byte, replace, move bool) (bool, error) {
	return e.copyBetween(ctx, nil, namespace, from, to, key, dest, replace, move)
}

func (e *Engine) copyBetween(ctx context.Context, x *scope, namespace, from, to string, key, dest []byte, replace, move bool) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if len(key) == 0 || len(dest) == 0 {
		return false, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	t1, i1, err := e.route(&Command{Namespace: namespace, Table: from, Key: key})
	if err != nil {
		return false, err
	}
	t2, i2, err := e.route(&Command{Namespace: namespace, Table: to, Key: dest})
	if err != nil {
		return false, err
	}
	if t1.dir == t2.dir { // by directory: SetTableLimits publishes a copy of a table
		return false, fmt.Errorf("%w: source and destination objects are the same", ErrInvalid)
	}
	if err := e.admitKind(t1, i1, move, ""); err != nil {
		return false, err
	}
	if err := e.admitKind(t2, i2, true, ""); err != nil {
		return false, err
	}
	// The two shards are held in the order of their tables' directories,
	// so that two opposite copies cannot deadlock.
	first, second := x.shard(t1, i1), x.shard(t2, i2)
	swap := t2.dir < t1.dir
	if swap {
		first, second = second, first
	}
	var done bool
	err = first.Exclusive(ctx, func(heldFirst *shard.Shard) error {
		return second.Exclusive(ctx, func(heldSecond *shard.Shard) error {
			s1, s2 := heldFirst, heldSecond
			if swap {
				s1, s2 = s2, s1
			}
			var cmds []command.Command
			err := s1.Read(ctx, func(v *shard.View) error {
				it, err := v.Get(key)
				if err != nil || !it.Exists {
					return err
				}
				if it.Obj != nil && (it.Obj.Kind == object.KindSeries || it.Obj.Kind == object.KindControl) {
					c, err := shard.CopyImage(dest, it.Obj)
					cmds = []command.Command{c}
					return err
				}
				if it.Obj == nil {
					it.Value = append([]byte(nil), it.Value...)
				}
				cmds, err = copyCommands(dest, it)
				return err
			})
			if err != nil || cmds == nil {
				return err
			}
			err = s2.Mutate(ctx, func(v *shard.View) ([]command.Command, error) {
				d, err := v.Get(dest)
				if err != nil || d.Exists && !replace {
					return nil, err
				}
				done = true
				return append([]command.Command{{Op: shard.OpDelete, Key: dest}}, cmds...), nil
			})
			if err != nil || !done || !move {
				return err
			}
			return s1.Mutate(ctx, func(*shard.View) ([]command.Command, error) {
				return []command.Command{{Op: shard.OpDelete, Key: key}}, nil
			})
		})
	})
	return done, engineErr(err)
}
