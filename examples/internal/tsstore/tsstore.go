package tsstore

import (
	"context"
	"fmt"

	"github.com/temporalstore/temporalstore-go/matrixark"
	ts "github.com/temporalstore/temporalstore-go/temporalstore"
)

// Defaults of Options.
const (
	DefaultNamespace = "matrixark"
	DefaultTable     = "context"
	// scanPage is how many keys a Scan reads per round.
	scanPage = 256
)

// indexKey is the sorted set of every record key. Record keys start with a
// family name ("ctx:", "mem:"), never with a 0 byte.
var indexKey = []byte("\x00matrixark:keys")

// Options configure Open.
type Options struct {
	// Namespace and Table hold the records. Defaults: DefaultNamespace,
	// DefaultTable. A table made here has one shard and commits durably.
	Namespace, Table string
}

// Store is a matrixark.Store on an engine table.
type Store struct {
	e         *ts.Engine
	ns, table string
}

var _ matrixark.Store = (*Store)(nil)

// Open returns a Store on e, creating its table when missing.
func Open(ctx context.Context, e *ts.Engine, o Options) (*Store, error) {
	if o.Namespace == "" {
		o.Namespace = DefaultNamespace
	}
	if o.Table == "" {
		o.Table = DefaultTable
	}
	if !e.HasTable(o.Namespace, o.Table) {
		if err := e.CreateTable(ctx, o.Namespace, o.Table, ts.TableOptions{Shards: 1}); err != nil && !e.HasTable(o.Namespace, o.Table) {
			return nil, fmt.Errorf("tsstore: creating %s/%s: %w", o.Namespace, o.Table, err)
		}
	}
	return &Store{e: e, ns: o.Namespace, table: o.Table}, nil
}

func (s *Store) cmd(kind ts.Kind) ts.Command {
	return ts.Command{Namespace: s.ns, Table: s.table, Kind: kind}
}

// Apply implements matrixark.Store: one transaction on the table's shard.
func (s *Store) Apply(ctx context.Context, m []matrixark.Mutation, _ matrixark.WriteOpts) error {
	if len(m) == 0 {
		return ctx.Err()
	}
	// The last write of a key wins, as in a sequential apply.
	last := make(map[string]int, len(m))
	for i, x := range m {
		if len(x.Key) == 0 || x.Key[0] == 0 {
			return fmt.Errorf("%w: tsstore: empty key or one starting with a 0 byte", matrixark.ErrInvalid)
		}
		last[string(x.Key)] = i
	}
	set, del := s.cmd(ts.KindMSet), s.cmd(ts.KindDeleteKeys)
	add, rem := s.cmd(ts.KindZAdd), s.cmd(ts.KindZRem)
	add.Key, rem.Key = indexKey, indexKey
	for i, x := range m {
		if last[string(x.Key)] != i {
			continue
		}
		if x.Delete {
			del.Keys = append(del.Keys, x.Key)
			rem.Args = append(rem.Args, x.Key)
			continue
		}
		set.Keys = append(set.Keys, x.Key)
		set.Args = append(set.Args, x.Value)
		add.Args = append(add.Args, x.Key)
		add.Scores = append(add.Scores, 0)
	}
	return s.e.Atomic(ctx, s.ns, s.table, indexKey, func(tx *ts.Tx) error {
		for _, c := range []ts.Command{set, add, del, rem} {
			if len(c.Keys) == 0 && len(c.Args) == 0 {
				continue
			}
			if _, err := tx.Execute(ctx, c); err != nil {
				return fmt.Errorf("tsstore: %s: %w", c.Kind, err)
			}
		}
		return nil
	})
}

// Get implements matrixark.Store with one MGET.
func (s *Store) Get(ctx context.Context, keys [][]byte, _ matrixark.ReadOpts) ([][]byte, error) {
	if len(keys) > matrixark.MaxGetKeys {
		return nil, matrixark.ErrTooManyKeys
	}
	if len(keys) == 0 {
		return nil, ctx.Err()
	}
	c := s.cmd(ts.KindMGet)
	c.Keys = keys
	r, err := s.e.Execute(ctx, c)
	if err != nil {
		return nil, fmt.Errorf("tsstore: mget: %w", err)
	}
	return r.Values, nil
}

// Scan implements matrixark.Store: pages of the key index by lex range,
// each page's values by MGET. A page is read as of its own time: a scan
// that runs beside writes sees each key at most once, in order.
func (s *Store) Scan(ctx context.Context, r matrixark.Range, o matrixark.ReadOpts, fn func(k, v []byte) bool) error {
	lo := ts.LexBound{Value: r.Start}
	if len(r.Start) == 0 {
		lo = ts.LexBound{Inf: -1}
	}
	hi := ts.LexBound{Inf: 1}
	if r.End != nil {
		hi = ts.LexBound{Value: r.End, Excl: true}
	}
	for {
		c := s.cmd(ts.KindZRange)
		c.Key = indexKey
		c.Range = ts.ZRange{By: ts.ByLex, LexMin: lo, LexMax: hi, Rev: o.Reverse, HasLimit: true, Limit: scanPage}
		page, err := s.e.Execute(ctx, c)
		if err != nil {
			return fmt.Errorf("tsstore: key index: %w", err)
		}
		if len(page.Values) == 0 {
			return nil
		}
		vals, err := s.Get(ctx, page.Values, o)
		if err != nil {
			return err
		}
		for i, k := range page.Values {
			if vals[i] == nil {
				continue // deleted after the page was read
			}
			if !fn(k, vals[i]) {
				return nil
			}
		}
		if len(page.Values) < scanPage {
			return nil
		}
		next := ts.LexBound{Value: page.Values[len(page.Values)-1], Excl: true}
		if o.Reverse {
			hi = next
		} else {
			lo = next
		}
	}
}
