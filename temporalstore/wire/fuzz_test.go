package wire

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"reflect"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/vmihailenco/msgpack/v5"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/kindcases"
)

// seedBodies are request bodies of every shape, in JSON.
func seedBodies(f *testing.F) []string {
	seeds := []string{
		`{"shard_id":1,"command":{"kind":"string_set","key":"k","value":"djE="}}`,
		`{"shard_id":1,"command":{"kind":"string_set","key":"k","value":[118,50]}}`,
		`{"command":{"kind":"string_set_conditional","key":"k","value":"eA==","ttl_ms":5,"condition":"if_exists","return_old":true}}`,
		`{"command":{"kind":"hash_multi_set","key":"h","entries":[["g",[50]],["x","eA=="]]}}`,
		`{"command":{"kind":"hash_multi_get","key":"h","fields":["f",[255,0]]}}`,
		`{"command":{"kind":"hash_incr_by","key":"h","field":"f","increment":-9223372036854775808}}`,
		`{"namespace":"a","table_name":"b","command":{"kind":"zrange","key":"z","range":{"by":"score","min":"(1.5","max":"+inf","limit":{"offset":1,"count":-1},"with_scores":true}}}`,
		`{"command":{"kind":"zrange","key":"z","range":{"by":"lex","lex_min":"-","lex_max":"(c"}}}`,
		`{"command":{"kind":"zadd","key":"z","args":["YQ=="],"scores":["-inf"],"zadd":{"incr":true}}}`,
		`{"command":{"kind":"row_write_batch","rows":[{"key":"r","args":["Zg==","MQ=="],"event_time_ms":5}]}}`,
		`{"command":{"kind":"feature_append","key":"f","points":[{"timestamp_ms":1,"value":[1]}]}}`,
		`{"shard_id":1,"commands":[{"kind":"string_get","key":"k"},{"kind":"lpop","key":"l","count":2}]}`,
		`{"commands":[]}`,
		`{"command":{"kind":"nope"}}`,
		`{"command":`,
	}
	for _, c := range kindcases.Steps(time.Unix(1_764_460_800, 0)) {
		w := FromEngine(c)
		b, err := json.Marshal(Request{Command: &w})
		if err != nil {
			f.Fatal(err)
		}
		seeds = append(seeds, string(b))
	}
	return seeds
}

// checkBody decodes body as both request forms, translates what decodes,
// and writes a response of each translated command's shape: nothing may
// panic, a translation error is a bad request, and what is written decodes.
func checkBody(t *testing.T, body []byte, mp bool) {
	var req Request
	if Decode(body, mp, &req) == nil && req.Command != nil {
		checkCommand(t, req.Command, mp)
	}
	var br BatchRequest
	if Decode(body, mp, &br) == nil {
		for i := range br.Commands {
			checkCommand(t, &br.Commands[i], mp)
		}
	}
}

func checkCommand(t *testing.T, w *Command, mp bool) {
	cl, err := translate(w, "", "", "")
	if err != nil {
		if !errors.Is(err, errBadRequest) {
			t.Fatalf("translate: %v is not a bad request", err)
		}
		return
	}
	r := ts.Response{Value: []byte{1}, Found: true, Values: [][]byte{nil, {}, {0xff}}, Keys: [][]byte{{'k'}}, Scores: []float64{1}, Ints: []int64{1}}
	enc := NewEncoder(mp)
	c := Call{cl}
	enc.Result(&c, &r, StatusOf(&c, &r, nil))
	var er ExecuteResponse
	if err := Decode(enc.Bytes(), mp, &er); err != nil {
		t.Fatalf("reply to %s does not decode: %v: %q", cl.kind, err, enc.Bytes())
	}
	if mp {
		return
	}
	if !json.Valid(enc.Bytes()) {
		t.Fatalf("reply to %s is not JSON: %s", cl.kind, enc.Bytes())
	}
}

func FuzzJSONDecoder(f *testing.F) {
	for _, s := range seedBodies(f) {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkBody(t, body, false) })
}

func FuzzMsgpackDecoder(f *testing.F) {
	for _, s := range seedBodies(f) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			f.Add([]byte(s))
			continue
		}
		b, err := msgpack.Marshal(v)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		var w Request
		if json.Unmarshal([]byte(s), &w) == nil {
			b, err := msgpack.Marshal(w)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(b)
		}
	}
	f.Fuzz(func(t *testing.T, body []byte) { checkBody(t, body, true) })
}

// checkMsgpack accepts exactly what the library's Skip reads whole.
func FuzzCheckMsgpack(f *testing.F) {
	for _, s := range seedBodies(f) {
		var v any
		if json.Unmarshal([]byte(s), &v) == nil {
			b, err := msgpack.Marshal(v)
			require.NoError(f, err)
			f.Add(b)
		}
	}
	for _, b := range [][]byte{{0xc1}, {0xdd, 0xff, 0xff, 0xff, 0xff}, {0xdf, 0, 0, 0, 1, 0xa1}, {0xd8, 1}, {0xc7, 3, 1, 0, 0, 0}, {0x92, 0xc0}} {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		lib := msgpack.NewDecoder(bytes.NewReader(body)).Skip()
		ours := checkMsgpack(body)
		require.Equal(t, lib == nil, ours == nil, "library: %v, ours: %v", lib, ours)
	})
}

// msgpackSeeds are seedBodies in MessagePack, as maps and as the wire
// structs encode (bin payloads), plus a batch of Feast reads and writes.
func msgpackSeeds(f *testing.F) [][]byte {
	var out [][]byte
	for _, s := range seedBodies(f) {
		var v any
		if json.Unmarshal([]byte(s), &v) != nil {
			continue
		}
		b, err := msgpack.Marshal(v)
		require.NoError(f, err)
		out = append(out, b)
		for _, w := range []any{&Request{}, &BatchRequest{}} {
			if json.Unmarshal([]byte(s), w) == nil {
				b, err := msgpack.Marshal(w)
				require.NoError(f, err)
				out = append(out, b)
			}
		}
	}
	feast := map[string]any{"table_name": "t", "commands": []any{
		map[string]any{"kind": "hmget", "key": []byte{1, 0, 0, 0, 'k'}, "args": []any{[]byte{1, 2, 3, 4}, []byte("_ts:v")}},
		map[string]any{"kind": "row_write_batch", "ts_field": "_ts:v", "ts_format": "proto", "ttl_ms": 5000,
			"rows": []any{map[string]any{"key": []byte("r"), "args": []any{[]byte("f"), []byte{}}, "event_time_ns": int64(-1) << 62}}},
		map[string]any{"kind": "scan", "cursor": 0, "count": 10, "suffix": []byte("p")},
		nil,
	}}
	b, err := msgpack.Marshal(feast)
	require.NoError(f, err)
	return append(out, b)
}

// The direct decoder and the library agree on every body: the same error
// or none, and the same request.
func FuzzFastDecode(f *testing.F) {
	for _, b := range msgpackSeeds(f) {
		f.Add(b)
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		if checkMsgpack(body) != nil {
			return
		}
		var fastB, libB BatchRequest
		fastErr, libErr := Decode(body, true, &fastB), decodeLibrary(body, &libB)
		require.Equal(t, libErr == nil, fastErr == nil, "library: %v, ours: %v", libErr, fastErr)
		if libErr == nil {
			require.True(t, sameValue(reflect.ValueOf(libB), reflect.ValueOf(fastB)), "library: %+v\nours: %+v", libB, fastB)
		}
		var fastR, libR Request
		fastErr, libErr = Decode(body, true, &fastR), decodeLibrary(body, &libR)
		require.Equal(t, libErr == nil, fastErr == nil, "library: %v, ours: %v", libErr, fastErr)
		if libErr == nil {
			require.True(t, sameValue(reflect.ValueOf(libR), reflect.ValueOf(fastR)), "library: %+v\nours: %+v", libR, fastR)
		}
	})
}

// sameValue is reflect.DeepEqual but for a NaN, which equals a NaN here
// (a request may carry one).
func sameValue(a, b reflect.Value) bool {
	if a.IsValid() != b.IsValid() {
		return false
	}
	if !a.IsValid() {
		return true
	}
	if a.Type() != b.Type() {
		return false
	}
	switch a.Kind() {
	case reflect.Float32, reflect.Float64:
		x, y := a.Float(), b.Float()
		return x == y || math.IsNaN(x) && math.IsNaN(y)
	case reflect.Pointer, reflect.Interface:
		if a.IsNil() || b.IsNil() {
			return a.IsNil() == b.IsNil()
		}
		return sameValue(a.Elem(), b.Elem())
	case reflect.Slice:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		fallthrough
	case reflect.Array:
		for i := range a.Len() {
			if !sameValue(a.Index(i), b.Index(i)) {
				return false
			}
		}
		return true
	case reflect.Struct:
		for i := range a.NumField() {
			if !sameValue(a.Field(i), b.Field(i)) {
				return false
			}
		}
		return true
	case reflect.Map:
		if a.IsNil() != b.IsNil() || a.Len() != b.Len() {
			return false
		}
		for _, k := range a.MapKeys() {
			if !sameValue(a.MapIndex(k), b.MapIndex(k)) {
				return false
			}
		}
		return true
	}
	return reflect.DeepEqual(a.Interface(), b.Interface())
}
