package shard

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/teststorage"
)

// readString reads key inside or outside an Exclusive (ctx says which).
func readString(t *testing.T, ctx context.Context, s *Shard, key string) (string, bool) {
	t.Helper()
	out, found, _, err := s.AppendString(ctx, nil, []byte(key))
	require.NoError(t, err)
	return string(out), found
}

// requireStrings checks that each key holds its string.
func requireStrings(t *testing.T, ctx context.Context, s *Shard, want map[string]string) {
	t.Helper()
	for k, w := range want {
		v, ok := readString(t, ctx, s, k)
		require.True(t, ok, k)
		require.Equal(t, w, v, k)
	}
}

// TestExclusiveAppendsItsWritesAsOneGroup: the writes of an Exclusive are
// read back inside it, reach the log only when it ends, all at once, and
// survive a restart.
func TestExclusiveAppendsItsWritesAsOneGroup(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Durable: true, SegmentSize: 1 << 20}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, []byte("before"), []byte("0"), time.Time{}))
	last := s.log.LastIndex()
	require.NoError(t, s.Exclusive(ctx, func(s *Shard) error {
		require.NoError(t, s.Set(ctx, []byte("a"), []byte("1"), time.Time{}))
		require.NoError(t, s.Update(ctx, []byte("a"), incrDecimal))
		require.NoError(t, s.SetBatch(ctx, []command.Command{
			StringSet([]byte("b"), []byte("x"), time.Time{}), StringSet([]byte("c"), []byte("y"), time.Time{}),
		}))
		v, ok := readString(t, ctx, s, "a")
		require.True(t, ok)
		require.Equal(t, "2", v)
		require.Equal(t, last, s.log.LastIndex(), "nothing appended before the end")
		return nil
	}))
	require.Equal(t, last+3, s.log.LastIndex())
	requireStrings(t, ctx, s, map[string]string{"a": "2", "b": "x", "c": "y", "before": "0"})
	require.NoError(t, s.Set(ctx, []byte("after"), []byte("z"), time.Time{}))
	require.NoError(t, s.Close())
	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	requireStrings(t, ctx, s, map[string]string{"a": "2", "b": "x", "c": "y", "before": "0", "after": "z"})
}

// TestExclusiveLostWholeWhenTheLogEndsInside cuts the log inside the
// group an Exclusive wrote, as a crash during its write would: after the
// restart none of the transaction's writes is there, and every write
// before it is.
func TestExclusiveLostWholeWhenTheLogEndsInside(t *testing.T) {
	teststorage.SkipOnMem(t, "a log file cut inside a group")
	dir := t.TempDir()
	opts := Options{Durable: true, SegmentSize: 1 << 20}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, []byte("before"), []byte("0"), time.Time{}))
	require.NoError(t, s.Exclusive(ctx, func(s *Shard) error {
		for _, k := range []string{"a", "b", "c"} {
			require.NoError(t, s.Set(ctx, []byte(k), bytes.Repeat([]byte(k), 100), time.Time{}))
		}
		return nil
	}))
	segs := s.log.Segments()
	require.NoError(t, s.Close())
	// The last frame loses its last byte: a torn final write.
	lastSeg := segs[len(segs)-1]
	files, err := filepath.Glob(filepath.Join(dir, "*", "*.wal"))
	require.NoError(t, err)
	if len(files) == 0 {
		files, err = filepath.Glob(filepath.Join(dir, "*.wal"))
		require.NoError(t, err)
	}
	require.NotEmpty(t, files)
	f, err := os.OpenFile(files[len(files)-1], os.O_RDWR, 0)
	require.NoError(t, err)
	require.NoError(t, f.Truncate(lastSeg.Bytes-1))
	require.NoError(t, f.Close())

	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	v, ok := readString(t, ctx, s, "before")
	require.True(t, ok)
	require.Equal(t, "0", v)
	for _, k := range []string{"a", "b", "c"} {
		_, ok := readString(t, ctx, s, k)
		require.False(t, ok, "%s survived without the rest of its transaction", k)
	}
}

// TestExclusiveReadsItsRecordsPastTheRecentOnes: a transaction writing
// more than the recent records hold still reads its first writes, whose
// records are neither recent nor in the log yet.
func TestExclusiveReadsItsRecordsPastTheRecentOnes(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Durable: true, SegmentSize: 1 << 20, RecentBytes: 4 << 10})
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	val := bytes.Repeat([]byte("v"), 1000)
	require.NoError(t, s.Exclusive(ctx, func(s *Shard) error {
		for i := range 50 {
			require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), val, time.Time{}))
		}
		v, ok := readString(t, ctx, s, "k0")
		require.True(t, ok)
		require.Equal(t, string(val), v)
		return nil
	}))
	v, ok := readString(t, ctx, s, "k0")
	require.True(t, ok)
	require.Equal(t, string(val), v)
}

// TestExclusiveLargerThanAGroup: a transaction whose records pass the
// log's MaxGroupSize is appended in several groups, and all of it is
// there after a restart.
func TestExclusiveLargerThanAGroup(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Durable: true, SegmentSize: 64 << 10}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	ctx := t.Context()
	val := make([]byte, 4000) // incompressible, so the log stores it whole
	_, _ = rand.NewChaCha8([32]byte{1}).Read(val)
	const n = 60 // about four segments' worth
	require.NoError(t, s.Exclusive(ctx, func(s *Shard) error {
		for i := range n {
			require.NoError(t, s.Set(ctx, fmt.Appendf(nil, "k%d", i), val, time.Time{}))
		}
		return nil
	}))
	require.Greater(t, len(s.log.Segments()), 2)
	require.NoError(t, s.Close())
	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	for i := range n {
		v, ok := readString(t, ctx, s, fmt.Sprintf("k%d", i))
		require.True(t, ok, i)
		require.Equal(t, string(val), v)
	}
}

// TestExclusiveApplyPanicSkipsOneRecord: a write of a transaction that
// panics when applied is skipped alone; the transaction's other writes,
// before and after it, stay, and a restart replays the same state.
func TestExclusiveApplyPanicSkipsOneRecord(t *testing.T) {
	dir := t.TempDir()
	opts := Options{Durable: true, SegmentSize: 1 << 20, applyFault: func(_ uint64, c *command.Command) {
		if string(c.Key) == "poison" {
			panic("injected: apply in a transaction")
		}
	}}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	ctx := t.Context()
	require.NoError(t, s.Exclusive(ctx, func(s *Shard) error {
		require.NoError(t, s.Set(ctx, []byte("a"), []byte("1"), time.Time{}))
		require.ErrorIs(t, s.Set(ctx, []byte("poison"), []byte("p"), time.Time{}), ErrInternal)
		require.NoError(t, s.Set(ctx, []byte("c"), []byte("3"), time.Time{}))
		v, ok := readString(t, ctx, s, "a")
		require.True(t, ok)
		require.Equal(t, "1", v)
		return nil
	}))
	check := func(s *Shard) {
		requireStrings(t, ctx, s, map[string]string{"a": "1", "c": "3"})
		_, ok := readString(t, ctx, s, "poison")
		require.False(t, ok)
		require.Len(t, s.Skipped(), 1)
	}
	check(s)
	require.NoError(t, s.Close())
	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	check(s)
}

// TestExclusiveRefusedByAFailedLogTakesItsWritesBack: when the log fails
// the group, the shard fails and its state is the log's, without the
// transaction's writes.
func TestExclusiveRefusedByAFailedLogTakesItsWritesBack(t *testing.T) {
	s, err := Open(t.TempDir(), Options{Durable: true, SegmentSize: 1 << 20})
	require.NoError(t, err)
	defer s.Close()
	ctx := t.Context()
	require.NoError(t, s.Set(ctx, []byte("before"), []byte("0"), time.Time{}))
	errInjected := errors.New("injected: the log refuses the group")
	s.groupFault = func() error { return errInjected }
	err = s.Exclusive(ctx, func(s *Shard) error {
		require.NoError(t, s.Set(ctx, []byte("a"), []byte("1"), time.Time{}))
		v, ok := readString(t, ctx, s, "a")
		require.True(t, ok)
		require.Equal(t, "1", v)
		return nil
	})
	require.ErrorIs(t, err, errInjected)
	_, ok, gerr := s.Get([]byte("a"))
	require.NoError(t, gerr)
	require.False(t, ok, "a write the log does not hold is visible")
	v, ok, gerr := s.Get([]byte("before"))
	require.NoError(t, gerr)
	require.True(t, ok)
	require.Equal(t, "0", string(v))
	require.Error(t, s.Set(ctx, []byte("later"), []byte("x"), time.Time{}))
}
