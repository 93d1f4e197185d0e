package residenttier

import (
	"context"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/ssdtier"
)

// persistentTier is the method set the SSD tier and this tier share, so
// a cache can hold either behind one interface.
type persistentTier interface {
	Put(ctx context.Context, b blockfmt.Block) error
	PutBatch(ctx context.Context, blocks []blockfmt.Block) error
	Get(key blockfmt.Key) (blockfmt.Block, bool, error)
	Delete(ctx context.Context, key blockfmt.Key) (bool, error)
	DeletePrefix(ctx context.Context, shard uint64, recordPrefix string) (int, error)
	DeleteShard(ctx context.Context, shard uint64) (int, error)
	PurgeExpired(ctx context.Context) (int, error)
	Iterate(ctx context.Context, fn func(blockfmt.Block) bool) error
	Path() string
	Close() error
}

var (
	_ persistentTier = (*Store)(nil)
	_ persistentTier = (*ssdtier.Store)(nil)
	// A Clock for one is a Clock for the other.
	_ Clock         = ssdtier.Clock(nil)
	_ ssdtier.Clock = Clock(nil)
)
