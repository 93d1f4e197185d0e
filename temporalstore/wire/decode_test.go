package wire

import (
	"bytes"
	"encoding/json"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"
)

// Whatever the library decodes into a command (plainCommand: Command
// without its decoder), the hand-written decoder decodes the same; a row
// likewise.
func FuzzCommandDecoder(f *testing.F) {
	for _, s := range seedBodies(f) {
		var req struct {
			Command  json.RawMessage   `json:"command"`
			Commands []json.RawMessage `json:"commands"`
		}
		if json.Unmarshal([]byte(s), &req) != nil {
			continue
		}
		for _, raw := range append(req.Commands, req.Command) {
			var v any
			if len(raw) == 0 || json.Unmarshal(raw, &v) != nil {
				continue
			}
			b, err := msgpack.Marshal(v)
			require.NoError(f, err)
			f.Add(b)
			var w Command
			if json.Unmarshal(raw, &w) == nil {
				b, err := msgpack.Marshal(w)
				require.NoError(f, err)
				f.Add(b)
			}
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		// Decode refuses what does not hold the lengths it claims before
		// decoding (the library's decoding of those is the slow part).
		if msgpack.NewDecoder(bytes.NewReader(body)).Skip() != nil {
			return
		}
		var want plainCommand
		if decodeLibrary(body, &want) == nil {
			var got Command
			require.NoError(t, decodeLibrary(body, &got))
			requireSame(t, want, plainCommand(got))
		}
		var wantRow plainRow
		if decodeLibrary(body, &wantRow) == nil {
			var got Row
			require.NoError(t, decodeLibrary(body, &got))
			requireSame(t, wantRow, plainRow(got))
		}
	})
}

// requireSame compares two decoded values by their encoding, so that a NaN
// equals itself.
func requireSame(t *testing.T, want, got any) {
	t.Helper()
	a, err := msgpack.Marshal(want)
	require.NoError(t, err)
	b, err := msgpack.Marshal(got)
	require.NoError(t, err)
	require.Equal(t, a, b, "%+v\n%+v", want, got)
}

// A batch decodes to its commands in order, nil ones zero, unknown fields
// skipped, a claimed length past the body refused without allocating it.
func TestBatchDecoder(t *testing.T) {
	body, err := msgpack.Marshal(map[string]any{
		"shard_id": 3, "namespace": "ns", "extra": []int{1, 2},
		"commands": []any{
			map[string]any{"kind": "hmget", "key": []byte{0xff, 0}, "args": [][]byte{{1}, {}}, "unknown": map[string]any{"a": 1}},
			nil,
			map[string]any{"kind": "row_write_batch", "ts_format": "proto", "rows": []any{map[string]any{"key": "r", "args": []string{"Zg=="}, "event_time_ns": int64(5)}}},
		},
	})
	require.NoError(t, err)
	var req BatchRequest
	require.NoError(t, Decode(body, true, &req))
	require.Equal(t, "ns", req.Namespace)
	require.NotNil(t, req.ShardID)
	require.Len(t, req.Commands, 3)
	require.Equal(t, Command{Kind: "hmget", Key: Text{0xff, 0}, Args: []Bytes{{1}, {}}}, req.Commands[0])
	require.Equal(t, Command{}, req.Commands[1])
	require.Equal(t, "proto", req.Commands[2].TSFormat)
	require.Equal(t, []Row{{Key: Text("r"), Args: []Bytes{Bytes("f")}, EventTimeNs: 5}}, req.Commands[2].Rows)

	// Arrays claiming four billion commands or 410 million points, and
	// nothing after: refused at once, nothing allocated for them.
	for _, body := range [][]byte{
		{0x81, 0xa8, 'c', 'o', 'm', 'm', 'a', 'n', 'd', 's', 0xdd, 0xff, 0xff, 0xff, 0xff},
		{0x81, 0xa7, 'c', 'o', 'm', 'm', 'a', 'n', 'd', 0x81, 0xa6, 'p', 'o', 'i', 'n', 't', 's', 0xdd, 0x18, 0x74, 0x28, 0x40, 0xc1},
	} {
		start := time.Now()
		require.Error(t, Decode(body, true, &Request{}))
		require.Error(t, Decode(body, true, &BatchRequest{}))
		require.Less(t, time.Since(start), time.Second)
	}
}

// A BatchRequest decodes into the array Reset left it, with nothing of the
// batch before: fewer commands, fields left out, no namespace.
func TestBatchRequestReuse(t *testing.T) {
	body := func(mp bool, req BatchRequest) []byte {
		marshal := json.Marshal
		if mp {
			marshal = msgpack.Marshal
		}
		b, err := marshal(req)
		require.NoError(t, err)
		return b
	}
	ttl := func(ms int64) *int64 { return &ms }
	first := BatchRequest{Namespace: "n", Commands: []Command{
		{Kind: "set", Key: Text("a"), TTLMs: ttl(5)}, {Kind: "set", Key: Text("b"), TTLMs: ttl(6)}, {Kind: "get", Key: Text("c")}}}
	second := BatchRequest{Commands: []Command{{Kind: "get", Key: Text("x")}}}
	for _, mp := range []bool{false, true} {
		var b BatchRequest
		require.NoError(t, Decode(body(mp, first), mp, &b))
		require.Len(t, b.Commands, 3)
		arr := &b.Commands[0]
		b.Reset()
		require.Empty(t, b.Commands)
		require.Empty(t, b.Namespace)
		require.Equal(t, []Command{{}, {}, {}}, b.Commands[:3], "Reset zeroes the commands")

		require.NoError(t, Decode(body(mp, second), mp, &b))
		require.Same(t, arr, &b.Commands[0], "the array is reused")
		require.Equal(t, second, b)
	}
}

// The seeds take the direct path (none falls back to the library), and a
// reused BatchRequest decodes as a fresh one does.
func TestFastDecodeTakesSeeds(t *testing.T) {
	var bodies [][]byte
	for _, v := range []any{
		map[string]any{"table_name": "t", "commands": []any{
			map[string]any{"kind": "hmget", "key": "k", "args": []any{"YQ=="}},
			map[string]any{"kind": "row_write_batch", "ts_field": "_ts", "rows": []any{
				map[string]any{"key": []byte("r"), "args": []any{[]byte("f"), []byte("1")}, "event_time_ns": 5},
			}},
		}},
		map[string]any{"command": map[string]any{"kind": "string_set", "key": "k", "value": "djE=", "ttl_ms": 5}},
	} {
		b, err := msgpack.Marshal(v)
		require.NoError(t, err)
		bodies = append(bodies, b)
	}
	var br BatchRequest
	require.NoError(t, decodeFast(bodies[0], &br))
	require.Equal(t, "hmget", br.Commands[0].Kind)
	require.Equal(t, Text("k"), br.Commands[0].Key)
	require.Equal(t, []Bytes{Bytes("a")}, br.Commands[0].Args)
	require.Equal(t, int64(5), br.Commands[1].Rows[0].EventTimeNs)
	var lib BatchRequest
	require.NoError(t, decodeLibrary(bodies[0], &lib))
	require.Equal(t, lib, br)
	br.Reset()
	require.NoError(t, Decode(bodies[0], true, &br))
	require.Equal(t, lib, br)

	var r Request
	require.NoError(t, decodeFast(bodies[1], &r))
	require.Equal(t, int64(5), *r.Command.TTLMs)
	var libR Request
	require.NoError(t, decodeLibrary(bodies[1], &libR))
	require.Equal(t, libR, r)
}
