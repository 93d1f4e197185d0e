package wire

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// shape is how a kind's response is put on the wire.
type shape uint8

const (
	shEmpty      shape = iota // {"kind":"empty"}
	shBytes                   // bytes: value, null when not found
	shRangeBytes              // bytes: value, never null (get_range)
	shInt                     // integer: value
	shRank                    // integer: value, null when not found
	shFloat                   // float: value (Value is FormatScore), null when not found
	shHFloat                  // float: value (Value is its decimal form)
	shType                    // string: value
	shApplied                 // applied: applied
	shSetOld                  // bytes: value (the old one) and applied
	shMembers                 // members: members (null when the key is absent)
	shValues                  // values: values (null elements for absent ones)
	shEntries                 // hash_entries: entries [[field, value], ...]
	shScored                  // scored_members: members and scores
	shInts                    // integers: integers
	shRowBatch                // integers: integers (and Int is their sum)
	shScan                    // scan: cursor and keys
	shCollScan                // scan: cursor and values
	shOrigCond                // the original's string_set_conditional
	shOrigExpire              // the original's common_expire
	shPoints                  // feature_points: points [{timestamp_ms, value}]
	shAggregate               // aggregate: value
	shSeqRows                 // sequence_rows: rows
	shSeqGroups               // sequence_row_groups: groups [[key, rows]]
	shQuota                   // quota: applied, value, retry_after_ms
	shAggregates              // aggregates: [{name, int|float|top}]
)

// nativeShapes gives each engine kind its response shape. Kinds whose
// shape depends on the command (a count, ZADD INCR, SET GET) are resolved
// in shapeOf.
var nativeShapes = map[ts.Kind]shape{
	ts.KindSet: shApplied, ts.KindGet: shBytes, ts.KindDelete: shInt, ts.KindGetDel: shBytes,
	ts.KindIncrBy: shInt, ts.KindIncrByFloat: shBytes, ts.KindAppend: shInt, ts.KindStrLen: shInt,
	ts.KindGetRange: shRangeBytes, ts.KindSetRange: shInt, ts.KindExists: shInt, ts.KindPTTL: shInt,
	ts.KindExpire: shInt, ts.KindPersist: shInt, ts.KindType: shType, ts.KindScan: shScan,
	ts.KindExistsKeys: shInt, ts.KindDeleteKeys: shInt, ts.KindMGet: shValues, ts.KindMSet: shApplied,
	ts.KindGetEx: shBytes, ts.KindExpireTime: shInt, ts.KindRename: shApplied,

	ts.KindHSet: shInt, ts.KindHSetNX: shInt, ts.KindHGet: shBytes, ts.KindHMGet: shValues,
	ts.KindHGetAll: shEntries, ts.KindHDel: shInt, ts.KindHIncrBy: shInt, ts.KindHIncrByFloat: shHFloat,
	ts.KindHLen: shInt, ts.KindHExists: shInt, ts.KindHStrLen: shInt, ts.KindHKeys: shMembers,
	ts.KindHVals: shMembers, ts.KindHScan: shCollScan,

	ts.KindSAdd: shInt, ts.KindSRem: shInt, ts.KindSMembers: shMembers, ts.KindSIsMember: shInt,
	ts.KindSMIsMember: shInts, ts.KindSCard: shInt, ts.KindSPop: shBytes, ts.KindSRandMember: shBytes,
	ts.KindSScan: shCollScan, ts.KindSInter: shMembers, ts.KindSUnion: shMembers, ts.KindSDiff: shMembers,
	ts.KindSInterStore: shInt, ts.KindSUnionStore: shInt, ts.KindSDiffStore: shInt, ts.KindSMove: shInt,
	ts.KindMSetNX: shInt, ts.KindZUnion: shScored, ts.KindZInter: shScored, ts.KindZDiff: shScored,
	ts.KindSetBit: shInt, ts.KindGetBit: shInt, ts.KindBitCount: shInt, ts.KindBitPos: shInt, ts.KindBitOp: shInt,
	ts.KindCopy: shInt, ts.KindHRandField: shBytes, ts.KindZRandMember: shBytes,
	ts.KindZUnionStore: shInt, ts.KindZInterStore: shInt, ts.KindZDiffStore: shInt, ts.KindZRangeStore: shInt,

	ts.KindZAdd: shInt, ts.KindZRange: shScored, ts.KindZCount: shInt, ts.KindZRemRange: shInt,
	ts.KindZRank: shRank, ts.KindZRevRank: shRank, ts.KindZScore: shFloat, ts.KindZMScore: shValues,
	ts.KindZIncrBy: shFloat, ts.KindZRem: shInt, ts.KindZCard: shInt, ts.KindZPopMin: shScored,
	ts.KindZPopMax: shScored, ts.KindZScan: shCollScan,

	ts.KindLPush: shInt, ts.KindRPush: shInt, ts.KindLPop: shBytes, ts.KindRPop: shBytes,
	ts.KindLRange: shMembers, ts.KindLLen: shInt, ts.KindLIndex: shBytes, ts.KindLSet: shApplied,
	ts.KindLTrim: shApplied, ts.KindLRem: shInt, ts.KindLInsert: shInt, ts.KindLPos: shRank,
	ts.KindLMove: shBytes,

	ts.KindRowWrite: shApplied, ts.KindRowWriteBatch: shRowBatch,

	ts.KindPFAdd: shInt, ts.KindPFCount: shInt, ts.KindPFMerge: shApplied, ts.KindPFDebug: shInt,

	ts.KindFAppend: shInt, ts.KindFReplace: shEmpty, ts.KindFDelete: shInt, ts.KindFQuery: shPoints,
	ts.KindFQueryFiltered: shPoints, ts.KindFAgg: shAggregate,
	ts.KindSeqAdd: shEmpty, ts.KindSeqQuery: shSeqRows, ts.KindSeqBatchQuery: shSeqGroups,

	ts.KindCIncr: shEmpty, ts.KindCChange: shEmpty, ts.KindCCount: shInt, ts.KindCQuery: shInt,
	ts.KindCDetail: shPoints, ts.KindCSetAndGet: shInt, ts.KindCFamilyQuery: shInt,
	ts.KindCSelect: shEmpty, ts.KindCSelection: shBytes, ts.KindCTake: shQuota, ts.KindCPace: shQuota,
	ts.KindCManager: shEntries, ts.KindCDebug: shEntries,
}

// HasShape reports whether the surface has a reply shape for engine kind
// k, so that it serves it.
func HasShape(k ts.Kind) bool {
	_, ok := nativeShapes[k]
	return ok
}

// shapeOf is the response shape of engine command c.
func shapeOf(c *ts.Command) shape {
	switch c.Kind {
	case ts.KindSet:
		if c.ReturnOld {
			return shSetOld
		}
	case ts.KindLPop, ts.KindRPop, ts.KindSPop, ts.KindSRandMember:
		if c.HasCount {
			return shMembers
		}
	case ts.KindHRandField:
		if c.HasCount {
			return shMembers // field, value pairs WithValues, as HGETALL's values
		}
	case ts.KindZRandMember:
		if c.HasCount {
			return shScored
		}
	case ts.KindLPos:
		if c.HasCount {
			return shInts
		}
	case ts.KindPFDebug:
		switch strings.ToLower(c.Aggregator) {
		case "getreg":
			return shInts
		case "encoding", "decode":
			return shType
		}
	case ts.KindZAdd:
		if c.ZAdd.Incr {
			return shFloat
		}
	case ts.KindFAgg:
		if len(c.Aggregators) > 0 || !ts.IsPlainAggregator(c.Aggregator) {
			return shAggregates
		}
	}
	return nativeShapes[c.Kind]
}

// unsupportedPrefixes name the original's kinds this server does not have
// yet (context):
// they are answered with the status code "unsupported", never run.
var unsupportedPrefixes = []string{"context_"}

// errBadRequest marks a command that cannot be understood: an unknown
// kind, a missing or malformed field. It is answered with HTTP 400.
var errBadRequest = ErrBadRequest

func badf(format string, args ...any) error {
	return fmt.Errorf("%w: "+format, append([]any{errBadRequest}, args...)...)
}

// call is a wire command translated for the engine.
type call struct {
	// kind is the wire kind, the label of the command's metrics.
	kind  string
	cmd   ts.Command
	shape shape
	// orig says the kind is one of the original's, whose error codes
	// differ (see statusOf).
	orig bool
	// unsupported says the kind is the original's but has no model here.
	unsupported bool
}

// write says the call writes (a read-only token cannot send it).
func (c *call) write() bool { return !c.unsupported && !ts.IsReadKind(c.cmd.Kind) }

// translate turns a wire command into an engine command and the shape of
// its response. Errors wrap errBadRequest.
func translate(w *Command, namespace, table, tenant string) (call, error) {
	cl := call{kind: w.Kind}
	if w.Kind == "" {
		return cl, badf("missing field `kind`")
	}
	if w.Tenant != "" {
		tenant = w.Tenant
	}
	for _, p := range unsupportedPrefixes {
		if strings.HasPrefix(w.Kind, p) {
			cl.unsupported, cl.orig = true, true
			return cl, nil
		}
	}
	if err := checkDurations(w); err != nil {
		return cl, err
	}
	var err error
	if orig, ok := originalKinds[w.Kind]; ok {
		cl.orig = true
		cl.cmd, cl.shape, err = orig(w)
	} else if _, ok := nativeShapes[ts.Kind(w.Kind)]; ok {
		cl.cmd, err = nativeCommand(w)
		cl.shape = shapeOf(&cl.cmd)
	} else {
		return cl, badf("unknown variant `%s`", w.Kind)
	}
	cl.cmd.Namespace, cl.cmd.Table, cl.cmd.Tenant = namespace, table, tenant
	return cl, err
}

func needKey(w *Command) error {
	if w.Key == nil {
		return badf("missing field `key`")
	}
	return nil
}

func needField(name string, present bool) error {
	if !present {
		return badf("missing field `%s`", name)
	}
	return nil
}

func ms(v int64) time.Duration { return time.Duration(v) * time.Millisecond }

// maxMs is the longest duration in milliseconds (292 years): ms of more
// would overflow a time.Duration and wrap to a negative or short one.
const maxMs = math.MaxInt64 / int64(time.Millisecond)

// checkDurations refuses a duration field beyond maxMs either way.
func checkDurations(w *Command) error {
	for _, f := range []struct {
		name string
		v    *int64
	}{{"ttl_ms", w.TTLMs}, {"max_age_ms", &w.MaxAgeMs}, {"window_ms", &w.WindowMs}} {
		if f.v != nil && (*f.v > maxMs || *f.v < -maxMs) {
			return badf("%s is out of range: at most %d milliseconds", f.name, maxMs)
		}
	}
	return nil
}

// originalKinds translate the original's key-value kinds.
var originalKinds = map[string]func(w *Command) (ts.Command, shape, error){
	"common_delete": origKey(ts.KindDelete, shEmpty),
	"common_expire": func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("ttl_ms", w.TTLMs != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		if *w.TTLMs < 0 {
			return ts.Command{}, 0, badf("ttl_ms must be an unsigned integer")
		}
		return ts.Command{Kind: ts.KindExpire, Key: w.Key, TTL: ms(*w.TTLMs)}, shOrigExpire, nil
	},
	"common_ttl":    origKey(ts.KindPTTL, shInt),
	"common_exists": origKey(ts.KindExists, shInt),
	"string_set": func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("value", w.Value != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		// The original's string_set keeps the key's TTL.
		return ts.Command{Kind: ts.KindSet, Key: w.Key, Value: w.Value, KeepTTL: true}, shEmpty, nil
	},
	"string_set_ex": func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("value", w.Value != nil), needField("ttl_ms", w.TTLMs != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		if *w.TTLMs <= 0 {
			return ts.Command{}, 0, badf("ttl_ms must be a positive integer")
		}
		return ts.Command{Kind: ts.KindSet, Key: w.Key, Value: w.Value, TTL: ms(*w.TTLMs)}, shEmpty, nil
	},
	"string_set_conditional": func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("value", w.Value != nil), needField("condition", w.Condition != "")); err != nil {
			return ts.Command{}, 0, err
		}
		cond, err := condition(w.Condition)
		if err != nil {
			return ts.Command{}, 0, err
		}
		c := ts.Command{Kind: ts.KindSet, Key: w.Key, Value: w.Value, Cond: cond, ReturnOld: w.ReturnOld}
		if w.TTLMs != nil {
			if *w.TTLMs <= 0 {
				return ts.Command{}, 0, badf("ttl_ms must be a positive integer")
			}
			c.TTL = ms(*w.TTLMs)
		}
		return c, shOrigCond, nil
	},
	"string_get":    origKey(ts.KindGet, shBytes),
	"string_delete": origKey(ts.KindDelete, shEmpty),
	"hash_set": func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("field", w.Field != nil), needField("value", w.Value != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		return ts.Command{Kind: ts.KindHSet, Key: w.Key, Args: [][]byte{w.Field, w.Value}}, shEmpty, nil
	},
	"hash_get": origField(ts.KindHGet, shBytes),
	"hash_multi_get": func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("fields", w.Fields != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		if len(w.Fields) == 0 {
			return ts.Command{Kind: ts.KindHMGet, Key: w.Key}, shValues, nil
		}
		return ts.Command{Kind: ts.KindHMGet, Key: w.Key, Args: texts(w.Fields)}, shValues, nil
	},
	"hash_multi_set": func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("entries", w.Entries != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		args := make([][]byte, 0, 2*len(w.Entries))
		for _, e := range w.Entries {
			args = append(args, e.Field, nonNil(e.Value))
		}
		return ts.Command{Kind: ts.KindHSet, Key: w.Key, Args: args}, shEmpty, nil
	},
	"hash_incr_by": func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("field", w.Field != nil), needField("increment", w.Increment != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		return ts.Command{Kind: ts.KindHIncrBy, Key: w.Key, Args: [][]byte{w.Field}, Delta: *w.Increment}, shInt, nil
	},
	"hash_get_all": origKey(ts.KindHGetAll, shEntries),
	"hash_len":     origKey(ts.KindHLen, shInt),
	"hash_delete":  origField(ts.KindHDel, shEmpty),
	"set_add":      origMember(ts.KindSAdd),
	"set_members":  origKey(ts.KindSMembers, shMembers),
	"set_remove":   origMember(ts.KindSRem),

	"feature_append": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindFAppend, true, false)
		return c, shEmpty, err
	},
	"feature_append_with_policy": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindFAppend, true, false)
		if err == nil {
			err = needField("policy", w.Policy != "")
		}
		if err == nil {
			c.Policy, err = policy(w.Policy)
		}
		return c, shInt, err
	},
	"feature_query": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindFQuery, false, true)
		return c, shPoints, err
	},
	"feature_query_filtered": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindFQueryFiltered, false, true)
		if err == nil {
			err = needField("filters", w.Filters != nil)
		}
		if err == nil {
			c.Filters, err = filters(w.Filters)
		}
		return c, shPoints, err
	},
	"feature_replace": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindFReplace, true, true)
		return c, shEmpty, err
	},
	"feature_delete": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindFDelete, false, false)
		return c, shEmpty, err
	},
	"feature_agg_query": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindFAgg, false, true)
		if err == nil {
			err = needField("aggregator", w.Aggregator != "")
		}
		c.Aggregator = w.Aggregator
		return c, shAggregate, err
	},
	"control_state_increment":              origControl(ts.KindCIncr, shEmpty, false, false),
	"control_state_increment_with_options": origControl(ts.KindCIncr, shEmpty, false, false),
	"control_state_change_add": func(w *Command) (ts.Command, shape, error) {
		c, sh, err := origControl(ts.KindCChange, shEmpty, false, false)(w)
		if err == nil {
			err = needField("value", w.Value != nil)
		}
		c.Value = nonNil(w.Value)
		return c, sh, err
	},
	"control_state_count": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindCCount, false, true)
		return c, shInt, err
	},
	"control_state_query": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindCQuery, false, true)
		c.Aggregator = w.Aggregator
		return c, shInt, err
	},
	"control_state_detail": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindCDetail, false, true)
		return c, shPoints, err
	},
	"control_state_set":                      origControl(ts.KindCSetAndGet, shEmpty, true, false),
	"control_state_set_and_get":              origControl(ts.KindCSetAndGet, shInt, true, true),
	"control_state_set_and_get_with_options": origControl(ts.KindCSetAndGet, shInt, true, true),
	"control_state_family_query": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindCFamilyQuery, false, true)
		if err == nil {
			err = needField("family", w.Family != "")
		}
		c.Family, c.Aggregator = w.Family, w.Aggregator
		return c, shInt, err
	},
	"control_state_manager": func(w *Command) (ts.Command, shape, error) {
		if err := needKey(w); err != nil {
			return ts.Command{}, 0, err
		}
		c := ts.Command{Kind: ts.KindCManager, Key: w.Key, Start: w.StartOffset, End: w.EndOffset}
		if w.OpType != nil {
			c.Count = *w.OpType
		}
		if w.IsDistinct || w.IsCPC {
			c.Family = "cpc"
		}
		for i, f := range w.FieldList {
			if len(f) == 0 {
				return c, 0, badf("field_list[%d] is empty", i)
			}
			switch v := f[0].(type) {
			case float64:
				c.Args = append(c.Args, strconv.AppendInt(nil, int64(v), 10))
			case int64, uint64, int8, int16, int32, uint8, uint16, uint32:
				c.Args = append(c.Args, fmt.Append(nil, v))
			case string:
				c.Args = append(c.Args, []byte(v))
			default:
				return c, 0, badf("field_list[%d][0] is not a timestamp", i)
			}
		}
		return c, shEntries, nil
	},
	"control_state_debug": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindCDebug, false, true)
		return c, shEntries, err
	},
	"control_state_selection_set":   origSelect,
	"control_state_fol_set":         origSelect,
	"control_state_selection_query": origKey(ts.KindCSelection, shBytes),
	"control_state_fol_query":       origKey(ts.KindCSelection, shBytes),
	"sequence_add": func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("rows", w.Rows != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		c := ts.Command{Kind: ts.KindSeqAdd, Key: w.Key, SeqRows: make([]ts.SeqRow, len(w.Rows))}
		for i, r := range w.Rows {
			if r.TimestampMs == nil {
				return c, 0, badf("rows[%d]: missing field `timestamp_ms`", i)
			}
			c.SeqRows[i] = ts.SeqRow{TimestampMs: *r.TimestampMs, GID: r.GID, ActionType: r.ActionType, Duration: r.Duration, AuthorID: r.AuthorID}
		}
		return c, shEmpty, nil
	},
	"sequence_query": func(w *Command) (ts.Command, shape, error) {
		c, err := origFeature(w, ts.KindSeqQuery, false, true)
		if err == nil {
			err = needField("count", w.Count != nil)
		}
		if err == nil {
			c.Filters, err = filters(w.Filters)
		}
		return c, shSeqRows, err
	},
	"sequence_batch_query": func(w *Command) (ts.Command, shape, error) {
		if err := needField("queries", w.Queries != nil); err != nil {
			return ts.Command{}, 0, err
		}
		c := ts.Command{Kind: ts.KindSeqBatchQuery}
		var err error
		c.SeqQueries, err = seqQueries(w.Queries)
		return c, shSeqGroups, err
	},
}

// origControl translates the original's control state writes: key,
// timestamp_ms and amount (family when withFamily; start_ms, end_ms and
// aggregator when withWindow), and the options precision_ms, ttl_ms and
// uuid.
func origControl(k ts.Kind, sh shape, withFamily, withWindow bool) func(w *Command) (ts.Command, shape, error) {
	return func(w *Command) (ts.Command, shape, error) {
		c := ts.Command{Kind: k, Key: w.Key, Family: w.Family, RequestID: w.UUID, Aggregator: w.Aggregator}
		errs := []error{needKey(w), needField("timestamp_ms", w.TimestampMs != nil)}
		if k != ts.KindCChange {
			errs = append(errs, needField("amount", w.Amount != nil))
		}
		if withFamily {
			errs = append(errs, needField("family", w.Family != ""))
		}
		if withWindow {
			errs = append(errs, needField("start_ms", w.StartMs != nil), needField("end_ms", w.EndMs != nil))
			if w.StartMs != nil && w.EndMs != nil {
				c.Start, c.End = *w.StartMs, *w.EndMs
			}
		}
		if err := errors.Join(errs...); err != nil {
			return c, sh, err
		}
		c.At = *w.TimestampMs
		if w.Amount != nil {
			c.Delta = *w.Amount
		}
		if w.PrecisionMs != nil {
			c.PrecisionMs = *w.PrecisionMs
		}
		if w.TTLMs != nil {
			c.TTL = ms(*w.TTLMs)
		}
		return c, sh, nil
	}
}

func origSelect(w *Command) (ts.Command, shape, error) {
	if err := errors.Join(needKey(w), needField("value", w.Value != nil), needField("occur_time_ms", w.OccurTimeMs != nil)); err != nil {
		return ts.Command{}, 0, err
	}
	c := ts.Command{Kind: ts.KindCSelect, Key: w.Key, Value: nonNil(w.Value), At: *w.OccurTimeMs}
	if w.TTLMs != nil {
		c.TTL = ms(*w.TTLMs)
	}
	switch strings.ToLower(cmp.Or(w.SelectionType, w.FolType)) {
	case "first", "":
	case "last":
		c.SelectLast = true
	default:
		return c, 0, badf("unknown variant `%s` of selection_type", cmp.Or(w.SelectionType, w.FolType))
	}
	return c, shEmpty, nil
}

func seqQueries(qs []SeqQuery) ([]ts.SeqQuery, error) {
	if qs == nil {
		return nil, nil
	}
	out := make([]ts.SeqQuery, len(qs))
	for i, q := range qs {
		fs, err := filters(q.Filters)
		if err != nil {
			return nil, err
		}
		out[i] = ts.SeqQuery{Key: nonNil(q.Key), Start: q.StartMs, End: q.EndMs, Count: q.Count, Filters: fs}
	}
	return out, nil
}

// origFeature translates the fields the original's feature kinds share:
// key, points (when withPoints), start_ms and end_ms (when withWindow),
// and the optional count.
func origFeature(w *Command, k ts.Kind, withPoints, withWindow bool) (ts.Command, error) {
	c := ts.Command{Kind: k, Key: w.Key}
	errs := []error{needKey(w)}
	if withPoints {
		errs = append(errs, needField("points", w.Points != nil))
		c.Points = points(w.Points)
	}
	if withWindow {
		errs = append(errs, needField("start_ms", w.StartMs != nil), needField("end_ms", w.EndMs != nil))
		if w.StartMs != nil && w.EndMs != nil {
			c.Start, c.End = *w.StartMs, *w.EndMs
		}
	}
	if w.Count != nil {
		c.Count, c.HasCount = *w.Count, true
	}
	return c, errors.Join(errs...)
}

func points(ps []Point) []ts.Point {
	if ps == nil {
		return nil
	}
	out := make([]ts.Point, len(ps))
	for i, p := range ps {
		out[i] = ts.Point{TS: p.TimestampMs, Value: nonNil(p.Value)}
	}
	return out
}

func policy(s string) (ts.WritePolicy, error) {
	if s == "" {
		return ts.PolicyUpsert, nil
	}
	p, ok := ts.ParseWritePolicy(s)
	if !ok {
		return 0, badf("unknown variant `%s` of policy", s)
	}
	return p, nil
}

func filters(fs []Filter) ([]ts.Filter, error) {
	if fs == nil {
		return nil, nil
	}
	out := make([]ts.Filter, len(fs))
	for i, f := range fs {
		op, ok := ts.ParseFilterOp(f.Op)
		if !ok {
			return nil, badf("unknown variant `%s` of filters[%d].op", f.Op, i)
		}
		out[i] = ts.Filter{Field: f.Field, Op: op, Value: f.Value}
	}
	return out, nil
}

func origKey(k ts.Kind, sh shape) func(w *Command) (ts.Command, shape, error) {
	return func(w *Command) (ts.Command, shape, error) {
		if err := needKey(w); err != nil {
			return ts.Command{}, 0, err
		}
		return ts.Command{Kind: k, Key: w.Key}, sh, nil
	}
}

func origField(k ts.Kind, sh shape) func(w *Command) (ts.Command, shape, error) {
	return func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("field", w.Field != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		return ts.Command{Kind: k, Key: w.Key, Args: [][]byte{w.Field}}, sh, nil
	}
}

func origMember(k ts.Kind) func(w *Command) (ts.Command, shape, error) {
	return func(w *Command) (ts.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("member", w.Member != nil)); err != nil {
			return ts.Command{}, 0, err
		}
		return ts.Command{Kind: k, Key: w.Key, Args: [][]byte{w.Member}}, shEmpty, nil
	}
}

func texts(in []Text) [][]byte {
	out := make([][]byte, len(in))
	for i, t := range in {
		out[i] = nonNil(t)
	}
	return out
}

func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

func condition(s string) (ts.Cond, error) {
	switch strings.ToLower(s) {
	case "", "always":
		return ts.Always, nil
	case "if_not_exists", "nx":
		return ts.IfAbsent, nil
	case "if_exists", "xx":
		return ts.IfPresent, nil
	}
	return 0, badf("unknown variant `%s`, expected one of `always`, `if_exists`, `if_not_exists`", s)
}

// expireConds are ExpireIf's names, in the order FromEngine writes them.
var expireConds = []struct {
	name string
	cond ts.ExpireCond
}{{"nx", ts.ExpireIfNone}, {"xx", ts.ExpireIfSet}, {"gt", ts.ExpireIfLater}, {"lt", ts.ExpireIfEarlier}}

func expireIf(names []string) (ts.ExpireCond, error) {
	var ec ts.ExpireCond
next:
	for _, n := range names {
		for _, c := range expireConds {
			if strings.EqualFold(n, c.name) {
				ec |= c.cond
				continue next
			}
		}
		return 0, badf("unknown variant `%s`, expected one of `nx`, `xx`, `gt`, `lt`", n)
	}
	return ec, nil
}

// nativeCommand translates an engine kind's wire command.
func nativeCommand(w *Command) (ts.Command, error) {
	c := ts.Command{
		Kind: ts.Kind(w.Kind), Key: w.Key, Value: w.Value, KeepTTL: w.KeepTTL, ReturnOld: w.ReturnOld,
		Delta: w.Delta, Float: float64(w.Float), Start: w.Start, End: w.End, Cursor: w.Cursor,
		FromLeft: w.FromLeft, ToLeft: w.ToLeft, Before: w.Before, Rank: w.Rank, MaxLen: w.MaxLen,
		Persist: w.Persist, TSField: w.TSField, Replace: w.Replace, WithValues: w.WithValues,
	}
	if w.Dest != nil {
		c.Dest = nonNil(w.Dest)
	}
	var err error
	if c.Cond, err = condition(w.Condition); err != nil {
		return c, err
	}
	if c.ExpireCond, err = expireIf(w.ExpireIf); err != nil {
		return c, err
	}
	if w.TTLMs != nil {
		c.TTL = ms(*w.TTLMs)
	}
	if w.Count != nil {
		c.Count, c.HasCount = *w.Count, true
	}
	c.Points, c.Aggregator, c.Aggregators = points(w.Points), w.Aggregator, w.Aggregators
	c.MaxAge = ms(w.MaxAgeMs)
	if c.Policy, err = policy(w.Policy); err != nil {
		return c, err
	}
	if c.Filters, err = filters(w.Filters); err != nil {
		return c, err
	}
	if c.SeqQueries, err = seqQueries(w.Queries); err != nil {
		return c, err
	}
	c.At, c.Family, c.RequestID, c.SelectLast, c.Limit = w.At, w.Family, w.RequestID, w.SelectLast, w.Limit
	c.Window = ms(w.WindowMs)
	if w.PrecisionMs != nil {
		c.PrecisionMs = *w.PrecisionMs
	}
	for _, r := range w.SeqRows {
		c.SeqRows = append(c.SeqRows, ts.SeqRow(r))
	}
	if w.Keys != nil {
		c.Keys = texts(w.Keys)
	}
	if w.Args != nil {
		c.Args = make([][]byte, len(w.Args))
		for i, a := range w.Args {
			c.Args[i] = nonNil(a)
		}
	}
	if w.Scores != nil {
		c.Scores = make([]float64, len(w.Scores))
		for i, s := range w.Scores {
			c.Scores[i] = float64(s)
		}
	}
	if w.ZAdd != nil {
		c.ZAdd = ts.ZAddFlags(*w.ZAdd)
	}
	if w.Range != nil {
		if c.Range, err = engineRange(w.Range); err != nil {
			return c, err
		}
	}
	if w.Bits != nil {
		c.Bits = &ts.BitRange{Start: w.Bits.Start, Bit: w.Bits.Bit}
		if w.Bits.End != nil {
			c.Bits.End, c.Bits.HasEnd = *w.Bits.End, true
		}
	}
	if w.ExpireAtMs != nil {
		c.ExpireAt = time.UnixMilli(*w.ExpireAtMs)
	}
	if w.EventTimeMs != nil {
		c.EventTime = time.UnixMilli(*w.EventTimeMs)
	}
	for _, r := range w.Rows {
		row := ts.Row{Key: r.Key, EventTime: time.UnixMilli(r.EventTimeMs)}
		for _, a := range r.Args {
			row.Args = append(row.Args, nonNil(a))
		}
		c.Rows = append(c.Rows, row)
	}
	return c, nil
}

func engineRange(r *Range) (ts.ZRange, error) {
	zr := ts.ZRange{Start: r.Start, Stop: r.Stop, Rev: r.Rev, WithScores: r.WithScores}
	switch r.By {
	case "", "rank":
		zr.By = ts.ByRank
	case "score":
		zr.By = ts.ByScore
		if r.Min == nil || r.Max == nil {
			return zr, badf("a score range needs min and max")
		}
		zr.Min, zr.Max = ts.ScoreBound(*r.Min), ts.ScoreBound(*r.Max)
	case "lex":
		zr.By = ts.ByLex
		var err error
		if zr.LexMin, err = ts.ParseLexBound(string(r.LexMin)); err != nil {
			return zr, badf("lex_min: %v", err)
		}
		if zr.LexMax, err = ts.ParseLexBound(string(r.LexMax)); err != nil {
			return zr, badf("lex_max: %v", err)
		}
	default:
		return zr, badf("range by %q (rank, score or lex)", r.By)
	}
	if r.Limit != nil {
		zr.HasLimit, zr.Offset, zr.Limit = true, r.Limit.Offset, r.Limit.Count
	}
	return zr, nil
}

// FromEngine is the wire form of an engine command, in the engine's own
// kinds: what a client sends for c. Namespace, Table and Tenant go in
// the request, not the command.
func FromEngine(c ts.Command) Command {
	w := Command{
		Kind: string(c.Kind), Key: Text(c.Key), Value: Bytes(c.Value), KeepTTL: c.KeepTTL,
		ReturnOld: c.ReturnOld, Delta: c.Delta, Float: Float(c.Float), Start: c.Start, End: c.End,
		Cursor: c.Cursor, FromLeft: c.FromLeft, ToLeft: c.ToLeft, Before: c.Before, Rank: c.Rank,
		MaxLen: c.MaxLen, Persist: c.Persist, TSField: c.TSField, Dest: Text(c.Dest),
		Replace: c.Replace, WithValues: c.WithValues,
	}
	switch c.Cond {
	case ts.IfAbsent:
		w.Condition = "nx"
	case ts.IfPresent:
		w.Condition = "xx"
	}
	for _, ec := range expireConds {
		if c.ExpireCond&ec.cond != 0 {
			w.ExpireIf = append(w.ExpireIf, ec.name)
		}
	}
	if c.TTL != 0 {
		v := c.TTL.Milliseconds()
		w.TTLMs = &v
	}
	if c.HasCount || c.Count != 0 {
		v := c.Count
		w.Count = &v
	}
	for _, k := range c.Keys {
		w.Keys = append(w.Keys, Text(nonNil(k)))
	}
	for _, a := range c.Args {
		w.Args = append(w.Args, Bytes(nonNil(a)))
	}
	for _, s := range c.Scores {
		w.Scores = append(w.Scores, Float(s))
	}
	if c.ZAdd != (ts.ZAddFlags{}) {
		f := ZAddFlags(c.ZAdd)
		w.ZAdd = &f
	}
	if !zeroRange(c.Range) {
		w.Range = wireRange(c.Range)
	}
	if c.Bits != nil {
		w.Bits = &BitRange{Start: c.Bits.Start, Bit: c.Bits.Bit}
		if c.Bits.HasEnd {
			end := c.Bits.End
			w.Bits.End = &end
		}
	}
	if !c.ExpireAt.IsZero() {
		v := c.ExpireAt.UnixMilli()
		w.ExpireAtMs = &v
	}
	if !c.EventTime.IsZero() {
		v := c.EventTime.UnixMilli()
		w.EventTimeMs = &v
	}
	for _, p := range c.Points {
		w.Points = append(w.Points, Point{TimestampMs: p.TS, Value: Bytes(nonNil(p.Value))})
	}
	if c.Points != nil && w.Points == nil {
		w.Points = []Point{}
	}
	w.Policy, w.Aggregator, w.Aggregators = policyNames[c.Policy], c.Aggregator, c.Aggregators
	w.MaxAgeMs = c.MaxAge.Milliseconds()
	w.Filters = wireFilters(c.Filters)
	w.At, w.Family, w.RequestID, w.SelectLast, w.Limit = c.At, c.Family, c.RequestID, c.SelectLast, c.Limit
	w.WindowMs = c.Window.Milliseconds()
	if c.PrecisionMs != 0 {
		v := c.PrecisionMs
		w.PrecisionMs = &v
	}
	for _, r := range c.SeqRows {
		w.SeqRows = append(w.SeqRows, SeqRow(r))
	}
	for _, q := range c.SeqQueries {
		w.Queries = append(w.Queries, SeqQuery{Key: Text(nonNil(q.Key)), StartMs: q.Start, EndMs: q.End, Count: q.Count, Filters: wireFilters(q.Filters)})
	}
	for _, r := range c.Rows {
		row := Row{Key: Text(r.Key), EventTimeMs: r.EventTime.UnixMilli()}
		for _, a := range r.Args {
			row.Args = append(row.Args, Bytes(nonNil(a)))
		}
		w.Rows = append(w.Rows, row)
	}
	return w
}

func zeroRange(r ts.ZRange) bool {
	return r.By == ts.ByRank && r.Start == 0 && r.Stop == 0 && !r.Rev && !r.HasLimit && !r.WithScores &&
		r.Offset == 0 && r.Limit == 0 && r.Min == (ts.ScoreBound{}) && r.Max == (ts.ScoreBound{}) &&
		r.LexMin.Value == nil && r.LexMax.Value == nil && r.LexMin.Inf == 0 && r.LexMax.Inf == 0
}

func wireRange(zr ts.ZRange) *Range {
	r := &Range{Start: zr.Start, Stop: zr.Stop, Rev: zr.Rev, WithScores: zr.WithScores}
	switch zr.By {
	case ts.ByScore:
		r.By = "score"
		lo, hi := ScoreBound(zr.Min), ScoreBound(zr.Max)
		r.Min, r.Max = &lo, &hi
	case ts.ByLex:
		r.By, r.LexMin, r.LexMax = "lex", lexText(zr.LexMin), lexText(zr.LexMax)
	}
	if zr.HasLimit {
		r.Limit = &Limit{Offset: zr.Offset, Count: zr.Limit}
	}
	return r
}

func lexText(b ts.LexBound) Text {
	switch {
	case b.Inf < 0:
		return Text("-")
	case b.Inf > 0:
		return Text("+")
	case b.Excl:
		return append(Text("("), b.Value...)
	}
	return append(Text("["), b.Value...)
}

// policyNames and filterOpNames are the wire names of the engine's
// policies and filter operators (upsert, the default, is left out).
var (
	policyNames   = map[ts.WritePolicy]string{ts.PolicyInsertIfAbsent: "insert_if_absent", ts.PolicyReplaceExisting: "replace_existing", ts.PolicyBlock: "block"}
	filterOpNames = map[ts.FilterOp]string{
		ts.FilterEqual: "equal", ts.FilterNotEqual: "not_equal", ts.FilterGreater: "greater_than",
		ts.FilterGreaterOrEqual: "greater_or_equal", ts.FilterLess: "less_than", ts.FilterLessOrEqual: "less_or_equal",
	}
)

func wireFilters(fs []ts.Filter) []Filter {
	var out []Filter
	for _, f := range fs {
		out = append(out, Filter{Field: f.Field, Op: filterOpNames[f.Op], Value: f.Value})
	}
	return out
}
