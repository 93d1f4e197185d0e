package api

// Sequence kinds: event rows kept in a feature series (the same key and
// series as the feature kinds), one row per timestamp, stored as JSON as
// the original stores them, so a sequence read sees only rows written as
// rows, and a filtered feature read only protobuf values.
const (
	// KindSeqAdd upserts SeqRows, each at its own timestamp, then applies
	// the table's retention, as KindFAppend (SEQADD).
	KindSeqAdd Kind = "seqadd"
	// KindSeqQuery returns the rows of Start..End passing Filters: Count
	// (required, > 0) limits the points scanned before filtering, as in
	// the original (SEQQUERY).
	KindSeqQuery Kind = "seqquery"
	// KindSeqBatchQuery runs SeqQueries, each on its own key, and returns
	// one group per query, in order (SEQBATCHQUERY).
	KindSeqBatchQuery Kind = "seqbatchquery"
)

// SeqRow is one event row of a sequence.
type SeqRow struct {
	TimestampMs int64  `json:"timestamp_ms"`
	GID         uint64 `json:"gid"`
	ActionType  uint32 `json:"action_type"`
	Duration    uint32 `json:"duration"`
	AuthorID    uint64 `json:"author_id"`
}

// SeqQuery is one window of a KindSeqBatchQuery.
type SeqQuery struct {
	Key        []byte
	Start, End int64
	Count      int
	Filters    []Filter
}

// SeqGroup is one query's rows in a KindSeqBatchQuery response.
type SeqGroup struct {
	Key  []byte
	Rows []SeqRow
}
