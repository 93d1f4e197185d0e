package matrixcache

import (
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"
)

// Defaults of Options, the original's CacheOptions and CacheTieringPolicy
// defaults.
const (
	DefaultDRAMCapacityBytes       = 64 << 20
	DefaultResidentCapacityBytes   = 512 << 20
	DefaultSSDCapacityBytes        = 16 << 30
	DefaultPlacementThresholdBytes = 1 << 20
	DefaultDRAMHotnessThreshold    = 8
	DefaultResidentHotness         = 4
	DefaultSSDHotnessThreshold     = 2
	DefaultMaxDRAMBlockBytes       = 1 << 20
	DefaultMaxResidentBlockBytes   = 4 << 20
	DefaultMaxSSDBlockBytes        = 16 << 20
	DefaultShards                  = 16
	DefaultPolicy                  = "tinylfu"
	DefaultWriteBackQueueLen       = 4096
	DefaultWriteBackMaxBatch       = 256
	DefaultLatencySampleEvery      = 64
)

// Disabled is the capacity that turns a tier off (zero means the default).
const Disabled int64 = -1

// Clock tells the cache the time; TTLs are checked against it.
type Clock interface {
	Now() time.Time
}

type systemClock struct{}

func (systemClock) Now() time.Time { return time.Now() }

// Options configure New. The zero value of every field is a usable default,
// applied in one place (withDefaults); Validate says what the cache will do
// where that differs from what was asked.
type Options struct {
	// DRAMCapacityBytes bounds the DRAM tier: every entry costs its value
	// length plus its key's Size. Split evenly over Shards (the remainder
	// goes to the first shards). Default (0) DefaultDRAMCapacityBytes
	// (64 MiB); Disabled turns the tier off.
	DRAMCapacityBytes int64

	// ResidentCapacityBytes and ResidentPath configure the file-backed
	// resident tier (the original's PMEM tier; see package residenttier),
	// between DRAM and SSD. Default capacity (0)
	// DefaultResidentCapacityBytes (512 MiB), default path none: with no
	// path the tier is off (Validate reports it); Disabled turns it off.
	ResidentCapacityBytes int64
	ResidentPath          string
	// ResidentMmap makes resident reads map the block files
	// (residenttier.Options Mmap). Default false.
	ResidentMmap bool
	// ResidentDurable fsyncs resident writes and deletes. Without it, New
	// empties the resident tier: after a machine crash its files may hold
	// values deleted or overwritten before the crash, which must never be
	// served. Default false (the original's
	// pmem_block_durability).
	ResidentDurable bool

	// SSDCapacityBytes and SSDPath configure the SSD tier: its capacity and
	// its bbolt file or directory (see ssdtier.Options Path). Default
	// capacity (0) DefaultSSDCapacityBytes (16 GiB), default path none:
	// with no path the tier is off, so the zero Options are a DRAM-only
	// cache; Disabled turns it off too.
	SSDCapacityBytes int64
	SSDPath          string
	// SSDNoSync turns off fsync of SSD writes. Default false: every SSD
	// write is flushed before it returns (the original's
	// ssd_block_durability = true).
	SSDNoSync bool
	// SSDWriteBytesPerSec caps SSD write bandwidth (ssdtier.Options
	// WriteBytesPerSec). Default 0: no cap.
	SSDWriteBytesPerSec int64

	// WriteBack queues SSD writes (write-through copies, demotions and the
	// deletes of stale copies) to a background writer that commits them in
	// batches, instead of writing them under the DRAM shard's lock. Reads
	// see queued writes, and Close (or Flush) waits for them. When the
	// queue is full a write goes to the SSD directly, as without WriteBack
	// (counted in Stats.WritebackBackpressure): no write is dropped. A
	// write that the queue then fails to commit (the write budget, say) is
	// counted in Stats.WritebackFailures, and the key's older SSD copy is
	// deleted. Default false: SSD writes are synchronous.
	WriteBack bool
	// WriteBackQueueLen bounds the queued SSD writes. Default (0)
	// DefaultWriteBackQueueLen (4096).
	WriteBackQueueLen int
	// WriteBackMaxBatch bounds the writes committed in one batch. Default
	// (0) DefaultWriteBackMaxBatch (256).
	WriteBackMaxBatch int

	// DefaultTTL is the TTL of a Put whose PutOptions.TTL is 0. Default 0:
	// values without a TTL never expire.
	DefaultTTL time.Duration

	// AutoRecoverOnStart refills DRAM from the resident tier, then the SSD
	// tier, in New, up to the DRAM capacity, skipping expired blocks.
	// Default false.
	AutoRecoverOnStart bool

	// Placement is the DRAM/resident placement. Default PlacementTiered.
	Placement Placement
	// PlacementThresholdBytes is the side-by-side size threshold. Default
	// (0) DefaultPlacementThresholdBytes (1 MiB).
	PlacementThresholdBytes int64
	// Hotness thresholds of the admission decision (see Tiering.Decide).
	// Defaults (0) 8, 4 and 2.
	DRAMHotnessThreshold     uint8
	ResidentHotnessThreshold uint8
	SSDHotnessThreshold      uint8
	// Block size limits per tier. Defaults (0) 1 MiB, 4 MiB, 16 MiB.
	MaxDRAMBlockBytes     int64
	MaxResidentBlockBytes int64
	MaxSSDBlockBytes      int64

	// Policy is the DRAM replacement policy, case-insensitive: "tinylfu"
	// (adaptive Window-TinyLFU), "slru" (segmented LRU), "fifo" (insertion
	// order: a hit never saves an entry) or "arc" (Adaptive Replacement
	// Cache). See package policy for how they differ. Default (empty)
	// DefaultPolicy ("tinylfu"). An unknown name falls back to "tinylfu"
	// and Validate reports it.
	Policy string

	// Shards is the number of DRAM shards, each with its own lock and
	// policy. Default (0) DefaultShards (16). Reads take no shard lock, so
	// shards only spread writers and misses; keep at least about a
	// thousand entries per shard, and a shard's bytes above
	// MaxDRAMBlockBytes (Validate warns), since capacity is split evenly.
	// BenchmarkShardCount measures the trade-off.
	Shards int

	// LatencySampleEvery records the latency of one in this many Get and
	// Put calls of each DRAM shard (rounded up to a power of two) in
	// Stats.GetLatency and PutLatency: reading the clock twice costs more
	// than a DRAM hit. SSD read-throughs and writeback batches are always
	// timed. Default (0) DefaultLatencySampleEvery (64); 1 times every
	// call.
	LatencySampleEvery int

	// OnEvict, if set, receives an EvictionEvent for every entry that
	// leaves the DRAM tier to make room (EvictionEvicted, with Demoted
	// saying whether a lower tier still holds the value), every DRAM entry
	// found expired as a victim, by a read or by PurgeExpired
	// (EvictionExpired, with its value), and every block the resident
	// tier evicts to make room (EvictionEvicted). Delete, DeletePrefix,
	// DeleteShard and overwrites are not evictions; the SSD tier's own
	// evictions and expiries are counted in Stats.SSDStore only.
	//
	// It is called with no lock of the cache held, never on two
	// goroutines at once, and in eviction order per DRAM shard: by the
	// operation that evicted, after it released its locks and before it
	// returns, unless another goroutine is delivering events at that
	// moment, which then delivers these too. It may call the cache.
	// Stats.EvictionCallbacks counts the calls. Cache.SetEvictionCallback
	// replaces or clears it at run time. Default: none.
	OnEvict func(EvictionEvent)

	// Clock is the time source for TTLs. Default: the system clock.
	Clock Clock
	// Logger receives open/close summaries. Default: discard.
	Logger *slog.Logger
}

// withDefaults returns o with every zero field set to its default and the
// policy name normalised. It is the only place defaults are applied.
func (o Options) withDefaults() Options {
	def := func(v *int64, d int64) {
		if *v == 0 {
			*v = d
		}
	}
	def(&o.DRAMCapacityBytes, DefaultDRAMCapacityBytes)
	def(&o.ResidentCapacityBytes, DefaultResidentCapacityBytes)
	def(&o.SSDCapacityBytes, DefaultSSDCapacityBytes)
	def(&o.PlacementThresholdBytes, DefaultPlacementThresholdBytes)
	def(&o.MaxDRAMBlockBytes, DefaultMaxDRAMBlockBytes)
	def(&o.MaxResidentBlockBytes, DefaultMaxResidentBlockBytes)
	def(&o.MaxSSDBlockBytes, DefaultMaxSSDBlockBytes)
	if o.DRAMHotnessThreshold == 0 {
		o.DRAMHotnessThreshold = DefaultDRAMHotnessThreshold
	}
	if o.ResidentHotnessThreshold == 0 {
		o.ResidentHotnessThreshold = DefaultResidentHotness
	}
	if o.SSDHotnessThreshold == 0 {
		o.SSDHotnessThreshold = DefaultSSDHotnessThreshold
	}
	if o.Shards == 0 {
		o.Shards = DefaultShards
	}
	if o.LatencySampleEvery == 0 {
		o.LatencySampleEvery = DefaultLatencySampleEvery
	}
	if o.WriteBackQueueLen == 0 {
		o.WriteBackQueueLen = DefaultWriteBackQueueLen
	}
	if o.WriteBackMaxBatch == 0 {
		o.WriteBackMaxBatch = DefaultWriteBackMaxBatch
	}
	o.Policy = strings.ToLower(strings.TrimSpace(o.Policy))
	if o.Policy == "" {
		o.Policy = DefaultPolicy
	}
	if o.Clock == nil {
		o.Clock = systemClock{}
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

func capOf(v int64) int64 {
	if v < 0 {
		return 0
	}
	return v
}

// Tiering is the admission policy the options give (after defaults): a
// disabled tier has capacity 0, and a resident or SSD tier without a path
// too.
func (o Options) Tiering() Tiering {
	o = o.withDefaults()
	t := Tiering{
		DRAMCapacityBytes:        capOf(o.DRAMCapacityBytes),
		Placement:                o.Placement,
		PlacementThresholdBytes:  o.PlacementThresholdBytes,
		DRAMHotnessThreshold:     o.DRAMHotnessThreshold,
		ResidentHotnessThreshold: o.ResidentHotnessThreshold,
		SSDHotnessThreshold:      o.SSDHotnessThreshold,
		MaxDRAMBlockBytes:        o.MaxDRAMBlockBytes,
		MaxResidentBlockBytes:    o.MaxResidentBlockBytes,
		MaxSSDBlockBytes:         o.MaxSSDBlockBytes,
		SSDWriteThrough:          true,
	}
	if o.ResidentPath != "" {
		t.ResidentCapacityBytes = capOf(o.ResidentCapacityBytes)
	}
	if o.SSDPath != "" {
		t.SSDCapacityBytes = capOf(o.SSDCapacityBytes)
	}
	return t
}

// Severity grades a Finding.
type Severity uint8

// Severities. New refuses options with a Critical finding.
const (
	SeverityInfo Severity = iota
	SeverityWarning
	SeverityCritical
)

// String returns the severity's name.
func (s Severity) String() string {
	switch s {
	case SeverityWarning:
		return "warning"
	case SeverityCritical:
		return "critical"
	default:
		return "info"
	}
}

// Finding ids, those of the original's config check where one exists.
const (
	FindingNoTierHasCapacity           = "no_tier_has_capacity"
	FindingSSDTierHasNoPath            = "ssd_tier_has_no_path"
	FindingRecoveryWithoutSSDTier      = "recovery_expected_without_an_ssd_tier"
	FindingResidentTierIsUnreachable   = "resident_tier_is_unreachable"
	FindingResidentTierEmptiedAtStart  = "resident_tier_emptied_at_start"
	FindingRecoveryExpectsDurability   = "recovery_expects_durability_that_is_off"
	FindingSSDPathWithoutCapacity      = "ssd_path_without_capacity"
	FindingResidentPathWithoutCapacity = "resident_path_without_capacity"
	FindingPolicyNotRecognised         = "replacement_policy_not_recognised"
	FindingTierHasFewerBytesThanShards = "tier_has_fewer_bytes_than_shards"
	FindingShardRefusesValuesItHasRoom = "sharded_tier_refuses_values_it_has_room_for"
	FindingInvalidValue                = "invalid_value"
)

// Finding is one thing Validate has to say about options: what the cache
// will actually do where it differs from what was asked.
type Finding struct {
	ID       string
	Severity Severity
	// Field is the Options field the finding is about.
	Field   string
	Message string
}

func (f Finding) String() string {
	return fmt.Sprintf("%s %s (%s): %s", f.Severity, f.ID, f.Field, f.Message)
}

// ErrInvalidOptions wraps the error New returns for options with a Critical
// finding.
var ErrInvalidOptions = errors.New("matrixcache: invalid options")

// Validate reports what the cache built from o will do where that differs
// from what was asked, most severe first within each check. Default options
// report only Info findings.
func (o Options) Validate() []Finding {
	d := o.withDefaults()
	var fs []Finding
	add := func(id string, sev Severity, field, format string, args ...any) {
		fs = append(fs, Finding{ID: id, Severity: sev, Field: field, Message: fmt.Sprintf(format, args...)})
	}
	for _, c := range []struct {
		name string
		v    int64
	}{
		{"DRAMCapacityBytes", d.DRAMCapacityBytes},
		{"ResidentCapacityBytes", d.ResidentCapacityBytes},
		{"SSDCapacityBytes", d.SSDCapacityBytes},
	} {
		if c.v < 0 && c.v != Disabled {
			add(FindingInvalidValue, SeverityCritical, c.name, "capacity %d is negative; use Disabled (-1) to turn the tier off", c.v)
		}
	}
	for _, c := range []struct {
		name string
		v    int64
	}{
		{"PlacementThresholdBytes", d.PlacementThresholdBytes},
		{"MaxDRAMBlockBytes", d.MaxDRAMBlockBytes},
		{"MaxResidentBlockBytes", d.MaxResidentBlockBytes},
		{"MaxSSDBlockBytes", d.MaxSSDBlockBytes},
		{"SSDWriteBytesPerSec", d.SSDWriteBytesPerSec},
	} {
		if c.v < 0 {
			add(FindingInvalidValue, SeverityCritical, c.name, "%d is negative", c.v)
		}
	}
	if d.DefaultTTL < 0 {
		add(FindingInvalidValue, SeverityCritical, "DefaultTTL", "%v is negative", d.DefaultTTL)
	}
	if d.WriteBackQueueLen < 0 {
		add(FindingInvalidValue, SeverityCritical, "WriteBackQueueLen", "%d is negative", d.WriteBackQueueLen)
	}
	if d.WriteBackMaxBatch < 0 {
		add(FindingInvalidValue, SeverityCritical, "WriteBackMaxBatch", "%d is negative", d.WriteBackMaxBatch)
	}
	if d.LatencySampleEvery < 0 {
		add(FindingInvalidValue, SeverityCritical, "LatencySampleEvery", "%d is negative", d.LatencySampleEvery)
	}
	if d.Shards < 0 {
		add(FindingInvalidValue, SeverityCritical, "Shards", "shard count %d is negative", d.Shards)
	}
	if d.Placement > PlacementSideBySide {
		add(FindingInvalidValue, SeverityCritical, "Placement", "unknown placement %d", d.Placement)
	}

	dram, ssd := d.DRAMCapacityBytes > 0, d.SSDCapacityBytes > 0 && d.SSDPath != ""
	if !dram && !ssd {
		add(FindingNoTierHasCapacity, SeverityCritical, "DRAMCapacityBytes",
			"neither DRAM nor an SSD tier with a path has capacity: the cache would hold nothing")
	}
	switch {
	case !ssd && d.AutoRecoverOnStart:
		add(FindingRecoveryWithoutSSDTier, SeverityCritical, "SSDPath",
			"AutoRecoverOnStart is set but there is no SSD tier (it needs SSDPath and capacity) to recover from")
	case d.SSDPath == "" && o.SSDCapacityBytes > 0:
		add(FindingSSDTierHasNoPath, SeverityInfo, "SSDPath",
			"the SSD tier has %d bytes but no path: it is off", o.SSDCapacityBytes)
	}
	if d.SSDCapacityBytes <= 0 && d.SSDPath != "" {
		add(FindingSSDPathWithoutCapacity, SeverityWarning, "SSDCapacityBytes",
			"SSDPath %q is set but the SSD tier is disabled: nothing is written there", d.SSDPath)
	}
	if ssd && d.SSDPath != "" && d.AutoRecoverOnStart && d.SSDNoSync {
		add(FindingRecoveryExpectsDurability, SeverityWarning, "SSDNoSync",
			"AutoRecoverOnStart is set but SSD writes are not flushed: a machine crash may lose recent blocks before recovery")
	}
	resident := d.ResidentCapacityBytes > 0
	switch {
	case !resident && d.ResidentPath != "":
		add(FindingResidentPathWithoutCapacity, SeverityWarning, "ResidentCapacityBytes",
			"ResidentPath %q is set but the resident tier is disabled: nothing is written there", d.ResidentPath)
	case resident && d.ResidentPath == "":
		add(FindingResidentTierIsUnreachable, SeverityInfo, "ResidentPath",
			"the resident tier has %d bytes but no path: it holds nothing", d.ResidentCapacityBytes)
	case resident && !d.ResidentDurable && d.AutoRecoverOnStart:
		add(FindingRecoveryExpectsDurability, SeverityWarning, "ResidentDurable",
			"AutoRecoverOnStart is set but resident writes are not flushed: the resident tier is emptied at start and recovery reads the SSD tier only")
	case resident && !d.ResidentDurable:
		add(FindingResidentTierEmptiedAtStart, SeverityInfo, "ResidentDurable",
			"resident writes are not flushed, so the resident tier %q is emptied at start", d.ResidentPath)
	}
	if _, ok := policyNames[d.Policy]; !ok {
		add(FindingPolicyNotRecognised, SeverityWarning, "Policy",
			"replacement policy %q is not recognised: the DRAM tier uses %q", o.Policy, DefaultPolicy)
	}
	if dram && d.Shards > 0 {
		per := d.DRAMCapacityBytes / int64(d.Shards)
		switch {
		case per < 1:
			add(FindingTierHasFewerBytesThanShards, SeverityCritical, "Shards",
				"DRAM has %d bytes for %d shards: a shard would hold nothing", d.DRAMCapacityBytes, d.Shards)
		case per < d.MaxDRAMBlockBytes:
			add(FindingShardRefusesValuesItHasRoom, SeverityWarning, "Shards",
				"each DRAM shard has %d bytes, less than MaxDRAMBlockBytes %d: larger values bypass DRAM although the tier has room for them",
				per, d.MaxDRAMBlockBytes)
		}
	}
	return fs
}

var policyNames = map[string]struct{}{"tinylfu": {}, "slru": {}, "fifo": {}, "arc": {}}

// critical returns an error naming the fields of o's Critical findings, or nil.
func critical(fs []Finding) error {
	var msgs []string
	for _, f := range fs {
		if f.Severity == SeverityCritical {
			msgs = append(msgs, fmt.Sprintf("%s: %s (%s)", f.Field, f.Message, f.ID))
		}
	}
	if len(msgs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %s", ErrInvalidOptions, strings.Join(msgs, "; "))
}
