package wire

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/vmihailenco/msgpack/v5"
	"github.com/vmihailenco/msgpack/v5/msgpcode"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
)

// Request is the body of /execute: one command, addressed to a table (the
// default table when Namespace and TableName are empty). ShardID is the
// original's routing field, accepted and not used (see the package doc).
type Request struct {
	ShardID   *ShardID `json:"shard_id,omitempty" msgpack:"shard_id,omitempty"`
	Namespace string   `json:"namespace,omitempty" msgpack:"namespace,omitempty"`
	TableName string   `json:"table_name,omitempty" msgpack:"table_name,omitempty"`
	Tenant    string   `json:"tenant,omitempty" msgpack:"tenant,omitempty"`
	Command   *Command `json:"command,omitempty" msgpack:"command,omitempty"`
}

// BatchRequest is the body of /batch_execute: Commands run in order, each
// with its own status.
type BatchRequest struct {
	ShardID   *ShardID  `json:"shard_id,omitempty" msgpack:"shard_id,omitempty"`
	Namespace string    `json:"namespace,omitempty" msgpack:"namespace,omitempty"`
	TableName string    `json:"table_name,omitempty" msgpack:"table_name,omitempty"`
	Tenant    string    `json:"tenant,omitempty" msgpack:"tenant,omitempty"`
	Commands  []Command `json:"commands" msgpack:"commands"`
}

// maxReuse bounds the commands whose array Reset keeps for the next
// decode: a rare huge batch should not pin its memory.
const maxReuse = 256

// Reset empties b for reuse: the next decode into it writes into
// Commands' backing array instead of allocating one. The commands are
// zeroed (a decode writes no further than it sets the length, so what lies
// beyond was zeroed by an earlier Reset).
func (b *BatchRequest) Reset() {
	cmds := b.Commands
	if cap(cmds) > maxReuse {
		cmds = nil
	}
	clear(cmds)
	*b = BatchRequest{Commands: cmds[:0]}
}

// Command is one command on the wire: the original's kinds (string_set,
// hash_get, ...) with their fields, and the engine's own kinds (set, hset,
// zadd, ...) with fields that mirror temporalstore.Command. Fields a kind
// does not use are ignored; absent fields are zero.
//
// The original's key-value kinds are common_delete, common_expire,
// common_ttl, common_exists, string_set, string_set_ex,
// string_set_conditional, string_get, string_delete, hash_set, hash_get,
// hash_multi_get, hash_multi_set, hash_incr_by, hash_get_all, hash_len,
// hash_delete, set_add, set_members and set_remove, with the original's
// fields, response kinds and status codes: not_found for common_expire on
// a missing key, unmatched and out_of_range for hash_incr_by on a
// non-integer field and on overflow. string_set keeps the key's TTL, as
// the original's does; string_set_conditional without ttl_ms clears it.
// Where the original kept each model in its own map, this engine has one
// keyspace: a hash command on a string key answers wrong_type.
//
// The original's feature kinds: feature_append {key, points:
// [{timestamp_ms, value}]}, feature_append_with_policy (+ policy: upsert,
// insert_if_absent|first|nx, replace_existing|update|xx, block; integer 1
// when anything changed), feature_query {key, start_ms, end_ms, count?}
// and feature_query_filtered (+ filters: [{field, op, value}]) answering
// feature_points, feature_replace {key, start_ms, end_ms, points},
// feature_delete {key}, and feature_agg_query {key, start_ms, end_ms,
// aggregator, count?} answering aggregate {value}. A series is a key of
// its own type, so a feature command on a string or hash key answers
// wrong_type.
//
// Sequences: sequence_add {key, rows: [{timestamp_ms, gid, action_type,
// duration, author_id}]}, sequence_query {key, start_ms, end_ms, count
// (required), filters} answering sequence_rows, and sequence_batch_query
// {queries: [{key, start_ms, end_ms, count, filters}]} answering
// sequence_row_groups {groups: [[key, rows]]}.
//
// Control state: control_state_increment and
// control_state_increment_with_options {key, timestamp_ms, amount,
// precision_ms?, ttl_ms?}, control_state_change_add (+ value),
// control_state_count, control_state_query (+ aggregator) and
// control_state_detail {key, start_ms, end_ms, count?} on the raw key;
// control_state_set, control_state_set_and_get[_with_options] (+ family,
// start_ms, end_ms, aggregator, uuid) and control_state_family_query on
// the family's key control_state:<family>:<key>;
// control_state_selection_set (or _fol_set) {key, value, occur_time_ms,
// ttl_ms, selection_type|fol_type} and control_state_selection_query (or
// _fol_query). control_state_manager {key, op_type? (2 query, 5 field
// list, 6 field count, 7 all data; else a summary), field_list [[ts, ""],
// ...], start_offset, end_offset (a timestamp range; both 0: all),
// is_distinct or is_cpc} and control_state_debug {key, start_ms, end_ms}
// answer hash_entries. The original's context_* kinds are understood, not
// run, and answered with code "unsupported".
//
// The engine's kinds (temporalstore.Kinds) take key, value, ttl_ms,
// keep_ttl, condition ("always"|"nx"|"xx", also
// "if_not_exists"|"if_exists"), return_old, delta, float, start, end,
// cursor, count (present: HasCount), keys, args, scores, zadd, range,
// dest, from_left, to_left, before, rank, max_len, expire_at_ms, persist,
// event_time_ms, event_time_ns, ts_field, ts_format, suffix, rows, points, policy, filters, aggregator,
// aggregators, seq_rows, queries, at, precision_ms, family, request_id,
// select_last, limit, window_ms and max_age_ms; for example
// {"kind":"zadd","key":"board","args":["YWxpY2U="],"scores":[12.5]}.
type Command struct {
	Kind   string `json:"kind" msgpack:"kind"`
	Tenant string `json:"tenant,omitempty" msgpack:"tenant,omitempty"`

	Key       Text   `json:"key,omitempty" msgpack:"key,omitempty"`
	Value     Bytes  `json:"value,omitempty" msgpack:"value,omitempty"`
	TTLMs     *int64 `json:"ttl_ms,omitempty" msgpack:"ttl_ms,omitempty"`
	Condition string `json:"condition,omitempty" msgpack:"condition,omitempty"`
	// ExpireIf makes an expire conditional: any of "nx", "xx", "gt",
	// "lt", as Redis's EXPIRE options.
	ExpireIf []string `json:"expire_if,omitempty" msgpack:"expire_if,omitempty"`
	// Replace: a copy overwrites its destination. WithValues: a random
	// read with a count returns values or scores too.
	Replace    bool `json:"replace,omitempty" msgpack:"replace,omitempty"`
	WithValues bool `json:"with_values,omitempty" msgpack:"with_values,omitempty"`
	// Bits is a bitmap kind's range (bitcount, bitpos).
	Bits      *BitRange `json:"bits,omitempty" msgpack:"bits,omitempty"`
	ReturnOld bool      `json:"return_old,omitempty" msgpack:"return_old,omitempty"`
	Field     Text      `json:"field,omitempty" msgpack:"field,omitempty"`
	Fields    []Text    `json:"fields,omitempty" msgpack:"fields,omitempty"`
	Entries   []Entry   `json:"entries,omitempty" msgpack:"entries,omitempty"`
	Increment *int64    `json:"increment,omitempty" msgpack:"increment,omitempty"`
	Member    Bytes     `json:"member,omitempty" msgpack:"member,omitempty"`

	KeepTTL     bool       `json:"keep_ttl,omitempty" msgpack:"keep_ttl,omitempty"`
	Delta       int64      `json:"delta,omitempty" msgpack:"delta,omitempty"`
	Float       Float      `json:"float,omitempty" msgpack:"float,omitempty"`
	Start       int64      `json:"start,omitempty" msgpack:"start,omitempty"`
	End         int64      `json:"end,omitempty" msgpack:"end,omitempty"`
	Cursor      uint64     `json:"cursor,omitempty" msgpack:"cursor,omitempty"`
	Count       *int       `json:"count,omitempty" msgpack:"count,omitempty"`
	Keys        []Text     `json:"keys,omitempty" msgpack:"keys,omitempty"`
	Args        []Bytes    `json:"args,omitempty" msgpack:"args,omitempty"`
	Scores      []Float    `json:"scores,omitempty" msgpack:"scores,omitempty"`
	ZAdd        *ZAddFlags `json:"zadd,omitempty" msgpack:"zadd,omitempty"`
	Range       *Range     `json:"range,omitempty" msgpack:"range,omitempty"`
	Dest        Text       `json:"dest,omitempty" msgpack:"dest,omitempty"`
	FromLeft    bool       `json:"from_left,omitempty" msgpack:"from_left,omitempty"`
	ToLeft      bool       `json:"to_left,omitempty" msgpack:"to_left,omitempty"`
	Before      bool       `json:"before,omitempty" msgpack:"before,omitempty"`
	Rank        int64      `json:"rank,omitempty" msgpack:"rank,omitempty"`
	MaxLen      int64      `json:"max_len,omitempty" msgpack:"max_len,omitempty"`
	ExpireAtMs  *int64     `json:"expire_at_ms,omitempty" msgpack:"expire_at_ms,omitempty"`
	Persist     bool       `json:"persist,omitempty" msgpack:"persist,omitempty"`
	EventTimeMs *int64     `json:"event_time_ms,omitempty" msgpack:"event_time_ms,omitempty"`
	TSField     string     `json:"ts_field,omitempty" msgpack:"ts_field,omitempty"`
	Rows        []Row      `json:"rows,omitempty" msgpack:"rows,omitempty"`
	// EventTimeNs is event_time_ms in nanoseconds (give one of them);
	// TSFormat is how TSField keeps it: "ms" (the default), "ns" or
	// "proto" (Feast's serialized Timestamp).
	EventTimeNs *int64 `json:"event_time_ns,omitempty" msgpack:"event_time_ns,omitempty"`
	TSFormat    string `json:"ts_format,omitempty" msgpack:"ts_format,omitempty"`
	// Suffix limits scan to keys ending with it.
	Suffix Bytes `json:"suffix,omitempty" msgpack:"suffix,omitempty"`

	// Feature series: points, the write policy, the original's window
	// (start_ms, end_ms; native kinds use start and end), filters and the
	// aggregator.
	Points      []Point  `json:"points,omitempty" msgpack:"points,omitempty"`
	Policy      string   `json:"policy,omitempty" msgpack:"policy,omitempty"`
	StartMs     *int64   `json:"start_ms,omitempty" msgpack:"start_ms,omitempty"`
	EndMs       *int64   `json:"end_ms,omitempty" msgpack:"end_ms,omitempty"`
	Filters     []Filter `json:"filters,omitempty" msgpack:"filters,omitempty"`
	Aggregator  string   `json:"aggregator,omitempty" msgpack:"aggregator,omitempty"`
	Aggregators []string `json:"aggregators,omitempty" msgpack:"aggregators,omitempty"`
	MaxAgeMs    int64    `json:"max_age_ms,omitempty" msgpack:"max_age_ms,omitempty"`

	// Sequences: the engine's seqadd takes seq_rows (the original's
	// sequence_add takes the same rows as "rows"); sequence_batch_query
	// and seqbatchquery take queries.
	SeqRows []SeqRow   `json:"seq_rows,omitempty" msgpack:"seq_rows,omitempty"`
	Queries []SeqQuery `json:"queries,omitempty" msgpack:"queries,omitempty"`

	// Control state. The engine's kinds take at, precision_ms, family,
	// request_id, select_last, limit and window_ms (with delta and value);
	// the original's take timestamp_ms, amount, uuid, occur_time_ms and
	// selection_type (or fol_type).
	At            int64  `json:"at,omitempty" msgpack:"at,omitempty"`
	PrecisionMs   *int64 `json:"precision_ms,omitempty" msgpack:"precision_ms,omitempty"`
	Family        string `json:"family,omitempty" msgpack:"family,omitempty"`
	RequestID     string `json:"request_id,omitempty" msgpack:"request_id,omitempty"`
	SelectLast    bool   `json:"select_last,omitempty" msgpack:"select_last,omitempty"`
	Limit         int64  `json:"limit,omitempty" msgpack:"limit,omitempty"`
	WindowMs      int64  `json:"window_ms,omitempty" msgpack:"window_ms,omitempty"`
	TimestampMs   *int64 `json:"timestamp_ms,omitempty" msgpack:"timestamp_ms,omitempty"`
	Amount        *int64 `json:"amount,omitempty" msgpack:"amount,omitempty"`
	UUID          string `json:"uuid,omitempty" msgpack:"uuid,omitempty"`
	OccurTimeMs   *int64 `json:"occur_time_ms,omitempty" msgpack:"occur_time_ms,omitempty"`
	SelectionType string `json:"selection_type,omitempty" msgpack:"selection_type,omitempty"`
	FolType       string `json:"fol_type,omitempty" msgpack:"fol_type,omitempty"`
	// The original's control_state_manager: op_type, field_list [[ts,
	// ""], ...], start_offset and end_offset (a timestamp range), and
	// is_distinct (or is_cpc).
	OpType      *int    `json:"op_type,omitempty" msgpack:"op_type,omitempty"`
	FieldList   [][]any `json:"field_list,omitempty" msgpack:"field_list,omitempty"`
	StartOffset int64   `json:"start_offset,omitempty" msgpack:"start_offset,omitempty"`
	EndOffset   int64   `json:"end_offset,omitempty" msgpack:"end_offset,omitempty"`
	IsDistinct  bool    `json:"is_distinct,omitempty" msgpack:"is_distinct,omitempty"`
	IsCPC       bool    `json:"is_cpc,omitempty" msgpack:"is_cpc,omitempty"`
}

// SeqRow is a sequence's event row.
type SeqRow struct {
	TimestampMs int64  `json:"timestamp_ms" msgpack:"timestamp_ms"`
	GID         uint64 `json:"gid" msgpack:"gid"`
	ActionType  uint32 `json:"action_type" msgpack:"action_type"`
	Duration    uint32 `json:"duration" msgpack:"duration"`
	AuthorID    uint64 `json:"author_id" msgpack:"author_id"`
}

// SeqQuery is one window of a sequence batch query.
type SeqQuery struct {
	Key     Text     `json:"key" msgpack:"key"`
	StartMs int64    `json:"start_ms" msgpack:"start_ms"`
	EndMs   int64    `json:"end_ms" msgpack:"end_ms"`
	Count   int      `json:"count" msgpack:"count"`
	Filters []Filter `json:"filters,omitempty" msgpack:"filters,omitempty"`
}

// Point is a feature series point.
type Point struct {
	TimestampMs int64 `json:"timestamp_ms" msgpack:"timestamp_ms"`
	Value       Bytes `json:"value" msgpack:"value"`
}

// Filter is a filtered feature read's condition: field (gid, action_type,
// duration, author_id), op (equal, not_equal, greater_than,
// greater_or_equal, less_than, less_or_equal, or = != > >= < <=) and value.
type Filter struct {
	Field string `json:"field" msgpack:"field"`
	Op    string `json:"op" msgpack:"op"`
	Value uint64 `json:"value" msgpack:"value"`
}

// ZAddFlags are zadd's options.
type ZAddFlags struct {
	NX   bool `json:"nx,omitempty" msgpack:"nx,omitempty"`
	XX   bool `json:"xx,omitempty" msgpack:"xx,omitempty"`
	GT   bool `json:"gt,omitempty" msgpack:"gt,omitempty"`
	LT   bool `json:"lt,omitempty" msgpack:"lt,omitempty"`
	CH   bool `json:"ch,omitempty" msgpack:"ch,omitempty"`
	Incr bool `json:"incr,omitempty" msgpack:"incr,omitempty"`
}

// BitRange is bitcount's and bitpos's range: start and end inclusive,
// negative counting from the end, in bytes or (bit) in bits; no end: to
// the end of the string.
type BitRange struct {
	Start int64  `json:"start" msgpack:"start"`
	End   *int64 `json:"end,omitempty" msgpack:"end,omitempty"`
	Bit   bool   `json:"bit,omitempty" msgpack:"bit,omitempty"`
}

// Range selects members of a sorted set (zrange, zcount, zremrange).
type Range struct {
	// By is "rank" (the default), "score" or "lex".
	By         string      `json:"by,omitempty" msgpack:"by,omitempty"`
	Start      int64       `json:"start,omitempty" msgpack:"start,omitempty"`
	Stop       int64       `json:"stop,omitempty" msgpack:"stop,omitempty"`
	Min        *ScoreBound `json:"min,omitempty" msgpack:"min,omitempty"`
	Max        *ScoreBound `json:"max,omitempty" msgpack:"max,omitempty"`
	LexMin     Text        `json:"lex_min,omitempty" msgpack:"lex_min,omitempty"`
	LexMax     Text        `json:"lex_max,omitempty" msgpack:"lex_max,omitempty"`
	Rev        bool        `json:"rev,omitempty" msgpack:"rev,omitempty"`
	Limit      *Limit      `json:"limit,omitempty" msgpack:"limit,omitempty"`
	WithScores bool        `json:"with_scores,omitempty" msgpack:"with_scores,omitempty"`
}

// Limit is a range's LIMIT offset count (a negative count: no limit).
type Limit struct {
	Offset int64 `json:"offset" msgpack:"offset"`
	Count  int64 `json:"count" msgpack:"count"`
}

// Row is one row of row_write_batch, or of the original's sequence_add
// (timestamp_ms, gid, action_type, duration, author_id).
type Row struct {
	Key         Text    `json:"key,omitempty" msgpack:"key,omitempty"`
	Args        []Bytes `json:"args,omitempty" msgpack:"args,omitempty"`
	EventTimeMs int64   `json:"event_time_ms,omitempty" msgpack:"event_time_ms,omitempty"`
	// EventTimeNs is EventTimeMs in nanoseconds, used when not zero.
	EventTimeNs int64 `json:"event_time_ns,omitempty" msgpack:"event_time_ns,omitempty"`

	TimestampMs *int64 `json:"timestamp_ms,omitempty" msgpack:"timestamp_ms,omitempty"`
	GID         uint64 `json:"gid,omitempty" msgpack:"gid,omitempty"`
	ActionType  uint32 `json:"action_type,omitempty" msgpack:"action_type,omitempty"`
	Duration    uint32 `json:"duration,omitempty" msgpack:"duration,omitempty"`
	AuthorID    uint64 `json:"author_id,omitempty" msgpack:"author_id,omitempty"`
}

// SeqGroup is one query's rows in a sequence_row_groups response, on the
// wire [key, [rows]].
type SeqGroup struct {
	Key  Text
	Rows []SeqRow
}

// UnmarshalJSON implements json.Unmarshaler.
func (g *SeqGroup) UnmarshalJSON(d []byte) error {
	return jsonPair(d, "a group is [key, rows]", g.Key.UnmarshalJSON,
		func(b []byte) error { return json.Unmarshal(b, &g.Rows) })
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (g *SeqGroup) DecodeMsgpack(d *msgpack.Decoder) error {
	return msgpackPair(d, "a group is [key, rows]", g.Key.DecodeMsgpack,
		func(d *msgpack.Decoder) error { return d.Decode(&g.Rows) })
}

// jsonPair decodes a two-element JSON array, each element with its own
// decoder; what is the error for any other shape.
func jsonPair(d []byte, what string, first, second func([]byte) error) error {
	var pair []json.RawMessage
	if err := json.Unmarshal(d, &pair); err != nil {
		return err
	}
	if len(pair) != 2 {
		return errors.New(what)
	}
	if err := first(pair[0]); err != nil {
		return err
	}
	return second(pair[1])
}

// msgpackPair is jsonPair for MessagePack.
func msgpackPair(d *msgpack.Decoder, what string, first, second func(*msgpack.Decoder) error) error {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return err
	}
	if n != 2 {
		return errors.New(what)
	}
	if err := first(d); err != nil {
		return err
	}
	return second(d)
}

// ShardID is the original's shard_id: an unsigned integer.
type ShardID uint64

// DecodeMsgpack implements msgpack.CustomDecoder: a negative or
// non-integer shard_id is refused, as in JSON.
func (s *ShardID) DecodeMsgpack(d *msgpack.Decoder) error {
	v, err := d.DecodeInterfaceLoose()
	if err != nil {
		return err
	}
	switch v := v.(type) {
	case int64:
		if v >= 0 {
			*s = ShardID(v)
			return nil
		}
	case uint64:
		*s = ShardID(v)
		return nil
	}
	return fmt.Errorf("shard_id: %v is not an unsigned integer", v)
}

// errBytes is the error of a malformed byte field.
var errBytes = errors.New("expected a base64 string or an array of numbers 0..255")

// maxPrealloc bounds what a decoder allocates ahead from a length the
// body declares; longer arrays grow as their elements arrive.
const maxPrealloc = 1024

// Bytes is a payload field (value, member, args, entries' values): in
// JSON a base64 string or an array of numbers, in MessagePack bin, an
// array of numbers, or a base64 str. It encodes as base64 in JSON and bin
// in MessagePack; nil as null.
type Bytes []byte

// UnmarshalJSON implements json.Unmarshaler.
func (b *Bytes) UnmarshalJSON(d []byte) error {
	d = bytes.TrimSpace(d)
	switch {
	case len(d) == 0:
		return errBytes
	case string(d) == "null":
		*b = nil
		return nil
	case d[0] == '"':
		var s string
		if err := json.Unmarshal(d, &s); err != nil {
			return err
		}
		v, err := decodeBase64(s)
		*b = v
		return err
	case d[0] == '[':
		var nums []int
		if err := json.Unmarshal(d, &nums); err != nil {
			return errBytes
		}
		v := make([]byte, len(nums))
		for i, n := range nums {
			if n < 0 || n > 255 {
				return errBytes
			}
			v[i] = byte(n)
		}
		*b = v
		return nil
	}
	return errBytes
}

func decodeBase64(s string) ([]byte, error) {
	if v, err := base64.StdEncoding.DecodeString(s); err == nil {
		return v, nil
	}
	v, err := base64.RawStdEncoding.DecodeString(s)
	if err != nil {
		return nil, fmt.Errorf("invalid base64: %w", err)
	}
	return v, nil
}

// MarshalJSON implements json.Marshaler: base64, as the original sends.
func (b Bytes) MarshalJSON() ([]byte, error) {
	if b == nil {
		return []byte("null"), nil
	}
	out := make([]byte, 0, base64.StdEncoding.EncodedLen(len(b))+2)
	out = append(out, '"')
	out = base64.StdEncoding.AppendEncode(out, b)
	return append(out, '"'), nil
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (b *Bytes) DecodeMsgpack(d *msgpack.Decoder) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case c == msgpcode.Nil:
		*b = nil
		return d.DecodeNil()
	case msgpcode.IsBin(c):
		v, err := d.DecodeBytes()
		if v == nil && err == nil {
			v = []byte{}
		}
		*b = v
		return err
	case msgpcode.IsString(c):
		s, err := d.DecodeString()
		if err != nil {
			return err
		}
		v, err := decodeBase64(s)
		*b = v
		return err
	}
	v, err := decodeNumberArray(d)
	*b = v
	return err
}

// decodeNumberArray reads an array of numbers 0..255.
func decodeNumberArray(d *msgpack.Decoder) ([]byte, error) {
	n, err := d.DecodeArrayLen()
	if err != nil {
		return nil, errBytes
	}
	if n < 0 {
		return nil, nil
	}
	v := make([]byte, 0, min(n, maxPrealloc*64))
	for range n {
		x, err := d.DecodeInt64()
		if err != nil || x < 0 || x > 255 {
			return nil, errBytes
		}
		v = append(v, byte(x))
	}
	return v, nil
}

// EncodeMsgpack implements msgpack.CustomEncoder.
func (b Bytes) EncodeMsgpack(e *msgpack.Encoder) error {
	if b == nil {
		return e.EncodeNil()
	}
	return e.EncodeBytes(b)
}

// Text is a name (key, keys, field, fields, dest, an entry's field, a lex
// bound): in JSON a string taken as its UTF-8 bytes, or an array of
// numbers for bytes that are not UTF-8; in MessagePack str, bin or an
// array of numbers. It encodes as a string when it is valid UTF-8.
type Text []byte

// UnmarshalJSON implements json.Unmarshaler.
func (t *Text) UnmarshalJSON(d []byte) error {
	d = bytes.TrimSpace(d)
	if len(d) > 0 && d[0] == '"' {
		var s string
		if err := json.Unmarshal(d, &s); err != nil {
			return err
		}
		*t = Text(s)
		return nil
	}
	if len(d) > 0 && d[0] != '[' && string(d) != "null" {
		return errors.New("expected a string or an array of numbers 0..255")
	}
	var b Bytes
	err := b.UnmarshalJSON(d)
	*t = Text(b)
	return err
}

// MarshalJSON implements json.Marshaler.
func (t Text) MarshalJSON() ([]byte, error) {
	if t == nil {
		return []byte("null"), nil
	}
	if utf8.Valid(t) {
		return json.Marshal(string(t))
	}
	return appendNumbers(nil, t), nil
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (t *Text) DecodeMsgpack(d *msgpack.Decoder) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	switch {
	case c == msgpcode.Nil:
		*t = nil
		return d.DecodeNil()
	case msgpcode.IsBin(c) || msgpcode.IsString(c):
		v, err := d.DecodeBytes()
		if v == nil && err == nil {
			v = []byte{}
		}
		*t = v
		return err
	}
	v, err := decodeNumberArray(d)
	*t = v
	return err
}

// EncodeMsgpack implements msgpack.CustomEncoder.
func (t Text) EncodeMsgpack(e *msgpack.Encoder) error {
	switch {
	case t == nil:
		return e.EncodeNil()
	case utf8.Valid(t):
		return e.EncodeString(string(t))
	}
	return e.EncodeBytes(t)
}

// appendNumbers appends b as a JSON array of numbers.
func appendNumbers(out, b []byte) []byte {
	out = append(out, '[')
	for i, c := range b {
		if i > 0 {
			out = append(out, ',')
		}
		out = strconv.AppendUint(out, uint64(c), 10)
	}
	return append(out, ']')
}

// Float is a number that may be infinite: in JSON a number, or a string
// ("inf", "+inf", "-inf", or any number); in MessagePack a float, an
// integer or such a string.
type Float float64

func parseFloat(s string) (Float, error) {
	f, err := strconv.ParseFloat(strings.TrimPrefix(s, "+"), 64)
	if err != nil || math.IsNaN(f) {
		return 0, fmt.Errorf("%q is not a number", s)
	}
	return Float(f), nil
}

// UnmarshalJSON implements json.Unmarshaler.
func (f *Float) UnmarshalJSON(d []byte) error {
	d = bytes.TrimSpace(d)
	if len(d) > 0 && d[0] == '"' {
		var s string
		if err := json.Unmarshal(d, &s); err != nil {
			return err
		}
		v, err := parseFloat(s)
		*f = v
		return err
	}
	var v float64
	if err := json.Unmarshal(d, &v); err != nil {
		return err
	}
	*f = Float(v)
	return nil
}

// MarshalJSON implements json.Marshaler.
func (f Float) MarshalJSON() ([]byte, error) { return appendFloat(nil, float64(f)), nil }

func appendFloat(out []byte, f float64) []byte {
	switch {
	case math.IsInf(f, 1):
		return append(out, `"+inf"`...)
	case math.IsInf(f, -1):
		return append(out, `"-inf"`...)
	case math.IsNaN(f):
		return append(out, `"nan"`...)
	}
	return strconv.AppendFloat(out, f, 'g', -1, 64)
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (f *Float) DecodeMsgpack(d *msgpack.Decoder) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	if msgpcode.IsString(c) {
		s, err := d.DecodeString()
		if err != nil {
			return err
		}
		v, err := parseFloat(s)
		*f = v
		return err
	}
	v, err := d.DecodeFloat64()
	*f = Float(v)
	return err
}

// EncodeMsgpack implements msgpack.CustomEncoder.
func (f Float) EncodeMsgpack(e *msgpack.Encoder) error { return e.EncodeFloat64(float64(f)) }

// ScoreBound is one end of a score range: a number (inclusive), or a
// string in Redis's form: "(1.5" (exclusive), "-inf", "+inf".
type ScoreBound api.ScoreBound

func (b *ScoreBound) parse(s string) error {
	v, err := api.ParseScoreBound(s)
	*b = ScoreBound(v)
	return err
}

func (b ScoreBound) text() string {
	s := string(appendFloat(nil, b.Value))
	s = strings.Trim(s, `"`)
	if b.Excl {
		return "(" + s
	}
	return s
}

// UnmarshalJSON implements json.Unmarshaler.
func (b *ScoreBound) UnmarshalJSON(d []byte) error {
	d = bytes.TrimSpace(d)
	if len(d) > 0 && d[0] == '"' {
		var s string
		if err := json.Unmarshal(d, &s); err != nil {
			return err
		}
		return b.parse(s)
	}
	var v float64
	if err := json.Unmarshal(d, &v); err != nil {
		return err
	}
	*b = ScoreBound{Value: v}
	return nil
}

// MarshalJSON implements json.Marshaler.
func (b ScoreBound) MarshalJSON() ([]byte, error) {
	if !b.Excl && !math.IsInf(b.Value, 0) {
		return strconv.AppendFloat(nil, b.Value, 'g', -1, 64), nil
	}
	return json.Marshal(b.text())
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (b *ScoreBound) DecodeMsgpack(d *msgpack.Decoder) error {
	c, err := d.PeekCode()
	if err != nil {
		return err
	}
	if msgpcode.IsString(c) {
		s, err := d.DecodeString()
		if err != nil {
			return err
		}
		return b.parse(s)
	}
	v, err := d.DecodeFloat64()
	*b = ScoreBound{Value: v}
	return err
}

// EncodeMsgpack implements msgpack.CustomEncoder.
func (b ScoreBound) EncodeMsgpack(e *msgpack.Encoder) error {
	if !b.Excl && !math.IsInf(b.Value, 0) {
		return e.EncodeFloat64(b.Value)
	}
	return e.EncodeString(b.text())
}

// Entry is a field and its value: hash_multi_set's [field, value].
type Entry struct {
	Field Text
	Value Bytes
}

// UnmarshalJSON implements json.Unmarshaler.
func (en *Entry) UnmarshalJSON(d []byte) error {
	return jsonPair(d, "an entry is [field, value]", en.Field.UnmarshalJSON, en.Value.UnmarshalJSON)
}

// MarshalJSON implements json.Marshaler.
func (en Entry) MarshalJSON() ([]byte, error) {
	f, err := en.Field.MarshalJSON()
	if err != nil {
		return nil, err
	}
	v, _ := en.Value.MarshalJSON()
	out := append([]byte{'['}, f...)
	out = append(append(out, ','), v...)
	return append(out, ']'), nil
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (en *Entry) DecodeMsgpack(d *msgpack.Decoder) error {
	return msgpackPair(d, "an entry is [field, value]", en.Field.DecodeMsgpack, en.Value.DecodeMsgpack)
}

// EncodeMsgpack implements msgpack.CustomEncoder.
func (en Entry) EncodeMsgpack(e *msgpack.Encoder) error {
	if err := e.EncodeArrayLen(2); err != nil {
		return err
	}
	if err := en.Field.EncodeMsgpack(e); err != nil {
		return err
	}
	return en.Value.EncodeMsgpack(e)
}

// Aggregate is one aggregator's result in an aggregates response: int or
// float, or top's values with their counts.
type Aggregate struct {
	Name  string     `json:"name" msgpack:"name"`
	Int   *int64     `json:"int,omitempty" msgpack:"int,omitempty"`
	Float *Float     `json:"float,omitempty" msgpack:"float,omitempty"`
	Top   []TopValue `json:"top,omitempty" msgpack:"top,omitempty"`
	// HasTop marks a top result, empty or not.
	HasTop bool `json:"has_top,omitempty" msgpack:"has_top,omitempty"`
}

// TopValue is a value and its count.
type TopValue struct {
	Value Bytes `json:"value" msgpack:"value"`
	Count int64 `json:"count" msgpack:"count"`
}
