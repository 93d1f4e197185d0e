package cachekey

import (
	"strconv"
	"strings"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// DefaultFeatureQueryCount is the count [FeatureQuery] puts in the
// selector when the caller gives none.
const DefaultFeatureQueryCount = 5000

// String is the key of a string value: namespace "string", selector
// "value".
func String(shard uint64, key string) blockfmt.Key {
	return blockfmt.Key{Shard: shard, Record: key, Namespace: blockfmt.NamespaceString, Selector: "value"}
}

// Hash is the key of one field of a hash: namespace "hash", selector the
// field.
func Hash(shard uint64, key, field string) blockfmt.Key {
	return blockfmt.Key{Shard: shard, Record: key, Namespace: blockfmt.NamespaceHash, Selector: field}
}

// SetMembers is the key of a set's members: namespace "set", selector
// "members".
func SetMembers(shard uint64, key string) blockfmt.Key {
	return blockfmt.Key{Shard: shard, Record: key, Namespace: blockfmt.NamespaceSet, Selector: "members"}
}

// FeatureQuery is the key of a feature query result: namespace
// "feature", selector "{startMs}:{endMs}:{count}". A count of zero or less
// stands for the original's None and is written as
// [DefaultFeatureQueryCount].
func FeatureQuery(shard uint64, key string, startMs, endMs int64, count int) blockfmt.Key {
	if count <= 0 {
		count = DefaultFeatureQueryCount
	}
	sel := strconv.FormatInt(startMs, 10) + ":" + strconv.FormatInt(endMs, 10) + ":" + strconv.Itoa(count)
	return blockfmt.Key{Shard: shard, Record: key, Namespace: blockfmt.NamespaceFeature, Selector: sel}
}

// Page is the key of a page of a segment: namespace "page", record key
// "segment-" and the segment number zero-padded to 20 digits, selector
// "{offset}:{length}".
func Page(shard, segment, offset, length uint64) blockfmt.Key {
	return blockfmt.Key{Shard: shard, Record: segmentRecord(segment), Namespace: blockfmt.NamespacePage, Selector: pageSelector(offset, length)}
}

// PageWithSlot is [Page] for a page routed to a slot: selector
// "slot-{slot}:{offset}:{length}".
func PageWithSlot(shard, segment, offset, length uint64, slot uint32) blockfmt.Key {
	k := Page(shard, segment, offset, length)
	k.Selector = slotPrefix(slot) + k.Selector
	return k
}

// PageWithGeneration is [Page] for a given generation of the page:
// selector "gen-{generation}:{offset}:{length}".
func PageWithGeneration(shard, segment, offset, length, generation uint64) blockfmt.Key {
	k := Page(shard, segment, offset, length)
	k.Selector = genPrefix(generation) + k.Selector
	return k
}

// PageWithSlotGeneration is [Page] for a given generation of a page
// routed to a slot: selector "slot-{slot}:gen-{generation}:{offset}:{length}".
func PageWithSlotGeneration(shard, segment, offset, length uint64, slot uint32, generation uint64) blockfmt.Key {
	k := Page(shard, segment, offset, length)
	k.Selector = slotPrefix(slot) + genPrefix(generation) + k.Selector
	return k
}

func segmentRecord(segment uint64) string {
	s := strconv.FormatUint(segment, 10)
	if len(s) < 20 {
		s = strings.Repeat("0", 20-len(s)) + s
	}
	return "segment-" + s
}

func pageSelector(offset, length uint64) string {
	return strconv.FormatUint(offset, 10) + ":" + strconv.FormatUint(length, 10)
}

func slotPrefix(slot uint32) string { return "slot-" + strconv.FormatUint(uint64(slot), 10) + ":" }

func genPrefix(gen uint64) string { return "gen-" + strconv.FormatUint(gen, 10) + ":" }
