package temporalstore

import "github.com/temporalstore/temporalstore-go/temporalstore/api"

// The engine's request and reply values, its command kinds and its errors
// are declared in package api, which a client imports without the engine;
// these names are the same types and values, so code written against the
// engine needs no second import. Package api documents each one.

// Requests and replies.
type (
	Aggregate   = api.Aggregate
	TopValue    = api.TopValue
	BitRange    = api.BitRange
	Kind        = api.Kind
	Cond        = api.Cond
	ExpireCond  = api.ExpireCond
	Command     = api.Command
	Response    = api.Response
	Row         = api.Row
	TSFormat    = api.TSFormat
	Point       = api.Point
	WritePolicy = api.WritePolicy
	FilterOp    = api.FilterOp
	Filter      = api.Filter
	PointBuffer = api.PointBuffer
	SeqRow      = api.SeqRow
	SeqQuery    = api.SeqQuery
	SeqGroup    = api.SeqGroup
	ZAddFlags   = api.ZAddFlags
	ZRangeBy    = api.ZRangeBy
	ScoreBound  = api.ScoreBound
	LexBound    = api.LexBound
	ZRange      = api.ZRange
)

// Command kinds.
const (
	// Bit kinds (on strings).
	KindSetBit   = api.KindSetBit
	KindGetBit   = api.KindGetBit
	KindBitCount = api.KindBitCount
	KindBitPos   = api.KindBitPos
	KindBitOp    = api.KindBitOp

	// Control-state kinds.
	KindCIncr        = api.KindCIncr
	KindCChange      = api.KindCChange
	KindCCount       = api.KindCCount
	KindCQuery       = api.KindCQuery
	KindCDetail      = api.KindCDetail
	KindCSetAndGet   = api.KindCSetAndGet
	KindCFamilyQuery = api.KindCFamilyQuery
	KindCSelect      = api.KindCSelect
	KindCSelection   = api.KindCSelection
	KindCTake        = api.KindCTake
	KindCPace        = api.KindCPace
	KindCManager     = api.KindCManager
	KindCDebug       = api.KindCDebug

	// Copy and random-read kinds.
	KindCopy        = api.KindCopy
	KindHRandField  = api.KindHRandField
	KindZRandMember = api.KindZRandMember

	// String and key kinds.
	KindSet         = api.KindSet
	KindGet         = api.KindGet
	KindDelete      = api.KindDelete
	KindGetDel      = api.KindGetDel
	KindIncrBy      = api.KindIncrBy
	KindIncrByFloat = api.KindIncrByFloat
	KindAppend      = api.KindAppend
	KindStrLen      = api.KindStrLen
	KindGetRange    = api.KindGetRange
	KindSetRange    = api.KindSetRange
	KindExists      = api.KindExists
	KindPTTL        = api.KindPTTL
	KindExpire      = api.KindExpire
	KindPersist     = api.KindPersist
	KindType        = api.KindType
	KindScan        = api.KindScan

	// Feature-row kinds.
	KindRowWrite      = api.KindRowWrite
	KindRowWriteBatch = api.KindRowWriteBatch
	KindRowReadBatch  = api.KindRowReadBatch

	// Feature-series kinds.
	KindFAppend        = api.KindFAppend
	KindFQuery         = api.KindFQuery
	KindFQueryFiltered = api.KindFQueryFiltered
	KindFReplace       = api.KindFReplace
	KindFDelete        = api.KindFDelete
	KindFAgg           = api.KindFAgg

	// Grouped kinds.
	KindSMove       = api.KindSMove
	KindSInterStore = api.KindSInterStore
	KindSUnionStore = api.KindSUnionStore
	KindSDiffStore  = api.KindSDiffStore
	KindMSetNX      = api.KindMSetNX

	// Hash kinds.
	KindHSet         = api.KindHSet
	KindHSetNX       = api.KindHSetNX
	KindHGet         = api.KindHGet
	KindHMGet        = api.KindHMGet
	KindHGetAll      = api.KindHGetAll
	KindHDel         = api.KindHDel
	KindHIncrBy      = api.KindHIncrBy
	KindHIncrByFloat = api.KindHIncrByFloat
	KindHLen         = api.KindHLen
	KindHExists      = api.KindHExists
	KindHStrLen      = api.KindHStrLen
	KindHKeys        = api.KindHKeys
	KindHVals        = api.KindHVals
	KindHScan        = api.KindHScan

	// HyperLogLog kinds.
	KindPFAdd   = api.KindPFAdd
	KindPFCount = api.KindPFCount
	KindPFMerge = api.KindPFMerge
	KindPFDebug = api.KindPFDebug

	// Key kinds.
	KindExistsKeys = api.KindExistsKeys
	KindDeleteKeys = api.KindDeleteKeys
	KindMGet       = api.KindMGet
	KindMSet       = api.KindMSet
	KindGetEx      = api.KindGetEx
	KindExpireTime = api.KindExpireTime
	KindRename     = api.KindRename

	// List kinds.
	KindLPush   = api.KindLPush
	KindRPush   = api.KindRPush
	KindLPop    = api.KindLPop
	KindRPop    = api.KindRPop
	KindLRange  = api.KindLRange
	KindLLen    = api.KindLLen
	KindLIndex  = api.KindLIndex
	KindLSet    = api.KindLSet
	KindLTrim   = api.KindLTrim
	KindLRem    = api.KindLRem
	KindLInsert = api.KindLInsert
	KindLPos    = api.KindLPos
	KindLMove   = api.KindLMove

	// Sequence kinds.
	KindSeqAdd        = api.KindSeqAdd
	KindSeqQuery      = api.KindSeqQuery
	KindSeqBatchQuery = api.KindSeqBatchQuery

	// Set kinds.
	KindSAdd        = api.KindSAdd
	KindSRem        = api.KindSRem
	KindSMembers    = api.KindSMembers
	KindSIsMember   = api.KindSIsMember
	KindSMIsMember  = api.KindSMIsMember
	KindSCard       = api.KindSCard
	KindSPop        = api.KindSPop
	KindSRandMember = api.KindSRandMember
	KindSScan       = api.KindSScan
	KindSInter      = api.KindSInter
	KindSUnion      = api.KindSUnion
	KindSDiff       = api.KindSDiff

	// Sorted-set algebra kinds.
	KindZUnion      = api.KindZUnion
	KindZInter      = api.KindZInter
	KindZDiff       = api.KindZDiff
	KindZUnionStore = api.KindZUnionStore
	KindZInterStore = api.KindZInterStore
	KindZDiffStore  = api.KindZDiffStore
	KindZRangeStore = api.KindZRangeStore

	// Sorted-set kinds.
	KindZAdd      = api.KindZAdd
	KindZRange    = api.KindZRange
	KindZCount    = api.KindZCount
	KindZRemRange = api.KindZRemRange
	KindZRank     = api.KindZRank
	KindZRevRank  = api.KindZRevRank
	KindZScore    = api.KindZScore
	KindZMScore   = api.KindZMScore
	KindZIncrBy   = api.KindZIncrBy
	KindZRem      = api.KindZRem
	KindZCard     = api.KindZCard
	KindZPopMin   = api.KindZPopMin
	KindZPopMax   = api.KindZPopMax
	KindZScan     = api.KindZScan
)

// Options of the kinds.
const (
	Always                = api.Always
	IfAbsent              = api.IfAbsent
	IfPresent             = api.IfPresent
	ExpireIfNone          = api.ExpireIfNone
	ExpireIfSet           = api.ExpireIfSet
	ExpireIfLater         = api.ExpireIfLater
	ExpireIfEarlier       = api.ExpireIfEarlier
	DefaultScanCount      = api.DefaultScanCount
	DefaultTSField        = api.DefaultTSField
	TSMillis              = api.TSMillis
	TSNanos               = api.TSNanos
	TSProto               = api.TSProto
	PolicyUpsert          = api.PolicyUpsert
	PolicyInsertIfAbsent  = api.PolicyInsertIfAbsent
	PolicyReplaceExisting = api.PolicyReplaceExisting
	PolicyBlock           = api.PolicyBlock
	FilterEqual           = api.FilterEqual
	FilterNotEqual        = api.FilterNotEqual
	FilterGreater         = api.FilterGreater
	FilterGreaterOrEqual  = api.FilterGreaterOrEqual
	FilterLess            = api.FilterLess
	FilterLessOrEqual     = api.FilterLessOrEqual
	ByRank                = api.ByRank
	ByScore               = api.ByScore
	ByLex                 = api.ByLex
)

// Errors a command can return. Match them with errors.Is.
var (
	ErrReadQPS        = api.ErrReadQPS
	ErrWriteQPS       = api.ErrWriteQPS
	ErrTenantQPS      = api.ErrTenantQPS
	ErrShardRate      = api.ErrShardRate
	ErrReadOnly       = api.ErrReadOnly
	ErrClosed         = api.ErrClosed
	ErrNoTable        = api.ErrNoTable
	ErrTableExists    = api.ErrTableExists
	ErrInvalid        = api.ErrInvalid
	ErrUnknownKind    = api.ErrUnknownKind
	ErrNotInteger     = api.ErrNotInteger
	ErrNotFloat       = api.ErrNotFloat
	ErrOverflow       = api.ErrOverflow
	ErrTooLarge       = api.ErrTooLarge
	ErrWrongType      = api.ErrWrongType
	ErrCrossShard     = api.ErrCrossShard
	ErrNoSuchKey      = api.ErrNoSuchKey
	ErrOutOfRange     = api.ErrOutOfRange
	ErrSeriesTooLarge = api.ErrSeriesTooLarge
	ErrNotHLL         = api.ErrNotHLL
	ErrCorruptHLL     = api.ErrCorruptHLL
	ErrInternal       = api.ErrInternal
	ErrNotLeader      = api.ErrNotLeader
	ErrUnknownOutcome = api.ErrUnknownOutcome
	ErrStorageFault   = api.ErrStorageFault
	ErrDiskFull       = api.ErrDiskFull
)

// IsReadKind reports whether kind only reads ([api.IsReadKind]).
func IsReadKind(kind Kind) bool { return api.IsReadKind(kind) }

// ParseInt reads a base-10 64-bit integer as Redis does ([api.ParseInt]).
func ParseInt(b []byte) (int64, error) { return api.ParseInt(b) }

// ParseFamily reads a control family's name ([api.ParseFamily]).
func ParseFamily(s string) (string, bool) { return api.ParseFamily(s) }

// ParseWritePolicy reads a feature write policy ([api.ParseWritePolicy]).
func ParseWritePolicy(s string) (WritePolicy, bool) { return api.ParseWritePolicy(s) }

// ParseFilterOp reads a filter operator ([api.ParseFilterOp]).
func ParseFilterOp(s string) (FilterOp, bool) { return api.ParseFilterOp(s) }

// IsPlainAggregator reports whether name is one of the original
// aggregators ([api.IsPlainAggregator]).
func IsPlainAggregator(name string) bool { return api.IsPlainAggregator(name) }

// ParseScoreBound reads a sorted-set score bound ([api.ParseScoreBound]).
func ParseScoreBound(s string) (ScoreBound, error) { return api.ParseScoreBound(s) }

// ParseLexBound reads a sorted-set lexicographic bound ([api.ParseLexBound]).
func ParseLexBound(s string) (LexBound, error) { return api.ParseLexBound(s) }

// FormatScore formats a score as Redis replies with it ([api.FormatScore]).
func FormatScore(f float64) []byte { return api.FormatScore(f) }
