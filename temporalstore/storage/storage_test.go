package storage_test

import (
	"testing"

	"github.com/temporalstore/temporalstore-go/temporalstore/storage"
	"github.com/temporalstore/temporalstore-go/temporalstore/storage/storagetest"
)

func TestMemLogs(t *testing.T) { storagetest.Log(t, storage.NewMemLogs().OpenLog) }

func TestMemCache(t *testing.T) {
	storagetest.RecordCache(t, func(n int64) storage.RecordCache { return storage.NewMemCache(n) })
}

func TestHistogram(t *testing.T) {
	var h storage.Histogram
	if h.Quantile(0.5) != 0 {
		t.Fatal("an empty histogram's quantile is 0")
	}
	h.Counts[0], h.Counts[3] = 9, 1
	var sum storage.Histogram
	sum.Merge(h)
	sum.Merge(h)
	if sum.Total() != 20 || sum.Quantile(0.5) != storage.BucketBound(0) || sum.Quantile(1) != storage.BucketBound(3) {
		t.Fatalf("merged histogram %+v", sum)
	}
}
