package temporalstore

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

func seqFields(r *SeqRow) [4]uint64 {
	return [4]uint64{r.GID, uint64(r.ActionType), uint64(r.Duration), r.AuthorID}
}

var sequenceKinds = map[Kind]runner{
	KindSeqAdd:   runSeqAdd,
	KindSeqQuery: runSeqQuery,
}

func runSeqAdd(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	fc := *c
	fc.Points = make([]Point, len(c.SeqRows))
	for i, row := range c.SeqRows {
		if row.TimestampMs < 0 {
			return Response{}, fmt.Errorf("%w: timestamp_ms must be an unsigned integer", ErrInvalid)
		}
		b, err := json.Marshal(row)
		if err != nil {
			return Response{}, err
		}
		fc.Points[i] = Point{TS: row.TimestampMs, Value: b}
	}
	fc.Policy = PolicyUpsert
	if _, err := runFAppend(ctx, e, s, &fc); err != nil {
		return Response{}, err
	}
	return Response{}, nil
}

func checkSeqQuery(count int, filters []Filter) error {
	if count <= 0 {
		return fmt.Errorf("%w: count must be a positive integer", ErrInvalid)
	}
	return checkFilters(filters)
}

func runSeqQuery(ctx context.Context, e *Engine, s *shard.Shard, c *Command) (Response, error) {
	if err := checkSeqQuery(c.Count, c.Filters); err != nil {
		return Response{}, err
	}
	keep, _, err := e.retention(c)
	if err != nil {
		return Response{}, err
	}
	rows, err := seqRows(ctx, s, c.Key, c.Start, c.End, min(c.Count, keep), c.Filters)
	return Response{SeqRows: rows}, err
}

// seqRows reads the rows of key's window passing filters, scanning at
// most limit points.
func seqRows(ctx context.Context, s *shard.Shard, key []byte, start, end int64, limit int, filters []Filter) ([]SeqRow, error) {
	rows := []SeqRow{}
	err := readObj(ctx, s, key, object.KindSeries, func(o *object.Object, _ *shard.View) error {
		if o == nil {
			return nil
		}
		lo, hi := o.Series.Window(start, end)
		for i := lo; i < min(hi, lo+limit); i++ {
			_, v := o.Series.At(i)
			row, ok := decodeSeqRow(v)
			if !ok {
				continue // not a row: a feature value
			}
			if f := seqFields(&row); passes(filters, &f) {
				rows = append(rows, row)
			}
		}
		return nil
	})
	return rows, err
}

func runSeqBatchQuery(ctx context.Context, e *Engine, x *scope, c *Command) (Response, error) {
	if len(c.SeqQueries) == 0 {
		return Response{}, fmt.Errorf("%w: no queries", ErrInvalid)
	}
	keys := make([][]byte, len(c.SeqQueries))
	for i, q := range c.SeqQueries {
		if err := checkSeqQuery(q.Count, q.Filters); err != nil {
			return Response{}, fmt.Errorf("queries[%d]: %w", i, err)
		}
		keys[i] = q.Key
	}
	t, _, err := e.byShard(c, keys)
	if err != nil {
		return Response{}, err
	}
	r := Response{SeqGroups: make([]SeqGroup, len(c.SeqQueries))}
	for i, q := range c.SeqQueries {
		s := x.shard(t, t.opts.KeyShard(q.Key))
		rows, err := seqRows(ctx, s, q.Key, q.Start, q.End, min(q.Count, t.opts.FeatureMaxSize), q.Filters)
		if err != nil {
			return Response{}, fmt.Errorf("queries[%d]: %w", i, err)
		}
		r.SeqGroups[i] = SeqGroup{Key: cp(q.Key), Rows: rows}
	}
	return r, nil
}

// decodeSeqRow reads a row written by KindSeqAdd: a JSON object with all
// five fields, as the original's decoder requires.
func decodeSeqRow(b []byte) (SeqRow, bool) {
	var w struct {
		TimestampMs *int64  `json:"timestamp_ms"`
		GID         *uint64 `json:"gid"`
		ActionType  *uint32 `json:"action_type"`
		Duration    *uint32 `json:"duration"`
		AuthorID    *uint64 `json:"author_id"`
	}
	if len(b) == 0 || b[0] != '{' || json.Unmarshal(b, &w) != nil ||
		w.TimestampMs == nil || w.GID == nil || w.ActionType == nil || w.Duration == nil || w.AuthorID == nil {
		return SeqRow{}, false
	}
	return SeqRow{TimestampMs: *w.TimestampMs, GID: *w.GID, ActionType: *w.ActionType, Duration: *w.Duration, AuthorID: *w.AuthorID}, true
}
