package api

import (
	"strconv"
	"time"
)

// Kind names a command.
type Kind string

// Command kinds the engine executes so far, with Redis's semantics.
const (
	// KindSet stores Value under Key (SET). TTL sets an expiry; KeepTTL
	// keeps the key's; neither removes it. Cond NX/XX makes it conditional
	// (Response.Applied says whether it wrote); ReturnOld returns the old
	// value in Value/Found (SET … GET).
	KindSet Kind = "set"
	// KindGet reads Key (GET).
	KindGet Kind = "get"
	// KindDelete removes Key (DEL); Response.Int is 1 if it existed.
	KindDelete Kind = "delete"
	// KindGetDel reads and removes Key (GETDEL).
	KindGetDel Kind = "get_del"
	// KindIncrBy adds Delta to the integer at Key (INCRBY; 0 when absent),
	// keeping its TTL; the result is in Response.Int.
	KindIncrBy Kind = "incr_by"
	// KindIncrByFloat adds Float to the number at Key (INCRBYFLOAT); the
	// result is in Value.
	KindIncrByFloat Kind = "incr_by_float"
	// KindAppend appends Value (APPEND); the new length is in Response.Int.
	KindAppend Kind = "append"
	// KindStrLen returns the value's length in Response.Int (STRLEN).
	KindStrLen Kind = "strlen"
	// KindGetRange returns bytes Start..End inclusive, negative counting
	// from the end (GETRANGE).
	KindGetRange Kind = "get_range"
	// KindSetRange writes Value at byte Start, zero-padding (SETRANGE);
	// the new length is in Response.Int.
	KindSetRange Kind = "set_range"
	// KindExists reports in Response.Int whether Key exists (EXISTS).
	KindExists Kind = "exists"
	// KindPTTL returns the remaining TTL in ms in Response.Int: -2 when
	// the key is absent, -1 when it has no expiry (PTTL).
	KindPTTL Kind = "pttl"
	// KindExpire sets the key's TTL (PEXPIRE); a TTL of zero or less
	// deletes it. Response.Int is 1 if the key existed and ExpireCond let
	// the expiry be set.
	KindExpire Kind = "expire"
	// KindPersist removes the key's TTL (PERSIST); Response.Int is 1 if
	// there was one.
	KindPersist Kind = "persist"
	// KindType returns "string" or "none" in Value (TYPE).
	KindType Kind = "type"
	// KindScan returns up to about Count live keys of the table from
	// Cursor (0 to start) in Keys, and the cursor to continue from (0 when
	// done) in Cursor (SCAN). Key is not used. With Suffix, Count is the
	// keys looked at, as SCAN's COUNT with MATCH, and only those ending
	// with Suffix are returned.
	KindScan Kind = "scan"
)

// DefaultScanCount is KindScan's count when Command.Count is 0, as Redis's.
const DefaultScanCount = 10

// Cond makes a KindSet conditional.
type Cond uint8

// Conditions.
const (
	// Always writes.
	Always Cond = iota
	// IfAbsent writes only if the key does not exist (NX).
	IfAbsent
	// IfPresent writes only if the key exists (XX).
	IfPresent
)

// ExpireCond makes a KindExpire conditional on the key's current expiry,
// as the NX, XX, GT and LT options of Redis's EXPIRE: a set of conditions,
// all of which must hold (zero: none). A key without an expiry counts as
// expiring never: GT never holds for it, LT always does.
type ExpireCond uint8

// Expiry conditions.
const (
	// ExpireIfNone: the key has no expiry (NX).
	ExpireIfNone ExpireCond = 1 << iota
	// ExpireIfSet: the key has an expiry (XX).
	ExpireIfSet
	// ExpireIfLater: the new expiry is later than the key's (GT).
	ExpireIfLater
	// ExpireIfEarlier: the new expiry is earlier than the key's (LT).
	ExpireIfEarlier
)

// Command is one request to the engine, addressed to a table (the default
// table when Namespace and Table are empty).
type Command struct {
	Namespace string
	Table     string
	// Tenant names who sends the command, for the engine's Options.TenantQPS.
	Tenant    string
	Kind      Kind
	Key       []byte
	Value     []byte
	TTL       time.Duration
	KeepTTL   bool
	Cond      Cond
	ReturnOld bool
	// Delta is KindIncrBy's increment, Float KindIncrByFloat's and
	// KindHIncrByFloat's. Value, when set for those two, is their increment
	// as text instead: the sum is then computed from the digits, as Redis
	// computes it.
	Delta int64
	Float float64
	// Start and End are KindGetRange's bounds; Start is KindSetRange's
	// offset.
	Start, End int64
	// Cursor and Count are the scans' (KindScan, KindHScan, ...). Count is
	// also the count of the pops, SRANDMEMBER, LREM and LPOS, when
	// HasCount is set (a pop without it returns one element, not a list).
	Cursor   uint64
	Count    int
	HasCount bool
	// Keys are a multi-key kind's keys (MGET, MSET, DEL, EXISTS, SINTER,
	// ...); Key is then not used.
	Keys [][]byte
	// Args are a kind's elements: fields, field/value pairs, members,
	// MSET's values (one per key).
	Args [][]byte
	// Scores are KindZAdd's scores, one per member in Args.
	Scores []float64
	// ZAdd holds KindZAdd's flags.
	ZAdd ZAddFlags
	// Range is the sorted-set range of KindZRange, KindZCount and
	// KindZRemRange.
	Range ZRange
	// Dest is the destination key of KindRename and KindLMove; it must be
	// on the same shard as Key (a shared {hash tag} ensures it).
	Dest []byte
	// FromLeft and ToLeft are KindLMove's ends; Before is KindLInsert's
	// side.
	FromLeft, ToLeft, Before bool
	// Rank and MaxLen are KindLPos's options (Rank 0 means 1).
	Rank, MaxLen int64
	// ExpireAt is an absolute expiry for KindSet, KindExpire and
	// KindGetEx, used instead of TTL when set. Persist makes KindGetEx remove the TTL.
	ExpireAt time.Time
	Persist  bool
	// ExpireCond makes KindExpire conditional (NX, XX, GT, LT).
	ExpireCond ExpireCond
	// Replace lets KindCopy overwrite an existing destination.
	// WithValues adds the values (KindHRandField) or scores
	// (KindZRandMember) to a random read with a count.
	Replace, WithValues bool
	// Bits is KindBitCount's and KindBitPos's range (nil: the string).
	Bits *BitRange
	// EventTime is KindRowWrite's event time; TSField the hash field that
	// stores it (default DefaultTSField) in TSFormat; Rows are
	// KindRowWriteBatch's.
	EventTime time.Time
	TSField   string
	TSFormat  TSFormat
	Rows      []Row
	// Suffix, when set, limits KindScan to the keys that end with it
	// (byte for byte, no pattern): one project's Feast rows, say.
	Suffix []byte
	// Points are a feature write's points (KindFAppend, KindFReplace),
	// under Policy (KindFAppend). Start and End are a feature window's
	// bounds, in Unix ms; Filters KindFQueryFiltered's and Aggregator
	// KindFAgg's.
	Points     []Point
	Policy     WritePolicy
	Filters    []Filter
	Aggregator string
	// MaxAge is a feature write's age retention for its key (overriding
	// the table's TableOptions.FeatureMaxAge): points older than now − MaxAge go.
	MaxAge time.Duration
	// Aggregators are KindFAgg's several aggregators over one read (see
	// Aggregate); each result is in Response.Aggregates.
	Aggregators []string
	// SeqRows are KindSeqAdd's rows; SeqQueries KindSeqBatchQuery's
	// windows (KindSeqQuery uses Key, Start, End, Count and Filters).
	SeqRows    []SeqRow
	SeqQueries []SeqQuery
	// At is a control state write's time (Unix ms), bucketed by
	// PrecisionMs (0: the exact time); Family names a family kind's state
	// (h, cpc, fol); RequestID makes KindCSetAndGet idempotent;
	// SelectLast is KindCSelect's kind; Limit and Window are KindCTake's
	// quota. Delta is the amount, Value a change or selection's value.
	At          int64
	PrecisionMs int64
	Family      string
	RequestID   string
	SelectLast  bool
	Limit       int64
	Window      time.Duration
	// Into, when set, is memory the caller lends a window read
	// (KindFQuery): Response.Points and their values are put in it instead
	// of fresh allocations, and stay valid until its next use.
	Into *PointBuffer
}

// Response is what a command returns.
type Response struct {
	// Value and Found are a read's value.
	Value []byte
	Found bool
	// Int is an integer reply.
	Int int64
	// Applied says whether a conditional write wrote.
	Applied bool
	// Keys and Cursor are a scan's page and where to continue.
	Keys   [][]byte
	Cursor uint64
	// Values is an array reply (MGET, HGETALL as field, value, ...); a nil
	// element is a missing value, an empty value is a non-nil empty slice.
	Values [][]byte
	// Scores are the scores of Values' members when a sorted-set kind
	// returns them.
	Scores []float64
	// Ints is an array of integers (SMISMEMBER, LPOS with a count).
	Ints []int64
	// Points are a feature read's points, ascending.
	Points []Point
	// Aggregates are KindFAgg's results, one per aggregator asked (with
	// Aggregators, or an aggregator beyond the original's).
	Aggregates []Aggregate
	// SeqRows are a sequence read's rows, ascending; SeqGroups a batch
	// query's, one group per query.
	SeqRows   []SeqRow
	SeqGroups []SeqGroup
	// RetryAfter is when a refused KindCTake could succeed.
	RetryAfter time.Duration
	// Float is a score reply (ZSCORE, ZINCRBY), also formatted in Value.
	Float float64
}

// ParseInt reads a stored integer as Redis does: an optional '-', then
// decimal digits without a leading zero (or just "0"), within int64. "+1",
// "01", "-0" and " 1" are not integers.
func ParseInt(b []byte) (int64, error) {
	d := b
	if len(d) > 0 && d[0] == '-' {
		d = d[1:]
	}
	if len(d) == 0 || len(d) > 19 || d[0] < '0' || d[0] > '9' || d[0] == '0' && (len(d) > 1 || len(b) > 1) {
		return 0, ErrNotInteger
	}
	n, err := strconv.ParseInt(string(b), 10, 64)
	if err != nil {
		return 0, ErrNotInteger
	}
	return n, nil
}
