package httpapi

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

// The HTTP differential fuzzer: random sequences of /execute commands of
// the original's string, TTL and hash kinds and the engine's incr_by, run
// on the handler and on execModel, a small model of their semantics;
// replies (HTTP status, status code, response) compared, then every key's
// state. Bodies that cannot be understood (bad JSON, numbers beyond
// int64, negative TTLs, wrong JSON types, bad bytes) must get a 400 with a
// JSON bad_request status and change nothing, which the model checks.
//
// Environment, as the RESP fuzzer's: DIFFFUZZ_TIME (default 1m, 5s with
// -short), DIFFFUZZ_SEED (drawn; a fixed one under CI=true),
// DIFFFUZZ_SEQ, DIFFFUZZ_KEEPGOING=1.

// execEntry is one key of the model.
type execEntry struct {
	str    []byte
	hash   map[string][]byte
	isHash bool
	exp    int64 // unix ms; 0: none
}

// execModel is the engine's semantics for the fuzzed kinds.
type execModel struct {
	now  func() int64
	keys map[string]*execEntry
}

func (m *execModel) live(k string) *execEntry {
	e := m.keys[k]
	if e != nil && e.exp != 0 && e.exp <= m.now() {
		delete(m.keys, k)
		return nil
	}
	return e
}

// execWant is the reply the model expects: the HTTP status, the status
// code, and the response as JSON (compared after decoding both).
type execWant struct {
	http int
	code string
	resp string
}

func okWant(resp string) execWant   { return execWant{http: 200, code: "ok", resp: resp} }
func failWant(code string) execWant { return execWant{http: 200, code: code, resp: `{"kind":"empty"}`} }

var badWant = execWant{http: 400, code: "bad_request", resp: `{"kind":"empty"}`}

// execStep is one request: its body, and what it does to the model.
type execStep struct {
	body  string
	apply func(m *execModel) execWant
}

func jsonBytes(b []byte) string {
	if b == nil {
		return "null"
	}
	out, _ := json.Marshal(toInts(b))
	return string(out)
}

func toInts(b []byte) []int {
	out := make([]int, len(b))
	for i, c := range b {
		out[i] = int(c)
	}
	return out
}

// jsonName is a name as the response writes it: a string, or numbers for
// bytes that are not UTF-8.
func jsonName(b string) string {
	if utf8.ValidString(b) {
		out, _ := json.Marshal(b)
		return string(out)
	}
	return jsonBytes([]byte(b))
}

// execGen draws the fuzzer's requests.
type execGen struct{ rng *rand.Rand }

func (g *execGen) pick(xs ...string) string { return xs[g.rng.IntN(len(xs))] }
func (g *execGen) chance(n int) bool        { return g.rng.IntN(n) == 0 }

var execKeys = []string{"a", "b", "{t}c", "\xff\x00"}

// name encodes a name as a JSON string, or as numbers.
func (g *execGen) name(s string) string {
	if !utf8.ValidString(s) || g.chance(8) {
		return jsonBytes([]byte(s))
	}
	out, _ := json.Marshal(s)
	return string(out)
}

// payload encodes bytes as base64 or as numbers.
func (g *execGen) payload(b []byte) string {
	if g.chance(2) {
		return jsonBytes(b)
	}
	return `"` + base64.StdEncoding.EncodeToString(b) + `"`
}

func (g *execGen) key() string { return execKeys[g.rng.IntN(len(execKeys))] }
func (g *execGen) field() string {
	return g.pick("f", "g", "n", "", "\x00", "\xfe")
}
func (g *execGen) value() []byte {
	return []byte(g.pick("", "1", "-5", "10", "x", "\x00\xff", "9223372036854775807", "-9223372036854775808", "v v"))
}

// ttl is a ttl_ms as JSON text: valid, edge, or not a number.
func (g *execGen) ttl() (text string, n int64, valid bool) {
	switch g.rng.IntN(10) {
	case 0:
		return "0", 0, true
	case 1:
		return "-1", -1, true
	case 2:
		return "9223372036854775807", math.MaxInt64, false // beyond a time.Duration
	case 3:
		return "9223372036854775808", 0, false
	case 4:
		return `"1000"`, 0, false
	case 5:
		return "1.5", 0, false
	case 6:
		return "1e30", 0, false
	case 7:
		return "9223372036854", 9223372036854, true // 292 years, the longest
	case 8:
		return "9223372036855", 0, false
	}
	n = int64(1 + g.rng.IntN(3000))
	return strconv.FormatInt(n, 10), n, true
}

func (g *execGen) incr() (text string, n int64, valid bool) {
	switch g.rng.IntN(8) {
	case 0:
		return "9223372036854775807", math.MaxInt64, true
	case 1:
		return "-9223372036854775808", math.MinInt64, true
	case 2:
		return "9223372036854775808", 0, false
	case 3:
		return `"5"`, 0, false
	case 4:
		return "2.5", 0, false
	}
	n = int64(g.rng.IntN(21) - 10)
	return strconv.FormatInt(n, 10), n, true
}

func body(cmd string) string { return `{"shard_id":1,"command":{` + cmd + `}}` }

// step draws one request and its model.
func (g *execGen) step() execStep {
	k := g.key()
	kj := g.name(k)
	switch g.rng.IntN(19) {
	case 0, 1:
		v := g.value()
		return execStep{body(`"kind":"string_set","key":` + kj + `,"value":` + g.payload(v)), func(m *execModel) execWant {
			e := m.live(k)
			exp := int64(0)
			if e != nil {
				exp = e.exp
			}
			m.keys[k] = &execEntry{str: v, exp: exp}
			return okWant(`{"kind":"empty"}`)
		}}
	case 2:
		v := g.value()
		text, n, valid := g.ttl()
		return execStep{body(`"kind":"string_set_ex","key":` + kj + `,"value":` + g.payload(v) + `,"ttl_ms":` + text), func(m *execModel) execWant {
			if !valid || n <= 0 {
				return badWant
			}
			m.keys[k] = &execEntry{str: v, exp: satAdd(m.now(), n)}
			return okWant(`{"kind":"empty"}`)
		}}
	case 3, 4:
		v := g.value()
		cond := g.pick("always", "nx", "xx", "if_not_exists", "if_exists", "sometimes")
		retOld := g.chance(2)
		ttlPart, n, valid, hasTTL := "", int64(0), true, g.chance(2)
		if hasTTL {
			var text string
			text, n, valid = g.ttl()
			ttlPart = `,"ttl_ms":` + text
		} else if g.chance(3) {
			ttlPart = `,"ttl_ms":null`
		}
		return execStep{body(`"kind":"string_set_conditional","key":` + kj + `,"value":` + g.payload(v) + `,"condition":"` + cond + `","return_old":` + strconv.FormatBool(retOld) + ttlPart), func(m *execModel) execWant {
			if cond == "sometimes" || !valid || hasTTL && n <= 0 {
				return badWant
			}
			e := m.live(k)
			if retOld && e != nil && e.isHash {
				return failWant("wrong_type")
			}
			apply := cond == "always" || (cond == "nx" || cond == "if_not_exists") == (e == nil)
			old := []byte(nil)
			if e != nil && !e.isHash {
				old = e.str
			}
			if apply {
				exp := int64(0)
				if hasTTL {
					exp = satAdd(m.now(), n)
				}
				m.keys[k] = &execEntry{str: v, exp: exp}
			}
			if retOld {
				return okWant(`{"kind":"bytes","value":` + jsonBytes(old) + `}`)
			}
			return okWant(`{"kind":"integer","value":` + map[bool]string{true: "1", false: "0"}[apply] + `}`)
		}}
	case 5, 6:
		kind := g.pick("string_get", "get")
		return execStep{body(`"kind":"` + kind + `","key":` + kj), func(m *execModel) execWant {
			e := m.live(k)
			switch {
			case e == nil:
				return okWant(`{"kind":"bytes","value":null}`)
			case e.isHash:
				return failWant("wrong_type")
			}
			return okWant(`{"kind":"bytes","value":` + jsonBytes(e.str) + `}`)
		}}
	case 7:
		kind := g.pick("string_delete", "common_delete")
		return execStep{body(`"kind":"` + kind + `","key":` + kj), func(m *execModel) execWant {
			delete(m.keys, k)
			return okWant(`{"kind":"empty"}`)
		}}
	case 8:
		text, n, valid := g.ttl()
		return execStep{body(`"kind":"common_expire","key":` + kj + `,"ttl_ms":` + text), func(m *execModel) execWant {
			if !valid || n < 0 {
				return badWant
			}
			e := m.live(k)
			if e == nil {
				return failWant("not_found")
			}
			if n == 0 {
				delete(m.keys, k)
			} else {
				e.exp = satAdd(m.now(), n)
			}
			return okWant(`{"kind":"empty"}`)
		}}
	case 9:
		return execStep{body(`"kind":"common_ttl","key":` + kj), func(m *execModel) execWant {
			e := m.live(k)
			switch {
			case e == nil:
				return okWant(`{"kind":"integer","value":-2}`)
			case e.exp == 0:
				return okWant(`{"kind":"integer","value":-1}`)
			}
			return okWant(`{"kind":"integer","value":` + strconv.FormatInt(e.exp-m.now(), 10) + `}`)
		}}
	case 10:
		return execStep{body(`"kind":"common_exists","key":` + kj), func(m *execModel) execWant {
			return okWant(`{"kind":"integer","value":` + map[bool]string{true: "1", false: "0"}[m.live(k) != nil] + `}`)
		}}
	case 11, 12:
		f, v := g.field(), g.value()
		return execStep{body(`"kind":"hash_set","key":` + kj + `,"field":` + g.name(f) + `,"value":` + g.payload(v)), func(m *execModel) execWant {
			e, ok := m.hash(k)
			if !ok {
				return failWant("wrong_type")
			}
			e.hash[f] = v
			return okWant(`{"kind":"empty"}`)
		}}
	case 13:
		fs := []string{g.field(), g.field()}
		return execStep{body(`"kind":"hash_multi_get","key":` + kj + `,"fields":[` + g.name(fs[0]) + `,` + g.name(fs[1]) + `]`), func(m *execModel) execWant {
			e := m.live(k)
			if e != nil && !e.isHash {
				return failWant("wrong_type")
			}
			vals := make([]string, len(fs))
			for i, f := range fs {
				vals[i] = "null"
				if e != nil {
					if v, ok := e.hash[f]; ok {
						vals[i] = jsonBytes(v)
					}
				}
			}
			return okWant(`{"kind":"values","values":[` + strings.Join(vals, ",") + `]}`)
		}}
	case 14:
		f1, v1, f2, v2 := g.field(), g.value(), g.field(), g.value()
		return execStep{body(`"kind":"hash_multi_set","key":` + kj + `,"entries":[[` + g.name(f1) + `,` + g.payload(v1) + `],[` + g.name(f2) + `,` + g.payload(v2) + `]]`), func(m *execModel) execWant {
			e, ok := m.hash(k)
			if !ok {
				return failWant("wrong_type")
			}
			e.hash[f1] = v1
			e.hash[f2] = v2
			return okWant(`{"kind":"empty"}`)
		}}
	case 15:
		f := g.field()
		text, n, valid := g.incr()
		return execStep{body(`"kind":"hash_incr_by","key":` + kj + `,"field":` + g.name(f) + `,"increment":` + text), func(m *execModel) execWant {
			if !valid {
				return badWant
			}
			e := m.live(k)
			if e != nil && !e.isHash {
				return failWant("wrong_type")
			}
			cur := int64(0)
			if e != nil {
				if v, ok := e.hash[f]; ok {
					var err error
					if cur, err = strconv.ParseInt(string(v), 10, 64); err != nil {
						return failWant("unmatched")
					}
				}
			}
			sum, ok := addInt(cur, n)
			if !ok {
				return failWant("out_of_range")
			}
			e, _ = m.hash(k)
			e.hash[f] = []byte(strconv.FormatInt(sum, 10))
			return okWant(`{"kind":"integer","value":` + strconv.FormatInt(sum, 10) + `}`)
		}}
	case 16:
		text, n, valid := g.incr()
		return execStep{body(`"kind":"incr_by","key":` + kj + `,"delta":` + text), func(m *execModel) execWant {
			if !valid {
				return badWant
			}
			e := m.live(k)
			if e != nil && e.isHash {
				return failWant("wrong_type")
			}
			cur := int64(0)
			if e != nil {
				var err error
				if cur, err = strconv.ParseInt(string(e.str), 10, 64); err != nil {
					return failWant("not_integer")
				}
			}
			sum, ok := addInt(cur, n)
			if !ok {
				return failWant("overflow")
			}
			exp := int64(0)
			if e != nil {
				exp = e.exp
			}
			m.keys[k] = &execEntry{str: []byte(strconv.FormatInt(sum, 10)), exp: exp}
			return okWant(`{"kind":"integer","value":` + strconv.FormatInt(sum, 10) + `}`)
		}}
	case 17:
		kind := g.pick("hash_get", "hash_delete", "hash_len", "hash_get_all")
		f := g.field()
		fieldPart := `,"field":` + g.name(f)
		if kind == "hash_len" || kind == "hash_get_all" {
			fieldPart = ""
		}
		return execStep{body(`"kind":"` + kind + `","key":` + kj + fieldPart), func(m *execModel) execWant {
			e := m.live(k)
			if e != nil && !e.isHash {
				return failWant("wrong_type")
			}
			switch kind {
			case "hash_get":
				if e == nil {
					return okWant(`{"kind":"bytes","value":null}`)
				}
				v, ok := e.hash[f]
				if !ok {
					return okWant(`{"kind":"bytes","value":null}`)
				}
				return okWant(`{"kind":"bytes","value":` + jsonBytes(v) + `}`)
			case "hash_delete":
				if e != nil {
					delete(e.hash, f)
					if len(e.hash) == 0 {
						delete(m.keys, k)
					}
				}
				return okWant(`{"kind":"empty"}`)
			case "hash_len":
				n := 0
				if e != nil {
					n = len(e.hash)
				}
				return okWant(`{"kind":"integer","value":` + strconv.Itoa(n) + `}`)
			}
			return okWant(entriesJSON(e))
		}}
	}
	return g.badStep()
}

// badStep is a request that cannot be understood: it must be refused and
// change nothing.
func (g *execGen) badStep() execStep {
	k := g.name(g.key())
	bodies := []string{
		`{"shard_id":1,"command":`,
		`{"shard_id":1,"command":{"kind":"string_set","key":` + k + `,"value":"djE="}`,
		`{"shard_id":1,"command":{"kind":"string_set","key":` + k + `}}`,
		`{"shard_id":1,"command":{"kind":"string_set","key":5,"value":"djE="}}`,
		`{"shard_id":1,"command":{"kind":"string_set","key":` + k + `,"value":5}}`,
		`{"shard_id":1,"command":{"kind":"string_set","key":` + k + `,"value":"!!"}}`,
		`{"shard_id":1,"command":{"kind":"string_set","key":` + k + `,"value":[256]}}`,
		`{"shard_id":1,"command":{"kind":"string_set","key":` + k + `,"value":[-1]}}`,
		`{"shard_id":1,"command":{"kind":"string_set","key":` + k + `,"value":[1.5]}}`,
		`{"shard_id":1,"command":{"kind":"string_set","key":[300],"value":"djE="}}`,
		`{"shard_id":-1,"command":{"kind":"string_set","key":` + k + `,"value":"djE="}}`,
		`{"shard_id":18446744073709551616,"command":{"kind":"string_set","key":` + k + `,"value":"djE="}}`,
		`{"shard_id":1,"command":{"kind":"string_sett","key":` + k + `,"value":"djE="}}`,
		`{"shard_id":1,"command":{"key":` + k + `,"value":"djE="}}`,
		`{"shard_id":1,"command":{"kind":5,"key":` + k + `}}`,
		`{"shard_id":1,"command":{"kind":"hash_set","key":` + k + `,"value":"djE="}}`,
		`{"shard_id":1,"command":{"kind":"hash_set","key":` + k + `,"field":{},"value":"djE="}}`,
		`{"shard_id":1,"command":{"kind":"hash_multi_set","key":` + k + `,"entries":[["f"]]}}`,
		`{"shard_id":1,"command":{"kind":"hash_multi_set","key":` + k + `,"entries":{"f":"djE="}}}`,
		`{"shard_id":1,"command":{"kind":"hash_incr_by","key":` + k + `,"field":"f","increment":null}}`,
		`{"shard_id":1,"command":{"kind":"hash_incr_by","key":` + k + `,"field":"f","increment":-9223372036854775809}}`,
		`{"shard_id":1,"command":{"kind":"common_expire","key":` + k + `,"ttl_ms":-5}}`,
		`{"shard_id":1,"command":{"kind":"common_expire","key":` + k + `}}`,
		`{"shard_id":1,"command":{"kind":"string_set_ex","key":` + k + `,"value":"djE=","ttl_ms":-9223372036854775808}}`,
		`{"shard_id":1,"command":{"kind":"string_set_conditional","key":` + k + `,"value":"djE=","condition":5,"return_old":false}}`,
		`{"shard_id":1,"command":{"kind":"string_set_conditional","key":` + k + `,"value":"djE=","condition":"nx","return_old":"yes"}}`,
		`[]`, `null`, `""`, `{}`, ``, `{"shard_id":1,"command":null}`, `{"shard_id":1,"command":[]}`,
		"{\"shard_id\":1,\"command\":{\"kind\":\"string_set\",\"key\":\"\xff\",\"value\":\"djE=\"}",
	}
	return execStep{bodies[g.rng.IntN(len(bodies))], func(*execModel) execWant { return badWant }}
}

func satAdd(a, b int64) int64 {
	if s, ok := addInt(a, b); ok {
		return s
	}
	return math.MaxInt64
}

func addInt(a, b int64) (int64, bool) {
	s := a + b
	if (b > 0 && s < a) || (b < 0 && s > a) {
		return 0, false
	}
	return s, true
}

// hash returns k's hash, made when absent; false when k holds a string.
func (m *execModel) hash(k string) (*execEntry, bool) {
	e := m.live(k)
	if e == nil {
		e = &execEntry{isHash: true, hash: map[string][]byte{}}
		m.keys[k] = e
	}
	return e, e.isHash
}

func entriesJSON(e *execEntry) string {
	var ents []string
	if e != nil {
		for _, f := range slices.Sorted(func(yield func(string) bool) {
			for f := range e.hash {
				if !yield(f) {
					return
				}
			}
		}) {
			ents = append(ents, `[`+jsonName(f)+`,`+jsonBytes(e.hash[f])+`]`)
		}
	}
	return `{"kind":"hash_entries","entries":[` + strings.Join(ents, ",") + `]}`
}

// canonicalJSON decodes and re-encodes JSON, so key order and spacing do
// not matter; hash entries are sorted by field.
func canonicalJSON(t testing.TB, s string) string {
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	require.NoError(t, d.Decode(&v), s)
	if m, ok := v.(map[string]any); ok && m["kind"] == "hash_entries" {
		if ents, ok := m["entries"].([]any); ok {
			slices.SortFunc(ents, func(a, b any) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
		}
	}
	out, err := json.Marshal(v)
	require.NoError(t, err)
	return string(out)
}

// execFuzz runs sequences on one handler and one model.
type execFuzz struct {
	h   http.Handler
	clk *testclock.Clock
	m   *execModel
	n   int
}

func (f *execFuzz) post(t testing.TB, body string) (int, string, string, string) {
	f.n++
	req := httptest.NewRequest(http.MethodPost, "/execute", bytes.NewReader([]byte(body)))
	req.Header.Set("Content-Type", ContentTypeJSON)
	rec := httptest.NewRecorder()
	f.h.ServeHTTP(rec, req)
	var r struct {
		Status struct {
			OK      bool   `json:"ok"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"status"`
		Response json.RawMessage `json:"response"`
	}
	if err := json.Unmarshal(rec.Body.Bytes(), &r); err != nil {
		return rec.Code, "not JSON: " + err.Error(), "", rec.Body.String()
	}
	if r.Status.OK != (r.Status.Code == "ok") || (!r.Status.OK && r.Status.Message == "") {
		return rec.Code, "bad status " + rec.Body.String(), "", rec.Body.String()
	}
	return rec.Code, r.Status.Code, canonicalJSON(t, string(r.Response)), rec.Body.String()
}

// run plays one sequence, the clock moving between requests, and returns
// a description of the first difference, or "".
func (f *execFuzz) run(t testing.TB, steps []execStep, waits []time.Duration) string {
	// A fresh keyspace: delete every key on both.
	for _, k := range execKeys {
		f.post(t, body(`"kind":"common_delete","key":`+jsonBytes([]byte(k))))
	}
	f.m.keys = map[string]*execEntry{}
	for i, st := range steps {
		f.clk.Advance(waits[i])
		want := st.apply(f.m)
		code, status, resp, raw := f.post(t, st.body)
		if code != want.http || status != want.code || resp != canonicalJSON(t, want.resp) {
			return fmt.Sprintf("step %d: %s\n  model: %d %s %s\n  got:   %d %s", i, st.body, want.http, want.code, want.resp, code, raw)
		}
	}
	// The state: each key's type, value or entries, and TTL.
	for _, k := range execKeys {
		kj := jsonBytes([]byte(k))
		e := f.m.live(k)
		checks := []execStep{{body(`"kind":"common_ttl","key":` + kj), nil}}
		wants := []execWant{okWant(`{"kind":"integer","value":-2}`)}
		if e != nil {
			ttl := int64(-1)
			if e.exp != 0 {
				ttl = e.exp - f.m.now()
			}
			wants[0] = okWant(`{"kind":"integer","value":` + strconv.FormatInt(ttl, 10) + `}`)
			if e.isHash {
				checks = append(checks, execStep{body(`"kind":"hash_get_all","key":` + kj), nil})
				wants = append(wants, okWant(entriesJSON(e)))
			} else {
				checks = append(checks, execStep{body(`"kind":"string_get","key":` + kj), nil})
				wants = append(wants, okWant(`{"kind":"bytes","value":`+jsonBytes(e.str)+`}`))
			}
		}
		for i, c := range checks {
			code, status, resp, raw := f.post(t, c.body)
			if code != wants[i].http || status != wants[i].code || resp != canonicalJSON(t, wants[i].resp) {
				return fmt.Sprintf("state of %q after the sequence: %s\n  model: %s\n  got:   %d %s", k, c.body, wants[i].resp, code, raw)
			}
		}
	}
	return ""
}

// execSequence draws sequence i of a seed: requests and the clock's moves.
func execSequence(seed uint64, i int) ([]execStep, []time.Duration) {
	g := &execGen{rng: rand.New(rand.NewPCG(seed, uint64(i)))}
	n := 1 + g.rng.IntN(30)
	steps := make([]execStep, n)
	waits := make([]time.Duration, n)
	for j := range steps {
		if g.chance(12) {
			steps[j] = g.badStep()
		} else {
			steps[j] = g.step()
		}
		if g.chance(4) {
			waits[j] = time.Duration([]int{1, 500, 999, 1000, 1001, 3000}[g.rng.IntN(6)]) * time.Millisecond
		}
	}
	return steps, waits
}

// Random sequences of /execute give the model's replies and leave the
// model's state. See the environment above.
func TestExecuteDiffFuzz(t *testing.T) {
	budget, seed, only, keepGoing := time.Minute, rand.Uint64()>>1, -1, os.Getenv("DIFFFUZZ_KEEPGOING") == "1"
	if os.Getenv("CI") == "true" {
		seed = 1 // a landing never depends on a newly drawn sequence
	}
	if testing.Short() {
		budget = 5 * time.Second
	}
	if v := os.Getenv("DIFFFUZZ_TIME"); v != "" {
		d, err := time.ParseDuration(v)
		require.NoError(t, err)
		budget = d
	}
	if v := os.Getenv("DIFFFUZZ_SEED"); v != "" {
		n, err := strconv.ParseUint(v, 10, 64)
		require.NoError(t, err)
		seed = n
	}
	if v := os.Getenv("DIFFFUZZ_SEQ"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err)
		only = n
	}
	clk := testclock.New(epoch)
	_, _, h := newServer(t, clk, nil)
	f := &execFuzz{h: h, clk: clk, m: &execModel{now: func() int64 { return clk.Now().UnixMilli() }}}
	begin, last := time.Now(), time.Now()
	seqs, diffs := 0, 0
	for i := 0; ; i++ {
		if only >= 0 && i != only {
			if i > only {
				break
			}
			continue
		}
		if only < 0 && time.Since(begin) > budget {
			break
		}
		steps, waits := execSequence(seed, i)
		seqs++
		if d := f.run(t, steps, waits); d != "" {
			diffs++
			msg := fmt.Sprintf("difference (replay: DIFFFUZZ_SEED=%d DIFFFUZZ_SEQ=%d): %s", seed, i, d)
			if !keepGoing {
				t.Fatal(msg)
			}
			fmt.Println(msg)
		}
		if keepGoing && time.Since(last) > 10*time.Second {
			last = time.Now()
			fmt.Printf("execfuzz: %3.0fs: %d sequences, %d requests (%.0f/s), %d differences\n",
				time.Since(begin).Seconds(), seqs, f.n, float64(f.n)/time.Since(begin).Seconds(), diffs)
		}
	}
	el := time.Since(begin).Seconds()
	line, err := json.Marshal(map[string]any{"seed": seed, "seconds": el, "sequences": seqs, "requests": f.n,
		"requests_per_sec": float64(f.n) / max(el, 1e-9), "differences": diffs})
	require.NoError(t, err)
	t.Logf("%s", line)
	if keepGoing {
		fmt.Println(string(line))
		require.Zero(t, diffs, "differences found; see above")
	}
}

// Sequences the fuzzer found differing, replayed on a handler and the
// model: each step's body, and the reply wanted.
func TestExecuteDiffFuzzRegressions(t *testing.T) {
	cases := []struct {
		name  string
		steps []struct{ body, code, resp string }
	}{
		{"ttl_ms beyond a time.Duration is refused, not wrapped", []struct{ body, code, resp string }{
			{body(`"kind":"string_set","key":"a","value":"MQ=="`), "ok", `{"kind":"empty"}`},
			{body(`"kind":"common_expire","key":"a","ttl_ms":9223372036854775807`), "bad_request", `{"kind":"empty"}`},
			{body(`"kind":"string_set_ex","key":"a","value":"MQ==","ttl_ms":9223372036855`), "bad_request", `{"kind":"empty"}`},
			{body(`"kind":"string_set_conditional","key":"a","value":"MQ==","condition":"always","return_old":false,"ttl_ms":9223372036854775807`), "bad_request", `{"kind":"empty"}`},
			{body(`"kind":"common_ttl","key":"a"`), "ok", `{"kind":"integer","value":-1}`},
			{body(`"kind":"string_get","key":"a"`), "ok", `{"kind":"bytes","value":[49]}`},
			{body(`"kind":"string_set_ex","key":"a","value":"MQ==","ttl_ms":9223372036854`), "ok", `{"kind":"empty"}`},
			{body(`"kind":"common_ttl","key":"a"`), "ok", `{"kind":"integer","value":9223372036854}`},
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			clk := testclock.New(epoch)
			_, _, h := newServer(t, clk, nil)
			f := &execFuzz{h: h, clk: clk}
			for i, st := range tc.steps {
				_, code, resp, raw := f.post(t, st.body)
				require.Equal(t, st.code, code, "step %d: %s", i, raw)
				require.Equal(t, canonicalJSON(t, st.resp), resp, "step %d: %s", i, raw)
			}
		})
	}
}
