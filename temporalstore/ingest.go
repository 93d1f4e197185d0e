package temporalstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// Stream ingestion: a source (a Kafka consumer, say) hands the engine
// batches of records, each at an offset of one partition, in offset order.
// Exactly once comes from a ledger: every record's write carries, in the
// same log record, the offset it was at into a ledger key of its shard
// (one per source, partition and shard), and a record at or below its
// shard's ledger is skipped as already applied. Once a batch is through,
// the engine stores the partition's committed offset; the source resumes
// from IngestOffset after a restart — the checkpoint handshake — and
// whatever of a half-applied batch it sends again is skipped.
//
// Records the engine refuses (bad input, wrong type, an unknown kind) go
// to the source's dead-letter queue, with their offset and the error, and
// count as applied; DeadLetters exports them as JSON lines. A failure that
// is not the record's (a read-only shard, a limit, the engine closing)
// fails the batch instead, and the source retries it.

// IngestBatch is one batch of a source's partition.
type IngestBatch struct {
	// Namespace and Table hold the partition's committed offset and its
	// dead letters (the default table when empty).
	Namespace, Table string
	// Source and Partition name the stream; Source is letters, digits,
	// '-', '_' and '.'.
	Source    string
	Partition int32
	Records   []IngestRecord
}

// IngestRecord is one record: a single-key write and its offset.
type IngestRecord struct {
	Offset  int64
	Command Command
}

// IngestStatus is what happened to a record.
type IngestStatus uint8

// Record statuses.
const (
	// IngestApplied: written now.
	IngestApplied IngestStatus = iota
	// IngestDuplicate: at or below its shard's ledger, so already applied.
	IngestDuplicate
	// IngestDeadLettered: refused, and put in the dead-letter queue.
	IngestDeadLettered
)

// IngestResult is a batch's outcome: one status (and, for a dead letter,
// the error) per record, and the partition's committed offset after it.
type IngestResult struct {
	Statuses  []IngestStatus
	Errors    []error
	Committed int64
}

// DeadLetter is one refused record.
type DeadLetter struct {
	Source    string `json:"source"`
	Partition int32  `json:"partition"`
	Offset    int64  `json:"offset"`
	Kind      Kind   `json:"kind"`
	Key       []byte `json:"key"`
	Error     string `json:"error"`
	// AtMs is when it was refused (Unix ms).
	AtMs int64 `json:"at_ms"`
}

// ErrIngest marks a batch the engine cannot take (a bad source name,
// offsets out of order); nothing of it is applied.
var ErrIngest = errors.New("temporalstore: bad ingest batch")

func validSource(s string) bool {
	if s == "" || len(s) > 200 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.", r)) {
			return false
		}
	}
	return true
}

// ledgerKey is the ledger key of a source's partition on shard sh of a
// table with options o: a name chosen so that it routes to that shard.
func ledgerKey(source string, partition int32, sh int, o TableOptions) []byte {
	for i := 0; ; i++ {
		k := fmt.Appendf(nil, "__ingest:%s:%d:ledger:%d", source, partition, i)
		if o.KeyShard(k) == sh {
			return k
		}
	}
}

func committedKey(source string, partition int32) []byte {
	return fmt.Appendf(nil, "__ingest:%s:%d:committed", source, partition)
}

func deadLetterKey(source string) []byte { return []byte("__dlq:" + source) }

// deadLetterable reports whether err is the record's own fault, so that
// retrying it cannot help.
func deadLetterable(err error) bool {
	for _, e := range []error{ErrInvalid, ErrWrongType, ErrUnknownKind, ErrTooLarge, ErrNoTable, ErrNotInteger,
		ErrNotFloat, ErrOverflow, ErrNoSuchKey, ErrOutOfRange, ErrCrossShard, ErrSeriesTooLarge} {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// Ingest applies a batch exactly once (see the file comment). An error
// means the batch did not go through whole: retry it; the records it did
// apply are skipped then.
func (e *Engine) Ingest(ctx context.Context, b IngestBatch) (IngestResult, error) {
	if !validSource(b.Source) || b.Partition < 0 {
		return IngestResult{}, fmt.Errorf("%w: source %q partition %d", ErrIngest, b.Source, b.Partition)
	}
	for i := 1; i < len(b.Records); i++ {
		if b.Records[i].Offset <= b.Records[i-1].Offset {
			return IngestResult{}, fmt.Errorf("%w: offsets must ascend (record %d)", ErrIngest, i)
		}
	}
	res := IngestResult{Statuses: make([]IngestStatus, len(b.Records)), Errors: make([]error, len(b.Records))}
	home := Command{Namespace: b.Namespace, Table: b.Table}
	for i, rec := range b.Records {
		if rec.Offset < 0 {
			return res, fmt.Errorf("%w: negative offset", ErrIngest)
		}
		st, err := e.ingestOne(ctx, &b, rec)
		if err != nil && !deadLetterable(err) {
			return res, fmt.Errorf("record at offset %d: %w", rec.Offset, err)
		}
		if err != nil {
			if derr := e.deadLetter(ctx, &b, rec, err); derr != nil {
				return res, derr
			}
			if derr := e.markDead(ctx, &b, rec); derr != nil {
				return res, derr
			}
			st = IngestDeadLettered
		}
		res.Statuses[i], res.Errors[i] = st, err
	}
	next, err := e.IngestOffset(ctx, b.Namespace, b.Table, b.Source, b.Partition)
	if err != nil {
		return res, err
	}
	res.Committed = next - 1
	// A replayed older batch leaves the committed offset where it is.
	if n := len(b.Records); n > 0 && b.Records[n-1].Offset > res.Committed {
		last := b.Records[n-1].Offset
		c := home
		c.Kind, c.Key, c.Value = KindSet, committedKey(b.Source, b.Partition), strconv.AppendInt(nil, last, 10)
		if _, err := e.Execute(ctx, c); err != nil {
			return res, fmt.Errorf("commit offset %d: %w", last, err)
		}
		res.Committed = last
	}
	return res, nil
}

// recordLedger is where a record's ledger entry lives: its table's shard
// and that shard's ledger key for the partition.
func (e *Engine) recordLedger(b *IngestBatch, c *Command) (*shard.Shard, []byte, error) {
	if len(c.Key) == 0 {
		return nil, nil, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	key, err := storedKey(c)
	if err != nil {
		return nil, nil, err
	}
	t, err := e.table(c)
	if err != nil {
		return nil, nil, err
	}
	sh := t.opts.KeyShard(key)
	return t.shards[sh], ledgerKey(b.Source, b.Partition, sh, t.opts), nil
}

// ingestOne applies one record unless its shard's ledger says it was.
func (e *Engine) ingestOne(ctx context.Context, b *IngestBatch, rec IngestRecord) (IngestStatus, error) {
	c := rec.Command
	s, lk, err := e.recordLedger(b, &c)
	if err != nil {
		return 0, err
	}
	v, found, err := s.Get(lk)
	if err != nil {
		return 0, err
	}
	if found {
		done, _ := strconv.ParseInt(string(v), 10, 64)
		if rec.Offset <= done {
			return IngestDuplicate, nil
		}
	}
	if _, multi := multiKinds[c.Kind]; multi || c.Kind == KindScan || IsReadKind(c.Kind) {
		return 0, fmt.Errorf("%w: an ingested record is a single-key write, not %q", ErrInvalid, c.Kind)
	}
	mark := command.Command{Op: shard.OpSet, Key: lk, Args: [][]byte{strconv.AppendInt(nil, rec.Offset, 10)}}
	// The mark lands in the same record as the write.
	if _, err := e.executeCopy(ctx, &scope{handles: []*shard.Shard{s.WithAlso(mark)}}, c); err != nil {
		return 0, err
	}
	return IngestApplied, nil
}

// markDead records a dead-lettered record in its shard's ledger, so that a
// replay skips it rather than dead-lettering it again. A crash between the
// dead letter and this mark gives a duplicate dead letter, never a lost
// one.
func (e *Engine) markDead(ctx context.Context, b *IngestBatch, rec IngestRecord) error {
	c := rec.Command
	s, lk, err := e.recordLedger(b, &c)
	if err != nil {
		return nil // no shard to hold it: the replay refuses it again
	}
	return s.Set(ctx, lk, strconv.AppendInt(nil, rec.Offset, 10), time.Time{})
}

func (e *Engine) deadLetter(ctx context.Context, b *IngestBatch, rec IngestRecord, cause error) error {
	line, err := json.Marshal(DeadLetter{
		Source: b.Source, Partition: b.Partition, Offset: rec.Offset, Kind: rec.Command.Kind,
		Key: rec.Command.Key, Error: cause.Error(), AtMs: e.opts.Now().UnixMilli(),
	})
	if err != nil {
		return err
	}
	c := Command{Namespace: b.Namespace, Table: b.Table, Kind: KindRPush, Key: deadLetterKey(b.Source), Args: [][]byte{line}}
	if _, err := e.Execute(ctx, c); err != nil {
		return fmt.Errorf("dead letter at offset %d: %w", rec.Offset, err)
	}
	return nil
}

// IngestOffset is where a source's partition resumes: one past the last
// offset a batch committed (0 when none did).
func (e *Engine) IngestOffset(ctx context.Context, namespace, table, source string, partition int32) (int64, error) {
	if !validSource(source) {
		return 0, fmt.Errorf("%w: source %q", ErrIngest, source)
	}
	r, err := e.Execute(ctx, Command{Namespace: namespace, Table: table, Kind: KindGet, Key: committedKey(source, partition)})
	if err != nil || !r.Found {
		return 0, err
	}
	n, err := strconv.ParseInt(string(r.Value), 10, 64)
	if err != nil {
		return 0, fmt.Errorf("temporalstore: committed offset %q: %w", r.Value, err)
	}
	return n + 1, nil
}

// DeadLetters returns a source's dead letters, oldest first.
func (e *Engine) DeadLetters(ctx context.Context, namespace, table, source string) ([]DeadLetter, error) {
	if !validSource(source) {
		return nil, fmt.Errorf("%w: source %q", ErrIngest, source)
	}
	r, err := e.Execute(ctx, Command{Namespace: namespace, Table: table, Kind: KindLRange, Key: deadLetterKey(source), Start: 0, End: -1})
	if err != nil {
		return nil, err
	}
	out := make([]DeadLetter, 0, len(r.Values))
	for _, v := range r.Values {
		var d DeadLetter
		if err := json.Unmarshal(v, &d); err != nil {
			return nil, fmt.Errorf("temporalstore: dead letter %q: %w", v, err)
		}
		out = append(out, d)
	}
	return out, nil
}
