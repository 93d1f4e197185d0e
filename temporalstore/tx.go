package temporalstore

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// ErrTxDone is returned by the methods of a Tx after its Atomic returned.
var ErrTxDone = errors.New("temporalstore: transaction done")

// Atomic runs fn with the shard of key (in table namespace/name) to
// itself, handing it the transaction (bbolt's db.Update is the model): the
// commands fn runs through tx, on keys of that shard, run with no other
// command of the shard in between, and no reader sees their effects before
// fn returns (Redis's MULTI/EXEC). The writes reach the shard's log
// together when fn returns, as one group that a crash keeps whole or drops
// whole, and Atomic returns once they are there (a transaction past the
// log's segment size is split in as many groups as it takes). ctx bounds
// the wait for the shard. Commands on other shards through tx are not
// isolated; the caller keeps fn to one shard (KeyGroup, hash tags). A
// command on the shard through the Engine rather than tx waits for fn to
// return.
func (e *Engine) Atomic(ctx context.Context, namespace, name string, key []byte, fn func(tx *Tx) error) error {
	return e.atomic(ctx, nil, namespace, name, key, fn)
}

func (e *Engine) atomic(ctx context.Context, x *scope, namespace, name string, key []byte, fn func(tx *Tx) error) error {
	c := Command{Namespace: namespace, Table: name, Key: key}
	if len(key) == 0 {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	t, i, err := e.route(&c)
	if err != nil {
		return err
	}
	return engineErr(x.shard(t, i).Exclusive(ctx, func(held *shard.Shard) error {
		tx := &Tx{e: e, x: x.with(held)}
		defer tx.done.Store(true)
		return fn(tx)
	}))
}

// Tx is a transaction Atomic hands its callback: the engine's operations,
// run inside it. A context given to its methods bounds the call (the
// caller's own will do: the transaction is the Tx, not the context). It is
// for the callback's goroutine, until the callback returns.
type Tx struct {
	e *Engine
	// x holds the shard (and those of the Atomics it is nested in).
	x    *scope
	done atomic.Bool
}

// scope is what a call runs inside of, passed down explicitly: handles
// of shards to use instead of the tables' own (those a transaction holds,
// or one whose writes carry an ingest's ledger record). nil is none.
type scope struct {
	handles []*shard.Shard
}

// shard returns the handle of t's shard i a call in x uses.
func (x *scope) shard(t *table, i int) *shard.Shard {
	s := t.shards[i]
	if x != nil {
		for _, h := range x.handles {
			if h.Same(s) {
				return h
			}
		}
	}
	return s
}

// with returns x and the handle h.
func (x *scope) with(h *shard.Shard) *scope {
	out := &scope{}
	if x != nil {
		for _, o := range x.handles {
			if !o.Same(h) {
				out.handles = append(out.handles, o)
			}
		}
	}
	out.handles = append(out.handles, h)
	return out
}

// check refuses a call on a finished transaction.
func (tx *Tx) check() error {
	if tx.done.Load() {
		return ErrTxDone
	}
	return nil
}

// Execute is Engine.Execute inside the transaction.
func (tx *Tx) Execute(ctx context.Context, c Command) (Response, error) {
	if err := tx.check(); err != nil {
		return Response{}, err
	}
	return tx.e.executeCopy(ctx, tx.x, c)
}

// ExecuteInPlace is Engine.ExecuteInPlace inside the transaction.
func (tx *Tx) ExecuteInPlace(ctx context.Context, c *Command) (Response, error) {
	if err := tx.check(); err != nil {
		return Response{}, err
	}
	if err := ctx.Err(); err != nil {
		return Response{}, err
	}
	return tx.e.execute(ctx, tx.x, c)
}

// AppendGet is Engine.AppendGet inside the transaction.
func (tx *Tx) AppendGet(ctx context.Context, tenant, namespace, name string, key, dst []byte) ([]byte, bool, error) {
	if err := tx.check(); err != nil {
		return dst, false, err
	}
	return tx.e.appendGet(ctx, tx.x, tenant, namespace, name, key, dst)
}

// KeyVersion is Engine.KeyVersion inside the transaction.
func (tx *Tx) KeyVersion(ctx context.Context, namespace, name string, key []byte) (uint64, error) {
	if err := tx.check(); err != nil {
		return 0, err
	}
	return tx.e.keyVersion(ctx, tx.x, namespace, name, key)
}

// Touched is Engine.Touched inside the transaction.
func (tx *Tx) Touched(ctx context.Context, w Watch) (bool, error) {
	if err := tx.check(); err != nil {
		return false, err
	}
	return tx.e.touched(ctx, tx.x, w)
}

// CopyBetween is Engine.CopyBetween inside the transaction.
func (tx *Tx) CopyBetween(ctx context.Context, namespace, from, to string, key, dest []byte, replace, move bool) (bool, error) {
	if err := tx.check(); err != nil {
		return false, err
	}
	return tx.e.copyBetween(ctx, tx.x, namespace, from, to, key, dest, replace, move)
}

// Atomic is Engine.Atomic nested in the transaction: fn gets the same
// transaction when key is on its shard, and holds another shard as well
// otherwise.
func (tx *Tx) Atomic(ctx context.Context, namespace, name string, key []byte, fn func(tx *Tx) error) error {
	if err := tx.check(); err != nil {
		return err
	}
	return tx.e.atomic(ctx, tx.x, namespace, name, key, fn)
}

// KeyVersion is a token that changes whenever key is written (0 when it is
// absent), for WATCH: compare the token taken before with the one inside
// Atomic.
func (e *Engine) KeyVersion(ctx context.Context, namespace, name string, key []byte) (uint64, error) {
	return e.keyVersion(ctx, nil, namespace, name, key)
}

func (e *Engine) keyVersion(ctx context.Context, x *scope, namespace, name string, key []byte) (uint64, error) {
	c := Command{Namespace: namespace, Table: name, Key: key}
	if len(key) == 0 {
		return 0, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	t, i, err := e.route(&c)
	if err != nil {
		return 0, err
	}
	return x.shard(t, i).Version(ctx, key)
}

// Watch is a watch of one key, made by WatchKey: Touched says whether a
// write touched the key since. Release it with Unwatch.
type Watch struct {
	namespace, table string
	key              []byte
	shard            *shard.Shard
	since            uint64
}

// WatchKey starts watching key in table namespace/name, for Redis's WATCH:
// any write to it after this, even one undone since, makes Touched true.
func (e *Engine) WatchKey(ctx context.Context, namespace, name string, key []byte) (Watch, error) {
	c := Command{Namespace: namespace, Table: name, Key: key}
	if len(key) == 0 {
		return Watch{}, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return Watch{}, err
	}
	t, i, err := e.route(&c)
	if err != nil {
		return Watch{}, err
	}
	k := append([]byte(nil), key...)
	sh := t.shards[i]
	return Watch{namespace: namespace, table: name, key: k, shard: sh, since: sh.Watch(k)}, nil
}

// Touched reports whether a write through the watched table touched w's
// key since WatchKey. A table since replaced (flushed, swapped, dropped)
// reports false: compare KeyVersion for those. Inside Atomic, call the
// Tx's.
func (e *Engine) Touched(ctx context.Context, w Watch) (bool, error) {
	return e.touched(ctx, nil, w)
}

func (e *Engine) touched(ctx context.Context, x *scope, w Watch) (bool, error) {
	if w.shard == nil {
		return false, fmt.Errorf("%w: not a watch", ErrInvalid)
	}
	c := Command{Namespace: w.namespace, Table: w.table, Key: w.key}
	t, i, err := e.route(&c)
	if err != nil {
		return false, nil
	}
	sh := x.shard(t, i)
	if !sh.Same(w.shard) {
		return false, nil
	}
	return sh.Touched(ctx, w.key, w.since), nil
}

// Key is the key w watches.
func (w Watch) Key() []byte { return w.key }

// Table is the name of the table of w's key.
func (w Watch) Table() string { return w.table }

// Unwatch ends w; once for each WatchKey.
func (e *Engine) Unwatch(w Watch) {
	if w.shard != nil {
		w.shard.Unwatch(w.key)
	}
}

// KeyGroup is the key group of key in table namespace/name
// (TableOptions.KeyGroups): the keys of a transaction must share one.
func (e *Engine) KeyGroup(namespace, name string, key []byte) (int, error) {
	o, err := e.TableOptions(namespace, name)
	if err != nil {
		return 0, err
	}
	return o.KeyGroup(key), nil
}

// TableOptions returns the options table namespace/name was created with,
// its defaults filled in.
func (e *Engine) TableOptions(namespace, name string) (TableOptions, error) {
	t, err := e.tableNamed(namespace, name)
	if err != nil {
		return TableOptions{}, err
	}
	return t.opts, nil
}
