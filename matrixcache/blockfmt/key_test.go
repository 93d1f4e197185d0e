package blockfmt

import (
	"bytes"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestKeyConstructorsKeepTheirExactBytes(t *testing.T) {
	tests := []struct {
		name string
		got  Key
		want Key
	}{
		{"string", StringKey(7, "user:1"), Key{7, "user:1", "string", "value"}},
		{"hash", HashKey(1, "h", "field-a"), Key{1, "h", "hash", "field-a"}},
		{"set members", SetMembersKey(2, "s"), Key{2, "s", "set", "members"}},
		{"feature query", FeatureQueryKey(3, "f", 1000, 2000, 10), Key{3, "f", "feature", "1000:2000:10"}},
		{"feature query default count", FeatureQueryKey(3, "f", -5, 20, 0), Key{3, "f", "feature", "-5:20:5000"}},
		{"page", PageKey(4, 12, 4096, 512), Key{4, "segment-00000000000000000012", "page", "4096:512"}},
		{"page max segment", PageKey(0, 1<<64-1, 0, 0), Key{0, "segment-18446744073709551615", "page", "0:0"}},
		{"page with slot", PageKeyWithSlot(4, 12, 0, 64, 9), Key{4, "segment-00000000000000000012", "page", "slot-9:0:64"}},
		{"page with generation", PageKeyWithGeneration(4, 1, 8, 16, 3), Key{4, "segment-00000000000000000001", "page", "gen-3:8:16"}},
		{"page with slot and generation", PageKeyWithSlotGeneration(4, 1, 8, 16, 2, 3), Key{4, "segment-00000000000000000001", "page", "slot-2:gen-3:8:16"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, tt.got)
			require.Equal(t, 8+len(tt.want.Record)+len(tt.want.Namespace)+len(tt.want.Selector), tt.got.Size())
		})
	}
}

func TestKeySize(t *testing.T) {
	require.Equal(t, 8, Key{}.Size())
	require.Equal(t, 8+len("user:1")+len("string")+len("value"), StringKey(0, "user:1").Size())
	require.Equal(t, 8+28+4+8, PageKey(1, 2, 4096, 512).Size())
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
		{"string", StringKey(0x0102, "ab"), []byte("\x00\x00\x00\x00\x00\x00\x01\x02ab\x00\x01string\x00\x01value")},
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
