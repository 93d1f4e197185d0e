package ferricstore

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/ferricstore/stream"
)

func sampleOps() []op {
	add := op{code: opAdd, key: "s", id: stream.ID{Ms: 5, Seq: 1}, fields: kv("f", "v", "g", ""), now: 9}
	add.setTrim(stream.Trim{Strategy: stream.TrimMaxLen, MaxLen: 10, Approx: true, Limit: 100})
	return []op{
		add,
		{code: opDelete, key: "s", ids: []stream.ID{{Ms: 1}, {Ms: 2, Seq: 3}}},
		{code: opSetID, key: "s", id: stream.MaxID, b: -1, id2: stream.ID{Ms: 4}},
		{code: opCreateGroup, key: "s", group: "g", flags: flagMkStream, a: -1},
		{code: opClaim, key: "s", group: "g", consumer: "c", ids: []stream.ID{{Ms: 1}}, a: 100, b: -1, c: 12345, flags: flagForce | flagJustID, now: -5},
		{code: opAutoClaim, key: "{t}x", group: "g", consumer: "c", a: 10, b: 0},
	}
}

func TestRecordRoundTrip(t *testing.T) {
	for _, o := range sampleOps() {
		rec := o.encode(nil)
		got, err := decodeOp(rec)
		require.NoError(t, err)
		if len(o.fields) == 0 {
			o.fields = nil
		}
		require.Equal(t, o, got)
		// Every strict prefix is refused, never misread.
		for n := range len(rec) {
			_, err := decodeOp(rec[:n])
			require.Error(t, err, "prefix %d of op %d", n, o.code)
		}
	}
	rec := sampleOps()[0].encode(nil)
	rec[0] = 2
	_, err := decodeOp(rec)
	require.ErrorIs(t, err, ErrRecordVersion)
}

// FuzzDecodeOp: any bytes decode or are refused; a decoded op encodes
// back to the same bytes.
func FuzzDecodeOp(f *testing.F) {
	for _, o := range sampleOps() {
		f.Add(o.encode(nil))
	}
	f.Add([]byte{1, 1, 0, 200, 200, 200, 200, 200, 200, 200, 200, 200, 1})
	f.Fuzz(func(t *testing.T, rec []byte) {
		o, err := decodeOp(rec)
		if err != nil {
			return
		}
		again, err := decodeOp(o.encode(nil))
		require.NoError(t, err)
		require.Equal(t, o.encode(nil), again.encode(nil))
	})
}
