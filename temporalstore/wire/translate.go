package wire

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/api"
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
var nativeShapes = map[api.Kind]shape{
	api.KindSet: shApplied, api.KindGet: shBytes, api.KindDelete: shInt, api.KindGetDel: shBytes,
	api.KindIncrBy: shInt, api.KindIncrByFloat: shBytes, api.KindAppend: shInt, api.KindStrLen: shInt,
	api.KindGetRange: shRangeBytes, api.KindSetRange: shInt, api.KindExists: shInt, api.KindPTTL: shInt,
	api.KindExpire: shInt, api.KindPersist: shInt, api.KindType: shType, api.KindScan: shScan,
	api.KindExistsKeys: shInt, api.KindDeleteKeys: shInt, api.KindMGet: shValues, api.KindMSet: shApplied,
	api.KindGetEx: shBytes, api.KindExpireTime: shInt, api.KindRename: shApplied,

	api.KindHSet: shInt, api.KindHSetNX: shInt, api.KindHGet: shBytes, api.KindHMGet: shValues,
	api.KindHGetAll: shEntries, api.KindHDel: shInt, api.KindHIncrBy: shInt, api.KindHIncrByFloat: shHFloat,
	api.KindHLen: shInt, api.KindHExists: shInt, api.KindHStrLen: shInt, api.KindHKeys: shMembers,
	api.KindHVals: shMembers, api.KindHScan: shCollScan,

	api.KindSAdd: shInt, api.KindSRem: shInt, api.KindSMembers: shMembers, api.KindSIsMember: shInt,
	api.KindSMIsMember: shInts, api.KindSCard: shInt, api.KindSPop: shBytes, api.KindSRandMember: shBytes,
	api.KindSScan: shCollScan, api.KindSInter: shMembers, api.KindSUnion: shMembers, api.KindSDiff: shMembers,
	api.KindSInterStore: shInt, api.KindSUnionStore: shInt, api.KindSDiffStore: shInt, api.KindSMove: shInt,
	api.KindMSetNX: shInt, api.KindZUnion: shScored, api.KindZInter: shScored, api.KindZDiff: shScored,
	api.KindSetBit: shInt, api.KindGetBit: shInt, api.KindBitCount: shInt, api.KindBitPos: shInt, api.KindBitOp: shInt,
	api.KindCopy: shInt, api.KindHRandField: shBytes, api.KindZRandMember: shBytes,
	api.KindZUnionStore: shInt, api.KindZInterStore: shInt, api.KindZDiffStore: shInt, api.KindZRangeStore: shInt,

	api.KindZAdd: shInt, api.KindZRange: shScored, api.KindZCount: shInt, api.KindZRemRange: shInt,
	api.KindZRank: shRank, api.KindZRevRank: shRank, api.KindZScore: shFloat, api.KindZMScore: shValues,
	api.KindZIncrBy: shFloat, api.KindZRem: shInt, api.KindZCard: shInt, api.KindZPopMin: shScored,
	api.KindZPopMax: shScored, api.KindZScan: shCollScan,

	api.KindLPush: shInt, api.KindRPush: shInt, api.KindLPop: shBytes, api.KindRPop: shBytes,
	api.KindLRange: shMembers, api.KindLLen: shInt, api.KindLIndex: shBytes, api.KindLSet: shApplied,
	api.KindLTrim: shApplied, api.KindLRem: shInt, api.KindLInsert: shInt, api.KindLPos: shRank,
	api.KindLMove: shBytes,

	api.KindRowWrite: shApplied, api.KindRowWriteBatch: shRowBatch, api.KindRowReadBatch: shValues,

	api.KindPFAdd: shInt, api.KindPFCount: shInt, api.KindPFMerge: shApplied, api.KindPFDebug: shInt,

	api.KindFAppend: shInt, api.KindFReplace: shEmpty, api.KindFDelete: shInt, api.KindFQuery: shPoints,
	api.KindFQueryFiltered: shPoints, api.KindFAgg: shAggregate,
	api.KindSeqAdd: shEmpty, api.KindSeqQuery: shSeqRows, api.KindSeqBatchQuery: shSeqGroups,

	api.KindCIncr: shEmpty, api.KindCChange: shEmpty, api.KindCCount: shInt, api.KindCQuery: shInt,
	api.KindCDetail: shPoints, api.KindCSetAndGet: shInt, api.KindCFamilyQuery: shInt,
	api.KindCSelect: shEmpty, api.KindCSelection: shBytes, api.KindCTake: shQuota, api.KindCPace: shQuota,
	api.KindCManager: shEntries, api.KindCDebug: shEntries,
}

// HasShape reports whether the surface has a reply shape for engine kind
// k, so that it serves it.
func HasShape(k api.Kind) bool {
	_, ok := nativeShapes[k]
	return ok
}

// shapeOf is the response shape of engine command c.
func shapeOf(c *api.Command) shape {
	switch c.Kind {
	case api.KindSet:
		if c.ReturnOld {
			return shSetOld
		}
	case api.KindLPop, api.KindRPop, api.KindSPop, api.KindSRandMember:
		if c.HasCount {
			return shMembers
		}
	case api.KindHRandField:
		if c.HasCount {
			return shMembers // field, value pairs WithValues, as HGETALL's values
		}
	case api.KindZRandMember:
		if c.HasCount {
			return shScored
		}
	case api.KindLPos:
		if c.HasCount {
			return shInts
		}
	case api.KindPFDebug:
		switch strings.ToLower(c.Aggregator) {
		case "getreg":
			return shInts
		case "encoding", "decode":
			return shType
		}
	case api.KindZAdd:
		if c.ZAdd.Incr {
			return shFloat
		}
	case api.KindFAgg:
		if len(c.Aggregators) > 0 || !api.IsPlainAggregator(c.Aggregator) {
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
	cmd   api.Command
	shape shape
	// orig says the kind is one of the original's, whose error codes
	// differ (see statusOf).
	orig bool
	// unsupported says the kind is the original's but has no model here.
	unsupported bool
}

// write says the call writes (a read-only token cannot send it).
func (c *call) write() bool { return !c.unsupported && !api.IsReadKind(c.cmd.Kind) }

// translate turns a wire command into an engine command and the shape of
// its response. Errors wrap errBadRequest.
func translate(w *Command, namespace, table, tenant string) (call, error) {
	var cl call
	err := translateInto(&cl, w, namespace, table, tenant)
	return cl, err
}

// translateInto is translate writing into cl, which it overwrites whole: a
// call is some 860 bytes, and a batch's are written in place.
func translateInto(cl *call, w *Command, namespace, table, tenant string) error {
	*cl = call{kind: w.Kind}
	if w.Kind == "" {
		return badf("missing field `kind`")
	}
	if w.Tenant != "" {
		tenant = w.Tenant
	}
	for _, p := range unsupportedPrefixes {
		if strings.HasPrefix(w.Kind, p) {
			cl.unsupported, cl.orig = true, true
			return nil
		}
	}
	if err := checkDurations(w); err != nil {
		return err
	}
	var err error
	if orig, ok := originalKinds[w.Kind]; ok {
		cl.orig = true
		cl.cmd, cl.shape, err = orig(w)
	} else if _, ok := nativeShapes[api.Kind(w.Kind)]; ok {
		cl.cmd, err = nativeCommand(w)
		cl.shape = shapeOf(&cl.cmd)
	} else {
		return badf("unknown variant `%s`", w.Kind)
	}
	cl.cmd.Namespace, cl.cmd.Table, cl.cmd.Tenant = namespace, table, tenant
	return err
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
var originalKinds = map[string]func(w *Command) (api.Command, shape, error){
	"common_delete": origKey(api.KindDelete, shEmpty),
	"common_expire": func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("ttl_ms", w.TTLMs != nil)); err != nil {
			return api.Command{}, 0, err
		}
		if *w.TTLMs < 0 {
			return api.Command{}, 0, badf("ttl_ms must be an unsigned integer")
		}
		return api.Command{Kind: api.KindExpire, Key: w.Key, TTL: ms(*w.TTLMs)}, shOrigExpire, nil
	},
	"common_ttl":    origKey(api.KindPTTL, shInt),
	"common_exists": origKey(api.KindExists, shInt),
	"string_set": func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("value", w.Value != nil)); err != nil {
			return api.Command{}, 0, err
		}
		// The original's string_set keeps the key's TTL.
		return api.Command{Kind: api.KindSet, Key: w.Key, Value: w.Value, KeepTTL: true}, shEmpty, nil
	},
	"string_set_ex": func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("value", w.Value != nil), needField("ttl_ms", w.TTLMs != nil)); err != nil {
			return api.Command{}, 0, err
		}
		if *w.TTLMs <= 0 {
			return api.Command{}, 0, badf("ttl_ms must be a positive integer")
		}
		return api.Command{Kind: api.KindSet, Key: w.Key, Value: w.Value, TTL: ms(*w.TTLMs)}, shEmpty, nil
	},
	"string_set_conditional": func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("value", w.Value != nil), needField("condition", w.Condition != "")); err != nil {
			return api.Command{}, 0, err
		}
		cond, err := condition(w.Condition)
		if err != nil {
			return api.Command{}, 0, err
		}
		c := api.Command{Kind: api.KindSet, Key: w.Key, Value: w.Value, Cond: cond, ReturnOld: w.ReturnOld}
		if w.TTLMs != nil {
			if *w.TTLMs <= 0 {
				return api.Command{}, 0, badf("ttl_ms must be a positive integer")
			}
			c.TTL = ms(*w.TTLMs)
		}
		return c, shOrigCond, nil
	},
	"string_get":    origKey(api.KindGet, shBytes),
	"string_delete": origKey(api.KindDelete, shEmpty),
	"hash_set": func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("field", w.Field != nil), needField("value", w.Value != nil)); err != nil {
			return api.Command{}, 0, err
		}
		return api.Command{Kind: api.KindHSet, Key: w.Key, Args: [][]byte{w.Field, w.Value}}, shEmpty, nil
	},
	"hash_get": origField(api.KindHGet, shBytes),
	"hash_multi_get": func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("fields", w.Fields != nil)); err != nil {
			return api.Command{}, 0, err
		}
		if len(w.Fields) == 0 {
			return api.Command{Kind: api.KindHMGet, Key: w.Key}, shValues, nil
		}
		return api.Command{Kind: api.KindHMGet, Key: w.Key, Args: texts(w.Fields)}, shValues, nil
	},
	"hash_multi_set": func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("entries", w.Entries != nil)); err != nil {
			return api.Command{}, 0, err
		}
		args := make([][]byte, 0, 2*len(w.Entries))
		for _, e := range w.Entries {
			args = append(args, e.Field, nonNil(e.Value))
		}
		return api.Command{Kind: api.KindHSet, Key: w.Key, Args: args}, shEmpty, nil
	},
	"hash_incr_by": func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("field", w.Field != nil), needField("increment", w.Increment != nil)); err != nil {
			return api.Command{}, 0, err
		}
		return api.Command{Kind: api.KindHIncrBy, Key: w.Key, Args: [][]byte{w.Field}, Delta: *w.Increment}, shInt, nil
	},
	"hash_get_all": origKey(api.KindHGetAll, shEntries),
	"hash_len":     origKey(api.KindHLen, shInt),
	"hash_delete":  origField(api.KindHDel, shEmpty),
	"set_add":      origMember(api.KindSAdd),
	"set_members":  origKey(api.KindSMembers, shMembers),
	"set_remove":   origMember(api.KindSRem),

	"feature_append": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindFAppend, true, false)
		return c, shEmpty, err
	},
	"feature_append_with_policy": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindFAppend, true, false)
		if err == nil {
			err = needField("policy", w.Policy != "")
		}
		if err == nil {
			c.Policy, err = policy(w.Policy)
		}
		return c, shInt, err
	},
	"feature_query": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindFQuery, false, true)
		return c, shPoints, err
	},
	"feature_query_filtered": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindFQueryFiltered, false, true)
		if err == nil {
			err = needField("filters", w.Filters != nil)
		}
		if err == nil {
			c.Filters, err = filters(w.Filters)
		}
		return c, shPoints, err
	},
	"feature_replace": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindFReplace, true, true)
		return c, shEmpty, err
	},
	"feature_delete": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindFDelete, false, false)
		return c, shEmpty, err
	},
	"feature_agg_query": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindFAgg, false, true)
		if err == nil {
			err = needField("aggregator", w.Aggregator != "")
		}
		c.Aggregator = w.Aggregator
		return c, shAggregate, err
	},
	"control_state_increment":              origControl(api.KindCIncr, shEmpty, false, false),
	"control_state_increment_with_options": origControl(api.KindCIncr, shEmpty, false, false),
	"control_state_change_add": func(w *Command) (api.Command, shape, error) {
		c, sh, err := origControl(api.KindCChange, shEmpty, false, false)(w)
		if err == nil {
			err = needField("value", w.Value != nil)
		}
		c.Value = nonNil(w.Value)
		return c, sh, err
	},
	"control_state_count": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindCCount, false, true)
		return c, shInt, err
	},
	"control_state_query": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindCQuery, false, true)
		c.Aggregator = w.Aggregator
		return c, shInt, err
	},
	"control_state_detail": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindCDetail, false, true)
		return c, shPoints, err
	},
	"control_state_set":                      origControl(api.KindCSetAndGet, shEmpty, true, false),
	"control_state_set_and_get":              origControl(api.KindCSetAndGet, shInt, true, true),
	"control_state_set_and_get_with_options": origControl(api.KindCSetAndGet, shInt, true, true),
	"control_state_family_query": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindCFamilyQuery, false, true)
		if err == nil {
			err = needField("family", w.Family != "")
		}
		c.Family, c.Aggregator = w.Family, w.Aggregator
		return c, shInt, err
	},
	"control_state_manager": func(w *Command) (api.Command, shape, error) {
		if err := needKey(w); err != nil {
			return api.Command{}, 0, err
		}
		c := api.Command{Kind: api.KindCManager, Key: w.Key, Start: w.StartOffset, End: w.EndOffset}
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
	"control_state_debug": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindCDebug, false, true)
		return c, shEntries, err
	},
	"control_state_selection_set":   origSelect,
	"control_state_fol_set":         origSelect,
	"control_state_selection_query": origKey(api.KindCSelection, shBytes),
	"control_state_fol_query":       origKey(api.KindCSelection, shBytes),
	"sequence_add": func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("rows", w.Rows != nil)); err != nil {
			return api.Command{}, 0, err
		}
		c := api.Command{Kind: api.KindSeqAdd, Key: w.Key, SeqRows: make([]api.SeqRow, len(w.Rows))}
		for i, r := range w.Rows {
			if r.TimestampMs == nil {
				return c, 0, badf("rows[%d]: missing field `timestamp_ms`", i)
			}
			c.SeqRows[i] = api.SeqRow{TimestampMs: *r.TimestampMs, GID: r.GID, ActionType: r.ActionType, Duration: r.Duration, AuthorID: r.AuthorID}
		}
		return c, shEmpty, nil
	},
	"sequence_query": func(w *Command) (api.Command, shape, error) {
		c, err := origFeature(w, api.KindSeqQuery, false, true)
		if err == nil {
			err = needField("count", w.Count != nil)
		}
		if err == nil {
			c.Filters, err = filters(w.Filters)
		}
		return c, shSeqRows, err
	},
	"sequence_batch_query": func(w *Command) (api.Command, shape, error) {
		if err := needField("queries", w.Queries != nil); err != nil {
			return api.Command{}, 0, err
		}
		c := api.Command{Kind: api.KindSeqBatchQuery}
		var err error
		c.SeqQueries, err = seqQueries(w.Queries)
		return c, shSeqGroups, err
	},
}

// origControl translates the original's control state writes: key,
// timestamp_ms and amount (family when withFamily; start_ms, end_ms and
// aggregator when withWindow), and the options precision_ms, ttl_ms and
// uuid.
func origControl(k api.Kind, sh shape, withFamily, withWindow bool) func(w *Command) (api.Command, shape, error) {
	return func(w *Command) (api.Command, shape, error) {
		c := api.Command{Kind: k, Key: w.Key, Family: w.Family, RequestID: w.UUID, Aggregator: w.Aggregator}
		errs := []error{needKey(w), needField("timestamp_ms", w.TimestampMs != nil)}
		if k != api.KindCChange {
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

func origSelect(w *Command) (api.Command, shape, error) {
	if err := errors.Join(needKey(w), needField("value", w.Value != nil), needField("occur_time_ms", w.OccurTimeMs != nil)); err != nil {
		return api.Command{}, 0, err
	}
	c := api.Command{Kind: api.KindCSelect, Key: w.Key, Value: nonNil(w.Value), At: *w.OccurTimeMs}
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

func seqQueries(qs []SeqQuery) ([]api.SeqQuery, error) {
	if qs == nil {
		return nil, nil
	}
	out := make([]api.SeqQuery, len(qs))
	for i, q := range qs {
		fs, err := filters(q.Filters)
		if err != nil {
			return nil, err
		}
		out[i] = api.SeqQuery{Key: nonNil(q.Key), Start: q.StartMs, End: q.EndMs, Count: q.Count, Filters: fs}
	}
	return out, nil
}

// origFeature translates the fields the original's feature kinds share:
// key, points (when withPoints), start_ms and end_ms (when withWindow),
// and the optional count.
func origFeature(w *Command, k api.Kind, withPoints, withWindow bool) (api.Command, error) {
	c := api.Command{Kind: k, Key: w.Key}
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

func points(ps []Point) []api.Point {
	if ps == nil {
		return nil
	}
	out := make([]api.Point, len(ps))
	for i, p := range ps {
		out[i] = api.Point{TS: p.TimestampMs, Value: nonNil(p.Value)}
	}
	return out
}

func policy(s string) (api.WritePolicy, error) {
	if s == "" {
		return api.PolicyUpsert, nil
	}
	p, ok := api.ParseWritePolicy(s)
	if !ok {
		return 0, badf("unknown variant `%s` of policy", s)
	}
	return p, nil
}

func filters(fs []Filter) ([]api.Filter, error) {
	if fs == nil {
		return nil, nil
	}
	out := make([]api.Filter, len(fs))
	for i, f := range fs {
		op, ok := api.ParseFilterOp(f.Op)
		if !ok {
			return nil, badf("unknown variant `%s` of filters[%d].op", f.Op, i)
		}
		out[i] = api.Filter{Field: f.Field, Op: op, Value: f.Value}
	}
	return out, nil
}

func origKey(k api.Kind, sh shape) func(w *Command) (api.Command, shape, error) {
	return func(w *Command) (api.Command, shape, error) {
		if err := needKey(w); err != nil {
			return api.Command{}, 0, err
		}
		return api.Command{Kind: k, Key: w.Key}, sh, nil
	}
}

func origField(k api.Kind, sh shape) func(w *Command) (api.Command, shape, error) {
	return func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("field", w.Field != nil)); err != nil {
			return api.Command{}, 0, err
		}
		return api.Command{Kind: k, Key: w.Key, Args: [][]byte{w.Field}}, sh, nil
	}
}

func origMember(k api.Kind) func(w *Command) (api.Command, shape, error) {
	return func(w *Command) (api.Command, shape, error) {
		if err := errors.Join(needKey(w), needField("member", w.Member != nil)); err != nil {
			return api.Command{}, 0, err
		}
		return api.Command{Kind: k, Key: w.Key, Args: [][]byte{w.Member}}, shEmpty, nil
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

func condition(s string) (api.Cond, error) {
	switch strings.ToLower(s) {
	case "", "always":
		return api.Always, nil
	case "if_not_exists", "nx":
		return api.IfAbsent, nil
	case "if_exists", "xx":
		return api.IfPresent, nil
	}
	return 0, badf("unknown variant `%s`, expected one of `always`, `if_exists`, `if_not_exists`", s)
}

// expireConds are ExpireIf's names, in the order FromEngine writes them.
var expireConds = []struct {
	name string
	cond api.ExpireCond
}{{"nx", api.ExpireIfNone}, {"xx", api.ExpireIfSet}, {"gt", api.ExpireIfLater}, {"lt", api.ExpireIfEarlier}}

func expireIf(names []string) (api.ExpireCond, error) {
	var ec api.ExpireCond
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
func nativeCommand(w *Command) (api.Command, error) {
	c := api.Command{
		Kind: api.Kind(w.Kind), Key: w.Key, Value: w.Value, KeepTTL: w.KeepTTL, ReturnOld: w.ReturnOld,
		Delta: w.Delta, Float: float64(w.Float), Start: w.Start, End: w.End, Cursor: w.Cursor,
		FromLeft: w.FromLeft, ToLeft: w.ToLeft, Before: w.Before, Rank: w.Rank, MaxLen: w.MaxLen,
		Persist: w.Persist, TSField: w.TSField, Replace: w.Replace, WithValues: w.WithValues,
		Suffix: w.Suffix,
	}
	if w.TSFormat != "ms" {
		c.TSFormat = api.TSFormat(w.TSFormat)
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
		c.SeqRows = append(c.SeqRows, api.SeqRow(r))
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
		c.ZAdd = api.ZAddFlags(*w.ZAdd)
	}
	if w.Range != nil {
		if c.Range, err = engineRange(w.Range); err != nil {
			return c, err
		}
	}
	if w.Bits != nil {
		c.Bits = &api.BitRange{Start: w.Bits.Start, Bit: w.Bits.Bit}
		if w.Bits.End != nil {
			c.Bits.End, c.Bits.HasEnd = *w.Bits.End, true
		}
	}
	if w.ExpireAtMs != nil {
		c.ExpireAt = time.UnixMilli(*w.ExpireAtMs)
	}
	switch {
	case w.EventTimeMs != nil && w.EventTimeNs != nil:
		return c, badf("give event_time_ms or event_time_ns, not both")
	case w.EventTimeMs != nil:
		c.EventTime = time.UnixMilli(*w.EventTimeMs)
	case w.EventTimeNs != nil:
		c.EventTime = time.Unix(0, *w.EventTimeNs)
	}
	for _, r := range w.Rows {
		// A row without an event time keeps the zero time, which the
		// engine refuses, rather than being stamped at the epoch.
		row := api.Row{Key: r.Key}
		switch {
		case r.EventTimeNs != 0:
			row.EventTime = time.Unix(0, r.EventTimeNs)
		case r.EventTimeMs != 0:
			row.EventTime = time.UnixMilli(r.EventTimeMs)
		}
		for _, a := range r.Args {
			row.Args = append(row.Args, nonNil(a))
		}
		c.Rows = append(c.Rows, row)
	}
	return c, nil
}

func engineRange(r *Range) (api.ZRange, error) {
	zr := api.ZRange{Start: r.Start, Stop: r.Stop, Rev: r.Rev, WithScores: r.WithScores}
	switch r.By {
	case "", "rank":
		zr.By = api.ByRank
	case "score":
		zr.By = api.ByScore
		if r.Min == nil || r.Max == nil {
			return zr, badf("a score range needs min and max")
		}
		zr.Min, zr.Max = api.ScoreBound(*r.Min), api.ScoreBound(*r.Max)
	case "lex":
		zr.By = api.ByLex
		var err error
		if zr.LexMin, err = api.ParseLexBound(string(r.LexMin)); err != nil {
			return zr, badf("lex_min: %v", err)
		}
		if zr.LexMax, err = api.ParseLexBound(string(r.LexMax)); err != nil {
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
func FromEngine(c api.Command) Command {
	w := Command{
		Kind: string(c.Kind), Key: Text(c.Key), Value: Bytes(c.Value), KeepTTL: c.KeepTTL,
		ReturnOld: c.ReturnOld, Delta: c.Delta, Float: Float(c.Float), Start: c.Start, End: c.End,
		Cursor: c.Cursor, FromLeft: c.FromLeft, ToLeft: c.ToLeft, Before: c.Before, Rank: c.Rank,
		MaxLen: c.MaxLen, Persist: c.Persist, TSField: c.TSField, Dest: Text(c.Dest),
		Replace: c.Replace, WithValues: c.WithValues, TSFormat: string(c.TSFormat), Suffix: Bytes(c.Suffix),
	}
	switch c.Cond {
	case api.IfAbsent:
		w.Condition = "nx"
	case api.IfPresent:
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
	if c.ZAdd != (api.ZAddFlags{}) {
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
		if ms, ns := wireTime(c.EventTime); ns != 0 {
			w.EventTimeNs = &ns
		} else {
			w.EventTimeMs = &ms
		}
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
		row := Row{Key: Text(r.Key)}
		row.EventTimeMs, row.EventTimeNs = wireTime(r.EventTime)
		for _, a := range r.Args {
			row.Args = append(row.Args, Bytes(nonNil(a)))
		}
		w.Rows = append(w.Rows, row)
	}
	return w
}

// wireTime is an event time as the wire carries it: milliseconds, or
// nanoseconds (and ms 0) where milliseconds would lose some.
func wireTime(t time.Time) (ms, ns int64) {
	if ns := t.UnixNano(); ns%1e6 != 0 {
		return 0, ns
	}
	return t.UnixMilli(), 0
}

func zeroRange(r api.ZRange) bool {
	return r.By == api.ByRank && r.Start == 0 && r.Stop == 0 && !r.Rev && !r.HasLimit && !r.WithScores &&
		r.Offset == 0 && r.Limit == 0 && r.Min == (api.ScoreBound{}) && r.Max == (api.ScoreBound{}) &&
		r.LexMin.Value == nil && r.LexMax.Value == nil && r.LexMin.Inf == 0 && r.LexMax.Inf == 0
}

func wireRange(zr api.ZRange) *Range {
	r := &Range{Start: zr.Start, Stop: zr.Stop, Rev: zr.Rev, WithScores: zr.WithScores}
	switch zr.By {
	case api.ByScore:
		r.By = "score"
		lo, hi := ScoreBound(zr.Min), ScoreBound(zr.Max)
		r.Min, r.Max = &lo, &hi
	case api.ByLex:
		r.By, r.LexMin, r.LexMax = "lex", lexText(zr.LexMin), lexText(zr.LexMax)
	}
	if zr.HasLimit {
		r.Limit = &Limit{Offset: zr.Offset, Count: zr.Limit}
	}
	return r
}

func lexText(b api.LexBound) Text {
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
	policyNames   = map[api.WritePolicy]string{api.PolicyInsertIfAbsent: "insert_if_absent", api.PolicyReplaceExisting: "replace_existing", api.PolicyBlock: "block"}
	filterOpNames = map[api.FilterOp]string{
		api.FilterEqual: "equal", api.FilterNotEqual: "not_equal", api.FilterGreater: "greater_than",
		api.FilterGreaterOrEqual: "greater_or_equal", api.FilterLess: "less_than", api.FilterLessOrEqual: "less_or_equal",
	}
)

func wireFilters(fs []api.Filter) []Filter {
	var out []Filter
	for _, f := range fs {
		out = append(out, Filter{Field: f.Field, Op: filterOpNames[f.Op], Value: f.Value})
	}
	return out
}
