package temporalstore

import (
	"context"
	"fmt"
	"slices"

	"github.com/cespare/xxhash/v2"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/shard"
)

// objFunc sees key's collection of the kind asked for, or nil when the key
// is absent.
type objFunc func(o *object.Object, v *shard.View) error

// readObj runs fn over key's collection of kind k under the shard's read
// lock; ErrWrongType when key holds another type.
func readObj(ctx context.Context, s *shard.Shard, key []byte, k object.Kind, fn objFunc) error {
	return s.Read(ctx, func(v *shard.View) error {
		o, err := objOf(v, key, k)
		if err != nil {
			return err
		}
		return fn(o, v)
	})
}

// writeObj is readObj for a write: fn returns the commands to log.
func writeObj(ctx context.Context, s *shard.Shard, key []byte, k object.Kind, fn func(o *object.Object, v *shard.View) ([]command.Command, error)) error {
	return s.MutateKey(ctx, key, func(v *shard.View) ([]command.Command, error) {
		o, err := objOf(v, key, k)
		if err != nil {
			return nil, err
		}
		return fn(o, v)
	})
}

func objOf(v *shard.View, key []byte, k object.Kind) (*object.Object, error) {
	it, err := v.Get(key)
	switch {
	case err != nil:
		return nil, err
	case !it.Exists:
		return nil, nil
	case it.Obj == nil || it.Obj.Kind != k:
		return nil, ErrWrongType
	}
	return it.Obj, nil
}

// needArgs checks a kind got at least n elements in Args (and a multiple
// of step).
func needArgs(c *Command, n, step int) error {
	if len(c.Args) < n || len(c.Args)%step != 0 {
		return fmt.Errorf("%w: wrong number of arguments for %s", ErrInvalid, c.Kind)
	}
	return nil
}

func cp(b []byte) []byte { return append(make([]byte, 0, len(b)), b...) }

// scanPage pages through members in the order of their XXH64, for the
// collection scans (HSCAN, SSCAN, ZSCAN): it returns the members whose
// hash is at cursor or after, at least count of them (all those sharing
// the last one's hash), and the cursor to continue from (0 when done). A
// member present for the whole scan is returned at least once, whatever
// changes between calls.
func scanPage(members []string, cursor uint64, count int) ([]string, uint64) {
	type hm struct {
		h uint64
		m string
	}
	var page []hm
	for _, m := range members {
		if h := xxhash.Sum64String(m); h >= cursor {
			page = append(page, hm{h, m})
		}
	}
	slices.SortFunc(page, func(a, b hm) int {
		switch {
		case a.h < b.h:
			return -1
		case a.h > b.h:
			return 1
		}
		return 0
	})
	n := min(max(count, 1), len(page))
	for n < len(page) && page[n].h == page[n-1].h {
		n++
	}
	out := make([]string, n)
	for i := range n {
		out[i] = page[i].m
	}
	if n == len(page) || page[n-1].h == ^uint64(0) {
		return out, 0
	}
	return out, page[n-1].h + 1
}

func scanCount(c *Command) (int, error) {
	if c.Count < 0 {
		return 0, fmt.Errorf("%w: negative COUNT", ErrInvalid)
	}
	if c.Count == 0 {
		return DefaultScanCount, nil
	}
	return c.Count, nil
}
