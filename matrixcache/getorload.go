package matrixcache

import (
	"bytes"
	"context"
	"strconv"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
)

// LoadFunc loads the value of a key the cache does not hold, for
// GetOrLoad: from a database, a service, a file.
type LoadFunc func(ctx context.Context) ([]byte, error)

// GetOrLoad returns a copy of key's value, loading it with load on a miss
// and putting what it loads (with o) before returning it. Concurrent
// misses of one key share one load (single flight): the others wait for
// its result instead of loading again. The load runs with ctx's values
// but not its cancellation, since callers that did not cancel may be
// waiting for it; a caller whose ctx ends stops waiting with ctx's error.
// A load error is returned to every caller of that load and nothing is
// put (the next miss loads again). A value the cache does not take (too
// large for every tier) is still returned.
func (c *Cache) GetOrLoad(ctx context.Context, key blockfmt.Key, o PutOptions, load LoadFunc) ([]byte, error) {
	if v, _, ok, err := c.Get(ctx, key); err != nil || ok {
		return v, err
	}
	detached := context.WithoutCancel(ctx)
	ch := c.loads.DoChan(loadKey(key), func() (any, error) {
		// A load that ended after this caller's miss may have put it.
		if v, _, ok, err := c.GetShared(detached, key); err != nil || ok {
			return v, err
		}
		c.st.loads.Add(1)
		v, err := load(detached)
		if err != nil {
			c.st.loadFailures.Add(1)
			return nil, err
		}
		_ = c.Put(detached, key, v, o) // refused or too large: still the value
		return v, nil
	})
	select {
	case r := <-ch:
		if r.Err != nil {
			return nil, r.Err
		}
		// Every caller gets its own copy: the loader's buffer, or the
		// cache's own, is shared by them all.
		return bytes.Clone(r.Val.([]byte)), nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// loadKey is key as the single-flight group's string: its fields with
// their lengths, so that no two keys share one.
func loadKey(k blockfmt.Key) string {
	b := make([]byte, 0, 32+len(k.Namespace)+len(k.Selector)+len(k.Record))
	b = strconv.AppendUint(b, k.Shard, 10)
	for _, f := range []string{k.Namespace, k.Selector, k.Record} {
		b = append(b, ':')
		b = strconv.AppendInt(b, int64(len(f)), 10)
		b = append(b, ':')
		b = append(b, f...)
	}
	return string(b)
}
