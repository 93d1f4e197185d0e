package shard

import (
	"encoding/binary"
	"hash/crc32"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/temporalstore/temporalstore-go/temporalstore/internal/testclock"
)

func TestCheckImage(t *testing.T) {
	dir := t.TempDir()
	clk := testclock.New(time.Unix(1_764_460_800, 0))
	s := open(t, dir, clk, false)
	rng := rand.New(rand.NewPCG(5, 6))
	for range 500 { // strings and collections, so the image holds objects
		mutate(t, s, randomOp(rng, clk, 100))
	}
	applied, err := s.Checkpoint(t.Context())
	require.NoError(t, err)
	require.NoError(t, s.Close())
	name := imagePath(dir, applied)
	orig, err := os.ReadFile(name)
	require.NoError(t, err)

	got, err := CheckImage(name)
	require.NoError(t, err)
	require.Equal(t, applied, got)
	after, err := os.ReadFile(name)
	require.NoError(t, err)
	require.Equal(t, orig, after, "CheckImage only reads")

	reseal := func(b []byte) []byte {
		binary.LittleEndian.PutUint32(b[len(b)-4:], crc32.Checksum(b[:len(b)-4], castagnoli))
		return b
	}
	cases := []struct {
		name   string
		file   string // the damaged copy's name; "" for name's own
		damage func(b []byte) []byte
		want   error
	}{
		{name: "byte flipped", damage: func(b []byte) []byte { b[len(b)/2] ^= 0x40; return b }, want: ErrImageDamaged},
		{name: "checksum flipped", damage: func(b []byte) []byte { b[len(b)-1] ^= 1; return b }, want: ErrImageDamaged},
		{name: "truncated", damage: func(b []byte) []byte { return b[:len(b)-10] }, want: ErrImageDamaged},
		{name: "too short", damage: func(b []byte) []byte { return b[:imageHeader] }, want: ErrImageDamaged},
		{name: "bad magic", damage: func(b []byte) []byte { b[0] = 'X'; return reseal(b) }, want: ErrImageDamaged},
		{name: "other format", damage: func(b []byte) []byte {
			binary.LittleEndian.PutUint16(b[len(imageMagic):], imageFormat+1)
			return reseal(b)
		}, want: ErrImageFormat},
		{name: "index image length", damage: func(b []byte) []byte {
			binary.LittleEndian.PutUint64(b[imageHeader-8:], uint64(len(b)))
			return reseal(b)
		}, want: ErrImageDamaged},
		{name: "name disagrees", file: "checkpoint-00000000000000000001.img", damage: func(b []byte) []byte { return b }, want: ErrImageDamaged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			file := filepath.Join(t.TempDir(), filepath.Base(name))
			if c.file != "" {
				file = filepath.Join(filepath.Dir(file), c.file)
			}
			require.NoError(t, os.WriteFile(file, c.damage(append([]byte(nil), orig...)), 0o644))
			_, err := CheckImage(file)
			require.ErrorIs(t, err, c.want)
			require.Contains(t, err.Error(), filepath.Base(file))
		})
	}

	_, err = CheckImage(filepath.Join(dir, "checkpoint-00000000000000000009.img"))
	require.ErrorIs(t, err, fs.ErrNotExist)
}
