package matrixcache_test

import (
	"context"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"os"

	"github.com/temporalstore/temporalstore-go/matrixcache"
)

func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "matrixcache-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)

	c, err := matrixcache.New(ctx, matrixcache.Options{
		DRAMCapacityBytes: 64 << 20,
		SSDPath:           dir, // durable: every SSD write is flushed
	})
	if err != nil {
		panic(err)
	}
	defer c.Close()

	key := cachekey.String(1, "greeting")
	if err := c.Put(ctx, key, []byte("hello"), matrixcache.PutOptions{}); err != nil {
		panic(err)
	}
	v, tier, ok, err := c.Get(ctx, key)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(v), tier, ok)

	// A pinned handle shares the cache's buffer until Release.
	h, err := c.Acquire(ctx, key)
	if err != nil {
		panic(err)
	}
	fmt.Println(string(h.Value()))
	h.Release()
	// Output:
	// hello dram true
	// hello
}
