package blockfmt

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// The keys of package cachekey's kinds, built here since it imports this
// package.
func testStringKey(shard uint64, key string) Key { return Key{shard, key, NamespaceString, "value"} }

func testHashKey(shard uint64, key, field string) Key { return Key{shard, key, NamespaceHash, field} }

func testPageKey(shard, segment, offset, length uint64) Key {
	return Key{shard, fmt.Sprintf("segment-%020d", segment), NamespacePage, fmt.Sprintf("%d:%d", offset, length)}
}

func testPageKeyWithSlot(shard, segment, offset, length uint64, slot uint32) Key {
	k := testPageKey(shard, segment, offset, length)
	k.Selector = fmt.Sprintf("slot-%d:", slot) + k.Selector
	return k
}

func TestKeyOf(t *testing.T) {
	k := KeyOf("user:1")
	require.Equal(t, testStringKey(0, "user:1"), k)
	require.Equal(t, KindObject, k.Kind())
}

func TestKeySize(t *testing.T) {
	require.Equal(t, 8, Key{}.Size())
	require.Equal(t, 8+len("user:1")+len("string")+len("value"), testStringKey(0, "user:1").Size())
	require.Equal(t, 8+28+4+8, testPageKey(1, 2, 4096, 512).Size())
}

func TestRoutingSlot(t *testing.T) {
	tests := []struct {
		selector string
		slot     uint32
		ok       bool
	}{
		{"slot-9:0:64", 9, true},
		{"slot-2:gen-3:8:16", 2, true},
		{"slot-4294967295:1:1", 1<<32 - 1, true},
		{"slot-4294967296:1:1", 0, false},
		{"gen-3:8:16", 0, false},
		{"0:64", 0, false},
		{"slot-:0:64", 0, false},
		{"slot-7", 0, false},
		{"slot-x:1", 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.selector, func(t *testing.T) {
			slot, ok := Key{Selector: tt.selector}.RoutingSlot()
			require.Equal(t, tt.ok, ok)
			require.Equal(t, tt.slot, slot)
		})
	}
}

func TestKindForNamespaceAndInitialHotness(t *testing.T) {
	tests := []struct {
		ns       string
		kind     Kind
		valueLen int
		hotness  uint8
	}{
		{"page", KindPage, 100, 2},
		{"index", KindIndex, 100, 3},
		{"oplog", KindOplog, 100, 1},
		{"string", KindObject, 4096, 2},
		{"hash", KindObject, 4097, 1},
		{"set", KindObject, 0, 2},
		{"feature", KindObject, 10_000, 1},
		{"", KindOther, 1, 0},
		{"Page", KindOther, 1, 0},
		{"blob", KindOther, 1 << 20, 0},
	}
	for _, tt := range tests {
		t.Run(tt.ns, func(t *testing.T) {
			require.Equal(t, tt.kind, KindForNamespace(tt.ns))
			require.Equal(t, tt.hotness, InitialHotness(tt.kind, tt.valueLen))
			b := NewBlock(Key{Namespace: tt.ns}, make([]byte, tt.valueLen))
			require.Equal(t, tt.kind, b.Kind)
			require.Equal(t, tt.hotness, b.Hotness)
		})
	}
	require.Equal(t, "oplog", KindOplog.String())
	require.Equal(t, "kind(9)", Kind(9).String())
}

func TestOrderedKeyExactBytes(t *testing.T) {
	tests := []struct {
		name string
		key  Key
		want []byte
	}{
		{"empty", Key{}, []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 1}},
		{"string", testStringKey(0x0102, "ab"), []byte("\x00\x00\x00\x00\x00\x00\x01\x02ab\x00\x01string\x00\x01value")},
		{"zero bytes escaped", Key{1, "a\x00", "\x00", "x\x00"}, []byte("\x00\x00\x00\x00\x00\x00\x00\x01a\x00\xff\x00\x01\x00\xff\x00\x01x\x00\xff")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := AppendOrderedKey(nil, tt.key)
			require.Equal(t, tt.want, got)
			require.Len(t, got, OrderedKeyLen(tt.key))
			back, err := DecodeOrderedKey(got)
			require.NoError(t, err)
			require.Equal(t, tt.key, back)
		})
	}
	require.Equal(t, []byte{0, 0, 0, 0, 0, 0, 0, 5}, ShardPrefix(5))
	require.Equal(t, []byte("\x00\x00\x00\x00\x00\x00\x00\x05seg\x00\xff"), RecordPrefix(5, "seg\x00"))
}

func TestDecodeOrderedKeyRejectsGarbage(t *testing.T) {
	for _, b := range [][]byte{
		nil,
		{1, 2, 3},
		[]byte("\x00\x00\x00\x00\x00\x00\x00\x01abc"),                         // no terminators
		[]byte("\x00\x00\x00\x00\x00\x00\x00\x01a\x00\x01ns"),                 // one terminator
		[]byte("\x00\x00\x00\x00\x00\x00\x00\x01a\x00\x02\x00\x01\x00\x01"),   // bad escape
		[]byte("\x00\x00\x00\x00\x00\x00\x00\x01a\x00\x01b\x00\x01c\x00"),     // dangling escape
		[]byte("\x00\x00\x00\x00\x00\x00\x00\x01a\x00\x01b\x00\x01c\x00\x01"), // terminated selector
	} {
		_, err := DecodeOrderedKey(b)
		require.ErrorIs(t, err, ErrCorrupt, "%q", b)
	}
}

// randomKey draws keys from a small alphabet rich in 0x00, 0x01 and 0xff so
// that escaping and ordering corner cases come up often.
func randomKey(r *rand.Rand) Key {
	alphabet := []byte{0x00, 0x01, 0xfe, 0xff, 'a', 'b'}
	str := func() string {
		b := make([]byte, r.IntN(4))
		for i := range b {
			b[i] = alphabet[r.IntN(len(alphabet))]
		}
		return string(b)
	}
	return Key{Shard: uint64(r.IntN(3)) << (r.IntN(2) * 60), Record: str(), Namespace: str(), Selector: str()}
}

func TestOrderedKeyPreservesOrderAndPrefixes(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	keys := make([]Key, 3000)
	for i := range keys {
		keys[i] = randomKey(r)
	}
	byKey := slices.Clone(keys)
	slices.SortFunc(byKey, Key.Compare)
	byBytes := slices.Clone(keys)
	slices.SortFunc(byBytes, func(a, b Key) int {
		return bytes.Compare(AppendOrderedKey(nil, a), AppendOrderedKey(nil, b))
	})
	require.Equal(t, byKey, byBytes, "byte order must be key order")

	for i := 0; i < 500; i++ {
		a, b := keys[i], keys[i+500]
		enc := AppendOrderedKey(nil, b)
		require.Equal(t, a.Shard == b.Shard, bytes.HasPrefix(enc, ShardPrefix(a.Shard)))
		wantRec := a.Shard == b.Shard && len(b.Record) >= len(a.Record) && b.Record[:len(a.Record)] == a.Record
		require.Equal(t, wantRec, bytes.HasPrefix(enc, RecordPrefix(a.Shard, a.Record)),
			"record prefix %q of key %q", a.Record, b.Record)
	}
}
