package policy

import (
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"
)

const benchEntries = 1 << 16

// benchKeys returns n keys drawn from a Zipf distribution over about
// benchEntries keys, so most are resident once the policy is warm.
func benchKeys(n int) []uint64 {
	r := rand.New(rand.NewPCG(7, 8))
	z := rand.NewZipf(r, 1.01, 1, benchEntries-1)
	keys := make([]uint64, n)
	for i := range keys {
		keys[i] = z.Uint64()
	}
	return keys
}

// filled returns a policy holding keys 0..benchEntries-1, each accessed
// once more so TinyLFU has moved some to its protected segment.
func filled(tb testing.TB, newPolicy func(int64) Policy) Policy {
	p := newPolicy(benchEntries)
	for k := range uint64(benchEntries) {
		_, err := p.Admit(k, 1, nil)
		require.NoError(tb, err)
	}
	for k := range uint64(benchEntries) {
		p.Access(k)
	}
	return p
}

func TestAccessHitDoesNotAllocate(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		p := filled(t, newPolicy)
		keys := benchKeys(1024)
		i := 0
		allocs := testing.AllocsPerRun(10_000, func() {
			if !p.Access(keys[i%len(keys)]) {
				t.Fatal("miss on a resident key")
			}
			i++
		})
		require.Zero(t, allocs)
	})
}

func TestAdmitWithEvictionDoesNotAllocate(t *testing.T) {
	forEachPolicy(t, func(t *testing.T, newPolicy func(int64) Policy) {
		p := newPolicy(1024)
		victims := make([]uint64, 0, 16)
		next := uint64(0)
		for ; next < 10_000; next++ { // reach steady state
			victims, _ = p.Admit(next, 1, victims[:0])
		}
		allocs := testing.AllocsPerRun(10_000, func() {
			victims, _ = p.Admit(next, 1, victims[:0])
			next++
		})
		require.Zero(t, allocs)
	})
}

func BenchmarkAccessHit(b *testing.B) {
	for _, c := range constructors {
		b.Run(c.name, func(b *testing.B) {
			p := filled(b, c.new)
			keys := benchKeys(1 << 20)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				p.Access(keys[i&(len(keys)-1)])
				i++
			}
		})
	}
}

func BenchmarkAdmitEvict(b *testing.B) {
	for _, c := range constructors {
		b.Run(c.name, func(b *testing.B) {
			p := filled(b, c.new)
			victims := make([]uint64, 0, 16)
			next := uint64(benchEntries)
			evicted := 0
			b.ReportAllocs()
			for b.Loop() {
				victims, _ = p.Admit(next, 1, victims[:0])
				evicted += len(victims)
				next++
			}
			b.ReportMetric(float64(evicted)/float64(b.N), "victims/op")
		})
	}
}

// BenchmarkReplayZipf replays otter's Zipf workload as a cache (Access, then
// Admit on a miss) and reports the hit ratio with the time per request.
func BenchmarkReplayZipf(b *testing.B) {
	keys := zipfTrace()
	for _, c := range constructors {
		b.Run(c.name, func(b *testing.B) {
			var hits, requests int
			var victims []uint64
			p := c.new(5000)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				k := keys[i%len(keys)]
				i++
				requests++
				if p.Access(k) {
					hits++
					continue
				}
				victims, _ = p.Admit(k, 1, victims[:0])
			}
			b.ReportMetric(100*float64(hits)/float64(requests), "hit%")
		})
	}
}
