package ssdtier

import (
	"fmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/cachekey"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/matrixcache/blockfmt"
	"github.com/temporalstore/temporalstore-go/matrixcache/internal/fakeclock"
)

const mib = 1 << 20

// orderedKey is the key the budget hashes for a block of blk(shard, record, _).
func orderedKey(shard uint64, record string) []byte {
	return blockfmt.AppendOrderedKey(nil, cachekey.String(shard, record))
}

// storedSize is what the budget counts for a block: its ordered key plus
// its encoded block.
func storedSize(t testing.TB, b blockfmt.Block) int64 {
	return int64(blockfmt.OrderedKeyLen(b.Key) + len(mustEncode(t, b)))
}

// TestBudgetWindows checks the share rule one closed window at a time.
func TestBudgetWindows(t *testing.T) {
	tests := []struct {
		name    string
		target  int64
		written []int64 // bytes written in each window
		shares  []int64 // the share once that window has closed
	}{
		{"unlimited stays full", 0, []int64{1 << 40, 0, 5}, []int64{10_000, 10_000, 10_000}},
		{"at the target stays full", 1000, []int64{1000, 999, 0}, []int64{10_000, 10_000, 10_000}},
		{"over scales by target/written", 1000, []int64{4000}, []int64{2500}},
		{"scaling rounds down", 1000, []int64{16_000, 3000}, []int64{625, 208}},
		{"at or under doubles, capped", 1000, []int64{2000, 1000, 0, 0}, []int64{5000, 10_000, 10_000, 10_000}},
		{"never 0", 1, []int64{1 << 40, 1 << 40, 1 << 62}, []int64{1, 1, 1}},
		{"from the floor doubles", 1, []int64{1 << 40, 0, 0, 1}, []int64{1, 2, 4, 8}},
		{"huge target does not overflow", 1 << 62, []int64{1<<62 + 1<<61}, []int64{6666}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := fakeclock.New()
			b := newBudget(tt.target, clock.Now())
			for i, n := range tt.written {
				b.record(clock.Now(), n)
				clock.Advance(time.Second)
				share, observed := b.stats(clock.Now())
				require.Equal(t, tt.shares[i], share, "after window %d", i)
				require.Equal(t, n, observed, "after window %d", i)
				require.Equal(t, share, b.shareAt(clock.Now()))
			}
		})
	}
}

// TestBudgetOverloadNarrowsShare offers 16 times the target, spread over
// each window, and checks that the share only narrows until it is under
// 2,500, within 6 s, and never reaches 0.
func TestBudgetOverloadNarrowsShare(t *testing.T) {
	const (
		target    = 1_024_000
		perWindow = 4000 // blocks of 4 KiB: 16 × target
		blockSize = 4096
		step      = time.Second / perWindow
	)
	tests := []struct {
		name string
		// admission: only admitted blocks are written. Without it every
		// offered block is a physical write the budget cannot refuse, so
		// the share falls every window until the floor.
		admission bool
	}{
		{"admitted writes only", true},
		{"writes the budget cannot refuse", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := fakeclock.New()
			b := newBudget(target, clock.Now())
			shares := []int64{b.shareAt(clock.Now())}
			key := 0
			for range 6 {
				for range perWindow {
					key++
					now := clock.Now()
					if !tt.admission || admitsKey(orderedKey(1, fmt.Sprint(key)), b.shareAt(now)) {
						b.record(now, blockSize)
					}
					clock.Advance(step)
				}
				shares = append(shares, b.shareAt(clock.Now()))
			}
			t.Logf("share at each second: %v", shares)
			narrowed := false
			for i := 1; i < len(shares); i++ {
				require.GreaterOrEqual(t, shares[i], int64(1), "never 0")
				if !narrowed {
					require.LessOrEqual(t, shares[i], shares[i-1], "narrows monotonically: %v", shares)
					narrowed = shares[i] < 2500
				}
				if !tt.admission && shares[i-1] > 1 {
					require.Less(t, shares[i], shares[i-1], "falls every window: %v", shares)
				}
			}
			require.True(t, narrowed, "under 2,500 within 6 s: %v", shares)
		})
	}
}

// TestBudgetObservedRate checks that the observed rate is the bytes of the
// last closed window over its length, whatever the target.
func TestBudgetObservedRate(t *testing.T) {
	tests := []struct {
		name     string
		quarters []int64 // bytes written in each quarter-second
		want     int64
	}{
		{"8 MiB over 2 s", []int64{mib, mib, mib, mib, mib, mib, mib, mib}, 4 * mib},
		{"then a quiet window", []int64{mib, mib, mib, mib, mib, mib, mib, mib, 0, 0, 0, 0}, 0},
		{"before any window closes", []int64{mib, mib, mib}, 0},
		{"the last window, not the average", []int64{3 * mib, 3 * mib, 0, 0, mib, mib, 0, 0}, 2 * mib},
	}
	for _, target := range []int64{0, 64 * mib} {
		for _, tt := range tests {
			t.Run(fmt.Sprintf("target=%d/%s", target, tt.name), func(t *testing.T) {
				clock := fakeclock.New()
				b := newBudget(target, clock.Now())
				for _, n := range tt.quarters {
					b.record(clock.Now(), n)
					clock.Advance(time.Second / 4)
				}
				_, observed := b.stats(clock.Now())
				require.Equal(t, tt.want, observed)
			})
		}
	}
}

// TestBudgetRecovers checks that an idle store gets back to full admission
// from the floor within 14 windows, whether time passes a window at a time
// or in one stretch.
func TestBudgetRecovers(t *testing.T) {
	t.Run("a window at a time", func(t *testing.T) {
		clock := fakeclock.New()
		b := newBudget(1, clock.Now())
		b.record(clock.Now(), 1<<40)
		clock.Advance(time.Second)
		require.Equal(t, int64(1), b.shareAt(clock.Now()))
		windows, prev := 0, int64(1)
		for prev < MaxBudgetShare {
			clock.Advance(time.Second)
			windows++
			share := b.shareAt(clock.Now())
			require.Greater(t, share, prev, "grows every idle window")
			prev = share
		}
		require.LessOrEqual(t, windows, 14)
		t.Logf("full after %d idle windows", windows)
	})
	tests := []struct {
		name string
		idle time.Duration // after the overloaded window
		want int64
	}{
		{"13 idle windows", 14 * time.Second, 8192},
		{"14 idle windows", 15 * time.Second, MaxBudgetShare},
		{"a day", 24 * time.Hour, MaxBudgetShare},
		{"part of a window", 1500 * time.Millisecond, 1},
	}
	for _, tt := range tests {
		t.Run("in one stretch/"+tt.name, func(t *testing.T) {
			clock := fakeclock.New()
			b := newBudget(1, clock.Now())
			b.record(clock.Now(), 1<<40)
			// The overloaded window and the quiet ones after it close in
			// one call.
			clock.Advance(tt.idle)
			share, observed := b.stats(clock.Now())
			require.Equal(t, tt.want, share)
			if tt.idle >= 2*time.Second {
				require.Zero(t, observed, "the last closed window was quiet")
			}
		})
	}
}

func TestBudgetClockBehindCountsInOpenWindow(t *testing.T) {
	// A caller may read the clock, lose the CPU, and record after another
	// caller rolled the window: its bytes go to the open window.
	clock := fakeclock.New()
	before := clock.Now()
	b := newBudget(1000, before)
	clock.Advance(time.Second)
	require.Equal(t, int64(MaxBudgetShare), b.shareAt(clock.Now()))
	b.record(before, 4000)
	require.Equal(t, int64(MaxBudgetShare), b.shareAt(before))
	clock.Advance(time.Second)
	share, observed := b.stats(clock.Now())
	require.Equal(t, int64(2500), share)
	require.Equal(t, int64(4000), observed)
}

func TestAdmitsHash(t *testing.T) {
	tests := []struct {
		name  string
		h     uint64
		share int64
		want  bool
	}{
		{"bucket 0 at the floor", 0, 1, true},
		{"bucket 1 at the floor", 1 << 32, 1, false},
		{"low half is ignored", 0xffff_ffff, 1, true},
		{"high half is taken modulo 10,000", 10_000<<32 | 0xffff_ffff, 1, true},
		{"bucket below the share", 4999 << 32, 5000, true},
		{"bucket at the share", 5000 << 32, 5000, false},
		{"last bucket below full", 9999 << 32, 9999, false},
		{"last bucket at full", 9999 << 32, MaxBudgetShare, true},
		{"largest hash at full", ^uint64(0), MaxBudgetShare, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, admitsHash(tt.h, tt.share))
		})
	}
}

// TestAdmitsKeyShareOfKeys checks that a share admits about that share of
// keys, and that a key admitted at one share is admitted at every larger
// one, so narrowing the share only ever refuses more keys.
func TestAdmitsKeyShareOfKeys(t *testing.T) {
	const n = 100_000
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = orderedKey(uint64(i%7), fmt.Sprint("user:", i))
	}
	shares := []int64{1, 625, 2500, 5000, 9999, MaxBudgetShare}
	prev := make([]bool, n)
	for _, share := range shares {
		t.Run(fmt.Sprint("share=", share), func(t *testing.T) {
			// Counted rather than asserted per key: require in a loop of
			// 100,000 is slow under the race detector.
			admitted, dropped, flipped := 0, 0, 0
			for i, k := range keys {
				ok := admitsKey(k, share)
				if ok {
					admitted++
				}
				if prev[i] && !ok {
					dropped++
				}
				if ok != admitsKey(k, share) {
					flipped++
				}
				prev[i] = ok
			}
			require.Zero(t, dropped, "keys admitted at a smaller share")
			require.Zero(t, flipped, "same key, same decision")
			require.InDelta(t, float64(share)/MaxBudgetShare, float64(admitted)/n, 0.01)
		})
	}
}

// overloadWindow writes bytes, over the target, in the store's open window
// on a shard of its own, and closes the window, so the share narrows. The
// share must be full when it is called.
func overloadWindow(t *testing.T, s *Store, clock *fakeclock.Clock, bytes int) {
	t.Helper()
	require.Equal(t, int64(MaxBudgetShare), s.Stats().BudgetShare)
	const size = 64 << 10
	for i := range bytes / size {
		require.NoError(t, s.Put(t.Context(), blockfmt.NewBlock(cachekey.String(99, fmt.Sprint("fill", i)), make([]byte, size))))
	}
	clock.Advance(time.Second)
}

// TestWriteBudgetDecidesByKey checks on the store that, at a given share, a
// key's block is admitted or refused by its key alone: whatever its size,
// however often it is written, and in any store.
func TestWriteBudgetDecidesByKey(t *testing.T) {
	sizes := []int{0, 10, 4096, 64 << 10}
	open := func() (*Store, int64) {
		clock := fakeclock.New()
		s := openStore(t, Options{Clock: clock, NoSync: true, WriteBytesPerSec: mib})
		overloadWindow(t, s, clock, 3*mib)
		share := s.Stats().BudgetShare
		require.Greater(t, share, int64(1))
		require.Less(t, share, int64(MaxBudgetShare))
		return s, share
	}
	s, share := open()
	other, otherShare := open()
	require.Equal(t, share, otherShare)
	const keys = 200
	decisions := make(map[string]bool, keys)
	for _, size := range sizes {
		t.Run(fmt.Sprintf("%dB", size), func(t *testing.T) {
			admitted := 0
			for i := range keys {
				record := fmt.Sprint("k", i)
				want := admitsKey(orderedKey(1, record), share)
				for _, st := range []*Store{s, s, other} {
					err := st.Put(t.Context(), blockfmt.NewBlock(cachekey.String(1, record), make([]byte, size)))
					if want {
						require.NoError(t, err, "key %s", record)
					} else {
						require.ErrorIs(t, err, ErrBudgetExceeded, "key %s", record)
					}
				}
				if prev, ok := decisions[record]; ok {
					require.Equal(t, prev, want, "key %s: size does not matter", record)
				}
				decisions[record] = want
				if want {
					admitted++
				}
			}
			require.Positive(t, admitted)
			require.Less(t, admitted, keys)
		})
	}
	require.Equal(t, share, s.Stats().BudgetShare, "the share holds within a window")
}

func TestWriteBudgetPutBatch(t *testing.T) {
	// PutBatch writes what the budget admits, says how many it refused,
	// and deletes are never refused.
	clock := fakeclock.New()
	s := openStore(t, Options{Clock: clock, NoSync: true, WriteBytesPerSec: mib})
	overloadWindow(t, s, clock, 4*mib)
	share := s.Stats().BudgetShare
	var batch []blockfmt.Block
	admitted := 0
	for i := range 100 {
		batch = append(batch, blk(1, fmt.Sprint(i), "value"))
		if admitsKey(orderedKey(1, fmt.Sprint(i)), share) {
			admitted++
		}
	}
	require.Positive(t, admitted)
	require.Less(t, admitted, 100)
	before := s.Stats()
	err := s.PutBatch(t.Context(), batch)
	require.ErrorIs(t, err, ErrBudgetExceeded)
	require.ErrorContains(t, err, fmt.Sprintf("%d of 100 blocks refused", 100-admitted))
	st := s.Stats()
	require.Equal(t, before.Puts+int64(admitted), st.Puts)
	require.Equal(t, before.BudgetRefused+int64(100-admitted), st.BudgetRefused)
	for i, b := range batch {
		_, ok, err := s.Get(b.Key)
		require.NoError(t, err)
		require.Equal(t, admitsKey(orderedKey(1, fmt.Sprint(i)), share), ok, "block %d", i)
	}
	n, err := s.DeleteShard(t.Context(), 1)
	require.NoError(t, err)
	require.Equal(t, admitted, n)
	n, err = s.DeleteShard(t.Context(), 99)
	require.NoError(t, err)
	require.Positive(t, n)
}

// TestWriteBudgetStats writes 8 MiB over 2 s through Put and checks what
// Stats reports, then a quiet window.
func TestWriteBudgetStats(t *testing.T) {
	const perSec = 16 // blocks of 256 KiB: 4 MiB of values a second
	tests := []struct {
		name   string
		target int64
	}{
		{"unlimited", 0},
		{"within the target", 64 * mib},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			clock := fakeclock.New()
			s := openStore(t, Options{Clock: clock, NoSync: true, WriteBytesPerSec: tt.target})
			st := s.Stats()
			require.Equal(t, int64(MaxBudgetShare), st.BudgetShare)
			require.Equal(t, tt.target, st.BudgetTargetBytesPerSec)
			require.Zero(t, st.BudgetObservedBytesPerSec, "no window has closed")
			var perWindow int64
			for i := range 2 * perSec {
				b := blockfmt.NewBlock(cachekey.String(1, fmt.Sprintf("k%03d", i)), make([]byte, 256<<10))
				require.NoError(t, s.Put(t.Context(), b))
				if i < perSec {
					perWindow += storedSize(t, b)
				}
				clock.Advance(time.Second / perSec)
			}
			st = s.Stats()
			require.Equal(t, perWindow, st.BudgetObservedBytesPerSec)
			require.InEpsilon(t, 4*mib, st.BudgetObservedBytesPerSec, 0.001, "4 MiB of values and their keys and headers")
			require.Equal(t, int64(MaxBudgetShare), st.BudgetShare)
			require.Zero(t, st.BudgetRefused)

			_, err := s.Delete(t.Context(), cachekey.String(1, "k000"))
			require.NoError(t, err)
			clock.Advance(time.Second)
			st = s.Stats()
			require.Zero(t, st.BudgetObservedBytesPerSec, "a window with only a delete is quiet")
			require.Equal(t, tt.target, st.BudgetTargetBytesPerSec)
		})
	}
}

// TestWriteBudgetUnlimitedAdmitsAll overloads a store without a target.
func TestWriteBudgetUnlimitedAdmitsAll(t *testing.T) {
	clock := fakeclock.New()
	s := openStore(t, Options{Clock: clock, NoSync: true})
	for sec := range 3 {
		var batch []blockfmt.Block
		for i := range 64 {
			batch = append(batch, blockfmt.NewBlock(cachekey.String(1, fmt.Sprint(sec, "/", i)), make([]byte, 64<<10)))
		}
		require.NoError(t, s.PutBatch(t.Context(), batch))
		clock.Advance(time.Second)
		st := s.Stats()
		require.Equal(t, int64(MaxBudgetShare), st.BudgetShare)
		require.Greater(t, st.BudgetObservedBytesPerSec, int64(4*mib))
	}
	st := s.Stats()
	require.Zero(t, st.BudgetRefused)
	require.Equal(t, int64(3*64), st.Puts)
}

// TestWriteBudgetOverload offers 16 times the target through PutBatch for
// 6 s and checks that the share narrows to under 2,500 and the bytes
// written settle near the target.
func TestWriteBudgetOverload(t *testing.T) {
	const (
		target  = 64 << 10
		batches = 16 // a second, of 64 blocks of 1 KiB: 16 × target in values alone
	)
	clock := fakeclock.New()
	s := openStore(t, Options{Clock: clock, NoSync: true, WriteBytesPerSec: target})
	shares := []int64{s.Stats().BudgetShare}
	var observed []int64
	key := 0
	for range 6 {
		for range batches {
			batch := make([]blockfmt.Block, 64)
			for i := range batch {
				key++
				batch[i] = blockfmt.NewBlock(cachekey.String(1, fmt.Sprint(key)), make([]byte, 1024))
			}
			if err := s.PutBatch(t.Context(), batch); err != nil {
				require.ErrorIs(t, err, ErrBudgetExceeded)
			}
			clock.Advance(time.Second / batches)
		}
		st := s.Stats()
		shares = append(shares, st.BudgetShare)
		observed = append(observed, st.BudgetObservedBytesPerSec)
	}
	t.Logf("share at each second: %v; bytes written in each: %v", shares, observed)
	narrowed := false
	for i := 1; i < len(shares) && !narrowed; i++ {
		require.LessOrEqual(t, shares[i], shares[i-1], "narrows monotonically: %v", shares)
		narrowed = shares[i] < 2500
	}
	require.True(t, narrowed, "under 2,500 within 6 s: %v", shares)
	require.Greater(t, observed[0], int64(16*target), "the first second is all admitted")
	for i, n := range observed[1:] {
		// At steady overload the share alternates between about the
		// target and twice it; hashing adds a little noise.
		require.LessOrEqual(t, n, int64(5*target/2), "second %d: %v", i+2, observed)
	}
	st := s.Stats()
	require.Equal(t, int64(6*batches*64), st.Puts+st.BudgetRefused)
}

// TestWriteBudgetNeverZero drives a store at 1 B/s with 800 puts of 4 KiB
// over 8 s: the share drops, but never to 0.
func TestWriteBudgetNeverZero(t *testing.T) {
	clock := fakeclock.New()
	s := openStore(t, Options{Clock: clock, NoSync: true, WriteBytesPerSec: 1})
	lowest := int64(MaxBudgetShare)
	for i := range 800 {
		err := s.Put(t.Context(), blockfmt.NewBlock(cachekey.String(1, fmt.Sprint(i)), make([]byte, 4096)))
		if err != nil {
			require.ErrorIs(t, err, ErrBudgetExceeded)
		}
		clock.Advance(10 * time.Millisecond)
		share := s.Stats().BudgetShare
		require.GreaterOrEqual(t, share, int64(1))
		lowest = min(lowest, share)
	}
	st := s.Stats()
	require.Equal(t, int64(1), lowest)
	require.Positive(t, st.BudgetRefused)
	require.Less(t, st.BudgetShare, int64(MaxBudgetShare))
	require.Equal(t, int64(800), st.Puts+st.BudgetRefused)
}

// TestWriteBudgetConcurrent runs Puts, Stats and a moving clock together,
// for the race detector.
func TestWriteBudgetConcurrent(t *testing.T) {
	clock := fakeclock.New()
	s := openStore(t, Options{Clock: clock, NoSync: true, WriteBytesPerSec: 64 << 10})
	const writers, each = 8, 200
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range each {
				err := s.Put(t.Context(), blockfmt.NewBlock(cachekey.String(uint64(w), fmt.Sprint(i)), make([]byte, 1024)))
				if err != nil {
					require.ErrorIs(t, err, ErrBudgetExceeded)
				}
			}
		})
	}
	wg.Go(func() {
		for range 100 {
			clock.Advance(50 * time.Millisecond)
			st := s.Stats()
			require.GreaterOrEqual(t, st.BudgetShare, int64(1))
			require.LessOrEqual(t, st.BudgetShare, int64(MaxBudgetShare))
		}
	})
	wg.Wait()
	st := s.Stats()
	require.Equal(t, int64(writers*each), st.Puts+st.BudgetRefused)
}

func TestBudgetDoesNotAllocate(t *testing.T) {
	for _, target := range []int64{0, mib} {
		clock := fakeclock.New()
		now := clock.Now()
		b := newBudget(target, now)
		key := orderedKey(1, "user:1")
		allocs := testing.AllocsPerRun(1000, func() {
			now = now.Add(time.Millisecond)
			if admitsKey(key, b.shareAt(now)) {
				b.record(now, 4096)
			}
			b.stats(now)
		})
		require.Zero(t, allocs, "target %d", target)
	}
}
