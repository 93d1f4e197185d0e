package matrixcache

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

func defaultTiering() Tiering {
	t := Options{}.Tiering()
	// As the original's default policy: every tier has its capacity.
	t.ResidentCapacityBytes = DefaultResidentCapacityBytes
	t.SSDCapacityBytes = DefaultSSDCapacityBytes
	return t
}

func TestDecide(t *testing.T) {
	base := defaultTiering()
	sideBySide := base
	sideBySide.Placement = PlacementSideBySide
	noSSD := base
	noSSD.SSDCapacityBytes = 0
	noResident := base
	noResident.ResidentCapacityBytes = 0

	tests := []struct {
		name   string
		policy Tiering
		req    AdmissionRequest
		want   AdmissionDecision
	}{
		{"hot page goes to memory and every tier", base,
			AdmissionRequest{Kind: blockfmt.KindPage, Bytes: 4096, Hotness: 8},
			AdmissionDecision{Tier: TierDRAM, Reason: ReasonHotPage, AdmitDRAM: true, AdmitResident: true, AdmitSSD: true}},
		{"hot object is HotObject", base,
			AdmissionRequest{Kind: blockfmt.KindObject, Bytes: 10, Hotness: 9},
			AdmissionDecision{Tier: TierDRAM, Reason: ReasonHotObject, AdmitDRAM: true, AdmitResident: true, AdmitSSD: true}},
		{"pinned cold block goes to memory", base,
			AdmissionRequest{Kind: blockfmt.KindOther, Bytes: 10, Pinned: true},
			AdmissionDecision{Tier: TierDRAM, Reason: ReasonHotObject, AdmitDRAM: true, AdmitResident: true, AdmitSSD: true}},
		{"warm slot page goes to SSD only", base,
			AdmissionRequest{Kind: blockfmt.KindPage, Bytes: 4096, Hotness: 2, RoutingSlot: 7, HasRoutingSlot: true},
			AdmissionDecision{Tier: TierSSD, Reason: ReasonWarmSlot, AdmitSSD: true}},
		{"oversize rejected everywhere", base,
			AdmissionRequest{Kind: blockfmt.KindPage, Bytes: DefaultMaxSSDBlockBytes + 1, Hotness: 10},
			AdmissionDecision{Tier: TierNone, Reason: ReasonOversize}},
		{"larger than SSD capacity rejected", func() Tiering { p := base; p.SSDCapacityBytes = 100; return p }(),
			AdmissionRequest{Kind: blockfmt.KindObject, Bytes: 101},
			AdmissionDecision{Tier: TierNone, Reason: ReasonOversize}},
		{"index hotness 5 goes to resident with SSD copy", base,
			AdmissionRequest{Kind: blockfmt.KindIndex, Bytes: 4096, Hotness: 5},
			AdmissionDecision{Tier: TierResident, Reason: ReasonPersistentMemory, AdmitResident: true, AdmitSSD: true}},
		{"warm block without resident tier falls to SSD", noResident,
			AdmissionRequest{Kind: blockfmt.KindIndex, Bytes: 4096, Hotness: 5},
			AdmissionDecision{Tier: TierSSD, Reason: ReasonLargeColdBlock, AdmitSSD: true}},
		{"block larger than a DRAM block is a large cold block", noResident,
			AdmissionRequest{Kind: blockfmt.KindObject, Bytes: DefaultMaxDRAMBlockBytes + 1},
			AdmissionDecision{Tier: TierSSD, Reason: ReasonLargeColdBlock, AdmitSSD: true}},
		{"cold small block stays in memory only", base,
			AdmissionRequest{Kind: blockfmt.KindOther, Bytes: 10, Hotness: 0},
			AdmissionDecision{Tier: TierDRAM, Reason: ReasonMemoryOnly, AdmitDRAM: true}},
		{"without SSD a warm block stays in memory only", func() Tiering { p := noSSD; p.ResidentCapacityBytes = 0; return p }(),
			AdmissionRequest{Kind: blockfmt.KindObject, Bytes: 10, Hotness: 3},
			AdmissionDecision{Tier: TierDRAM, Reason: ReasonMemoryOnly, AdmitDRAM: true}},
		{"without SSD nothing is oversize", func() Tiering { p := noSSD; p.ResidentCapacityBytes = 0; return p }(),
			AdmissionRequest{Kind: blockfmt.KindObject, Bytes: DefaultMaxSSDBlockBytes + 1},
			AdmissionDecision{Tier: TierDRAM, Reason: ReasonMemoryOnly, AdmitDRAM: true}},
		{"side by side: above threshold goes to resident", sideBySide,
			AdmissionRequest{Kind: blockfmt.KindObject, Bytes: DefaultPlacementThresholdBytes + 1},
			AdmissionDecision{Tier: TierResident, Reason: ReasonPersistentMemory, AdmitResident: true, AdmitSSD: true}},
		{"side by side: at threshold goes to memory", sideBySide,
			AdmissionRequest{Kind: blockfmt.KindPage, Bytes: DefaultPlacementThresholdBytes},
			AdmissionDecision{Tier: TierDRAM, Reason: ReasonHotPage, AdmitDRAM: true, AdmitSSD: true}},
		{"side by side: too large for both falls through to the hotness rules", func() Tiering {
			p := sideBySide
			p.MaxResidentBlockBytes = DefaultPlacementThresholdBytes
			return p
		}(),
			AdmissionRequest{Kind: blockfmt.KindObject, Bytes: DefaultPlacementThresholdBytes + 1},
			AdmissionDecision{Tier: TierSSD, Reason: ReasonLargeColdBlock, AdmitSSD: true}},
		{"hot but larger than a DRAM block is not memory", noResident,
			AdmissionRequest{Kind: blockfmt.KindPage, Bytes: DefaultMaxDRAMBlockBytes + 1, Hotness: 200},
			AdmissionDecision{Tier: TierSSD, Reason: ReasonLargeColdBlock, AdmitSSD: true}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.policy.Decide(tt.req))
		})
	}
}
