package cacheprom_test

import (
	"context"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/temporalstore/temporalstore-go/matrixcache"
	"github.com/temporalstore/temporalstore-go/matrixcache/cacheprom"
)

// Register a cache's collector on a registry and serve it with promhttp. A
// real program passes mux to http.ListenAndServe; here one request is made
// in-process to show what a scrape returns.
func Example() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "cacheprom-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	cache, err := matrixcache.New(ctx, matrixcache.Options{SSDPath: dir})
	if err != nil {
		panic(err)
	}
	defer cache.Close()

	reg := prometheus.NewRegistry()
	reg.MustRegister(cacheprom.NewCollector(cache, cacheprom.Options{
		ConstLabels: prometheus.Labels{"cache": "blocks"},
	}))
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))

	key := cachekey.String(1, "greeting")
	if err := cache.Put(ctx, key, []byte("hello"), matrixcache.PutOptions{}); err != nil {
		panic(err)
	}
	if _, _, _, err := cache.Get(ctx, key); err != nil {
		panic(err)
	}

	rec := httptest.NewRecorder()
	mux.ServeHTTP(rec, httptest.NewRequest(http.MethodGet, "/metrics", nil))
	for line := range strings.Lines(rec.Body.String()) {
		if strings.HasPrefix(line, "matrixcache_tier_hits_total") || strings.HasPrefix(line, "matrixcache_tier_entries") {
			fmt.Print(line)
		}
	}
	// Output:
	// matrixcache_tier_entries{cache="blocks",tier="dram"} 1
	// matrixcache_tier_entries{cache="blocks",tier="resident"} 0
	// matrixcache_tier_entries{cache="blocks",tier="ssd"} 1
	// matrixcache_tier_hits_total{cache="blocks",tier="dram"} 1
	// matrixcache_tier_hits_total{cache="blocks",tier="resident"} 0
	// matrixcache_tier_hits_total{cache="blocks",tier="ssd"} 0
}
