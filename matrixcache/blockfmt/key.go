package blockfmt

import (
	"strconv"
	"strings"
)

// Key identifies a cached block: the shard that owns it, the record key it
// belongs to, the namespace (which decides the block's [Kind]) and a
// selector within the record. It mirrors the original CacheKey field for
// field; the root matrixcache package uses it as its key type.
type Key struct {
	Shard     uint64
	Record    string
	Namespace string
	Selector  string
}

// Namespaces that [KindForNamespace] recognises (package cachekey's
// constructors use them).
const (
	NamespaceString  = "string"
	NamespaceHash    = "hash"
	NamespaceSet     = "set"
	NamespaceFeature = "feature"
	NamespacePage    = "page"
	NamespaceIndex   = "index"
	NamespaceOplog   = "oplog"
)

// KeyOf is the key of a value named by one string, for a cache whose user
// names entries that way: shard 0, namespace "string", selector "value", so
// that the block is an object (KindObject) with an object's hotness.
func KeyOf(record string) Key {
	return Key{Record: record, Namespace: NamespaceString, Selector: "value"}
}

// RoutingSlot parses the routing slot back from a selector that starts
// with "slot-N:". It reports false when there is none.
func (k Key) RoutingSlot() (uint32, bool) {
	rest, ok := strings.CutPrefix(k.Selector, "slot-")
	if !ok {
		return 0, false
	}
	num, _, ok := strings.Cut(rest, ":")
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseUint(num, 10, 32)
	if err != nil {
		return 0, false
	}
	return uint32(n), true
}

// Size is the key's logical size in bytes as the cache accounts it: 8 for
// the shard plus the lengths of the three strings.
func (k Key) Size() int { return 8 + len(k.Record) + len(k.Namespace) + len(k.Selector) }

// Kind is the block kind for the key's namespace.
func (k Key) Kind() Kind { return KindForNamespace(k.Namespace) }

// Compare orders keys by shard, record key, namespace and selector — the
// same order as their [AppendOrderedKey] encodings.
func (k Key) Compare(o Key) int {
	switch {
	case k.Shard < o.Shard:
		return -1
	case k.Shard > o.Shard:
		return 1
	}
	if c := strings.Compare(k.Record, o.Record); c != 0 {
		return c
	}
	if c := strings.Compare(k.Namespace, o.Namespace); c != 0 {
		return c
	}
	return strings.Compare(k.Selector, o.Selector)
}

// Kind is what a block holds. It decides the block's initial hotness.
type Kind uint8

// Block kinds, in the original's order. The values are part of the block
// format.
const (
	KindPage Kind = iota
	KindObject
	KindIndex
	KindOplog
	KindOther
)

const maxKind = KindOther

// String returns the kind's name.
func (k Kind) String() string {
	switch k {
	case KindPage:
		return "page"
	case KindObject:
		return "object"
	case KindIndex:
		return "index"
	case KindOplog:
		return "oplog"
	case KindOther:
		return "other"
	}
	return "kind(" + strconv.Itoa(int(k)) + ")"
}

// KindForNamespace maps a namespace to its block kind: "page" is a page,
// "index" an index, "oplog" an oplog; "string", "hash", "set" and "feature"
// are objects; anything else is other.
func KindForNamespace(ns string) Kind {
	switch ns {
	case NamespacePage:
		return KindPage
	case NamespaceIndex:
		return KindIndex
	case NamespaceOplog:
		return KindOplog
	case NamespaceString, NamespaceHash, NamespaceSet, NamespaceFeature:
		return KindObject
	}
	return KindOther
}

// LargeObjectBytes is the value size above which an object starts colder.
const LargeObjectBytes = 4096

// InitialHotness is the hotness a newly written block starts with: page 2,
// index 3, oplog 1, object 2 (or 1 when its value is larger than
// [LargeObjectBytes]), other 0.
func InitialHotness(kind Kind, valueLen int) uint8 {
	switch kind {
	case KindPage:
		return 2
	case KindIndex:
		return 3
	case KindOplog:
		return 1
	case KindObject:
		if valueLen > LargeObjectBytes {
			return 1
		}
		return 2
	}
	return 0
}

// Ordered key encoding: see the package documentation.
const (
	escByte  = 0x00
	escZero  = 0xFF // 0x00 0xFF stands for a 0x00 byte
	escEnd   = 0x01 // 0x00 0x01 ends a field
	shardLen = 8
)

// AppendOrderedKey appends the order-preserving encoding of k to dst.
func AppendOrderedKey(dst []byte, k Key) []byte {
	dst = appendShard(dst, k.Shard)
	dst = appendEscaped(dst, k.Record)
	dst = append(dst, escByte, escEnd)
	dst = appendEscaped(dst, k.Namespace)
	dst = append(dst, escByte, escEnd)
	return appendEscaped(dst, k.Selector)
}

// OrderedKeyLen is len(AppendOrderedKey(nil, k)).
func OrderedKeyLen(k Key) int {
	return shardLen + escapedLen(k.Record) + 2 + escapedLen(k.Namespace) + 2 + escapedLen(k.Selector)
}

// ShardPrefix is the prefix every ordered key of the shard starts with, and
// no other key does.
func ShardPrefix(shard uint64) []byte { return appendShard(make([]byte, 0, shardLen), shard) }

// RecordPrefix is the prefix every ordered key of the shard whose record
// key starts with recordPrefix starts with, and no other key does. An empty
// recordPrefix gives [ShardPrefix].
func RecordPrefix(shard uint64, recordPrefix string) []byte {
	return appendEscaped(ShardPrefix(shard), recordPrefix)
}

// DecodeOrderedKey decodes an [AppendOrderedKey] encoding. It returns
// [ErrCorrupt] for anything AppendOrderedKey cannot have produced.
func DecodeOrderedKey(b []byte) (Key, error) {
	if len(b) < shardLen {
		return Key{}, ErrCorrupt
	}
	var k Key
	for _, c := range b[:shardLen] {
		k.Shard = k.Shard<<8 | uint64(c)
	}
	rest := b[shardLen:]
	var err error
	if k.Record, rest, err = unescapeField(rest, true); err != nil {
		return Key{}, err
	}
	if k.Namespace, rest, err = unescapeField(rest, true); err != nil {
		return Key{}, err
	}
	if k.Selector, _, err = unescapeField(rest, false); err != nil {
		return Key{}, err
	}
	return k, nil
}

func appendShard(dst []byte, shard uint64) []byte {
	return append(dst, byte(shard>>56), byte(shard>>48), byte(shard>>40), byte(shard>>32),
		byte(shard>>24), byte(shard>>16), byte(shard>>8), byte(shard))
}

func appendEscaped(dst []byte, s string) []byte {
	for {
		i := strings.IndexByte(s, escByte)
		if i < 0 {
			return append(dst, s...)
		}
		dst = append(dst, s[:i]...)
		dst = append(dst, escByte, escZero)
		s = s[i+1:]
	}
}

func escapedLen(s string) int { return len(s) + strings.Count(s, "\x00") }

// unescapeField reads one escaped field. A terminated field must end with
// 0x00 0x01; the last field must run to the end of b.
func unescapeField(b []byte, terminated bool) (string, []byte, error) {
	var out []byte
	for i := 0; i < len(b); i++ {
		if b[i] != escByte {
			out = append(out, b[i])
			continue
		}
		if i+1 >= len(b) {
			return "", nil, ErrCorrupt
		}
		switch b[i+1] {
		case escZero:
			out = append(out, 0)
			i++
		case escEnd:
			if !terminated {
				return "", nil, ErrCorrupt
			}
			return string(out), b[i+2:], nil
		default:
			return "", nil, ErrCorrupt
		}
	}
	if terminated {
		return "", nil, ErrCorrupt
	}
	return string(out), nil, nil
}
