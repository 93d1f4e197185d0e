package matrixcache

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func findingIDs(fs []Finding) map[string]Severity {
	m := map[string]Severity{}
	for _, f := range fs {
		m[f.ID] = f.Severity
	}
	return m
}

func TestDefaultOptionsReportOnlyInfo(t *testing.T) {
	fs := Options{}.Validate()
	require.NotEmpty(t, fs)
	for _, f := range fs {
		require.Equal(t, SeverityInfo, f.Severity, f.String())
	}
	ids := findingIDs(fs)
	require.NotContains(t, ids, FindingSSDTierHasNoPath, "the SSD tier is off without a word")
	require.Contains(t, ids, FindingResidentTierIsUnreachable)
	require.NoError(t, critical(fs))
}

func TestOptionsDefaults(t *testing.T) {
	o := Options{}.withDefaults()
	require.EqualValues(t, 64<<20, o.DRAMCapacityBytes)
	require.EqualValues(t, 512<<20, o.ResidentCapacityBytes)
	require.EqualValues(t, 16<<30, o.SSDCapacityBytes)
	require.False(t, o.SSDNoSync, "SSD writes are flushed by default")
	require.False(t, o.ResidentDurable, "resident writes are not flushed by default")
	require.Equal(t, "tinylfu", o.Policy)
	require.Equal(t, 16, o.Shards)
	tr := Options{}.Tiering()
	require.EqualValues(t, 8, tr.DRAMHotnessThreshold)
	require.EqualValues(t, 4, tr.ResidentHotnessThreshold)
	require.EqualValues(t, 2, tr.SSDHotnessThreshold)
	require.EqualValues(t, 1<<20, tr.MaxDRAMBlockBytes)
	require.EqualValues(t, 4<<20, tr.MaxResidentBlockBytes)
	require.EqualValues(t, 16<<20, tr.MaxSSDBlockBytes)
	require.True(t, tr.SSDWriteThrough)
}

func TestValidateFindings(t *testing.T) {
	tests := []struct {
		name  string
		opts  Options
		id    string
		sev   Severity
		field string
	}{
		{"recovery without an SSD tier is refused", Options{AutoRecoverOnStart: true},
			FindingRecoveryWithoutSSDTier, SeverityCritical, "SSDPath"},
		{"SSD capacity without a path", Options{SSDCapacityBytes: 1 << 30},
			FindingSSDTierHasNoPath, SeverityInfo, "SSDPath"},
		{"recovery from an unflushed SSD tier warns", Options{AutoRecoverOnStart: true, SSDPath: "/x", SSDNoSync: true},
			FindingRecoveryExpectsDurability, SeverityWarning, "SSDNoSync"},
		{"recovery from an unflushed resident tier warns", Options{AutoRecoverOnStart: true, SSDPath: "/x", ResidentPath: "/r"},
			FindingRecoveryExpectsDurability, SeverityWarning, "ResidentDurable"},
		{"SSD path without capacity", Options{SSDPath: "/x", SSDCapacityBytes: Disabled},
			FindingSSDPathWithoutCapacity, SeverityWarning, "SSDCapacityBytes"},
		{"resident path without capacity", Options{ResidentPath: "/r", ResidentCapacityBytes: Disabled},
			FindingResidentPathWithoutCapacity, SeverityWarning, "ResidentCapacityBytes"},
		{"resident capacity without path", Options{},
			FindingResidentTierIsUnreachable, SeverityInfo, "ResidentPath"},
		{"an unflushed resident tier is emptied at start", Options{ResidentPath: "/r"},
			FindingResidentTierEmptiedAtStart, SeverityInfo, "ResidentDurable"},
		{"negative latency sampling", Options{LatencySampleEvery: -1},
			FindingInvalidValue, SeverityCritical, "LatencySampleEvery"},
		{"unknown policy falls back to tinylfu", Options{Policy: "WeightedHotnessLru"},
			FindingPolicyNotRecognised, SeverityWarning, "Policy"},
		{"no tier has capacity", Options{DRAMCapacityBytes: Disabled, SSDCapacityBytes: Disabled},
			FindingNoTierHasCapacity, SeverityCritical, "DRAMCapacityBytes"},
		{"fewer bytes than shards", Options{DRAMCapacityBytes: 8, Shards: 16},
			FindingTierHasFewerBytesThanShards, SeverityCritical, "Shards"},
		{"shard smaller than a DRAM block", Options{DRAMCapacityBytes: 8 << 20, Shards: 16},
			FindingShardRefusesValuesItHasRoom, SeverityWarning, "Shards"},
		{"negative capacity", Options{DRAMCapacityBytes: -5},
			FindingInvalidValue, SeverityCritical, "DRAMCapacityBytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var found *Finding
			for _, f := range tt.opts.Validate() {
				if f.ID == tt.id && f.Field == tt.field {
					found = &f
				}
			}
			require.NotNil(t, found, "finding %s on %s", tt.id, tt.field)
			require.Equal(t, tt.sev, found.Severity)
			require.NotEmpty(t, found.Message)
		})
	}
}

func TestPolicyNamesAreCaseInsensitive(t *testing.T) {
	for _, name := range []string{"tinylfu", "TinyLFU", "SLRU", "slru", " slru ", "fifo", "FIFO", "Fifo", "arc", "ARC", " Arc "} {
		require.NotContains(t, findingIDs(Options{Policy: name}.Validate()), FindingPolicyNotRecognised, name)
	}
}

func TestShardFindingNamesPerShardBytes(t *testing.T) {
	for _, f := range (Options{DRAMCapacityBytes: 8 << 20, Shards: 16}).Validate() {
		if f.ID == FindingShardRefusesValuesItHasRoom {
			require.Contains(t, f.Message, "524288")
			return
		}
	}
	t.Fatal("no sharding finding")
}

func TestCriticalFindingNamesField(t *testing.T) {
	err := critical(Options{AutoRecoverOnStart: true}.Validate())
	require.ErrorIs(t, err, ErrInvalidOptions)
	require.Contains(t, err.Error(), "SSDPath")
	require.Contains(t, err.Error(), "no SSD tier")
}
