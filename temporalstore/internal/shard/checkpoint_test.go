package shard

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/command"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/object"
	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func fill(t *testing.T, s *Shard, from, to int, model map[string]string) {
	t.Helper()
	for i := from; i < to; i++ {
		k, v := fmt.Sprintf("k%d", i%40), fmt.Sprintf("v%d", i)
		require.NoError(t, s.Set(t.Context(), []byte(k), []byte(v), time.Time{}))
		model[k] = v
	}
}

func requireModel(t *testing.T, s *Shard, model map[string]string) {
	t.Helper()
	require.Equal(t, len(model), s.Len())
	for k, v := range model {
		got, ok, err := s.Get([]byte(k))
		require.NoError(t, err)
		require.True(t, ok, k)
		require.Equal(t, v, string(got), k)
	}
}

func images(t *testing.T, dir string) []string {
	t.Helper()
	m, err := filepath.Glob(filepath.Join(dir, "checkpoint-*.img"))
	require.NoError(t, err)
	return m
}

// Open starts from the newest checkpoint and replays only the log after
// it; a shard keeps its last two checkpoints.
func TestCheckpointShortensReplay(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	stamp := Stamp{ShardID: 3, RangeLo: 0, RangeHi: 1023}
	opts := Options{Durable: true, Now: clk.Now, Stamp: stamp}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	model := map[string]string{}
	fill(t, s, 0, 100, model)
	for range 3 {
		_, err := s.Checkpoint(t.Context())
		require.NoError(t, err)
		fill(t, s, 100, 110, model)
	}
	applied, err := s.Checkpoint(t.Context())
	require.NoError(t, err)
	require.Equal(t, uint64(130), applied)
	fill(t, s, 200, 207, model)
	require.NoError(t, s.Close())
	require.Len(t, images(t, dir), keepImages)

	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, 7, s.replayed, "only the records after the checkpoint")
	requireModel(t, s, model)
}

// A damaged newest checkpoint is skipped: Open starts from the older one
// and the state is whole. Damage to both makes Open replay the whole log.
func TestDamagedCheckpointIsRefusedAndStateRebuilt(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	opts := Options{Durable: true, Now: clk.Now}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	model := map[string]string{}
	fill(t, s, 0, 50, model)
	_, err = s.Checkpoint(t.Context())
	require.NoError(t, err)
	fill(t, s, 50, 80, model)
	_, err = s.Checkpoint(t.Context())
	require.NoError(t, err)
	fill(t, s, 80, 90, model)
	require.NoError(t, s.Close())

	imgs := images(t, dir)
	require.Len(t, imgs, 2)
	flip := func(name string) {
		b, err := os.ReadFile(name)
		require.NoError(t, err)
		b[len(b)/2] ^= 0x40
		require.NoError(t, os.WriteFile(name, b, 0o644))
	}
	flip(imgs[1])
	s, err = Open(dir, opts)
	require.NoError(t, err)
	require.Equal(t, 1, s.damagedImages)
	require.Equal(t, 40, s.replayed, "from the older checkpoint")
	requireModel(t, s, model)
	require.NoError(t, s.Close())

	flip(imgs[0])
	s, err = Open(dir, opts)
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, 2, s.damagedImages)
	require.Equal(t, 90, s.replayed, "the whole log")
	requireModel(t, s, model)
}

// A checkpoint of another format or stamp fails the open, never guessed.
func TestCheckpointOfAnotherFormatOrStampIsRefused(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	opts := Options{Durable: true, Now: clk.Now, Stamp: Stamp{ShardID: 1, RangeHi: 1023}}
	s, err := Open(dir, opts)
	require.NoError(t, err)
	fill(t, s, 0, 10, map[string]string{})
	_, err = s.Checkpoint(t.Context())
	require.NoError(t, err)
	require.NoError(t, s.Close())

	other := opts
	other.Stamp.RangeHi = 511
	_, err = Open(dir, other)
	require.ErrorIs(t, err, ErrStamp)

	name := images(t, dir)[0]
	b, err := os.ReadFile(name)
	require.NoError(t, err)
	binary.LittleEndian.PutUint16(b[len(imageMagic):], imageFormat+1)
	binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
	require.NoError(t, os.WriteFile(name, b, 0o644))
	_, err = Open(dir, opts)
	require.ErrorIs(t, err, ErrImageFormat)
}

func FuzzDecodeCheckpoint(f *testing.F) {
	dir := f.TempDir()
	s, err := Open(dir, Options{Durable: true})
	require.NoError(f, err)
	for i := range 5 {
		require.NoError(f, s.Set(f.Context(), fmt.Appendf(nil, "k%d", i), []byte("v"), time.Time{}))
	}
	require.NoError(f, s.Mutate(f.Context(), func(*View) ([]command.Command, error) {
		return []command.Command{
			{Op: OpHSet, Key: []byte("h"), Args: [][]byte{[]byte("f"), []byte("v")}},
			{Op: OpZAdd, Key: []byte("z"), Args: [][]byte{[]byte("m"), EncodeScore(1)}},
		}, nil
	}))
	_, err = s.Checkpoint(f.Context())
	require.NoError(f, err)
	require.NoError(f, s.Close())
	names, err := filepath.Glob(filepath.Join(dir, "checkpoint-*.img"))
	require.NoError(f, err)
	require.Len(f, names, 1)
	b, err := os.ReadFile(names[0])
	require.NoError(f, err)
	f.Add(b)
	f.Add([]byte(imageMagic))
	f.Fuzz(func(t *testing.T, b []byte) {
		st, err := decodeImage(b, Stamp{})
		if err == nil {
			require.NotNil(t, st.index)
		}
	})
}

// A checkpoint encodes its collections after letting writers go: writes
// that land while it encodes change copies, so the image holds every
// collection as it was at the snapshot. Run with -race, the writes racing
// the encoder show any change made in place.
func TestCheckpointImageIsTheSnapshotWhileWritesGoOn(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, false)
	rng := rand.New(rand.NewPCG(9, 10))
	for range 3000 {
		mutate(t, s, randomOp(rng, clk, 200))
	}
	rename := command.Command{Op: OpRename, Key: nil, Args: nil}
	for k := range dump(t, s) {
		if k[0] == 'h' || k[0] == 'l' {
			rename.Key, rename.Args = []byte(k), args(k+"-renamed")
			break
		}
	}
	require.NotNil(t, rename.Key)
	want := objectImages(t, s)

	during := make(chan struct{})
	s.afterSnapshot = func() {
		// Some writes before the encoder starts, some beside it.
		for range 300 {
			mutate(t, s, randomOp(rng, clk, 200))
		}
		mutate(t, s, rename)
		go func() {
			defer close(during)
			for range 2000 {
				c := randomOp(rng, clk, 200)
				if err := s.Mutate(t.Context(), func(*View) ([]command.Command, error) { return []command.Command{c}, nil }); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	_, err := s.Checkpoint(t.Context())
	require.NoError(t, err)
	<-during
	s.afterSnapshot = nil
	after := dump(t, s)
	require.NoError(t, s.Close())

	imgs := images(t, dir)
	b, err := os.ReadFile(imgs[len(imgs)-1])
	require.NoError(t, err)
	st, err := decodeImage(b, Stamp{})
	require.NoError(t, err)
	got := map[string]string{}
	for _, o := range st.objs {
		if o != nil {
			got[string(o.Key)] = string(object.Append(nil, o))
		}
	}
	require.Equal(t, want, got, "the image's collections are the snapshot's")

	// Reopened, the image and the log after it give the state after every
	// write.
	s = open(t, dir, clk, false)
	defer s.Close()
	require.Equal(t, after, dump(t, s))
}

// objectImages encodes every resident collection of s by key.
func objectImages(t *testing.T, s *Shard) map[string]string {
	t.Helper()
	s.mu.RLock()
	defer s.mu.RUnlock()
	out := map[string]string{}
	for _, o := range s.objs {
		if o != nil {
			out[string(o.Key)] = string(object.Append(nil, o))
		}
	}
	return out
}
