package matrixcache

import "github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"

// Tier names a tier of the cache.
type Tier uint8

// Tiers. TierNone is the tier of a miss, and of an admission decision that
// rejects a block.
const (
	TierNone Tier = iota
	TierDRAM
	TierResident
	TierSSD
)

// String returns the tier's name.
func (t Tier) String() string {
	switch t {
	case TierDRAM:
		return "dram"
	case TierResident:
		return "resident"
	case TierSSD:
		return "ssd"
	default:
		return "none"
	}
}

// Placement is how DRAM and the resident tier share blocks.
type Placement uint8

// Placements of the original's cache_dram_pmem_data_placement_type.
const (
	// PlacementTiered places by hotness: hot blocks in DRAM, warm ones in
	// the resident tier. The default.
	PlacementTiered Placement = iota
	// PlacementSideBySide places by size: blocks above the placement
	// threshold in the resident tier, the others in DRAM.
	PlacementSideBySide
)

// Reason says why an admission decision chose its tier.
type Reason uint8

// Reasons, those of the original's CacheAdmissionReason.
const (
	ReasonHotPage Reason = iota
	ReasonHotObject
	ReasonWarmSlot
	ReasonPersistentMemory
	ReasonLargeColdBlock
	ReasonOversize
	ReasonMemoryOnly
)

// String returns the reason's name.
func (r Reason) String() string {
	switch r {
	case ReasonHotPage:
		return "hot_page"
	case ReasonHotObject:
		return "hot_object"
	case ReasonWarmSlot:
		return "warm_slot"
	case ReasonPersistentMemory:
		return "persistent_memory"
	case ReasonLargeColdBlock:
		return "large_cold_block"
	case ReasonOversize:
		return "oversize"
	case ReasonMemoryOnly:
		return "memory_only"
	default:
		return "unknown"
	}
}

// Tiering is the admission policy: tier capacities, hotness thresholds and
// block size limits, the original's CacheTieringPolicy. A capacity of zero
// disables the tier here (unlike Options, where zero means the default).
// Options.Tiering derives it from a cache's options.
type Tiering struct {
	DRAMCapacityBytes     int64
	ResidentCapacityBytes int64
	SSDCapacityBytes      int64

	Placement               Placement
	PlacementThresholdBytes int64

	DRAMHotnessThreshold     uint8
	ResidentHotnessThreshold uint8
	SSDHotnessThreshold      uint8

	MaxDRAMBlockBytes     int64
	MaxResidentBlockBytes int64
	MaxSSDBlockBytes      int64

	SSDWriteThrough bool
}

// AdmissionRequest describes a block to place.
type AdmissionRequest struct {
	Kind  blockfmt.Kind
	Shard uint64
	// RoutingSlot is the block's routing slot when HasRoutingSlot is set
	// (see blockfmt.Key.RoutingSlot).
	RoutingSlot    uint32
	HasRoutingSlot bool
	Bytes          int64
	Hotness        uint8
	Pinned         bool
}

// AdmissionDecision is where a block goes: Tier is the tier that serves it
// (TierNone: rejected), and the Admit flags say which tiers take a copy.
type AdmissionDecision struct {
	Tier          Tier
	Reason        Reason
	AdmitDRAM     bool
	AdmitResident bool
	AdmitSSD      bool
}

func (t Tiering) ssdEnabled() bool { return t.SSDCapacityBytes > 0 }

func (t Tiering) fitsDRAM(n int64) bool {
	return n <= t.MaxDRAMBlockBytes && n <= t.DRAMCapacityBytes
}

func (t Tiering) fitsResident(n int64) bool {
	return t.ResidentCapacityBytes > 0 && n <= t.MaxResidentBlockBytes && n <= t.ResidentCapacityBytes
}

func (t Tiering) fitsSSD(n int64) bool {
	return n <= t.MaxSSDBlockBytes && n <= t.SSDCapacityBytes
}

func hotReason(k blockfmt.Kind) Reason {
	if k == blockfmt.KindPage {
		return ReasonHotPage
	}
	return ReasonHotObject
}

// Decide is the original's CacheTieringPolicy::decide, rule for rule, first
// match wins:
//
//  1. SSD enabled and the block larger than the SSD block limit or the SSD
//     capacity: rejected (Oversize).
//  2. Side-by-side placement: a block above the placement threshold that fits
//     the resident tier goes there (PersistentMemory, SSD copy too);
//     otherwise one that fits DRAM goes to DRAM (HotPage or HotObject, SSD
//     copy when the SSD is enabled).
//  3. Pinned, or hotness at the DRAM threshold and fits DRAM: DRAM, with
//     copies in every enabled tier.
//  4. Resident tier enabled, hotness at its threshold and fits it: resident
//     (PersistentMemory, SSD copy too).
//  5. SSD enabled, block has a routing slot, hotness at the SSD threshold and
//     fits the SSD: SSD only (WarmSlot).
//  6. SSD enabled and the block larger than a DRAM block or hotness at the
//     SSD threshold: SSD only (LargeColdBlock).
//  7. Otherwise DRAM only (MemoryOnly).
//
// "Fits" a tier means no larger than its block limit and its capacity.
func (t Tiering) Decide(r AdmissionRequest) AdmissionDecision {
	ssd := t.ssdEnabled()
	resident := t.ResidentCapacityBytes > 0
	if ssd && (r.Bytes > t.MaxSSDBlockBytes || r.Bytes > t.SSDCapacityBytes) {
		return AdmissionDecision{Tier: TierNone, Reason: ReasonOversize}
	}
	if t.Placement == PlacementSideBySide {
		if resident && r.Bytes > t.PlacementThresholdBytes && t.fitsResident(r.Bytes) {
			return AdmissionDecision{Tier: TierResident, Reason: ReasonPersistentMemory, AdmitResident: true, AdmitSSD: ssd}
		}
		if t.fitsDRAM(r.Bytes) {
			return AdmissionDecision{Tier: TierDRAM, Reason: hotReason(r.Kind), AdmitDRAM: true, AdmitSSD: ssd}
		}
	}
	if r.Pinned || (r.Hotness >= t.DRAMHotnessThreshold && t.fitsDRAM(r.Bytes)) {
		return AdmissionDecision{Tier: TierDRAM, Reason: hotReason(r.Kind), AdmitDRAM: true, AdmitResident: resident, AdmitSSD: ssd}
	}
	if resident && r.Hotness >= t.ResidentHotnessThreshold && t.fitsResident(r.Bytes) {
		return AdmissionDecision{Tier: TierResident, Reason: ReasonPersistentMemory, AdmitResident: true, AdmitSSD: ssd}
	}
	if ssd && r.HasRoutingSlot && r.Hotness >= t.SSDHotnessThreshold && t.fitsSSD(r.Bytes) {
		return AdmissionDecision{Tier: TierSSD, Reason: ReasonWarmSlot, AdmitSSD: true}
	}
	if ssd && (r.Bytes > t.MaxDRAMBlockBytes || r.Hotness >= t.SSDHotnessThreshold) {
		return AdmissionDecision{Tier: TierSSD, Reason: ReasonLargeColdBlock, AdmitSSD: true}
	}
	return AdmissionDecision{Tier: TierDRAM, Reason: ReasonMemoryOnly, AdmitDRAM: true}
}
