package wire

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/vmihailenco/msgpack/v5"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
)

// Content types of the request and reply bodies.
const (
	ContentTypeJSON    = "application/json"
	ContentTypeMsgpack = "application/msgpack"
)

// Status codes beyond the engine's errors.
const (
	CodeOK           = "ok"
	CodeBadRequest   = "bad_request"
	CodeUnauthorized = "unauthorized"
	CodeForbidden    = "forbidden"
	CodeNotFound     = "not_found"
	CodeUnsupported  = "unsupported"
	CodeNotReady     = "not_ready"
	CodeTooLarge     = "too_large"
	CodeInternal     = "internal"
	// CodeDiskFull and CodeStorageFault are a shard's refusal of writes
	// after its log failed (api.ErrDiskFull, api.ErrStorageFault); the
	// HTTP surface answers them with 507.
	CodeDiskFull     = "disk_full"
	CodeStorageFault = "storage_fault"
	// CodeUnmatched and CodeOutOfRange are the original's codes for
	// hash_incr_by on a field that is not an integer, and on overflow.
	CodeUnmatched  = "unmatched"
	CodeOutOfRange = "out_of_range"
)

// HeaderContentSHA256 carries a blob's or a part's hex SHA-256 on the
// /blob routes: checked on the way in, given on the way out.
const HeaderContentSHA256 = "X-Content-Sha256"

// errorCodes maps the engine's errors to status codes, in the order they
// are tried; a code may stand for several errors.
var errorCodes = []struct {
	err  error
	code string
}{
	{api.ErrInvalid, "invalid_argument"},
	{api.ErrSeriesTooLarge, "invalid_argument"},
	{api.ErrUnknownKind, "unknown_kind"},
	{api.ErrWrongType, "wrong_type"},
	{api.ErrNotInteger, "not_integer"},
	{api.ErrNotFloat, "not_float"},
	{api.ErrOverflow, "overflow"},
	{api.ErrTooLarge, CodeTooLarge},
	{api.ErrCrossShard, "cross_shard"},
	{api.ErrNotHLL, "wrong_type"},
	{api.ErrCorruptHLL, "corrupt_hll"},
	{api.ErrNoSuchKey, "no_such_key"},
	{api.ErrOutOfRange, CodeOutOfRange},
	{api.ErrNoTable, "table_not_found"},
	{api.ErrReadOnly, "readonly_shard"},
	{api.ErrReadQPS, "admission_rejected"},
	{api.ErrWriteQPS, "admission_rejected"},
	{api.ErrTenantQPS, "admission_rejected"},
	{api.ErrShardRate, "admission_rejected"},
	{api.ErrClosed, "shard_not_loaded"},
	{api.ErrNotLeader, "not_leader"},
	{api.ErrUnknownOutcome, "unknown_outcome"},
	{api.ErrDiskFull, CodeDiskFull},
	{api.ErrStorageFault, CodeStorageFault},
	{context.DeadlineExceeded, "deadline_exceeded"},
	{context.Canceled, "canceled"},
}

// Errors a client gets for the surface's own status codes (Status.Err).
var (
	// ErrBadRequest: the server could not understand the request (400).
	ErrBadRequest = errors.New("wire: bad request")
	// ErrUnauthorized: no valid bearer token (401).
	ErrUnauthorized = errors.New("wire: unauthorized")
	// ErrForbidden: a read-only token sent a write (403).
	ErrForbidden = errors.New("wire: forbidden")
	// ErrUnsupported: a kind of a model the server does not have.
	ErrUnsupported = errors.New("wire: unsupported command kind")
	// ErrNotFound: common_expire on a missing key, or an unknown route.
	ErrNotFound = errors.New("wire: not found")
	// ErrInternal: the server failed unexpectedly.
	ErrInternal = errors.New("wire: internal error")
)

// surfaceCodes map the surface's own codes to its errors.
var surfaceCodes = map[string]error{
	CodeBadRequest: ErrBadRequest, CodeUnauthorized: ErrUnauthorized, CodeForbidden: ErrForbidden,
	CodeUnsupported: ErrUnsupported, CodeNotFound: ErrNotFound, CodeInternal: ErrInternal,
}

// Status is the status object of every reply.
type Status struct {
	OK      bool   `json:"ok" msgpack:"ok"`
	Code    string `json:"code" msgpack:"code"`
	Message string `json:"message" msgpack:"message"`
}

// Err is the error the status stands for: nil when OK, else a
// *StatusError that matches (errors.Is) the engine error of its code.
func (s Status) Err() error {
	if s.OK {
		return nil
	}
	e := &StatusError{Code: s.Code, Message: s.Message, err: surfaceCodes[s.Code]}
	for _, ec := range errorCodes {
		if ec.code != s.Code {
			continue
		}
		if e.err == nil || strings.HasPrefix(s.Message, ec.err.Error()) {
			e.err = ec.err
		}
	}
	return e
}

// StatusError is a failed status, as a client sees it. Its message is
// the server's, which for an engine error is the engine error's text.
type StatusError struct {
	Code, Message string
	err           error
}

func (e *StatusError) Error() string {
	if e.Message == "" {
		return e.Code
	}
	return e.Message
}

// Unwrap returns the error the code stands for, if any.
func (e *StatusError) Unwrap() error { return e.err }

// statusOf is the status of a call's result.
func statusOf(cl *call, r *api.Response, err error) Status {
	switch {
	case cl.unsupported:
		return Status{Code: CodeUnsupported, Message: fmt.Sprintf("%s is not supported by this server yet", cl.kind)}
	case err == nil && cl.shape == shOrigExpire && r.Int == 0:
		return Status{Code: CodeNotFound, Message: "key not found"}
	case err == nil:
		return Status{OK: true, Code: CodeOK}
	}
	code := CodeInternal
	for _, ec := range errorCodes {
		if errors.Is(err, ec.err) {
			code = ec.code
			break
		}
	}
	if cl.orig && cl.cmd.Kind == api.KindHIncrBy {
		switch code {
		case "not_integer":
			code = CodeUnmatched
		case "overflow":
			code = CodeOutOfRange
		}
	}
	return Status{Code: code, Message: err.Error()}
}

func writeStatus(w writer, s Status) {
	w.mapLen(3)
	w.key("ok")
	w.boolean(s.OK)
	w.key("code")
	w.str(s.Code)
	w.key("message")
	w.str(s.Message)
	w.end()
}

// head opens a response map of kind with n more fields.
func head(w writer, kind string, n int) {
	w.mapLen(n + 1)
	w.key("kind")
	w.str(kind)
}

func writeList(w writer, l [][]byte, nullable bool) {
	if l == nil && nullable {
		w.null()
		return
	}
	w.arrayLen(len(l))
	for _, b := range l {
		w.bin(b)
	}
	w.end()
}

// writeResponse writes the response of a call that succeeded (or the
// empty response of one that did not).
func writeResponse(w writer, cl *call, r *api.Response, ok bool) {
	if !ok {
		head(w, "empty", 0)
		w.end()
		return
	}
	native := !cl.orig
	switch cl.shape {
	case shEmpty, shOrigExpire:
		head(w, "empty", 0)
	case shBytes:
		head(w, "bytes", 1)
		w.key("value")
		if r.Found {
			w.bin(nonNil(r.Value))
		} else {
			w.null()
		}
	case shRangeBytes:
		head(w, "bytes", 1)
		w.key("value")
		w.bin(nonNil(r.Value))
	case shInt:
		head(w, "integer", 1)
		w.key("value")
		w.int(r.Int)
	case shRank:
		head(w, "integer", 1)
		w.key("value")
		if r.Found {
			w.int(r.Int)
		} else {
			w.null()
		}
	case shFloat:
		head(w, "float", 1)
		w.key("value")
		if r.Found {
			w.float(r.Float)
		} else {
			w.null()
		}
	case shHFloat:
		head(w, "float", 1)
		w.key("value")
		w.float(r.Float)
	case shType:
		head(w, "string", 1)
		w.key("value")
		w.str(string(r.Value))
	case shApplied:
		head(w, "applied", 1)
		w.key("applied")
		w.boolean(r.Applied)
	case shSetOld:
		head(w, "bytes", 2)
		w.key("value")
		if r.Found {
			w.bin(nonNil(r.Value))
		} else {
			w.null()
		}
		w.key("applied")
		w.boolean(r.Applied)
	case shOrigCond:
		if cl.cmd.ReturnOld {
			head(w, "bytes", 1)
			w.key("value")
			if r.Found {
				w.bin(nonNil(r.Value))
			} else {
				w.null()
			}
			break
		}
		head(w, "integer", 1)
		w.key("value")
		if r.Applied {
			w.int(1)
		} else {
			w.int(0)
		}
	case shMembers:
		head(w, "members", 1)
		w.key("members")
		writeList(w, r.Values, native)
	case shValues:
		head(w, "values", 1)
		w.key("values")
		writeList(w, r.Values, native)
	case shEntries:
		head(w, "hash_entries", 1)
		w.key("entries")
		w.arrayLen(len(r.Values) / 2)
		for i := 0; i+1 < len(r.Values); i += 2 {
			w.arrayLen(2)
			w.text(nonNil(r.Values[i]))
			w.bin(nonNil(r.Values[i+1]))
			w.end()
		}
		w.end()
	case shScored:
		n := 1
		if r.Scores != nil {
			n = 2
		}
		head(w, "scored_members", n)
		w.key("members")
		writeList(w, r.Values, true)
		if r.Scores != nil {
			w.key("scores")
			w.arrayLen(len(r.Scores))
			for _, s := range r.Scores {
				w.float(s)
			}
			w.end()
		}
	case shInts, shRowBatch:
		head(w, "integers", 1)
		w.key("integers")
		if r.Ints == nil {
			w.null()
			break
		}
		w.arrayLen(len(r.Ints))
		for _, v := range r.Ints {
			w.int(v)
		}
		w.end()
	case shPoints:
		head(w, "feature_points", 1)
		w.key("points")
		w.arrayLen(len(r.Points))
		for _, p := range r.Points {
			w.mapLen(2)
			w.key("timestamp_ms")
			w.int(p.TS)
			w.key("value")
			w.bin(nonNil(p.Value))
			w.end()
		}
		w.end()
	case shAggregate:
		head(w, "aggregate", 1)
		w.key("value")
		w.int(r.Int)
	case shAggregates:
		head(w, "aggregates", 1)
		w.key("aggregates")
		w.arrayLen(len(r.Aggregates))
		for _, a := range r.Aggregates {
			fields := 2
			if a.Top != nil {
				fields = 3 // name, has_top, top
			}
			w.mapLen(fields)
			w.key("name")
			w.str(a.Name)
			switch {
			case a.Top != nil:
				w.key("has_top")
				w.boolean(true)
				w.key("top")
				w.arrayLen(len(a.Top))
				for _, tv := range a.Top {
					w.mapLen(2)
					w.key("value")
					w.bin(nonNil(tv.Value))
					w.key("count")
					w.int(tv.Count)
					w.end()
				}
				w.end()
			case a.IsFloat:
				w.key("float")
				w.float(a.Float)
			default:
				w.key("int")
				w.int(a.Int)
			}
			w.end()
		}
		w.end()
	case shQuota:
		head(w, "quota", 3)
		w.key("applied")
		w.boolean(r.Applied)
		w.key("value")
		w.int(r.Int)
		w.key("retry_after_ms")
		w.int(r.RetryAfter.Milliseconds())
	case shSeqRows:
		head(w, "sequence_rows", 1)
		w.key("rows")
		writeSeqRows(w, r.SeqRows)
	case shSeqGroups:
		head(w, "sequence_row_groups", 1)
		w.key("groups")
		w.arrayLen(len(r.SeqGroups))
		for _, g := range r.SeqGroups {
			w.arrayLen(2)
			w.text(nonNil(g.Key))
			writeSeqRows(w, g.Rows)
			w.end()
		}
		w.end()
	case shScan, shCollScan:
		head(w, "scan", 2)
		w.key("cursor")
		w.uint(r.Cursor)
		if cl.shape == shScan {
			w.key("keys")
			writeList(w, r.Keys, true)
		} else {
			w.key("values")
			writeList(w, r.Values, true)
		}
	}
	w.end()
}

// ExecuteResponse is the reply of /execute.
type ExecuteResponse struct {
	Status   Status   `json:"status" msgpack:"status"`
	Response Response `json:"response" msgpack:"response"`
}

// BatchResponse is the reply of /batch_execute.
type BatchResponse struct {
	Status    Status            `json:"status" msgpack:"status"`
	Responses []ExecuteResponse `json:"responses" msgpack:"responses"`
}

// Response is a command's response as a client decodes it: Kind, and the
// fields of that kind. The kinds, and the engine kinds that answer them:
//
//	empty                          (the original's kinds only)
//	bytes {value: bytes|null}      get, hget, lindex, pops without count, ...
//	                               (set with return_old adds applied)
//	integer {value: n|null}        counts and lengths; null when absent
//	                               (zrank, zrevrank, lpos)
//	float {value: f|null}          zscore, zincrby, zadd with incr, hincrbyfloat
//	string {value}                 type
//	applied {applied}              set, mset, rename, lset, ltrim, row_write
//	members {members: [bytes]|null} smembers, hkeys, lrange, pops with count
//	values {values: [bytes|null]}  mget, hmget, zmscore
//	hash_entries {entries}         hgetall
//	scored_members {members, scores?} zrange, zpopmin, zpopmax
//	integers {integers}            smismember, lpos with count, row_write_batch
//	scan {cursor, keys|values}     scan, hscan, sscan, zscan
//	feature_points {points}        fquery, fqueryfiltered
//	aggregate {value}              fagg
//	aggregates {aggregates: [{name, int|float|top}]}  fagg with aggregators
//	sequence_rows {rows}           seqquery
//	sequence_row_groups {groups}   seqbatchquery
//	quota {applied, value, retry_after_ms}  cstake, cspace
type Response struct {
	Kind     string     `json:"kind" msgpack:"kind"`
	Value    RawValue   `json:"value" msgpack:"value"`
	Applied  bool       `json:"applied" msgpack:"applied"`
	Cursor   uint64     `json:"cursor" msgpack:"cursor"`
	Keys     []Bytes    `json:"keys" msgpack:"keys"`
	Members  []Bytes    `json:"members" msgpack:"members"`
	Values   []Bytes    `json:"values" msgpack:"values"`
	Entries  []Entry    `json:"entries" msgpack:"entries"`
	Scores   []Float    `json:"scores" msgpack:"scores"`
	Integers []int64    `json:"integers" msgpack:"integers"`
	Points   []Point    `json:"points" msgpack:"points"`
	Rows     []SeqRow   `json:"rows" msgpack:"rows"`
	Groups   []SeqGroup `json:"groups" msgpack:"groups"`
	// RetryAfterMs is a refused quota's wait.
	RetryAfterMs int64 `json:"retry_after_ms" msgpack:"retry_after_ms"`
	// Aggregates are fagg's results with several or extended aggregators.
	Aggregates []Aggregate `json:"aggregates" msgpack:"aggregates"`
}

func writeSeqRows(w writer, rows []api.SeqRow) {
	w.arrayLen(len(rows))
	for _, r := range rows {
		w.mapLen(5)
		w.key("timestamp_ms")
		w.int(r.TimestampMs)
		w.key("gid")
		w.uint(r.GID)
		w.key("action_type")
		w.uint(uint64(r.ActionType))
		w.key("duration")
		w.uint(uint64(r.Duration))
		w.key("author_id")
		w.uint(r.AuthorID)
		w.end()
	}
	w.end()
}

func seqRows(rows []SeqRow) []api.SeqRow {
	out := make([]api.SeqRow, len(rows))
	for i, r := range rows {
		out[i] = api.SeqRow(r)
	}
	return out
}

// RawValue is a response's polymorphic value field, kept undecoded until
// its kind is known.
type RawValue struct {
	json json.RawMessage
	mp   msgpack.RawMessage
}

// UnmarshalJSON implements json.Unmarshaler.
func (v *RawValue) UnmarshalJSON(d []byte) error {
	v.json = append(json.RawMessage(nil), d...)
	return nil
}

// DecodeMsgpack implements msgpack.CustomDecoder.
func (v *RawValue) DecodeMsgpack(d *msgpack.Decoder) error {
	raw, err := d.DecodeRaw()
	v.mp = raw
	return err
}

// IsNull says the value is null or absent.
func (v RawValue) IsNull() bool {
	switch {
	case v.json != nil:
		return string(bytes.TrimSpace(v.json)) == "null"
	case v.mp != nil:
		return len(v.mp) == 1 && v.mp[0] == 0xc0
	}
	return true
}

// Decode decodes the value into dst.
func (v RawValue) Decode(dst any) error {
	if v.json != nil {
		return json.Unmarshal(v.json, dst)
	}
	if v.mp != nil {
		return msgpack.Unmarshal(v.mp, dst)
	}
	return errors.New("wire: no value")
}

func toBytes(l []Bytes) [][]byte {
	if l == nil {
		return nil
	}
	out := make([][]byte, len(l))
	for i, b := range l {
		out[i] = b
	}
	return out
}

// Engine is the engine response c's wire response stands for: the
// inverse of what the server writes for c's kind.
func (wr *Response) Engine(c api.Command) (api.Response, error) {
	var r api.Response
	var err error
	switch shapeOf(&c) {
	case shBytes, shSetOld:
		if !wr.Value.IsNull() {
			var b Bytes
			err = wr.Value.Decode(&b)
			r.Value, r.Found = nonNil(b), true
		}
		r.Applied = wr.Applied
	case shRangeBytes:
		var b Bytes
		err = wr.Value.Decode(&b)
		r.Value = nonNil(b)
	case shInt:
		err = wr.Value.Decode(&r.Int)
	case shRank:
		if !wr.Value.IsNull() {
			err = wr.Value.Decode(&r.Int)
			r.Found = true
		}
	case shFloat:
		if !wr.Value.IsNull() {
			var f Float
			err = wr.Value.Decode(&f)
			r.Float, r.Value, r.Found = float64(f), api.FormatScore(float64(f)), true
		}
	case shHFloat:
		var f Float
		err = wr.Value.Decode(&f)
		r.Float, r.Value, r.Found = float64(f), strconv.AppendFloat(nil, float64(f), 'f', -1, 64), true
	case shType:
		var s string
		err = wr.Value.Decode(&s)
		r.Value = []byte(s)
	case shApplied:
		r.Applied = wr.Applied
	case shMembers:
		r.Values = toBytes(wr.Members)
		if c.Kind == api.KindLPop || c.Kind == api.KindRPop {
			// A list pop with a count says the list existed.
			r.Found = r.Values != nil
		}
	case shValues:
		r.Values = toBytes(wr.Values)
	case shEntries:
		r.Values = make([][]byte, 0, 2*len(wr.Entries))
		for _, e := range wr.Entries {
			r.Values = append(r.Values, nonNil(e.Field), nonNil(e.Value))
		}
	case shScored:
		r.Values = toBytes(wr.Members)
		if wr.Scores != nil {
			r.Scores = make([]float64, len(wr.Scores))
			for i, s := range wr.Scores {
				r.Scores[i] = float64(s)
			}
		}
	case shInts, shRowBatch:
		r.Ints = wr.Integers
		if c.Kind == api.KindRowWriteBatch {
			for _, v := range r.Ints {
				r.Int += v
			}
		}
	case shPoints:
		r.Points = points(wr.Points)
		if r.Points == nil {
			r.Points = []api.Point{}
		}
	case shAggregate:
		err = wr.Value.Decode(&r.Int)
	case shAggregates:
		r.Aggregates = make([]api.Aggregate, len(wr.Aggregates))
		for i, a := range wr.Aggregates {
			x := api.Aggregate{Name: a.Name}
			switch {
			case a.HasTop:
				x.Top = make([]api.TopValue, len(a.Top))
				for j, tv := range a.Top {
					x.Top[j] = api.TopValue{Value: nonNil(tv.Value), Count: tv.Count}
				}
			case a.Float != nil:
				x.Float, x.IsFloat = float64(*a.Float), true
			case a.Int != nil:
				x.Int = *a.Int
			}
			r.Aggregates[i] = x
		}
		if len(c.Aggregators) == 0 && len(r.Aggregates) == 1 {
			r.Int = r.Aggregates[0].Int
			if r.Aggregates[0].IsFloat {
				r.Float, r.Int = r.Aggregates[0].Float, int64(r.Aggregates[0].Float)
			}
		}
	case shQuota:
		err = wr.Value.Decode(&r.Int)
		r.Applied, r.RetryAfter = wr.Applied, ms(wr.RetryAfterMs)
	case shSeqRows:
		r.SeqRows = seqRows(wr.Rows)
	case shSeqGroups:
		r.SeqGroups = make([]api.SeqGroup, len(wr.Groups))
		for i, g := range wr.Groups {
			r.SeqGroups[i] = api.SeqGroup{Key: nonNil(g.Key), Rows: seqRows(g.Rows)}
		}
	case shScan:
		r.Cursor, r.Keys = wr.Cursor, toBytes(wr.Keys)
	case shCollScan:
		r.Cursor, r.Values = wr.Cursor, toBytes(wr.Values)
	}
	if err != nil {
		return api.Response{}, fmt.Errorf("wire: %s response: %w", c.Kind, err)
	}
	return r, nil
}
