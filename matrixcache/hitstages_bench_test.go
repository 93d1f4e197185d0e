package matrixcache

import (
	"context"
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"math/rand/v2"
	"testing"
	"time"
)

// BenchmarkHitStages prices a DRAM hit against an unsynchronised Go map
// read, the least any hash-table cache does per hit, stage by stage:
// "index" hashes the key and loads its index slot, "lookup" also loads the
// entry and compares its whole key (loadLive), "get" is GetShared (lookup,
// hit counting and recording for the policy). The keys, 65,536 resident,
// are read in a Zipf (s=1.0001) order, as in `bench cache`.
//
// "alone/<stage>" runs one stage, as each system of `bench cache` runs
// alone. "interleaved" runs a chunk of every stage in turn from the same
// goroutines, each on its own part of the key stream, so that the
// machine's slow and fast spells fall on every stage alike; the stages
// then share the processor's caches, which costs the map read most (its
// lines stay cached when it runs alone), so its ratios there are the
// lower bound of what `bench cache` sees.
func BenchmarkHitStages(b *testing.B) {
	const n = 1 << 16
	c := benchCache(b, Options{SSDCapacityBytes: Disabled, DRAMCapacityBytes: 4 * n * 128})
	ctx := b.Context()
	records := make([]string, n)
	m := make(map[string][]byte, n)
	for i := range records {
		records[i] = fmt.Sprintf("key-%06d", i)
		if err := c.Put(ctx, cachekey.String(0, records[i]), make([]byte, 64), PutOptions{}); err != nil {
			b.Fatal(err)
		}
		m[records[i]] = make([]byte, 64)
	}
	const streamLen = 1 << 20
	z := rand.NewZipf(rand.New(rand.NewPCG(1, 1)), 1.0001, 1, n-1)
	stream := make([]uint32, streamLen)
	for i := range stream {
		stream[i] = uint32(z.Uint64())
	}
	stages := []hitStage{
		{"map", func(from, count int) bool {
			ok := true
			for i := from; i < from+count; i++ {
				_, hit := m[records[stream[i&(streamLen-1)]]]
				ok = ok && hit
			}
			return ok
		}},
		{"index", func(from, count int) bool {
			ok := true
			for i := from; i < from+count; i++ {
				h := hashKey(cachekey.String(0, records[stream[i&(streamLen-1)]]))
				ok = ok && c.shardFor(h).m.load(h) != nil
			}
			return ok
		}},
		{"lookup", func(from, count int) bool {
			ok := true
			for i := from; i < from+count; i++ {
				k := cachekey.String(0, records[stream[i&(streamLen-1)]])
				h := hashKey(k)
				ok = ok && c.loadLive(c.shardFor(h), h, k) != nil
			}
			return ok
		}},
		{"get", func(from, count int) bool {
			ok := true
			for i := from; i < from+count; i++ {
				_, _, hit, _ := c.GetShared(context.Background(), cachekey.String(0, records[stream[i&(streamLen-1)]]))
				ok = ok && hit
			}
			return ok
		}},
	}
	b.Run("interleaved", func(b *testing.B) { runHitStages(b, stages, streamLen, 2) })
	for _, st := range stages {
		b.Run("alone/"+st.name, func(b *testing.B) { runHitStages(b, []hitStage{st}, streamLen, 2) })
	}
}

// hitStage is one stage of BenchmarkHitStages: run reads count keys of the
// stream from position from and reports whether every one was found.
type hitStage struct {
	name string
	run  func(from, count int) bool
}

// runHitStages runs stages in turn, a chunk each per round, from the same
// goroutines (as a server's are), and reports each stage's ns/op and,
// after the first, its ratio to the first.
func runHitStages(b *testing.B, stages []hitStage, streamLen, goroutines int) {
	const chunk = 8192
	spent := make([]time.Duration, len(stages))
	work := make([]chan [2]int, goroutines)
	fin := make(chan bool, goroutines)
	for g := range goroutines {
		work[g] = make(chan [2]int)
		go func() {
			for w := range work[g] {
				// Each stage and goroutine reads its own part of the
				// stream: a stage must not find the lines the one before
				// it just loaded for the same keys.
				fin <- stages[w[0]].run(w[1]+(g*len(stages)+w[0])*streamLen/(goroutines*len(stages)), chunk)
			}
		}()
	}
	defer func() {
		for g := range goroutines {
			close(work[g])
		}
	}()
	offset := 0
	for b.Loop() {
		for s, st := range stages {
			t0 := time.Now()
			for g := range goroutines {
				work[g] <- [2]int{s, offset}
			}
			for range goroutines {
				if !<-fin {
					b.Error(st.name, ": a miss")
				}
			}
			spent[s] += time.Since(t0)
		}
		offset += chunk
	}
	ops := float64(b.N) * chunk * float64(goroutines)
	for s, st := range stages {
		b.ReportMetric(float64(spent[s].Nanoseconds())/ops, st.name+"-ns/op")
		if s > 0 {
			b.ReportMetric(float64(spent[s])/float64(spent[0]), st.name+"/map")
		}
	}
	b.ReportMetric(0, "ns/op")
}
