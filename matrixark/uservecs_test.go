package matrixark

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/require"
)

// A user's vectors: the nearest first (ties by id), other widths and what
// keep refuses left out, removed ids gone.
func TestUserVecs(t *testing.T) {
	uv := &userVecs{}
	for id, v := range map[uint64][]float32{1: {1, 0}, 2: {0.9, 0.1}, 3: {0, 1}, 4: {1, 0, 0}, 5: {1, 0}} {
		uv.ids, uv.vecs = append(uv.ids, id), append(uv.vecs, v)
	}
	q := []float32{1, 0}
	require.Equal(t, []uint64{1, 5, 2}, uv.nearest(q, 3, nil))
	require.Equal(t, []uint64{5, 2, 3}, uv.nearest(q, 5, func(id uint64) bool { return id != 1 }))
	require.Empty(t, uv.nearest(q, 0, nil))
	require.Empty(t, uv.nearest(q, -1, nil))
	uv.remove(map[uint64]bool{1: true, 3: true})
	require.ElementsMatch(t, []uint64{2, 4, 5}, uv.ids)
	require.Equal(t, []uint64{5, 2}, uv.nearest(q, 5, nil))
}

// A user's nodes by their better summary cosine: other widths and what
// keep refuses left out, ties by hash.
func TestUserVecsNearestNodes(t *testing.T) {
	uv := &userVecs{nodes: map[uint64]nodeVecs{
		1: {l0: []float32{0, 1}, l1: []float32{1, 0}}, // L1 matches
		2: {l0: []float32{0.9, 0.1}},
		3: {l1: []float32{0, 1}},
		4: {l0: []float32{1, 0, 0}}, // another width
		5: {l0: []float32{1, 0}},
	}}
	q := []float32{1, 0}
	require.Equal(t, []uint64{1, 5, 2}, uv.nearestNodes(q, 3, nil))
	require.Equal(t, []uint64{5, 2, 3}, uv.nearestNodes(q, 10, func(id uint64) bool { return id != 1 }))
	require.Empty(t, uv.nearestNodes(q, 0, nil))
}

// An event record decodes without its vector, whatever its texts hold.
func TestDecodeEventNoVec(t *testing.T) {
	for _, ev := range []Event{
		{ID: 1, Node: 2, EventMs: 3, Seq: 4, Text: "plain", SourceRef: "s", RecordType: RecordRawMessage, Vec: []float32{0.5, -1e-7, 3}, ExpiresAtMs: 9},
		{ID: 1, Text: `tricky ,"vec":[1,2] and ] brackets`, Vec: []float32{1}},
		{ID: 1, Text: "no vector"},
		{ID: 1, Text: `,"vec":[`, SourceRef: "]"},
	} {
		data, err := json.Marshal(ev)
		require.NoError(t, err)
		got, err := decodeEventNoVec(data)
		require.NoError(t, err)
		want := ev
		want.Vec = nil
		require.Equal(t, want, got)
	}
	_, err := decodeEventNoVec([]byte(`{"id":1,"vec":[1,2`))
	require.Error(t, err)
}

// FuzzDecodeEventNoVec: any event json.Marshal writes decodes to itself
// less its vector; any other input is an error or an event, never a panic.
func FuzzDecodeEventNoVec(f *testing.F) {
	f.Add(uint64(1), "text", "ref", float32(0.25), 3, []byte(`{"id":1}`))
	f.Add(uint64(0), `,"vec":[1]`, "]", float32(-2), 0, []byte(`,"vec":[`))
	f.Fuzz(func(t *testing.T, id uint64, text, ref string, x float32, n int, raw []byte) {
		_, _ = decodeEventNoVec(raw)
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return
		}
		ev := Event{ID: id, Text: text, SourceRef: ref, Vec: make([]float32, n%64+max(-(n%64), 0)*2)}
		for i := range ev.Vec {
			ev.Vec[i] = x
		}
		data, err := json.Marshal(ev)
		if err != nil {
			return // texts that are not UTF-8 are still written; others may not be
		}
		got, err := decodeEventNoVec(data)
		require.NoError(t, err)
		var want Event
		require.NoError(t, json.Unmarshal(data, &want))
		want.Vec = nil
		require.Equal(t, want, got)
	})
}
