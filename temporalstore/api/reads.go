package api

import "slices"

// readKinds are the kinds that do not write.
var readKinds = map[Kind]bool{
	KindGet: true, KindStrLen: true, KindGetRange: true, KindExists: true,
	KindGetBit: true, KindBitCount: true, KindBitPos: true,
	KindPTTL: true, KindType: true, KindScan: true, KindExpireTime: true,
	KindExistsKeys: true, KindMGet: true,
	KindHGet: true, KindHMGet: true, KindHGetAll: true, KindHLen: true,
	KindHExists: true, KindHStrLen: true, KindHKeys: true, KindHVals: true, KindHScan: true,
	KindSMembers: true, KindSIsMember: true, KindSMIsMember: true, KindSCard: true,
	KindSRandMember: true, KindSScan: true, KindSInter: true, KindSUnion: true, KindSDiff: true,
	KindZRange: true, KindZCount: true, KindZRank: true, KindZRevRank: true,
	KindZScore: true, KindZMScore: true, KindZCard: true, KindZScan: true,
	KindZUnion: true, KindZInter: true, KindZDiff: true, KindHRandField: true, KindZRandMember: true,
	KindLRange: true, KindLLen: true, KindLIndex: true, KindLPos: true,
	KindFQuery: true, KindFQueryFiltered: true, KindFAgg: true,
	KindSeqQuery: true, KindSeqBatchQuery: true, KindRowReadBatch: true,
	KindCCount: true, KindCQuery: true, KindCDetail: true, KindCFamilyQuery: true, KindCSelection: true,
	KindCManager: true, KindCDebug: true,
}

// IsReadKind reports whether kind only reads: a surface may run it for a
// read-only client, and a client may retry it. Every other kind, unknown
// ones included, is treated as a write.
func IsReadKind(kind Kind) bool { return readKinds[kind] }

// ReadKinds returns the kinds IsReadKind accepts, sorted.
func ReadKinds() []Kind {
	out := make([]Kind, 0, len(readKinds))
	for k := range readKinds {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}
