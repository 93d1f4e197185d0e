package temporalstore

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cespare/xxhash/v2"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/crc16"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
)

// Defaults.
const (
	// DefaultNamespace and DefaultTable address commands that name none.
	DefaultNamespace = "default"
	DefaultTable     = "default"
	// DefaultShards is a new table's shard count when its options give
	// none. The server sizes its default table with SuggestedShards instead.
	DefaultShards = 4
	// DefaultRangeHi is the top of a new table's routing range 0..1023.
	DefaultRangeHi = 1023
	// DefaultSegmentBytes is a new table's log segment size.
	DefaultSegmentBytes = 8 << 20
)

// SuggestedShards is a shard count for a table on a machine with procs
// processors: 1 below 4 processors, 2 below 8, DefaultShards (4) from 8 on,
// always a divisor of DefaultShards, so that a table given DefaultShards
// KeyGroups keeps the key-grouping rule of a default table. Every shard
// has its own lock and log, so a write pipeline is split into one log append
// per shard it touches, and each shard's appends are fsynced on their own.
// More shards spread lock and apply work over more processors; on few
// processors that spread buys nothing and the extra appends and fsyncs cost
// CPU the requests need. Measured on 2 processors, one shard against four:
// async SET +14 % at pipeline 1 and +25 % at 16, durable SET +25 % and
// durable FAPPEND +50 %, GET, FQUERY and counters unchanged.
func SuggestedShards(procs int) int {
	switch {
	case procs < 4:
		return 1
	case procs < 8:
		return 2
	}
	return DefaultShards
}

// PortableKeyGroups is a KeyGroups for a table of shards shards under which
// the same keys may share a transaction as on a default table of
// DefaultShards: DefaultShards when shards divides it, shards otherwise.
func PortableKeyGroups(shards int) int {
	if DefaultShards%shards == 0 {
		return DefaultShards
	}
	return shards
}

// Options configures an Engine.
type Options struct {
	// Dir is the data directory. Required.
	Dir string
	// Now is the clock. Default: time.Now.
	Now func() time.Time
	// TenantQPS limits each tenant (Command.Tenant) to this many commands
	// a second, with a burst of one second's worth. Default: 0, no limit.
	TenantQPS float64

	// OpenLog opens each shard's log. Required: package storage/disk's
	// OpenLog keeps them in the shards' directories, and package local
	// wires it.
	OpenLog storage.OpenLogFunc
	// RecordCache, when set, holds log records in memory in front of the
	// logs, shared by every shard. The engine does not close it. Default:
	// nil, reads go to the logs.
	RecordCache storage.RecordCache
	// CacheBytes is the memory budget for records: the wiring in package
	// local sizes RecordCache with it, and besides the cache each shard
	// holds its newest string records, up to RecentShardBytes or
	// CacheBytes/4 if less (and CacheBytes/4 for all shards together),
	// until no key points at them or newer ones push them into the cache:
	// the writes and reads of fresh keys find them without the cache's
	// work. Default: DefaultCacheBytes; Disabled turns the recent records
	// off. Without a RecordCache there are none either.
	CacheBytes int64
	// CollectionBytes is the memory budget of the resident hashes, sets,
	// sorted sets and lists, shared by every shard. Past it, the
	// collections least recently used are spilled to their shard's log and
	// served from there (through the record cache) until written or read
	// again with room to spare. Default: DefaultCollectionBytes; Disabled:
	// no limit, every collection stays in memory.
	CollectionBytes int64

	// MaintenanceInterval is how often a maintenance round runs in the
	// background (see Maintain). Default: DefaultMaintenanceInterval;
	// negative: never (call Maintain yourself).
	MaintenanceInterval time.Duration
	// SweepBudget is how many index entries a round's expiry sweep looks
	// at per shard. Default: DefaultSweepBudget.
	SweepBudget int
	// CompactSpaceAmp is the space amplification (log bytes written over
	// live bytes) above which a round compacts a shard's log. Default:
	// DefaultCompactSpaceAmp.
	CompactSpaceAmp float64
	// CompactSegments is how many log segments a round compacts per shard
	// at most. Default: DefaultCompactSegments.
	CompactSegments int
	// CompactMinGarbage is the garbage (log bytes written that no key
	// needs) below which a shard is not compacted, whatever its space
	// amplification. Default: DefaultCompactMinGarbage.
	CompactMinGarbage int64
	// CheckpointRecords is how many records a shard applies before a round
	// checkpoints it, bounding replay at the next open. Default:
	// DefaultCheckpointRecords.
	CheckpointRecords uint64
	// Logger receives the engine's logs. Default: slog.Default().
	Logger *slog.Logger
	// DefaultTableOptions are the options of the default table that a
	// new data directory gets (an existing one keeps its own). Default:
	// the zero TableOptions, a durable table with the table defaults.
	DefaultTableOptions TableOptions
}

// Disabled turns off an option whose zero value means its default.
const Disabled = -1

// Option defaults.
const (
	DefaultCacheBytes          = 64 << 20
	RecentShardBytes           = 256 << 20
	DefaultCollectionBytes     = 1 << 30
	DefaultMaintenanceInterval = time.Second
	DefaultSweepBudget         = 1000
	DefaultCompactSpaceAmp     = 2.0
	DefaultCompactSegments     = 4
	DefaultCompactMinGarbage   = 16 << 20
	DefaultCheckpointRecords   = 100_000
)

func (o *Options) setDefaults() {
	if o.Now == nil {
		o.Now = time.Now
	}
	if o.CacheBytes == 0 {
		o.CacheBytes = DefaultCacheBytes
	}
	if o.CollectionBytes == 0 {
		o.CollectionBytes = DefaultCollectionBytes
	}
	if o.MaintenanceInterval == 0 {
		o.MaintenanceInterval = DefaultMaintenanceInterval
	}
	if o.SweepBudget == 0 {
		o.SweepBudget = DefaultSweepBudget
	}
	if o.CompactSpaceAmp == 0 {
		o.CompactSpaceAmp = DefaultCompactSpaceAmp
	}
	if o.CompactSegments == 0 {
		o.CompactSegments = DefaultCompactSegments
	}
	if o.CompactMinGarbage == 0 {
		o.CompactMinGarbage = DefaultCompactMinGarbage
	}
	if o.CheckpointRecords == 0 {
		o.CheckpointRecords = DefaultCheckpointRecords
	}
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
}

// Validate reports options the engine cannot take.
func (o Options) Validate() error {
	switch {
	case o.Dir == "":
		return fmt.Errorf("%w: Options.Dir is required", ErrInvalid)
	case o.OpenLog == nil:
		return fmt.Errorf("%w: Options.OpenLog is required (package local wires the default)", ErrInvalid)
	case o.CacheBytes < Disabled:
		return fmt.Errorf("%w: CacheBytes %d", ErrInvalid, o.CacheBytes)
	case o.CollectionBytes < Disabled:
		return fmt.Errorf("%w: CollectionBytes %d", ErrInvalid, o.CollectionBytes)
	case o.SweepBudget < 0 || o.CompactSegments < 0 || o.CompactSpaceAmp < 0 || o.TenantQPS < 0:
		return fmt.Errorf("%w: negative maintenance option or limit", ErrInvalid)
	case o.CompactSpaceAmp != 0 && o.CompactSpaceAmp < 1:
		return fmt.Errorf("%w: CompactSpaceAmp %.2f is below 1", ErrInvalid, o.CompactSpaceAmp)
	}
	return nil
}

// TableOptions configures a table. The zero value is a durable table with
// the defaults below.
type TableOptions struct {
	// Shards is the number of shards. Default: DefaultShards (4).
	Shards int `json:"shards"`
	// KeyGroups partitions the table's keys for the commands that must
	// keep theirs together: a MULTI/EXEC (watched keys included) and the
	// two-key commands (RENAME, SMOVE, LMOVE, the STORE forms) take keys
	// of one group, ShardOf(key, KeyGroups) (a common {hash tag} puts
	// keys in one; see KeyGroup), and get ErrCrossShard otherwise. It must be a multiple
	// of Shards, so that a group lies within one shard. More groups than
	// shards keep that rule the same for tables whose shard counts differ:
	// the server's default table has 4 groups whatever the shard count it
	// chose for the machine. Default: Shards.
	KeyGroups int `json:"key_groups,omitempty"`
	// SlotRouting routes keys by Redis Cluster hash slot (KeySlot) instead
	// of by hash: slot ranges map onto shards (SlotShard), and a
	// multi-key command's keys must share a slot (KeyGroups is then
	// unused). A cluster routes its default table so, so that Redis
	// Cluster clients can address a shard's leader directly. Fixed when
	// the table is created. Default: false.
	SlotRouting bool `json:"slot_routing,omitempty"`
	// Async acknowledges writes once they reach the operating system, with
	// a sync every SyncInterval, instead of after fsync. Default: false
	// (durable).
	Async bool `json:"async"`
	// SyncInterval is how often an Async table fsyncs what it acknowledged:
	// the most a machine crash can lose (a killed process loses nothing).
	// Redis's appendfsync everysec is 1 s. Ignored by a durable table.
	// Default: DefaultSyncInterval (10 ms); at most MaxSyncInterval.
	SyncInterval time.Duration `json:"sync_interval,omitempty"`
	// RangeLo and RangeHi bound the routing range of the table's buckets,
	// recorded in every shard's stamp. Default: 0..DefaultRangeHi.
	RangeLo uint32 `json:"range_lo"`
	RangeHi uint32 `json:"range_hi"`
	// ReadQPS and WriteQPS limit the table's reads and writes a second,
	// with a burst of one second's worth. Default: 0, no limit.
	ReadQPS  float64 `json:"read_qps,omitempty"`
	WriteQPS float64 `json:"write_qps,omitempty"`
	// ShardRate and ShardBurst limit each shard's commands: ShardRate a
	// second, ShardBurst at once. Default: 0, no limit (ShardBurst then
	// at least 1).
	ShardRate  float64 `json:"shard_rate,omitempty"`
	ShardBurst int     `json:"shard_burst,omitempty"`
	// SegmentBytes is the size of each shard's log segment files, the unit
	// compaction reclaims. Default: DefaultSegmentBytes. Smaller segments
	// reclaim space in finer steps; opening a shard reads its segments
	// whole, the preallocated tail of the last one included.
	SegmentBytes int64 `json:"segment_bytes,omitempty"`
	// DefaultTTL is the TTL of a string SET, MSET or row write that gives
	// none (and does not keep the old one). Default: 0, no expiry.
	DefaultTTL time.Duration `json:"default_ttl,omitempty"`
	// FeatureMaxSize bounds the points a feature series keeps, trimmed
	// oldest first. Default: DefaultFeatureMaxSize.
	FeatureMaxSize int `json:"feature_max_size,omitempty"`
	// FeatureMaxAge drops the points of the table's feature series older
	// than this, at every write of the series, and hides them from reads
	// until then. A write's Command.MaxAge overrides it for its key.
	// Default: 0, no age limit.
	FeatureMaxAge time.Duration `json:"feature_max_age,omitempty"`
	// NoRollup turns off the rollup ladder of the table's feature series:
	// every aggregate then scans the window's points. Default: false (the
	// ladder is on; it answers a 10,000-point aggregate some 50× faster).
	NoRollup bool `json:"no_rollup,omitempty"`
}

// DefaultSyncInterval and MaxSyncInterval bound TableOptions.SyncInterval.
const (
	DefaultSyncInterval = 10 * time.Millisecond
	MaxSyncInterval     = time.Minute
)

// DefaultFeatureMaxSize is a table's FeatureMaxSize when it gives none.
const DefaultFeatureMaxSize = 10_000

func (o TableOptions) withDefaults() TableOptions {
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	if o.KeyGroups == 0 {
		o.KeyGroups = o.Shards
	}
	if o.RangeLo == 0 && o.RangeHi == 0 {
		o.RangeHi = DefaultRangeHi
	}
	if o.SegmentBytes == 0 {
		o.SegmentBytes = DefaultSegmentBytes
	}
	if o.FeatureMaxSize == 0 {
		o.FeatureMaxSize = DefaultFeatureMaxSize
	}
	if o.SyncInterval == 0 {
		o.SyncInterval = DefaultSyncInterval
	}
	return o
}

// Validate reports options a table cannot take.
func (o TableOptions) Validate() error {
	shards := cmp.Or(o.Shards, DefaultShards)
	switch {
	case o.Shards < 0 || o.Shards > 4096:
		return fmt.Errorf("%w: shard count %d (1..4096)", ErrInvalid, o.Shards)
	case o.KeyGroups < 0 || o.KeyGroups > 4096:
		return fmt.Errorf("%w: key group count %d (1..4096)", ErrInvalid, o.KeyGroups)
	case o.KeyGroups > 0 && o.KeyGroups%shards != 0:
		return fmt.Errorf("%w: key group count %d is not a multiple of the shard count %d", ErrInvalid, o.KeyGroups, shards)
	case o.RangeLo > o.RangeHi:
		return fmt.Errorf("%w: routing range %d..%d", ErrInvalid, o.RangeLo, o.RangeHi)
	case o.ReadQPS < 0 || o.WriteQPS < 0 || o.ShardRate < 0 || o.ShardBurst < 0:
		return fmt.Errorf("%w: negative limit", ErrInvalid)
	case o.DefaultTTL < 0 || o.FeatureMaxSize < 0:
		return fmt.Errorf("%w: negative default TTL or feature_max_size", ErrInvalid)
	case o.SegmentBytes < 0 || o.SegmentBytes > 0 && o.SegmentBytes < 64<<10:
		return fmt.Errorf("%w: segment size %d (at least 64 KiB)", ErrInvalid, o.SegmentBytes)
	case o.SyncInterval < 0 || o.SyncInterval > MaxSyncInterval:
		return fmt.Errorf("%w: sync interval %s (0 for the default, at most %s)", ErrInvalid, o.SyncInterval, MaxSyncInterval)
	}
	return nil
}

// Engine is the store: namespaces of tables of shards.
type Engine struct {
	opts Options

	// panics counts the panics contain caught (Panics adds the shards').
	panics atomic.Int64

	mu     sync.RWMutex
	tables map[tableName]*table
	closed bool
	// view is a copy of tables, replaced whenever tables changes and nil
	// once closed: a command finds its table without taking mu, whose
	// reader count every command on every core would otherwise write.
	view atomic.Pointer[map[tableName]*table]
	// standIns answer for the databases not created yet, by base table
	// (standIn); under mu.
	standIns map[tableName]*table
	tenants  tenants
	// cache is the record cache the shards share (nil: none).
	cache storage.RecordCache
	// recent bounds the shards' recent records together (nil without a
	// cache).
	recent *shard.RecentPool
	// collections is the resident collections' memory budget (nil: none).
	collections *shard.Budget
	// stopMaint ends the background maintenance loop; maintDone closes
	// when it has. maintMu serializes maintenance rounds.
	stopMaint, maintDone chan struct{}
	maintMu              sync.Mutex
	// lastEvictions is the cache's eviction count at the last round.
	lastEvictions int64
	// maintStats adds up the rounds; under maintStatsMu, so that a
	// scrape does not wait for a round.
	maintStatsMu sync.Mutex
	maintStats   MaintenanceStats
	// expired are the OnExpired functions, writes the OnWrite ones.
	expired hooks[func(namespace, table string, keys [][]byte)]
	writes  hooks[WriteHook]
	// admin is what DropTable and UseTable keep (tables.go); under mu.
	admin tableAdmin
}

type tableName struct{ namespace, name string }

type table struct {
	opts TableOptions
	// dir is where the table's shards live, relative to the engine's
	// directory, slash-separated: namespace/name when it was created,
	// kept in the catalog since, so that SwapTables can exchange two
	// tables' names without moving their files.
	dir    string
	shards []*shard.Shard
	adm    *tableAdmission
	// readOnly are the shards SetTableReadOnly put in read-only mode,
	// in order, kept in the catalog. A table's fields never change once
	// it is published: SetTableLimits and SetTableReadOnly publish a
	// copy, sharing shards and adm.
	readOnly []int
}

// catalogFile lists the tables, so that Open finds them.
const catalogFile = CatalogFile

// CatalogFile is the catalog's name in an engine's directory.
const CatalogFile = "catalog.json"

type catalogEntry = CatalogTable

// CatalogTable is a table as an engine's catalog lists it (ReadCatalog).
type CatalogTable struct {
	Namespace string       `json:"namespace"`
	Table     string       `json:"table"`
	Options   TableOptions `json:"options"`
	// Dir is the table's directory under the engine's, slash separated
	// (table.dir). Catalogs written before tables could be swapped have
	// none: namespace/table then, which ReadCatalog fills in.
	Dir string `json:"dir,omitempty"`
	// ReadOnly are the shards SetTableReadOnly put in read-only mode.
	ReadOnly []int `json:"read_only,omitempty"`
}

// ReadCatalog reads the catalog of the engine in dir without opening the
// engine (tsctl inspect and verify): its tables in name order, each with
// its directory. A directory with no catalog fails with fs.ErrNotExist.
func ReadCatalog(dir string) ([]CatalogTable, error) {
	b, err := os.ReadFile(filepath.Join(dir, catalogFile))
	if err != nil {
		return nil, fmt.Errorf("temporalstore: catalog: %w", err)
	}
	var cat []CatalogTable
	if err := json.Unmarshal(b, &cat); err != nil {
		return nil, fmt.Errorf("temporalstore: catalog: %w", err)
	}
	for i := range cat {
		cat[i].Dir = cmp.Or(cat[i].Dir, cat[i].Namespace+"/"+cat[i].Table)
	}
	slices.SortFunc(cat, func(a, b CatalogTable) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Table, b.Table))
	})
	return cat, nil
}

// Open opens (creating if needed) the engine in opts.Dir and every table
// its catalog lists, recovering each shard from its checkpoint and log. A
// new directory gets the table DefaultNamespace/DefaultTable with default
// options.
func Open(ctx context.Context, opts Options) (*Engine, error) {
	if err := opts.Validate(); err != nil {
		return nil, err
	}
	opts.setDefaults()
	if err := os.MkdirAll(opts.Dir, 0o755); err != nil {
		return nil, fmt.Errorf("temporalstore: %w", err)
	}
	if _, err := os.Stat(filepath.Join(opts.Dir, RestoreMarker)); err == nil {
		return nil, fmt.Errorf("%w: %s", ErrRestoreIncomplete, opts.Dir)
	}
	e := &Engine{opts: opts, tables: map[tableName]*table{}, cache: opts.RecordCache, maintStats: MaintenanceStats{Stages: zeroStages()}}
	if e.cache != nil && opts.CacheBytes != Disabled {
		e.recent = shard.NewRecentPool(opts.CacheBytes / 4)
	}
	if opts.CollectionBytes != Disabled {
		e.collections = shard.NewBudget(opts.CollectionBytes)
	}
	e.tenants = tenants{perSec: opts.TenantQPS, m: map[string]*limiter{}}
	cat, err := ReadCatalog(opts.Dir)
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return nil, err
	}
	if err == nil {
		for _, c := range cat {
			if err := ctx.Err(); err != nil {
				e.Close()
				return nil, err
			}
			// Catalogs written before a field existed lack it: its
			// default applies (KeyGroups: the shard count).
			if err := c.Options.Validate(); err != nil {
				e.Close()
				return nil, fmt.Errorf("temporalstore: catalog: table %s/%s: %w", c.Namespace, c.Table, err)
			}
			dir := c.Dir
			if !filepath.IsLocal(filepath.FromSlash(dir)) {
				e.Close()
				return nil, fmt.Errorf("%w: catalog: table %s/%s: directory %q", ErrInvalid, c.Namespace, c.Table, dir)
			}
			t, err := e.openTable(c.Namespace, c.Table, dir, c.Options.withDefaults())
			if err != nil {
				e.Close()
				return nil, err
			}
			if err := t.restoreReadOnly(c.ReadOnly); err != nil {
				t.close()
				e.Close()
				return nil, fmt.Errorf("temporalstore: catalog: table %s/%s: %w", c.Namespace, c.Table, err)
			}
			e.tables[tableName{c.Namespace, c.Table}] = t
		}
	}
	e.publishLocked()
	// Drops a crash interrupted are finished, and the tenants' limits
	// read, before any command runs.
	if err := e.openTableAdmin(); err != nil {
		e.Close()
		return nil, err
	}
	if len(e.tables) == 0 {
		// A new data directory gets the default table, so that commands
		// naming no table work from the start.
		if err := e.CreateTable(ctx, DefaultNamespace, DefaultTable, opts.DefaultTableOptions); err != nil {
			e.Close()
			return nil, err
		}
	}
	if opts.MaintenanceInterval > 0 {
		e.stopMaint = make(chan struct{})
		e.maintDone = make(chan struct{})
		go e.maintain()
	}
	return e, nil
}

var nameRE = regexp.MustCompile(`^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$`)

// CreateTable creates namespace/name with opts.
func (e *Engine) CreateTable(ctx context.Context, namespace, name string, opts TableOptions) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if !nameRE.MatchString(namespace) || !nameRE.MatchString(name) {
		return fmt.Errorf("%w: table name %q/%q", ErrInvalid, namespace, name)
	}
	return e.createTable(namespace, name, opts)
}

// createTable is CreateTable for a checked name (a database's table
// included, whose name CreateTable refuses).
func (e *Engine) createTable(namespace, name string, opts TableOptions) error {
	if err := opts.Validate(); err != nil {
		return err
	}
	opts = opts.withDefaults()
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.closed {
		return ErrClosed
	}
	key := tableName{namespace, name}
	if _, ok := e.tables[key]; ok {
		return fmt.Errorf("%w: %s/%s", ErrTableExists, namespace, name)
	}
	t, err := e.openTable(namespace, name, e.freeDirLocked(namespace, name), opts)
	if err != nil {
		return err
	}
	e.tables[key] = t
	if err := e.saveCatalogLocked(); err != nil {
		delete(e.tables, key)
		t.close()
		return err
	}
	e.publishLocked()
	return nil
}

// recentBytes is each shard's budget for its newest string records: none
// without a record cache.
func (e *Engine) recentBytes() int64 {
	if e.recent == nil {
		return 0
	}
	return min(RecentShardBytes, e.opts.CacheBytes/4)
}

// freeDirLocked is the directory for a new table namespace/name:
// namespace/name, unless a swapped table already lives there.
func (e *Engine) freeDirLocked(namespace, name string) string {
	used := map[string]bool{}
	for _, t := range e.tables {
		used[t.dir] = true
	}
	dir := namespace + "/" + name
	// Nor a dropped table's: records are cached, and a log kept outside
	// the directory found, by directory.
	for i := 1; used[dir] || e.admin.retired(dir); i++ {
		dir = fmt.Sprintf("%s/%s~%d", namespace, name, i)
	}
	return dir
}

// openTable opens the table kept in dir (relative to the engine's
// directory, slash-separated) as namespace/name.
func (e *Engine) openTable(namespace, name, dir string, opts TableOptions) (*table, error) {
	t := &table{opts: opts, dir: dir, adm: newTableAdmission(opts)}
	for i := range opts.Shards {
		dir := filepath.Join(e.opts.Dir, filepath.FromSlash(t.dir), fmt.Sprintf("shard-%04d", i))
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.close()
			return nil, fmt.Errorf("temporalstore: %w", err)
		}
		s, err := shard.Open(dir, shard.Options{
			OpenLog:      e.opts.OpenLog,
			Namespace:    namespace,
			Table:        name,
			ShardIndex:   i,
			Durable:      !opts.Async,
			SyncInterval: opts.SyncInterval,
			Now:          e.opts.Now,
			Stamp:        shard.Stamp{ShardID: uint32(i), RangeLo: opts.RangeLo, RangeHi: opts.RangeHi},
			Cache:        e.cache,
			Collections:  e.collections,
			SegmentSize:  opts.SegmentBytes,
			// By directory, which a swap keeps: namespace/name/i for a
			// table never swapped, as before directories were recorded.
			CacheID:     xxhash.Sum64String(fmt.Sprintf("%s/%d", t.dir, i)),
			RecentBytes: e.recentBytes(),
			RecentPool:  e.recent,
			Logger:      e.opts.Logger.With("namespace", namespace, "table", name, "shard", i),
		})
		if err != nil {
			t.close()
			return nil, fmt.Errorf("temporalstore: open %s/%s shard %d: %w", namespace, name, i, err)
		}
		if skipped := s.Skipped(); len(skipped) > 0 {
			// Each panicked when applied: an engine bug, to report.
			e.opts.Logger.Warn("temporalstore: shard skips log records that panicked when applied",
				"namespace", namespace, "table", name, "shard", i, "records", skipped)
		}
		t.shards = append(t.shards, s)
	}
	return t, nil
}

func (t *table) close() error {
	var err error
	for _, s := range t.shards {
		err = errors.Join(err, s.Close())
	}
	return err
}

// saveCatalogLocked writes the catalog atomically and durably.
func (e *Engine) saveCatalogLocked() error {
	b, err := e.catalogLocked()
	if err != nil {
		return err
	}
	if err := writeDurably(e.opts.Dir, catalogFile, b); err != nil {
		return fmt.Errorf("temporalstore: catalog: %w", err)
	}
	return nil
}

// catalogLocked is the catalog file's content: the tables, by name.
func (e *Engine) catalogLocked() ([]byte, error) {
	cat := make([]catalogEntry, 0, len(e.tables))
	for k, t := range e.tables {
		cat = append(cat, t.catalogEntry(k))
	}
	slices.SortFunc(cat, func(a, b catalogEntry) int {
		return cmp.Or(cmp.Compare(a.Namespace, b.Namespace), cmp.Compare(a.Table, b.Table))
	})
	return json.MarshalIndent(cat, "", "  ")
}

// writeDurably replaces dir/name with b atomically and durably: a
// temporary file, fsynced, renamed over it, the directory fsynced.
func writeDurably(dir, name string, b []byte) error {
	name = filepath.Join(dir, name)
	tmp := name + ".tmp"
	if err := os.WriteFile(tmp, b, 0o644); err != nil {
		return err
	}
	f, err := os.Open(tmp)
	if err == nil {
		err = errors.Join(f.Sync(), f.Close())
	}
	if err == nil {
		err = os.Rename(tmp, name)
	}
	if err == nil {
		err = syncDir(dir)
	}
	return err
}

// syncDir fsyncs a directory, making the entries added, renamed or
// removed in it durable.
func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	return errors.Join(d.Sync(), d.Close())
}

// ShardProgress returns the index of the last record shard sh of table
// namespace/name applied, and of the last its log holds: a replica of a
// replicated shard applies what its log receives a little after.
func (e *Engine) ShardProgress(namespace, name string, sh int) (applied, last uint64, err error) {
	t, err := e.tableNamed(namespace, name)
	if err != nil {
		return 0, 0, err
	}
	if sh < 0 || sh >= len(t.shards) {
		return 0, 0, fmt.Errorf("%w: shard %d of %d", ErrInvalid, sh, len(t.shards))
	}
	applied, last = t.shards[sh].Progress()
	return applied, last, nil
}

// ShardOf is the shard of key in a table of n shards routed by hash: XXH64
// (seed 0) of the key's hash tag, modulo n. It is stable across builds and
// processes.
func ShardOf(key []byte, n int) int { return int(xxhash.Sum64(HashTag(key)) % uint64(n)) }

// SlotShard is the shard of a hash slot in a table of n shards routed by
// slot (TableOptions.SlotRouting): the slots split into n ranges of
// consecutive slots, as a Redis Cluster of n masters would take them.
func SlotShard(slot, n int) int { return slot * n / HashSlots }

// KeyShard is key's shard in a table with options o (defaults applied).
func (o TableOptions) KeyShard(key []byte) int {
	if o.SlotRouting {
		return SlotShard(KeySlot(key), o.Shards)
	}
	return ShardOf(key, o.Shards)
}

// KeyGroup is key's key group in a table with options o (defaults
// applied): its hash slot when the table routes by slot, so that the keys
// a multi-key command takes must share a slot, as in Redis Cluster.
func (o TableOptions) KeyGroup(key []byte) int {
	if o.SlotRouting {
		return KeySlot(key)
	}
	return ShardOf(key, o.KeyGroups)
}

// BucketOf is key's bucket in a routing range lo..hi: the same hash as
// ShardOf, over the range. Buckets are the unit a table's keys would move
// in between shards; the range is in every shard's stamp.
func BucketOf(key []byte, lo, hi uint32) uint32 {
	return lo + uint32(xxhash.Sum64(HashTag(key))%(uint64(hi-lo)+1))
}

// HashSlots is the number of Redis Cluster hash slots.
const HashSlots = 16384

// KeySlot is key's Redis Cluster hash slot: CRC-16/XMODEM of its hash tag,
// modulo HashSlots, as CLUSTER KEYSLOT answers.
func KeySlot(key []byte) int { return int(crc16.Checksum(HashTag(key)) % HashSlots) }

// HashTag is the part of key that routes it, as in Redis Cluster: the
// bytes between the first '{' and the first '}' after it, when there are
// any; otherwise the whole key. Keys with the same tag share a shard, so
// multi-key kinds (RENAME, LMOVE, MSET) can address them atomically.
func HashTag(key []byte) []byte {
	if i := bytes.IndexByte(key, '{'); i >= 0 {
		if j := bytes.IndexByte(key[i+1:], '}'); j > 0 {
			return key[i+1 : i+1+j]
		}
	}
	return key
}

// route returns the table c addresses and the index of its key's shard.
func (e *Engine) route(c *Command) (*table, int, error) {
	t, err := e.table(c)
	if err != nil {
		return nil, 0, err
	}
	return t, t.opts.KeyShard(c.Key), nil
}

// table returns the table c addresses.
func (e *Engine) table(c *Command) (*table, error) {
	return e.tableNamed(c.Namespace, c.Table)
}

// publishLocked makes the tables as they are now the commands' view.
func (e *Engine) publishLocked() {
	view := maps.Clone(e.tables)
	e.view.Store(&view)
}

// tableNamed returns the table (ns, name), "" naming the defaults.
func (e *Engine) tableNamed(ns, name string) (*table, error) {
	if ns == "" {
		ns = DefaultNamespace
	}
	if name == "" {
		name = DefaultTable
	}
	view := e.view.Load()
	if view == nil {
		return nil, ErrClosed
	}
	t, ok := (*view)[tableName{ns, name}]
	if !ok {
		if base, ok := databaseBase(name); ok {
			return e.standIn(ns, base)
		}
		return nil, fmt.Errorf("%w: %s/%s", ErrNoTable, ns, name)
	}
	return t, nil
}

// Close stops maintenance and closes every table. Later calls fail with
// ErrClosed.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	e.view.Store(nil)
	e.mu.Unlock()
	if e.stopMaint != nil {
		close(e.stopMaint)
		<-e.maintDone
	}
	e.maintMu.Lock() // a round Maintain runs finishes first
	defer e.maintMu.Unlock()
	var err error
	for _, t := range e.tables {
		err = errors.Join(err, t.close())
	}
	for _, t := range e.standIns {
		err = errors.Join(err, t.close())
	}
	if len(e.standIns) > 0 {
		err = errors.Join(err, os.RemoveAll(filepath.Join(e.opts.Dir, standInDir)))
	}
	return err
}
