package resp

import (
	"strconv"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// Numbered databases, as Redis's SELECT, MOVE, SWAPDB: database 0 is the
// server's table and database n its table n (ts.DatabaseTable), created
// at the database's first write; a read of a database never written
// answers as an empty one. SWAPDB swaps two tables' names in the engine's
// catalog, so every connection that selected either sees the other's
// data, as in Redis.

// DefaultDatabases is Options.Databases when it gives none: Redis's 16.
const DefaultDatabases = 16

// MaxDatabases bounds Options.Databases (the engine names a database's
// table with up to 9 digits, and INFO keyspace looks at each).
const MaxDatabases = 1 << 20

func registerDatabases() {
	register(
		&cmdSpec{name: "select", arity: 2, run: cmdSelect},
		&cmdSpec{name: "move", arity: 3, flags: flagWrite | flagOwnDB, first: 1, last: 1, step: 1, run: cmdMove},
		&cmdSpec{name: "swapdb", arity: 3, flags: flagWrite | flagOwnDB, run: cmdSwapDB},
	)
}

// dbTable is the table of database db of the server.
func (c *conn) dbTable(db int) string { return ts.DatabaseTable(c.s.opts.Table, db) }

// dbArg parses a database index, writing Redis's error when it is not
// one: notInt when it is no integer, "ERR DB index is out of range" when
// it is outside the databases.
func (c *conn) dbArg(b []byte, notInt string) (int, bool) {
	n, err := parseInt(b)
	if err != nil {
		c.errorf("%s", notInt)
		return 0, false
	}
	if n < 0 || n >= int64(c.s.opts.Databases) {
		c.errorf("ERR DB index is out of range")
		return 0, false
	}
	return int(n), true
}

// selectDB makes db the connection's database.
func (c *conn) selectDB(db int) {
	c.db.Store(int32(db))
	c.table = c.dbTable(db)
	c.dbReady = db == 0 || c.s.opts.Engine.HasTable(c.namespace, c.table)
}

// ensureDB creates the connection's database's table before a write, if
// it is not there yet; on an error it writes the reply and returns false.
func (c *conn) ensureDB() bool {
	if c.dbReady {
		return true
	}
	if !c.createDB(int(c.db.Load())) {
		return false
	}
	c.dbReady = true
	return true
}

// createDB creates database db's table unless it exists.
func (c *conn) createDB(db int) bool {
	if db == 0 {
		return true
	}
	if _, err := c.s.opts.Engine.CreateDatabase(c.ctx, c.namespace, c.s.opts.Table, db); err != nil {
		c.engineError(err)
		return false
	}
	return true
}

func cmdSelect(c *conn, a [][]byte) {
	db, ok := c.dbArg(a[1], errNotInt.Error())
	if !ok {
		return
	}
	c.selectDB(db)
	c.w.ok()
}

// cmdMove is MOVE key db: 1 when moved; 0 when key is absent, or exists
// in db (both keep theirs). The key is written to db first, then deleted
// here (ts.Engine.CopyBetween): a crash between the two can leave it in
// both databases, never in neither.
func cmdMove(c *conn, a [][]byte) {
	db, ok := c.dbArg(a[2], errNotInt.Error())
	if !ok {
		return
	}
	if db == int(c.db.Load()) {
		c.errorf("ERR source and destination objects are the same")
		return
	}
	c.copyToDB(a[1], a[1], db, false, true)
}

// copyToDB copies (with move, moves) key to dest of database db, which is
// not the connection's, and replies 1 or 0. A database is created only
// when a key is to be written to it.
func (c *conn) copyToDB(key, dest []byte, db int, replace, move bool) {
	r, ok := c.exec(ts.Command{Kind: ts.KindExistsKeys, Keys: [][]byte{key}})
	if !ok {
		return
	}
	if r.Int == 0 {
		c.w.int(0)
		return
	}
	if !c.createDB(db) {
		return
	}
	done, err := c.engine().CopyBetween(c.ctx, c.namespace, c.table, c.dbTable(db), key, dest, replace, move)
	if err != nil {
		c.engineError(err)
		return
	}
	c.w.int(b2i(done))
}

// cmdSwapDB is SWAPDB a b: the two databases' tables exchange names, at
// once and durably, whatever their sizes. Connections that selected
// either see the other's data from their next command; blocked clients
// are woken to look again (the write flag does it), and a WATCH of a key
// of either fails its EXEC when the key's version differs across the two.
func cmdSwapDB(c *conn, a [][]byte) {
	x, err := parseInt(a[1])
	if err != nil {
		c.errorf("ERR invalid first DB index")
		return
	}
	y, err := parseInt(a[2])
	if err != nil {
		c.errorf("ERR invalid second DB index")
		return
	}
	n := int64(c.s.opts.Databases)
	if x < 0 || x >= n || y < 0 || y >= n {
		c.errorf("ERR DB index is out of range")
		return
	}
	if x == y {
		c.w.ok()
		return
	}
	if !c.createDB(int(x)) || !c.createDB(int(y)) {
		return
	}
	if err := c.s.opts.Engine.SwapTables(c.ctx, c.namespace, c.dbTable(int(x)), c.dbTable(int(y))); err != nil {
		c.engineError(err)
		return
	}
	if cur := int64(c.db.Load()); cur == x || cur == y {
		c.dbReady = true // both exist now
	}
	c.w.ok()
}

// keyspaceInfo is INFO keyspace's lines: one for each database that holds
// keys, as Redis lists them.
func (c *conn) keyspaceInfo() []string {
	if c.s.opts.Engine == nil {
		return nil
	}
	st, err := c.s.opts.Engine.Stats()
	if err != nil {
		return nil
	}
	ns := c.namespace
	if ns == "" {
		ns = ts.DefaultNamespace
	}
	keys := map[string]int64{}
	for _, s := range st {
		if s.Namespace == ns {
			keys[s.Table] += int64(s.Keys)
		}
	}
	var lines []string
	for db := range c.s.opts.Databases {
		name := c.dbTable(db)
		if name == "" {
			name = ts.DefaultTable
		}
		if n := keys[name]; n > 0 {
			lines = append(lines, "db"+strconv.Itoa(db)+":keys="+strconv.FormatInt(n, 10)+",expires=0,avg_ttl=0")
		}
	}
	return lines
}
