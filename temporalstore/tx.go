package temporalstore

import (
	"context"
	"fmt"
)

// Atomic runs fn with the shard of key (in table namespace/name) to
// itself: commands fn executes with the context it is given, on keys of
// that shard, run with no other command of the shard in between, and no
// reader sees their effects before fn returns (Redis's MULTI/EXEC). The
// writes reach the shard's log together when fn returns, as one group that
// a crash keeps whole or drops whole, and Atomic returns once they are
// there (a transaction past the log's segment size is split in as many
// groups as it takes).
// Commands on other shards inside fn are not isolated; the caller keeps
// fn to one shard (KeyGroup, hash tags).
func (e *Engine) Atomic(ctx context.Context, namespace, name string, key []byte, fn func(ctx context.Context) error) error {
	c := Command{Namespace: namespace, Table: name, Key: key}
	if len(key) == 0 {
		return fmt.Errorf("%w: empty key", ErrInvalid)
	}
	t, i, err := e.route(&c)
	if err != nil {
		return err
	}
	return engineErr(t.shards[i].Exclusive(ctx, fn))
}

// KeyVersion is a token that changes whenever key is written (0 when it is
// absent), for WATCH: compare the token taken before with the one inside
// Atomic.
func (e *Engine) KeyVersion(ctx context.Context, namespace, name string, key []byte) (uint64, error) {
	c := Command{Namespace: namespace, Table: name, Key: key}
	if len(key) == 0 {
		return 0, fmt.Errorf("%w: empty key", ErrInvalid)
	}
	t, i, err := e.route(&c)
	if err != nil {
		return 0, err
	}
	return t.shards[i].Version(ctx, key)
}

// KeyGroup is the key group of key in table namespace/name
// (TableOptions.KeyGroups): the keys of a transaction must share one.
func (e *Engine) KeyGroup(namespace, name string, key []byte) (int, error) {
	o, err := e.TableOptions(namespace, name)
	if err != nil {
		return 0, err
	}
	return ShardOf(key, o.KeyGroups), nil
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
